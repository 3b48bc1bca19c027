// SOAP (nn::Soap) as a trainer's optimizer: one evaluation and one update a step, Adam in the
// eigenbasis of each weight matrix's Shampoo factors.
#include <cmath>

#include "autodiff/errors.h"
#include "nn/soap.h"
#include "solvers/optimizer.h"

namespace jetpde::solvers {
namespace {

class SoapOptimizer final : public Optimizer {
 public:
  SoapOptimizer(nn::SoapOptions options, const nn::ParameterLayout& layout)
      : soap_(options, layout) {}

  Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) override {
    const double loss = evaluate(theta, g_);
    if (!std::isfinite(loss) || !g_.allFinite()) return {.kind = Step::Kind::non_finite};
    const double lr = soap_.learning_rate();
    soap_.step(theta, g_);
    return {.kind = Step::Kind::stepped, .loss = loss, .learning_rate = lr};
  }
  bool loss_before_update() const override { return true; }
  int state_vectors() const override { return soap_.state_vectors(); }

  // soap/m, soap/v, soap/t, and per parameter i (the layout's order) soap/L<i>, soap/QL<i> when
  // it has a left factor, soap/R<i>, soap/QR<i> when it has a right one.
  OptimizerState state() const override {
    const nn::Soap::State& s = soap_.state();
    OptimizerState out{.kind = "soap", .values = {}};
    out.values.emplace("m", s.m);
    out.values.emplace("v", s.v);
    out.values.emplace("t", std::int64_t{s.t});
    for (std::size_t i = 0; i < s.factors.size(); ++i) {
      const std::string n = std::to_string(i);
      const nn::Soap::Factors& f = s.factors[i];
      if (f.L.size() > 0) {
        out.values.emplace("L" + n, MatrixD(f.L.array()));
        out.values.emplace("QL" + n, MatrixD(f.QL.array()));
      }
      if (f.R.size() > 0) {
        out.values.emplace("R" + n, MatrixD(f.R.array()));
        out.values.emplace("QR" + n, MatrixD(f.QR.array()));
      }
    }
    return out;
  }
  void restore(const OptimizerState& state) override {
    if (state.empty()) return;
    if (state.kind != "soap")
      throw UserError("soap: cannot restore the state of a '" + state.kind + "' optimizer");
    nn::Soap::State s;
    s.m = state.get<Eigen::VectorXd>("m");
    s.v = state.get<Eigen::VectorXd>("v");
    s.t = static_cast<int>(state.get<std::int64_t>("t"));
    s.factors.resize(soap_.state().factors.size());
    for (std::size_t i = 0; i < s.factors.size(); ++i) {
      const std::string n = std::to_string(i);
      nn::Soap::Factors& f = s.factors[i];
      if (soap_.has_left(i)) {
        f.L = state.get<MatrixD>("L" + n).matrix();
        f.QL = state.get<MatrixD>("QL" + n).matrix();
      }
      if (soap_.has_right(i)) {
        f.R = state.get<MatrixD>("R" + n).matrix();
        f.QR = state.get<MatrixD>("QR" + n).matrix();
      }
    }
    soap_.restore(std::move(s));
  }

 private:
  nn::Soap soap_;
  Eigen::VectorXd g_;
};

}  // namespace

std::unique_ptr<Optimizer> make_soap(const Stage& stage, const nn::ParameterLayout& layout) {
  return std::make_unique<SoapOptimizer>(stage.options_as<nn::SoapOptions>(), layout);
}

// The schedule runs over the stage (cosine's total).
std::any read_soap_options(const Stage& stage, const options::Values& values) {
  nn::SoapOptions o;
  nn::soap_options().read(o, values);
  o.schedule.total_steps = stage.steps;
  return o;
}

}  // namespace jetpde::solvers
