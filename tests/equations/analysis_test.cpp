// Analysis: the partial derivatives each field needs, the highest order, and the Taylor plans
// (stream counts of docs/design.md section 5) built from them.
#include <gtest/gtest.h>

#include "equations/analysis.h"
#include "equations/library.h"
#include "equations/parser.h"

namespace jetpde::equations {
namespace {

using Partials = std::set<MultiIndex>;

// The plan of a library equation on a fresh input leaf.
TaylorPlan library_plan(const Pde& pde, std::int64_t points = 4) {
  Graph g(DType::f64);
  const auto d = static_cast<std::int64_t>(pde.context.coordinate_names().size());
  return plan_for(pde.equations, pde.context, g.input("x", {points, d}));
}

TEST(Analysis, Burgers) {
  const Pde pde = library_equation("burgers");
  const Needs needs = analyze(pde.equations, pde.context);
  ASSERT_EQ(needs.fields.size(), 1u);
  EXPECT_EQ(needs.fields.at("u").partials, (Partials{{0, 0}, {1, 0}, {0, 1}, {2, 0}}));
  EXPECT_FALSE(needs.fields.at("u").laplacian);
  EXPECT_EQ(needs.max_order, 2);
  EXPECT_FALSE(needs.normal);
  EXPECT_EQ(library_plan(pde).stream_count(), 4);
}

TEST(Analysis, KuramotoSivashinskyNeedsFourthOrder) {
  const Pde pde = library_equation("kuramoto_sivashinsky");
  const Needs needs = analyze(pde.equations, pde.context);
  EXPECT_EQ(needs.max_order, 4);
  EXPECT_EQ(needs.fields.at("u").partials, (Partials{{0, 0}, {1, 0}, {0, 1}, {2, 0}, {4, 0}}));
  EXPECT_EQ(library_plan(pde).stream_count(), 6);  // 00 10 01 20 30 40
}

TEST(Analysis, NavierStokes2dPerField) {
  const Pde pde = library_equation("navier_stokes");
  ASSERT_EQ(pde.context.coordinate_names(), (std::vector<std::string>{"x", "y", "t"}));
  const Needs needs = analyze(pde.equations, pde.context);
  ASSERT_EQ(needs.fields.size(), 3u);
  const Partials velocity{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (const char* f : {"u", "v"}) {
    EXPECT_EQ(needs.fields.at(f).partials, velocity) << f;
    EXPECT_TRUE(needs.fields.at(f).laplacian) << f;
  }
  EXPECT_EQ(needs.fields.at("p").partials, (Partials{{1, 0, 0}, {0, 1, 0}}));
  EXPECT_FALSE(needs.fields.at("p").laplacian);
  EXPECT_EQ(needs.max_order, 2);
  const TaylorPlan plan = library_plan(pde);
  EXPECT_EQ(plan.stream_count(), 5);  // 000 100 010 001 and the collapsed spatial Laplacian
  EXPECT_EQ(plan.num_collapsed(), 1);
  // The Laplacian is over space only: its terms are 200 and 020, not 002.
  ASSERT_EQ(plan.sums().size(), 1u);
  EXPECT_EQ(plan.sums()[0].terms.size(), 2u);
  EXPECT_EQ(plan.sums()[0].terms[1].first, (MultiIndex{0, 2, 0}));
}

TEST(Analysis, NavierStokes3dAndSteady) {
  const Pde unsteady = library_equation("navier_stokes", {{"dim", "3"}});
  EXPECT_EQ(analyze(unsteady.equations, unsteady.context).fields.size(), 4u);
  EXPECT_EQ(library_plan(unsteady).stream_count(), 6);  // 1 + 4 + 1
  const Pde steady = library_equation("navier_stokes", {{"steady", "1"}});
  EXPECT_EQ(steady.context.time_index(), -1);
  EXPECT_EQ(analyze(steady.equations, steady.context).fields.at("u").partials,
            (Partials{{0, 0}, {1, 0}, {0, 1}}));
  EXPECT_EQ(library_plan(steady).stream_count(), 4);
}

TEST(Analysis, BiharmonicIsCollapsed) {
  const Pde pde = library_equation("biharmonic");
  const Needs needs = analyze(pde.equations, pde.context);
  EXPECT_TRUE(needs.fields.at("u").biharmonic);
  EXPECT_EQ(needs.max_order, 4);
  EXPECT_EQ(library_plan(pde).stream_count(),
            11);  // docs/design.md section 5: 2-D biharmonic, 11 collapsed
}

TEST(Analysis, Poisson32dNeeds34Streams) {
  const Pde pde = library_equation("poisson", {{"dim", "32"}});
  EXPECT_EQ(pde.context.coordinate_names().size(), 32u);
  EXPECT_EQ(pde.context.coordinate_names()[31], "x32");
  const TaylorPlan plan = library_plan(pde);
  EXPECT_EQ(plan.stream_count(), 34);
  EXPECT_EQ(plan.num_collapsed(), 1);
}

TEST(Analysis, ExplicitSecondDerivativeAlongsideALaplacian) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  Graph g(DType::f64);
  const Var x = g.input("x", {4, 2});
  // u_xx alone does not cover the Laplacian: the sum stays collapsed (00 10 01 20 + 1).
  EXPECT_EQ(plan_for({parse("u_xx + laplacian(u)", ctx)}, ctx, x).stream_count(), 5);
  // With u_yy too, the plan reads the Laplacian from its terms: nothing collapsed.
  const TaylorPlan covered = plan_for({parse("u_xx*u_yy + laplacian(u)", ctx)}, ctx, x);
  EXPECT_EQ(covered.stream_count(), 5);
  EXPECT_EQ(covered.num_collapsed(), 0);
}

TEST(Analysis, NormalParamsAndMerging) {
  Context ctx;
  ctx.fields({"u", "v"}).coordinates({"x", "y"}).param("k", 2);
  const Equation flux = parse("dot(n, grad(u)) - k*v", ctx);
  const Needs a = analyze(flux, ctx);
  EXPECT_TRUE(a.normal);
  EXPECT_EQ(a.params, (std::set<std::string>{"k"}));
  EXPECT_EQ(a.fields.at("u").partials, (Partials{{1, 0}, {0, 1}}));
  EXPECT_EQ(a.fields.at("v").partials, (Partials{{0, 0}}));
  EXPECT_EQ(a.max_order, 1);
  const Needs b = analyze({flux, parse("d(v, x, 3, y)", ctx)}, ctx);
  EXPECT_EQ(b.fields.at("v").partials, (Partials{{0, 0}, {3, 1}}));
  EXPECT_EQ(b.max_order, 4);
  EXPECT_TRUE(b.normal);
  // The chain rule asks only for what survives: d(x*u, x) = u + x*u_x.
  EXPECT_EQ(analyze(parse("d(x*u + 0*u_y, x)", ctx), ctx).fields.at("u").partials,
            (Partials{{0, 0}, {1, 0}}));
}

}  // namespace
}  // namespace jetpde::equations
