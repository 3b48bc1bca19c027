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
//                  With slope_jump, also 4 s (1 - s), s = (x_c - seam) / period, for x_c in
//                  [seam, seam + period]: periodic in value, not in slope, so the network can
//                  carry a jump of its slope across the seam (one that a hard initial
//                  condition u = g + t N inherits from g and the PDE smooths out over time).
//   fourier        y -> [y, sin(2 pi y B), cos(2 pi y B)] with B [width, features] ~ N(0, sigma^2)
//                  fixed (a constant, not trained; Tancik et al. 2020), drawn from its own seed.
// Bodies:
//   mlp            y -> sigma(...sigma(y W0 + b0)...) W_L + b_L (nn/mlp.h)
//   modified_mlp   U = sigma(y U_W + U_b), V = sigma(y V_W + V_b), H = sigma(y W0 + b0), then per
//                  hidden layer Z = sigma(H W_l + b_l), H = (1 - Z) U + Z V, and H W_L + b_L
//                  (Wang, Teng, Perdikaris 2021); all hidden widths equal.
//   pirate         PirateNet (Wang, Li, Chen & Perdikaris 2024): the embedding is the paper's
//                  Phi = [cos(2 pi y B), sin(2 pi y B)] with B [width, h / 2] (fourier_sigma; the
//                  fourier features are h / 2 and y itself is not passed on), h the hidden width
//                  (all equal, even). U = sigma(Phi U_W + U_b), V = sigma(Phi V_W + V_b), then one
//                  adaptive residual block per hidden entry, from x_0 = Phi:
//                    F = sigma(x_l B<l>_W0 + B<l>_b0),  Z1 = F U + (1 - F) V
//                    G = sigma(Z1 B<l>_W1 + B<l>_b1),   Z2 = G U + (1 - G) V
//                    H = sigma(Z2 B<l>_W2 + B<l>_b2),   x_{l+1} = alpha_l H + (1 - alpha_l) x_l
//                  with alpha_l (`alpha<l>`, [1, 1]) trained and 0 at init, so that the network
//                  starts as its last layer on the embedding: x_L W_out + b_out = Phi W_out +
//                  b_out, a linear model whose least-squares fit to the initial/boundary data
//                  (fit_output_layer) is the paper's initialization. JAX-PI's embedding scale
//                  s (cos and sin of y K, K ~ N(0, s^2)) is fourier_sigma = s / (2 pi): its
//                  usual s = 1 to 2 is 0.16 to 0.32. The embedding is all a PirateNet starts
//                  from, and a large sigma lets it fit the collocation points with a wrong
//                  solution between them (examples/heat.yaml, 1500 steps: rel. L2 1.0 with
//                  sigma 1, 3e-4 with sigma 0.3).
// Random weight factorization (rwf; nn/dense.h) applies to every dense layer of every body,
// gates included: parameters <W>_v and <W>_s instead of <W>.
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

enum class Architecture { mlp, modified_mlp, pirate };
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
  bool slope_jump = false;  // the input 4 s (1 - s) beside the harmonics (above)
  double seam = 0;          // where the slope may jump: the domain's lower bound along the column
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
  std::optional<WeightFactorization> rwf;  // none: plain weights
  std::string prefix;                      // parameter names start with it
};

// The keys of the config's `network` mapping, read into a NetworkSpec: architecture, hidden,
// activation, init, fourier_features, fourier_sigma, rwf (an optional mapping with the keys of
// weight_factorization_options(), read by hand: present means on). `normalize` (the domain's
// bounds) and `periodic` (coordinate names, the domain's) are declared here and read where the
// domain is known; inputs, outputs and the Fourier seed come from the problem.
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
  // Weights by spec().init from `seed`; biases N(0, bias_std^2) (0: zero); PirateNet's alphas 0.
  Bindings init(std::uint64_t seed, double bias_std = 0.0) const;

  // What the last (linear) layer sees, [n, hidden]: output = features W + b.
  Var features(Var x) const;
  const Dense& output_layer() const;

 private:
  Var embed(Var x) const;
  NetworkSpec spec_;
  int embedded_width_ = 0;
  std::optional<Var> fourier_matrix_;  // B, a constant
  std::optional<Mlp> body_;            // mlp: the whole body; modified_mlp: H's layers
  std::vector<Dense> gates_;           // modified_mlp and pirate: U, V
  std::vector<Dense> blocks_;          // pirate: three per block
  std::vector<Var> alphas_;            // pirate: one per block
  std::optional<Dense> output_;        // pirate: the last layer
};

// Known values of one output of a network at some points: the initial or boundary data a
// PirateNet's last layer is fitted to.
struct OutputData {
  int output = 0;  // the column of the network's output
  MatrixD points;  // [n, inputs]
  MatrixD values;  // [n, 1]
};

// `params` with the last layer replaced, for every output that has data, by the least-squares
// fit (minimum norm when underdetermined) of features(points) [W; b] to the values; other
// outputs keep theirs. For a PirateNet at init (alpha = 0) the features are the embedding, so the
// network then starts as the best linear model of the data on it. Evaluated with the reference
// interpreter on a network of `spec` built here (the same parameter names and Fourier matrix).
// UserError for data of the wrong shape or an output that is not one of the network's.
Bindings fit_output_layer(const NetworkSpec& spec, Bindings params,
                          const std::vector<OutputData>& data);

}  // namespace jetpde::nn
