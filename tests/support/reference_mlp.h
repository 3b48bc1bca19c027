// Bridges an nn::Mlp with bound parameters to the independent quad-precision reference in
// nested_dual.h, and measures agreement.
#pragma once

#include <algorithm>
#include <cmath>

#include "autodiff/interpreter.h"
#include "nn/mlp.h"
#include "tests/support/nested_dual.h"

namespace jetpde::testref {

inline MlpWeights reference_weights(const nn::Mlp& mlp, const Bindings& params) {
  MlpWeights net;
  net.sizes.push_back(mlp.spec().inputs);
  for (std::size_t l = 0; l < mlp.weights().size(); ++l) {
    const MatrixD& w = params.at(mlp.weights()[l].node().attrs.name);
    const MatrixD& b = params.at(mlp.biases()[l].node().attrs.name);
    net.sizes.push_back(static_cast<int>(w.cols()));
    net.W.emplace_back(w.data(), w.data() + w.size());  // both row-major
    net.b.emplace_back(b.data(), b.data() + b.size());
  }
  return net;
}

inline Activation reference_activation(nn::Activation a) {
  return a == nn::Activation::tanh ? Activation::tanh : Activation::sin;
}

// max_i |got_i - want_i| / max_i |want_i| over a column of results.
inline double relative_error(const std::vector<double>& got, const std::vector<Quad>& want) {
  Quad err = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Quad d = Quad(got[i]) - want[i];
    err = std::max(err, d < 0 ? -d : d);
    scale = std::max(scale, want[i] < 0 ? -want[i] : want[i]);
  }
  return to_double(scale > 0 ? err / scale : err);
}

}  // namespace jetpde::testref
