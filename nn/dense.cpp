#include "nn/dense.h"

#include <cmath>

#include "autodiff/errors.h"
#include "autodiff/ops.h"

namespace jetpde::nn {

const options::Declaration<WeightFactorization>& weight_factorization_options() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  static const options::Declaration<WeightFactorization> d = [] {
    options::Declaration<WeightFactorization> d;
    d.add(key("mean", T::number, "1", "Mean of the log-scales s (W = V diag(exp(s)))."),
          &WeightFactorization::mean);
    d.add(at_least(0, key("std", T::number, "0.1", "Standard deviation of the log-scales.")),
          &WeightFactorization::std);
    return d;
  }();
  return d;
}

Dense::Dense(Graph& graph, const std::string& weight, const std::string& bias, int in, int out,
             const std::optional<WeightFactorization>& rwf)
    : rwf_(rwf) {
  if (in <= 0 || out <= 0)
    throw UserError("dense layer '" + weight + "': sizes must be positive, got " +
                    std::to_string(in) + " -> " + std::to_string(out));
  if (rwf_ && !(rwf_->std >= 0))
    throw UserError("dense layer '" + weight + "': the RWF std must be >= 0, got " +
                    std::to_string(rwf_->std));
  if (rwf_ && !std::isfinite(rwf_->mean))
    throw UserError("dense layer '" + weight + "': the RWF mean must be finite");
  if (rwf_) {
    kernel_ = graph.param(weight + "_v", {in, out});
    log_scale_ = graph.param(weight + "_s", {1, out});
    // Every column of V scaled by its exp(s_j): the [1, out] row broadcasts over the rows.
    weight_ = kernel_ * exp(*log_scale_);
  } else {
    kernel_ = graph.param(weight, {in, out});
    weight_ = kernel_;
  }
  bias_ = graph.param(bias, {1, out});
}

Var Dense::operator()(Var x) const { return matmul(x, weight_) + bias_; }

std::vector<Var> Dense::params() const {
  if (log_scale_) return {kernel_, *log_scale_, bias_};
  return {kernel_, bias_};
}

InitStreams::InitStreams(std::uint64_t seed) : rng(seed), scale_rng(seed ^ 0x5851f42d4c957f2dULL) {}

void Dense::init(Bindings& out, Init init, InitStreams& streams, double bias_std) const {
  const Shape s = kernel_.shape();
  MatrixD w = init_weight(init, s.rows, s.cols, streams.rng);
  MatrixD b(1, s.cols);
  for (auto& x : b.reshaped()) x = bias_std * streams.normal(streams.rng);
  out[bias_.node().attrs.name] = std::move(b);
  if (!log_scale_) {
    out[kernel_.node().attrs.name] = std::move(w);
    return;
  }
  MatrixD log_s = MatrixD::Constant(1, s.cols, rwf_->mean);
  if (rwf_->std > 0) {
    std::normal_distribution<double> scale(rwf_->mean, rwf_->std);
    for (auto& x : log_s.reshaped()) x = scale(streams.scale_rng);
  }
  w.rowwise() /= log_s.exp().row(0);
  out[kernel_.node().attrs.name] = std::move(w);
  out[log_scale_->node().attrs.name] = std::move(log_s);
}

void Dense::assign(Bindings& params, const MatrixD& weight, const MatrixD& bias) const {
  const Shape s = kernel_.shape();
  if (weight.rows() != s.rows || weight.cols() != s.cols || bias.rows() != 1 ||
      bias.cols() != s.cols)
    throw InternalError("Dense::assign: a weight or bias of the wrong shape");
  params[bias_.node().attrs.name] = bias;
  if (!log_scale_) {
    params[kernel_.node().attrs.name] = weight;
    return;
  }
  const auto it = params.find(log_scale_->node().attrs.name);
  if (it == params.end())
    throw UserError("parameter '" + log_scale_->node().attrs.name + "' has no value");
  MatrixD v = weight;
  v.rowwise() /= it->second.exp().row(0);
  params[kernel_.node().attrs.name] = std::move(v);
}

}  // namespace jetpde::nn
