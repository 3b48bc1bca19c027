// A small random tanh MLP in an f64 graph, its bound parameters and points, and the independent
// quad-precision reference of its derivatives (tests/support/nested_dual.h), for checking lowered
// equations numerically.
#pragma once

#include <cmath>
#include <random>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/taylor.h"
#include "nn/mlp.h"
#include "tests/support/reference_mlp.h"

namespace jetpde::equations::testing {

using testref::Quad;

inline MatrixD random_points(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                             double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  MatrixD x(rows, cols);
  for (auto& v : x.reshaped()) v = u(rng);
  return x;
}

// Unit vectors, one per row.
inline MatrixD random_normals(std::int64_t rows, std::int64_t dims, std::uint64_t seed) {
  MatrixD n = random_points(rows, dims, seed);
  for (std::int64_t r = 0; r < rows; ++r) n.row(r) /= n.row(r).matrix().norm();
  return n;
}

class Network {
 public:
  // coordinates -> outputs through hidden layers {12, 12}, tanh, biases of std 0.3; the input
  // leaf is "x" [points, inputs] with points uniform in [-1, 1].
  Network(int inputs, int outputs, int points, std::uint64_t seed)
      : graph_(DType::f64), mlp_(graph_, {inputs, {12, 12}, outputs, nn::Activation::tanh, ""}) {
    x_ = graph_.input("x", {points, inputs});
    out_ = mlp_(x_);
    bindings_ = mlp_.init_glorot_normal(seed, 0.3);
    bindings_["x"] = random_points(points, inputs, seed + 1);
    weights_ = testref::reference_weights(mlp_, bindings_);
  }

  Graph& graph() { return graph_; }
  Var x() const { return x_; }
  Var out() const { return out_; }
  Bindings& bindings() { return bindings_; }
  std::int64_t points() const { return x_.shape().rows; }

  // Coordinate j of point p.
  Quad coordinate(std::int64_t p, int j) const { return bindings_.at("x")(p, j); }
  // ∂^α of output o at point p, in quad precision.
  Quad d(std::int64_t p, int o, const MultiIndex& alpha) const {
    const MatrixD& x = bindings_.at("x");
    std::vector<double> point(x.row(p).data(), x.row(p).data() + x.cols());
    return testref::mlp_derivative(weights_, testref::Activation::tanh, point,
                                   alpha)[static_cast<std::size_t>(o)];
  }

 private:
  Graph graph_;
  nn::Mlp mlp_;
  Var x_, out_;
  Bindings bindings_;
  testref::MlpWeights weights_;
};

// max |got - want| / max |want| over the rows of a [n, 1] result.
template <class Reference>
double relative_error(const MatrixD& got, std::int64_t rows, Reference&& want) {
  std::vector<double> ours;
  std::vector<Quad> ref;
  for (std::int64_t p = 0; p < rows; ++p) {
    ours.push_back(got(p, 0));
    ref.push_back(want(p));
  }
  return testref::relative_error(ours, ref);
}

}  // namespace jetpde::equations::testing
