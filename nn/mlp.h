// Multilayer perceptrons as primal graphs: coordinates [n, inputs] -> fields [n, outputs].
// nn/network.h composes them with input embeddings (normalization, periodic, Fourier features)
// and the modified MLP; the parameter naming here (prefix + W0, b0, ...) is shared by all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "nn/activation.h"
#include "nn/dense.h"
#include "nn/init.h"

namespace jetpde::nn {

struct MlpSpec {
  int inputs = 1;
  std::vector<int> hidden;  // widths of the hidden layers
  int outputs = 1;
  Activation activation = Activation::tanh;
  std::string prefix;  // parameter names are prefix + "W0", prefix + "b0", ...
  // Random weight factorization of every layer (nn/dense.h): parameters W0_v, W0_s, b0, ...
  std::optional<WeightFactorization> rwf;
};

// y = σ(...σ(x W0 + b0)...) W_L + b_L with W_l of shape [fan_in, fan_out], b_l of [1, fan_out].
class Mlp {
 public:
  Mlp(Graph& graph, MlpSpec spec);
  Var operator()(Var x) const;
  const MlpSpec& spec() const { return spec_; }
  const std::vector<Dense>& layers() const { return layers_; }
  // Each layer's W (the parameter itself; V diag(exp(s)) under RWF) and b.
  const std::vector<Var>& weights() const { return weights_; }
  const std::vector<Var>& biases() const { return biases_; }
  std::vector<Var> params() const;  // W0, b0, W1, b1, ... (RWF: W0_v, W0_s, b0, ...)

  // Weights by `init` from `seed`, layer by layer; biases normal with standard deviation
  // `bias_std` (0: zero biases, as in the benchmark workloads). RWF log-scales from their own
  // stream, so that the other draws are those of the same MLP without RWF.
  Bindings init(Init init, std::uint64_t seed, double bias_std = 0.0) const;
  // Glorot-normal weights (std = sqrt(2 / (fan_in + fan_out))): init(Init::glorot_normal, ...).
  Bindings init_glorot_normal(std::uint64_t seed, double bias_std = 0.0) const;

 private:
  MlpSpec spec_;
  std::vector<Dense> layers_;
  std::vector<Var> weights_, biases_;
};

}  // namespace jetpde::nn
