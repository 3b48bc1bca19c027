// A PINN network: input embeddings, then a body (MLP or modified MLP), as one primal graph from
// coordinates [n, inputs] to fields [n, outputs].
//
//   nn::NetworkSpec spec{.inputs = 2, .hidden = {64, 64, 64}, .outputs = 1};
//   spec.architecture = nn::Architecture::modified_mlp;
//   spec.normalization = nn::InputNormalization{{-1, 0}, {1, 1}};  // x in [-1,1], t in [0,1]
//   spec.periodic = {{.column = 0, .period = 2}};                    // exactly periodic in x
//   nn::Network net(graph, spec);
//   Var u = net(points);                 // [n, 1]
//   Bindings params = net.init(/*seed=*/1);
//
// Embeddings, in this order (each optional):
//   normalization  x -> 2 (x - lower) / (upper - lower) - 1 per column: inputs in [-1, 1].
//   periodic       column c -> cos(k w x_c), sin(k w x_c) for k = 1..harmonics, w = 2 pi / period
//                  (applied to the raw coordinate, so the period is in the user's units): the
//                  network is then exactly periodic in x_c, which is a hard periodic condition.
//   fourier        y -> [y, sin(2 pi y B), cos(2 pi y B)] with B [width, features] ~ N(0, sigma^2)
//                  fixed (a constant, not trained; Tancik et al. 2020), drawn from its own seed.
// Bodies:
//   mlp            y -> sigma(...sigma(y W0 + b0)...) W_L + b_L (nn/mlp.h)
//   modified_mlp   U = sigma(y U_W + U_b), V = sigma(y V_W + V_b), H = sigma(y W0 + b0), then per
//                  hidden layer Z = sigma(H W_l + b_l), H = (1 - Z) U + Z V, and H W_L + b_L
//                  (Wang, Teng, Perdikaris 2021); all hidden widths equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/options.h"
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/mlp.h"

namespace jetpde::nn {

enum class Architecture { mlp, modified_mlp };
const options::EnumTable<Architecture>& architecture_names();  // network.architecture
Architecture architecture_from_name(const std::string& name);  // UserError naming the known ones
std::string architecture_name(Architecture architecture);

struct InputNormalization {
  std::vector<double> lower, upper;  // one per input column; upper > lower
};

struct PeriodicInput {
  int column = 0;
  double period = 1.0;
  int harmonics = 1;
};

struct FourierFeatures {
  int features = 0;  // 0: none
  double sigma = 1.0;
  std::uint64_t seed = 0;
};

struct NetworkSpec {
  int inputs = 1;
  std::vector<int> hidden{64, 64, 64};
  int outputs = 1;
  Activation activation = Activation::tanh;
  Architecture architecture = Architecture::mlp;
  Init init = Init::glorot_normal;
  std::optional<InputNormalization> normalization;
  std::vector<PeriodicInput> periodic;
  FourierFeatures fourier;
  std::string prefix;  // parameter names start with it
};

// The keys of the config's `network` mapping, read into a NetworkSpec: architecture, hidden,
// activation, init, fourier_features, fourier_sigma. `normalize` (the domain's bounds) and
// `periodic` (coordinate names, the domain's) are declared here and read where the domain is
// known; inputs, outputs and the Fourier seed come from the problem.
const options::Declaration<NetworkSpec>& network_options();
// The keys of one network.periodic[] entry: period and harmonics set; `coordinate` is a name the
// reader turns into the column.
const options::Declaration<PeriodicInput>& periodic_input_options();

class Network {
 public:
  // UserError for a spec that cannot be built (sizes, normalization bounds, periodic columns,
  // unequal hidden widths in a modified MLP), naming the field.
  Network(Graph& graph, NetworkSpec spec);
  Var operator()(Var x) const;  // [n, inputs] -> [n, outputs]
  const NetworkSpec& spec() const { return spec_; }
  int embedded_width() const { return embedded_width_; }  // the body's input columns
  std::vector<Var> params() const;
  // Weights by spec().init from `seed`; biases N(0, bias_std^2) (0: zero).
  Bindings init(std::uint64_t seed, double bias_std = 0.0) const;

 private:
  Var embed(Var x) const;
  NetworkSpec spec_;
  int embedded_width_ = 0;
  std::optional<Var> fourier_matrix_;  // B, a constant
  std::optional<Mlp> body_;            // mlp: the whole body; modified_mlp: H's layers
  std::vector<Var> gate_weights_;      // modified_mlp: U_W, U_b, V_W, V_b
};

}  // namespace jetpde::nn
