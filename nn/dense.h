// One dense layer y = x W + b, the building block of every network body, with an optional random
// weight factorization (RWF; Wang, Wang & Perdikaris 2022, and "An expert's guide to training
// PINNs", 2023): W = V diag(exp(s)), every output neuron's column of W split into a direction V
// and a log-scale s, both trained. Training s and V instead of W changes the loss landscape
// (each neuron's scale learns at its own rate) while the layer computes the same kind of map.
//
//   nn::Dense layer(graph, "W0", "b0", 2, 64, nn::WeightFactorization{.mean = 1, .std = 0.1});
//   Var y = layer(x);                                   // [n, 2] -> [n, 64]
//   nn::InitStreams streams(/*seed=*/1);
//   layer.init(bindings, Init::glorot_normal, streams, /*bias_std=*/0.0);
//
// Parameters: without RWF the weight `W0` [in, out] and the bias `b0` [1, out]; with RWF the
// direction `W0_v` [in, out], the log-scale `W0_s` [1, out] and the bias. Initialized from the
// usual W0 (by the initializer, from the same draws as without RWF): s ~ N(mean, std^2) per
// column from its own stream, V = W0 / exp(s), so that an RWF layer starts as the same map.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/options.h"
#include "nn/init.h"

namespace jetpde::nn {

struct WeightFactorization {
  double mean = 1.0;  // of the log-scales s
  double std = 0.1;   // their standard deviation; >= 0
};
// The keys of network.rwf: mean, std.
const options::Declaration<WeightFactorization>& weight_factorization_options();

// The random streams a network's initialization draws from, shared by its layers in order: the
// weights' and biases' generator and normal distribution (one object across the layers, as it
// keeps a spare draw between calls), and the RWF log-scales' own generator.
struct InitStreams {
  explicit InitStreams(std::uint64_t seed);
  std::mt19937_64 rng;
  std::normal_distribution<double> normal{0.0, 1.0};
  std::mt19937_64 scale_rng;
};

class Dense {
 public:
  // UserError for sizes that are not positive or a negative RWF std, naming the layer.
  Dense(Graph& graph, const std::string& weight, const std::string& bias, int in, int out,
        const std::optional<WeightFactorization>& rwf);
  Var operator()(Var x) const;  // x W + b
  // W as a graph value: the parameter itself without RWF, V diag(exp(s)) with it.
  Var weight() const { return weight_; }
  Var bias() const { return bias_; }
  std::vector<Var> params() const;  // W, b; or V, s, b
  bool factorized() const { return log_scale_.has_value(); }
  // W0 by `init` from streams.rng, then the bias N(0, bias_std^2) (0: zero) from streams.normal;
  // with RWF s from streams.scale_rng and V = W0 / exp(s). Written into `out` by parameter name.
  void init(Bindings& out, Init init, InitStreams& streams, double bias_std) const;
  // Writes the given effective weight W [in, out] and bias [1, out] into `params` (RWF: V from W
  // and the log-scales already in `params`, which are kept).
  void assign(Bindings& params, const MatrixD& weight, const MatrixD& bias) const;

 private:
  Var kernel_;                    // W, or V under RWF
  std::optional<Var> log_scale_;  // s [1, out], RWF only
  Var weight_, bias_;
  std::optional<WeightFactorization> rwf_;
};

}  // namespace jetpde::nn
