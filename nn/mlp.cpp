#include "nn/mlp.h"

#include <cmath>
#include <random>

#include "autodiff/errors.h"
#include "autodiff/ops.h"

namespace jetpde::nn {

Mlp::Mlp(Graph& graph, MlpSpec spec) : spec_(std::move(spec)) {
  std::vector<int> sizes{spec_.inputs};
  sizes.insert(sizes.end(), spec_.hidden.begin(), spec_.hidden.end());
  sizes.push_back(spec_.outputs);
  for (int s : sizes)
    if (s <= 0) throw UserError("mlp: layer sizes must be positive");
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::string k = std::to_string(l);
    weights_.push_back(graph.param(spec_.prefix + "W" + k, {sizes[l], sizes[l + 1]}));
    biases_.push_back(graph.param(spec_.prefix + "b" + k, {1, sizes[l + 1]}));
  }
}

Var Mlp::operator()(Var x) const {
  if (x.shape().cols != spec_.inputs)
    throw UserError("mlp: expects " + std::to_string(spec_.inputs) + " input columns, got " +
                    x.graph->describe(x.id));
  Var h = x;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    h = matmul(h, weights_[l]) + biases_[l];
    if (l + 1 < weights_.size()) h = activate(spec_.activation, h);
  }
  return h;
}

std::vector<Var> Mlp::params() const {
  std::vector<Var> out;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    out.push_back(weights_[l]);
    out.push_back(biases_[l]);
  }
  return out;
}

Bindings Mlp::init(Init init, std::uint64_t seed, double bias_std) const {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Bindings out;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    const Shape s = weights_[l].shape();
    out[weights_[l].node().attrs.name] = init_weight(init, s.rows, s.cols, rng);
    MatrixD b(1, s.cols);
    for (auto& x : b.reshaped()) x = bias_std * normal(rng);
    out[biases_[l].node().attrs.name] = std::move(b);
  }
  return out;
}

Bindings Mlp::init_glorot_normal(std::uint64_t seed, double bias_std) const {
  return init(Init::glorot_normal, seed, bias_std);
}

}  // namespace jetpde::nn
