#include "nn/soap.h"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <string>

#include "autodiff/errors.h"
#include "nn/adam.h"

namespace jetpde::nn {

namespace {

// The eigenvectors of a symmetric factor (its columns an orthonormal basis). The factor is a sum
// of outer products, symmetric up to rounding; only its lower triangle is read.
Eigen::MatrixXd eigenbasis(const Eigen::MatrixXd& factor) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(factor);
  if (solver.info() != Eigen::Success)
    throw UserError("soap: the eigendecomposition of a preconditioner failed");
  return solver.eigenvectors();
}

}  // namespace

const options::Declaration<SoapOptions>& soap_options() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  using V = const options::Value&;
  static const options::Declaration<SoapOptions> d = [] {
    options::Declaration<SoapOptions> d;
    // The schedule's keys and weight_decay are Adam's own (one key each in a stage's schema),
    // read into SOAP's schedule.
    for (const options::KeyPtr& k : adam_options().keys()) {
      d.add(k, [k](SoapOptions& o, V v) {
        AdamOptions a;
        a.schedule = o.schedule;
        a.weight_decay = o.weight_decay;
        options::Values one;
        one.emplace(k->name, v);
        adam_options().read(a, one);
        o.schedule = a.schedule;
        o.weight_decay = a.weight_decay;
      });
    }
    d.add(at_least(1, key("precondition_frequency", T::integer, "10",
                          "SOAP: steps between refreshes of the preconditioners' eigenbases.")),
          &SoapOptions::precondition_frequency);
    d.add(at_least(1, key("max_precondition_dim", T::integer, "10000",
                          "SOAP: a weight side longer than this gets no preconditioner (Adam "
                          "there).")),
          &SoapOptions::max_precondition_dim);
    return d;
  }();
  return d;
}

Soap::Soap(SoapOptions options, const ParameterLayout& layout)
    : options_(options), layout_(layout) {
  options_.schedule.validate();
  if (!(options_.beta1 >= 0 && options_.beta1 < 1) || !(options_.beta2 >= 0 && options_.beta2 < 1))
    throw UserError("soap: beta1 and beta2 must be in [0, 1)");
  if (!(options_.epsilon > 0)) throw UserError("soap: epsilon must be positive");
  if (!(options_.weight_decay >= 0)) throw UserError("soap: weight_decay must not be negative");
  if (options_.precondition_frequency < 1)
    throw UserError("soap: precondition_frequency must be at least 1");
  if (options_.max_precondition_dim < 1)
    throw UserError("soap: max_precondition_dim must be at least 1");
  state_.m = Eigen::VectorXd::Zero(layout_.size());
  state_.v = Eigen::VectorXd::Zero(layout_.size());
  for (std::size_t i = 0; i < layout_.entries().size(); ++i) {
    const Shape& s = layout_.entries()[i].shape;
    Factors f;
    if (has_left(i)) f.L = f.QL = Eigen::MatrixXd::Zero(s.rows, s.rows);
    if (has_right(i)) f.R = f.QR = Eigen::MatrixXd::Zero(s.cols, s.cols);
    state_.factors.push_back(std::move(f));
  }
}

// A vector (either dimension 1) is left to Adam on both sides, as the paper does for 1-D
// parameters; a side longer than max_precondition_dim has no factor.
bool Soap::has_left(std::size_t i) const {
  const Shape& s = layout_.entries().at(i).shape;
  return s.rows > 1 && s.cols > 1 && s.rows <= options_.max_precondition_dim;
}

bool Soap::has_right(std::size_t i) const {
  const Shape& s = layout_.entries().at(i).shape;
  return s.rows > 1 && s.cols > 1 && s.cols <= options_.max_precondition_dim;
}

int Soap::state_vectors() const {
  // Without a layout (a config check): square layers, whose four n x n matrices are four
  // parameter-sized vectors.
  if (layout_.size() == 0) return 6;
  double extra = 0;
  for (const Factors& f : state_.factors)
    extra += static_cast<double>(f.L.size() + f.QL.size() + f.R.size() + f.QR.size());
  return 2 + static_cast<int>(std::ceil(extra / static_cast<double>(layout_.size())));
}

void Soap::step(Eigen::VectorXd& theta, const Eigen::VectorXd& g) {
  if (g.size() != theta.size())
    throw UserError("soap: gradient has " + std::to_string(g.size()) + " entries, parameters " +
                    std::to_string(theta.size()));
  if (theta.size() != layout_.size())
    throw UserError("soap: " + std::to_string(theta.size()) + " parameters, the layout has " +
                    std::to_string(layout_.size()));
  const double lr = options_.schedule(state_.t);
  const bool first = state_.t == 0;
  ++state_.t;
  const int t = state_.t;
  const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.epsilon;
  const double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
  const bool refresh = t % options_.precondition_frequency == 0;
  state_.m = b1 * state_.m + (1 - b1) * g;
  if (options_.weight_decay > 0) theta *= 1 - lr * options_.weight_decay;

  for (std::size_t i = 0; i < layout_.entries().size(); ++i) {
    const ParameterLayout::Entry& e = layout_.entries()[i];
    const Eigen::Index rows = e.shape.rows, cols = e.shape.cols;
    // The flat vector holds each parameter column by column (ParameterLayout::flatten).
    using ConstMap = Eigen::Map<const Eigen::MatrixXd>;
    using Map = Eigen::Map<Eigen::MatrixXd>;
    const ConstMap G(g.data() + e.offset, rows, cols);
    const ConstMap M(state_.m.data() + e.offset, rows, cols);
    Map V(state_.v.data() + e.offset, rows, cols);
    Map W(theta.data() + e.offset, rows, cols);
    Factors& f = state_.factors[i];
    const bool left = f.L.size() > 0, right = f.R.size() > 0;

    // The factors take this step's gradient: at the first step before the rotation, so that
    // the first update already has a basis (the paper's implementation spends its first step
    // on that alone), later after it, as the paper orders them.
    const auto accumulate = [&] {
      if (left) f.L = b2 * f.L + (1 - b2) * (G * G.transpose());
      if (right) f.R = b2 * f.R + (1 - b2) * (G.transpose() * G);
    };
    // A refreshed basis carries the second moment over: V' is the diagonal, in the old basis,
    // of the gradients' second moments; in the new one (O = Q_new^T Q_old) that diagonal's
    // estimate is (O o O) V' (O o O)^T, o elementwise. Eigenvectors that only swap places or
    // signs (SelfAdjointEigenSolver sorts by eigenvalue) thus keep their own moments, which the
    // paper's implementation does by sorting; a slowly turning basis mixes them smoothly.
    const auto refresh_bases = [&] {
      if (left) {
        Eigen::MatrixXd Q = eigenbasis(f.L);
        if (!first) V = (Q.transpose() * f.QL).cwiseAbs2() * V;
        f.QL = std::move(Q);
      }
      if (right) {
        Eigen::MatrixXd Q = eigenbasis(f.R);
        if (!first) V = V * (Q.transpose() * f.QR).cwiseAbs2().transpose();
        f.QR = std::move(Q);
      }
    };
    if (first) {
      accumulate();
      refresh_bases();
    }
    const auto rotate = [&](const auto& X) -> Eigen::MatrixXd {
      if (left && right) return f.QL.transpose() * X * f.QR;
      if (left) return f.QL.transpose() * X;
      if (right) return X * f.QR;
      return X;
    };
    const Eigen::MatrixXd Gr = rotate(G);
    V = b2 * V + (1 - b2) * Gr.cwiseProduct(Gr);
    const Eigen::MatrixXd Mr = rotate(M);
    const Eigen::MatrixXd Nr = ((Mr.array() / c1) / ((V.array() / c2).sqrt() + eps)).matrix();
    Eigen::MatrixXd N;
    if (left && right)
      N = f.QL * Nr * f.QR.transpose();
    else if (left)
      N = f.QL * Nr;
    else if (right)
      N = Nr * f.QR.transpose();
    else
      N = Nr;
    W -= lr * N;
    if (!first) {
      accumulate();
      if (refresh) refresh_bases();
    }
  }
}

void Soap::restore(State state) {
  const auto bad = [](const std::string& what) {
    throw UserError("soap: the saved state does not fit the parameters (" + what + ")");
  };
  if (state.t < 0) bad("a negative step");
  if (state.m.size() != layout_.size() || state.v.size() != layout_.size())
    bad("moments of " + std::to_string(state.m.size()) + " entries for " +
        std::to_string(layout_.size()) + " parameters");
  if (state.factors.size() != layout_.entries().size())
    bad(std::to_string(state.factors.size()) + " preconditioners for " +
        std::to_string(layout_.entries().size()) + " parameters");
  for (std::size_t i = 0; i < state.factors.size(); ++i) {
    const Shape& s = layout_.entries()[i].shape;
    const Factors& f = state.factors[i];
    const Eigen::Index l = has_left(i) ? s.rows : 0, r = has_right(i) ? s.cols : 0;
    if (f.L.rows() != l || f.L.cols() != l || f.QL.rows() != l || f.QL.cols() != l ||
        f.R.rows() != r || f.R.cols() != r || f.QR.rows() != r || f.QR.cols() != r)
      bad("the preconditioner of '" + layout_.entries()[i].name + "'");
  }
  state_ = std::move(state);
}

}  // namespace jetpde::nn
