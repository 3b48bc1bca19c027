// Whole networks (docs/design.md section 12): every derivative up to order 6 in one variable, and
// every mixed partial up to total order 4 in 2 and 3 variables, of random MLPs, in f64 against an
// independent quad-precision reference (tests/support/nested_dual.h), within 1e-12 relative.
#include <gtest/gtest.h>

#include <iomanip>
#include <iostream>
#include <map>
#include <random>

#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "nn/mlp.h"
#include "tests/support/reference_mlp.h"

namespace jetpde {
namespace {

// Every multi-index over `vars` coordinates with 1 <= degree <= max_degree.
std::vector<MultiIndex> all_partials(int vars, int max_degree) {
  std::vector<MultiIndex> out;
  MultiIndex alpha(static_cast<std::size_t>(vars), 0);
  while (true) {
    std::size_t i = 0;
    while (i < alpha.size() && alpha[i] == max_degree) alpha[i++] = 0;
    if (i == alpha.size()) break;
    ++alpha[i];
    if (degree(alpha) >= 1 && degree(alpha) <= max_degree) out.push_back(alpha);
  }
  return out;
}

MatrixD random_points(int rows, int cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MatrixD x(rows, cols);
  for (auto& v : x.reshaped()) v = u(rng);
  return x;
}

struct NetworkCase {
  const char* name;
  int inputs;
  int max_degree;
  nn::Activation activation;
};

void PrintTo(const NetworkCase& c, std::ostream* os) { *os << c.name; }

class TaylorMlp : public ::testing::TestWithParam<NetworkCase> {};

TEST_P(TaylorMlp, MatchesQuadPrecisionReference) {
  const NetworkCase c = GetParam();
  constexpr int kPoints = 6, kOutputs = 2;
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {c.inputs, {16, 16, 16}, kOutputs, c.activation, ""});
  const Var x = g.input("x", {kPoints, c.inputs});
  const Var u = mlp(x);
  std::vector<TaylorVar> vars;
  for (int i = 0; i < c.inputs; ++i) vars.push_back({x, i});
  const std::vector<MultiIndex> partials = all_partials(c.inputs, c.max_degree);
  Taylor taylor(TaylorPlan(vars, partials));

  std::vector<Var> outs;
  for (const MultiIndex& alpha : partials) outs.push_back(taylor.derivative(u, alpha));
  Bindings b = mlp.init_glorot_normal(/*seed=*/20261129 + c.inputs, /*bias_std=*/0.3);
  b["x"] = random_points(kPoints, c.inputs, 7 + c.inputs);
  const std::vector<MatrixD> got = evaluate(outs, b);

  const testref::MlpWeights net = testref::reference_weights(mlp, b);
  std::map<int, double> worst;  // by order
  for (std::size_t k = 0; k < partials.size(); ++k) {
    for (int o = 0; o < kOutputs; ++o) {
      std::vector<double> ours;
      std::vector<testref::Quad> ref;
      for (int p = 0; p < kPoints; ++p) {
        std::vector<double> point(b["x"].row(p).data(), b["x"].row(p).data() + c.inputs);
        ref.push_back(testref::mlp_derivative(net, testref::reference_activation(c.activation),
                                              point, partials[k])[static_cast<std::size_t>(o)]);
        ours.push_back(got[k](p, o));
      }
      const double err = testref::relative_error(ours, ref);
      worst[degree(partials[k])] = std::max(worst[degree(partials[k])], err);
      EXPECT_LE(err, 1e-12) << "derivative " << multi_index_str(partials[k]) << " of output " << o;
    }
  }
  std::cout << "  " << c.name << ": largest relative error by order:";
  for (auto [order, err] : worst)
    std::cout << "  " << order << ": " << std::scientific << std::setprecision(1) << err;
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Networks, TaylorMlp,
    ::testing::Values(NetworkCase{"tanh_1d_order6", 1, 6, nn::Activation::tanh},
                      NetworkCase{"sin_1d_order6", 1, 6, nn::Activation::sin},
                      NetworkCase{"tanh_2d_order4", 2, 4, nn::Activation::tanh},
                      NetworkCase{"tanh_3d_order4", 3, 4, nn::Activation::tanh},
                      NetworkCase{"sin_3d_order4", 3, 4, nn::Activation::sin}),
    [](const auto& info) { return std::string(info.param.name); });

// A Laplacian in 32 dimensions: the collapsed stream equals the sum of the 32 second derivatives
// (computed separately, and by the quad reference), and the plan carries d + 2 = 34 streams.
TEST(TaylorLaplacian, Collapsed32dMatchesSumOfSecondDerivatives) {
  constexpr int kDims = 32, kPoints = 4;
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {kDims, {32, 32}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {kPoints, kDims});
  const Var u = mlp(x);
  std::vector<TaylorVar> vars;
  for (int i = 0; i < kDims; ++i) vars.push_back({x, i});

  const TaylorPlan collapsed_plan(vars, {}, {laplacian_sum(kDims)});
  EXPECT_EQ(collapsed_plan.stream_count(), kDims + 2);
  EXPECT_EQ(collapsed_plan.num_collapsed(), 1);
  Taylor collapsed(collapsed_plan);
  const Var lap = collapsed.sum(u, "laplacian");

  std::vector<MultiIndex> seconds;
  for (int i = 0; i < kDims; ++i) {
    seconds.emplace_back(kDims, 0);
    seconds.back()[static_cast<std::size_t>(i)] = 2;
  }
  const TaylorPlan explicit_plan(vars, seconds);
  EXPECT_EQ(explicit_plan.stream_count(), 2 * kDims + 1);
  Taylor separate(explicit_plan);
  Var sum = separate.derivative(u, seconds[0]);
  for (int i = 1; i < kDims; ++i)
    sum = sum + separate.derivative(u, seconds[static_cast<std::size_t>(i)]);

  Bindings b = mlp.init_glorot_normal(32, 0.2);
  b["x"] = random_points(kPoints, kDims, 99);
  const std::vector<Var> outs{lap, sum};
  const std::vector<MatrixD> got = evaluate(outs, b);

  const testref::MlpWeights net = testref::reference_weights(mlp, b);
  std::vector<double> ours, separate_sum;
  std::vector<testref::Quad> ref;
  for (int p = 0; p < kPoints; ++p) {
    std::vector<double> point(b["x"].row(p).data(), b["x"].row(p).data() + kDims);
    testref::Quad acc = 0;
    for (const MultiIndex& alpha : seconds)
      acc += testref::mlp_derivative(net, testref::Activation::tanh, point, alpha)[0];
    ref.push_back(acc);
    ours.push_back(got[0](p, 0));
    separate_sum.push_back(got[1](p, 0));
  }
  EXPECT_LE(testref::relative_error(ours, ref), 1e-12);
  EXPECT_LE(testref::relative_error(separate_sum, ref), 1e-12);
}

}  // namespace
}  // namespace jetpde
