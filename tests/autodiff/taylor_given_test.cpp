// Given leaves (autodiff/taylor.h): a function of the coordinates whose streams are inputs,
// bound from jets computed outside the graph (autodiff/jet.h), must give the same derivatives of
// everything built on it as the same function built as graph ops: plain partials, collapsed
// Laplacian and biharmonic streams, plans over part of the coordinates and over two inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/jet.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "nn/mlp.h"

namespace jetpde {
namespace {

// f = atan(x0 - x2/2) sqrt(1 + x0^2 + x1 x2) + 2, as graph ops of the columns of X.
Var f_graph(Var X) {
  const Var a = col(X, 0), b = col(X, 1), c = col(X, 2);
  return atan(a - 0.5 * c) * sqrt(1.0 + a * a + b * c) + 2.0;
}

// Its jets to order 4 at a point.
Jet f_jet(const JetAlgebra& J, const double* p) {
  const Jet a = J.variable(0, p[0]), b = J.variable(1, p[1]), c = J.variable(2, p[2]);
  return J.add_constant(J.mul(J.atan(J.sub(a, J.scale(c, 0.5))),
                              J.sqrt(J.add_constant(J.add(J.mul(a, a), J.mul(b, c)), 1.0))),
                        2.0);
}

// Binds the leaf and every stream the graph has made for it from f's jets at `points`.
void bind_given(Graph& g, const std::string& leaf, const MatrixD& points, Bindings& b) {
  const JetAlgebra J(3, 4);
  MatrixD values(points.rows(), 1);
  std::vector<Jet> jets;
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    const double p[3] = {points(r, 0), points(r, 1), points(r, 2)};
    jets.push_back(f_jet(J, p));
    values(r, 0) = jets.back().value();
  }
  b[leaf] = values;
  for (const GivenStream& s : given_streams(g, leaf)) {
    MatrixD v = MatrixD::Zero(points.rows(), 1);
    for (Eigen::Index r = 0; r < points.rows(); ++r)
      for (const auto& [alpha, w] : s.terms)
        v(r, 0) += w * jets[static_cast<std::size_t>(r)].c[J.key_of(alpha)];
    b[s.input] = v;
  }
}

MatrixD random_points(int rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MatrixD x(rows, 3);
  for (auto& v : x.reshaped()) v = u(rng);
  return x;
}

void expect_same(const std::vector<MatrixD>& a, const std::vector<MatrixD>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double scale = std::max(1.0, a[k].abs().maxCoeff());
    EXPECT_LE((a[k] - b[k]).abs().maxCoeff(), 1e-11 * scale) << "output " << k;
  }
}

TEST(TaylorGiven, ThroughAnMlpLikeTheGraphBuiltFunction) {
  constexpr int n = 7;
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {3, {12, 12}, 1, nn::Activation::tanh, ""});
  const Var X = g.input("x", {n, 3});
  const Var N = mlp(X);
  // u = g + D N with D built as ops, and with D a given leaf.
  const Var built = col(X, 1) + f_graph(X) * N;
  const Var given = col(X, 1) + given_leaf(X, "f") * N;
  EXPECT_EQ(given_leaf_name("x", "f"), "x#f");
  const std::vector<TaylorVar> vars{{X, 0}, {X, 1}, {X, 2}};
  const DerivativeSum lap = laplacian_sum(3), bih = biharmonic_sum(3);
  // Collapsed sums (only first partials planned: the biharmonic's lower coefficients cover the
  // Laplacian's terms in one plan, so it has a plan of its own), and all partials to order 4.
  Taylor collapsed(TaylorPlan(vars, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {lap, bih}));
  Taylor laplacian(TaylorPlan(vars, {{0, 1, 0}}, {lap}));
  ASSERT_TRUE(collapsed.plan().collapsed(1) && laplacian.plan().collapsed(0));
  std::vector<MultiIndex> all;
  const JetAlgebra J(3, 4);
  for (const MultiIndex& m : J.indices())
    if (degree(m) > 0) all.push_back(m);
  Taylor full(TaylorPlan(vars, all));
  std::vector<Var> a, b;
  for (const Var& u : {built, given}) {
    std::vector<Var>& out = u == built ? a : b;
    out.push_back(u);
    out.push_back(collapsed.sum(u, "laplacian"));
    out.push_back(laplacian.sum(u, "laplacian"));
    out.push_back(collapsed.sum(u, std::size_t{1}));
    out.push_back(collapsed.derivative(u, {0, 1, 0}));
    for (const MultiIndex& m : all) out.push_back(full.derivative(u, m));
  }
  // The two plans share the streams of the same multi-index: one input each.
  std::vector<std::string> names;
  for (const GivenStream& s : given_streams(g, "x#f")) names.push_back(s.input);
  EXPECT_EQ(names.size(), 34u + 2u);  // every partial to order 4, the Laplacian, the biharmonic
  EXPECT_NE(std::find(names.begin(), names.end(), "x#f@2.0.0*1"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "x#f@2.0.0*2+0.2.0*2+0.0.2*2"), names.end());
  Bindings bind = mlp.init_glorot_normal(3, 0.2);
  const MatrixD points = random_points(n, 11);
  bind["x"] = points;
  bind_given(g, "x#f", points, bind);
  expect_same(evaluate(a, bind), evaluate(b, bind));
  // Unbound streams are an error, not zeros.
  bind.erase("x#f@0.0.1*1");
  EXPECT_THROW(evaluate(b, bind), UserError);
}

TEST(TaylorGiven, CoordinatesOfAnotherInputLeaveItConstant) {
  // Coordinates (x0, x2) of X and t of another input: the leaf depends on X only; a plan over
  // part of X's columns maps its multi-indices onto all of X's.
  constexpr int n = 5;
  Graph g(DType::f64);
  const Var X = g.input("x", {n, 3}), T = g.input("t", {n, 1});
  const Var built = f_graph(X) * T * T, given = given_leaf(X, "f") * T * T;
  const std::vector<TaylorVar> vars{{X, 2}, {T, 0}, {X, 0}};
  Taylor taylor(
      TaylorPlan(vars, {{1, 1, 0}, {0, 2, 0}, {2, 0, 1}, {0, 1, 2}}, {laplacian_sum(3, {0, 2})}));
  std::vector<Var> a, b;
  for (const MultiIndex& m : taylor.plan().closure()) {
    a.push_back(taylor.derivative(built, m));
    b.push_back(taylor.derivative(given, m));
  }
  a.push_back(taylor.sum(built, std::size_t{0}));
  b.push_back(taylor.sum(given, std::size_t{0}));
  for (const GivenStream& s : given_streams(g, "x#f"))
    for (const auto& [alpha, w] : s.terms) {
      ASSERT_EQ(alpha.size(), 3u) << s.input;  // over X's columns
      EXPECT_EQ(alpha[1], 0) << s.input;       // column 1 is no coordinate of the plan
    }
  Bindings bind{{"x", random_points(n, 5)}, {"t", random_points(n, 6).col(0)}};
  bind_given(g, "x#f", bind["x"], bind);
  expect_same(evaluate(a, bind), evaluate(b, bind));
}

TEST(TaylorGiven, Errors) {
  Graph g(DType::f64);
  const Var X = g.input("x", {4, 3});
  EXPECT_THROW(given_leaf(X * 2.0, "f"), UserError);
  EXPECT_THROW(given_leaf(X, "a#b"), UserError);
  EXPECT_THROW(given_leaf(X, "a@b"), UserError);
  EXPECT_THROW(given_leaf(X, ""), UserError);
  // Without a Taylor object there are no streams; with a plan over other inputs the leaf is a
  // constant (no streams either).
  const Var leaf = given_leaf(X, "f");
  EXPECT_TRUE(given_streams(g, "x#f").empty());
  const Var Y = g.input("y", {4, 1});
  Taylor taylor(TaylorPlan({{Y, 0}}, {{2}}));
  EXPECT_EQ(taylor.stream(leaf * Y, 1).id >= 0, true);
  EXPECT_TRUE(given_streams(g, "x#f").empty());
}

}  // namespace
}  // namespace jetpde
