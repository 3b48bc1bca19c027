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
    layers_.emplace_back(graph, spec_.prefix + "W" + k, spec_.prefix + "b" + k, sizes[l],
                         sizes[l + 1], spec_.rwf);
    weights_.push_back(layers_.back().weight());
    biases_.push_back(layers_.back().bias());
  }
}

Var Mlp::operator()(Var x) const {
  if (x.shape().cols != spec_.inputs)
    throw UserError("mlp: expects " + std::to_string(spec_.inputs) + " input columns, got " +
                    x.graph->describe(x.id));
  Var h = x;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    h = layers_[l](h);
    if (l + 1 < layers_.size()) h = activate(spec_.activation, h);
  }
  return h;
}

std::vector<Var> Mlp::params() const {
  std::vector<Var> out;
  for (const Dense& layer : layers_)
    for (const Var& p : layer.params()) out.push_back(p);
  return out;
}

Bindings Mlp::init(Init init, std::uint64_t seed, double bias_std) const {
  InitStreams streams(seed);
  Bindings out;
  for (const Dense& layer : layers_) layer.init(out, init, streams, bias_std);
  return out;
}

Bindings Mlp::init_glorot_normal(std::uint64_t seed, double bias_std) const {
  return init(Init::glorot_normal, seed, bias_std);
}

}  // namespace jetpde::nn
