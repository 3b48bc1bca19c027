// Reverse mode through Taylor streams: the gradient of PDE residual losses with respect to every
// weight and bias against central finite differences in f64.
#include <gtest/gtest.h>

#include <random>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "autodiff/verify.h"
#include "nn/mlp.h"

namespace jetpde {
namespace {

MatrixD uniform(int rows, int cols, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  MatrixD m(rows, cols);
  for (auto& v : m.reshaped()) v = u(rng);
  return m;
}

// Checks every entry of every parameter's gradient against central differences.
void expect_gradient_matches_fd(Var loss, const nn::Mlp& mlp, Bindings b, double tol) {
  const std::vector<Var> params = mlp.params();
  const std::vector<MatrixD> grads = evaluate(grad(loss, params), b);
  constexpr double h = 1e-5;
  double worst = 0.0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    MatrixD& p = b[params[i].node().attrs.name];
    for (Eigen::Index k = 0; k < p.size(); ++k) {
      const double keep = p.reshaped()(k);
      p.reshaped()(k) = keep + h;
      const double up = evaluate(loss, b)(0, 0);
      p.reshaped()(k) = keep - h;
      const double down = evaluate(loss, b)(0, 0);
      p.reshaped()(k) = keep;
      const double fd = (up - down) / (2 * h), g = grads[i].reshaped()(k);
      worst = std::max(worst, std::abs(g - fd) / (1e-3 + std::abs(fd)));
      EXPECT_NEAR(g, fd, tol * (1e-3 + std::abs(fd)))
          << params[i].node().attrs.name << " entry " << k;
    }
  }
  std::cout << "  largest relative gradient error against central differences: " << worst << "\n";
}

TEST(GradThroughTaylor, BurgersResidualLossMatchesFiniteDifferences) {
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {2, {12, 12}, 1, nn::Activation::tanh, ""});
  const Var xt = g.input("xt", {24, 2});  // columns (x, t)
  const Var u = mlp(xt);
  Taylor t(TaylorPlan({{xt, 0}, {xt, 1}}, {{0, 1}, {1, 0}, {2, 0}}));
  const double nu = 0.01 / M_PI;
  const Var r =
      t.derivative(u, {0, 1}) + u * t.derivative(u, {1, 0}) - nu * t.derivative(u, {2, 0});
  const Var loss = mean_all(square(r));
  verify(g);
  Bindings b = mlp.init_glorot_normal(5, 0.1);
  b["xt"] = uniform(24, 2, -1, 1, 6);
  expect_gradient_matches_fd(loss, mlp, b, 1e-6);
}

TEST(GradThroughTaylor, CollapsedLaplacianLossMatchesFiniteDifferences) {
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {3, {10, 10}, 1, nn::Activation::sin, ""});
  const Var x = g.input("x", {16, 3});
  const Var u = mlp(x);
  Taylor t(TaylorPlan({{x, 0}, {x, 1}, {x, 2}}, {}, {laplacian_sum(3)}));
  const Var loss = mean_all(square(t.sum(u, 0) + 1.0));
  Bindings b = mlp.init_glorot_normal(8, 0.1);
  b["x"] = uniform(16, 3, 0, 1, 9);
  expect_gradient_matches_fd(loss, mlp, b, 1e-6);
}

TEST(GradThroughTaylor, FourthOrderLossMatchesFiniteDifferences) {
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {1, {8, 8}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {12, 1});
  const Var u = mlp(x);
  Taylor t(TaylorPlan({{x, 0}}, {{4}}));
  const Var loss = mean_all(square(t.derivative(u, {4}) - u));
  Bindings b = mlp.init_glorot_normal(10, 0.1);
  b["x"] = uniform(12, 1, -1, 1, 11);
  expect_gradient_matches_fd(loss, mlp, b, 1e-6);
}

TEST(Grad, UnusedParameterGetsZeroGradient) {
  Graph g(DType::f64);
  const Var p = g.param("p", {2, 3});
  const Var q = g.param("q", {1, 1});
  const Var loss = sum_all(square(q));
  const std::vector<Var> params{p, q};
  const std::vector<MatrixD> v = evaluate(
      grad(loss, params), {{"p", MatrixD::Ones(2, 3)}, {"q", MatrixD::Constant(1, 1, 3.0)}});
  EXPECT_EQ(v[0].rows(), 2);
  EXPECT_EQ(v[0].cols(), 3);
  EXPECT_EQ(v[0].abs().maxCoeff(), 0.0);
  EXPECT_DOUBLE_EQ(v[1](0, 0), 6.0);
}

TEST(Grad, BroadcastOperandsAccumulateOverRowsAndColumns) {
  Graph g(DType::f64);
  const Var a = g.param("a", {4, 3});
  const Var row = g.param("row", {1, 3});
  const Var column = g.param("column", {4, 1});
  const Var loss = sum_all(a * row + column);
  const std::vector<Var> params{row, column};
  Bindings b{{"a", uniform(4, 3, -1, 1, 1)},
             {"row", uniform(1, 3, -1, 1, 2)},
             {"column", uniform(4, 1, -1, 1, 3)}};
  const std::vector<MatrixD> v = evaluate(grad(loss, params), b);
  EXPECT_TRUE(v[0].isApprox(b["a"].colwise().sum()));
  EXPECT_TRUE(v[1].isApprox(MatrixD::Constant(4, 1, 3.0)));
}

}  // namespace
}  // namespace jetpde
