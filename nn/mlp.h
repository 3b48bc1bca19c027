// Multilayer perceptrons as primal graphs: coordinates [n, inputs] -> fields [n, outputs].
// The first piece of nn/ (DESIGN.md section 9); the full module (Fourier features, modified MLP,
// optimizers) comes later and builds on the same parameter naming.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"

namespace jetpde::nn {

enum class Activation { tanh, sin };

Activation activation_from_name(const std::string& name);  // UserError for an unknown name
std::string activation_name(Activation activation);

struct MlpSpec {
  int inputs = 1;
  std::vector<int> hidden;  // widths of the hidden layers
  int outputs = 1;
  Activation activation = Activation::tanh;
  std::string prefix;  // parameter names are prefix + "W0", prefix + "b0", ...
};

// y = σ(...σ(x W0 + b0)...) W_L + b_L with W_l of shape [fan_in, fan_out], b_l of [1, fan_out].
class Mlp {
 public:
  Mlp(Graph& graph, MlpSpec spec);
  Var operator()(Var x) const;
  const MlpSpec& spec() const { return spec_; }
  const std::vector<Var>& weights() const { return weights_; }
  const std::vector<Var>& biases() const { return biases_; }
  std::vector<Var> params() const;  // W0, b0, W1, b1, ...

  // Glorot-normal weights (std = sqrt(2 / (fan_in + fan_out))) from `seed`; biases normal with
  // standard deviation `bias_std` (0: zero biases, as in the benchmark workloads).
  Bindings init_glorot_normal(std::uint64_t seed, double bias_std = 0.0) const;

 private:
  MlpSpec spec_;
  std::vector<Var> weights_, biases_;
};

}  // namespace jetpde::nn
