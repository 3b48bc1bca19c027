// Taylor plans: stream counts of docs/design.md section 5, closures and collapsed sums.
#include <gtest/gtest.h>

#include "autodiff/ops.h"
#include "autodiff/taylor.h"

namespace jetpde {
namespace {

std::vector<TaylorVar> coordinates(Graph& g, int n) {
  const Var x = g.input("x", {8, n});
  std::vector<TaylorVar> vars;
  for (int i = 0; i < n; ++i) vars.push_back({x, i});
  return vars;
}

TEST(TaylorPlan, BurgersHasFourStreams) {  // (x, t): u_t, u_x, u_xx
  Graph g;
  const TaylorPlan plan(coordinates(g, 2), {{0, 1}, {1, 0}, {2, 0}});
  EXPECT_EQ(plan.stream_count(), 4);
  EXPECT_EQ(plan.str(), "4 streams: 00 10 01 20");
}

TEST(TaylorPlan, KuramotoSivashinskyHasSixStreams) {  // u_t, u_x, u_xx, u_xxxx
  Graph g;
  const TaylorPlan plan(coordinates(g, 2), {{0, 1}, {1, 0}, {2, 0}, {4, 0}});
  EXPECT_EQ(plan.stream_count(), 6);
}

TEST(TaylorPlan, NavierStokes2dWithTimeHasSixStreams) {  // (x, y, t)
  Graph g;
  const std::vector<TaylorVar> vars = coordinates(g, 3);
  const TaylorPlan plan(vars, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0}, {0, 2, 0}});
  EXPECT_EQ(plan.stream_count(), 6);
  // With the viscous term carried as one collapsed Laplacian stream: 5.
  const TaylorPlan collapsed(vars, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {laplacian_sum(3, {0, 1})});
  EXPECT_EQ(collapsed.stream_count(), 5);
}

TEST(TaylorPlan, Biharmonic2dHasThirteenStreamsElevenCollapsed) {
  Graph g;
  const std::vector<TaylorVar> vars = coordinates(g, 2);
  const TaylorPlan full(vars, {{4, 0}, {2, 2}, {0, 4}});
  EXPECT_EQ(full.stream_count(), 13);
  const TaylorPlan collapsed(vars, {}, {biharmonic_sum(2)});
  EXPECT_EQ(collapsed.stream_count(), 11);
  EXPECT_EQ(collapsed.num_collapsed(), 1);
}

TEST(TaylorPlan, LaplacianInDDimensionsHasDPlusTwoStreams) {
  for (int d : {1, 2, 3, 8, 32}) {
    Graph g;
    const TaylorPlan plan(coordinates(g, d), {}, {laplacian_sum(d)});
    EXPECT_EQ(plan.stream_count(), d + 2) << "d = " << d;
  }
}

TEST(TaylorPlan, AllPartialsUpToFourIn3dHave35Streams) {
  Graph g;
  const TaylorPlan plan(coordinates(g, 3), {{4, 0, 0},
                                            {0, 4, 0},
                                            {0, 0, 4},
                                            {2, 1, 1},
                                            {1, 2, 1},
                                            {1, 1, 2},
                                            {2, 2, 0},
                                            {2, 0, 2},
                                            {0, 2, 2},
                                            {3, 1, 0},
                                            {3, 0, 1},
                                            {1, 3, 0},
                                            {0, 3, 1},
                                            {1, 0, 3},
                                            {0, 1, 3}});
  EXPECT_EQ(plan.stream_count(), 35);
}

TEST(TaylorPlan, ASumWhoseTermsAreAllPlannedIsNotCollapsed) {
  Graph g;
  const TaylorPlan plan(coordinates(g, 2), {{2, 0}, {0, 2}}, {laplacian_sum(2)});
  EXPECT_FALSE(plan.collapsed(0));
  EXPECT_EQ(plan.stream_count(), 5);  // 00 10 01 20 02
}

TEST(TaylorPlan, ClosureIsOrderedByDegree) {
  Graph g;
  const TaylorPlan plan(coordinates(g, 2), {{1, 2}});
  std::vector<int> degrees;
  for (const MultiIndex& a : plan.closure()) degrees.push_back(degree(a));
  EXPECT_EQ(degrees, (std::vector<int>{0, 1, 1, 2, 2, 3}));
}

// First-layer streams are rows of W, broadcast over points: no [n, width] tensor for them.
TEST(TaylorTransform, FirstLayerStreamsAreRowsOfW) {
  Graph g(DType::f64);
  const Var x = g.input("x", {16, 2});
  const Var w = g.param("W", {2, 8});
  const Var b = g.param("b", {1, 8});
  const Var z = matmul(x, w) + b;
  Taylor t(TaylorPlan({{x, 0}, {x, 1}}, {{1, 0}, {0, 1}, {2, 0}}));
  const Var zx = t.stream(z, t.plan().key_of({1, 0}));
  EXPECT_EQ(zx.op(), Op::SliceRows);
  EXPECT_EQ(zx.shape(), (Shape{1, 8}));
  EXPECT_EQ(g.node(zx.node().args[0]).attrs.name, "W");
  EXPECT_LT(t.stream(z, t.plan().key_of({2, 0})).id, 0) << "second-order stream must be zero";
  // After the activation the streams are full tensors.
  EXPECT_EQ(t.stream(tanh(z), t.plan().key_of({1, 0})).shape(), (Shape{16, 8}));
}

TEST(TaylorTransform, ParamsAndConstantsHaveZeroStreams) {
  Graph g(DType::f64);
  const Var x = g.input("x", {4, 1});
  const Var p = g.param("p", {1, 1});
  Taylor t(TaylorPlan({{x, 0}}, {{2}}));
  EXPECT_LT(t.stream(exp(p), 1).id, 0);
  EXPECT_EQ(t.stream(exp(p), 0), exp(p));
}

}  // namespace
}  // namespace jetpde
