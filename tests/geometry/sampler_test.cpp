// Samplers on every primitive with every method: points inside / on the boundary, unit outward
// normals, weights summing to the measure, integrals of known functions, seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/polygon.h"
#include "geometry/sampler.h"
#include "geometry/time_product.h"
#include "tests/geometry/geometry_checks.h"
#include "tests/support/user_error.h"

namespace jetpde::geometry {
namespace {

constexpr double pi = std::numbers::pi;
const SampleMethod kMethods[] = {SampleMethod::pseudo_random, SampleMethod::latin_hypercube,
                                 SampleMethod::halton, SampleMethod::sobol, SampleMethod::grid};

std::vector<GeometryPtr> primitives() {
  return {interval(-1, 2),
          rectangle({0, -1}, {2, 1}),
          box({0, 0, 0}, {1, 2, 3}),
          hypercube(4, -1, 1),
          disk({0.5, 0.5}, 0.5),
          sphere({0, 0, 0}, 1),
          polygon({{0, 0}, {0, 2}, {1, 2}, {1, 1}, {2, 1}, {2, 0}}),  // clockwise L
          time_product(interval(0, 1), 0, 2),
          time_product(disk({0, 0}, 1), 0, 1)};
}

TEST(Sampler, InteriorPointsAreInsideWithWeightsSummingToTheVolume) {
  for (const auto& g : primitives())
    for (auto method : kMethods) {
      SCOPED_TRACE(g->describe() + " " + sample_method_name(method));
      const PointSet s = sample_interior(*g, 1000, {.method = method, .seed = 3});
      testing::expect_interior(*g, s);
      EXPECT_EQ(s.normals.rows(), 0);
      if (method != SampleMethod::grid)
        EXPECT_EQ(s.size(), 1000u);
      else
        EXPECT_NEAR(static_cast<double>(s.size()), 1000, 150);
      EXPECT_TRUE(s.measure_exact);
    }
}

TEST(Sampler, BoundaryPointsAreOnTheBoundaryWithOutwardNormals) {
  for (const auto& g : primitives())
    for (auto method : kMethods) {
      SCOPED_TRACE(g->describe() + " " + sample_method_name(method));
      const PointSet s = sample_boundary(*g, 1000, {.method = method, .seed = 3});
      testing::expect_boundary(*g, s);
      EXPECT_DOUBLE_EQ(s.measure, g->boundary_measure());
      if (method != SampleMethod::grid) {
        EXPECT_EQ(s.size(), 1000u);
      }
    }
}

TEST(Sampler, InteriorIntegralsMatchClosedForms) {
  // Second moments: they fail when the points are not uniform (e.g. clustered at the center).
  struct Case {
    GeometryPtr g;
    std::function<double(Point)> f;
    double exact;
  };
  const std::vector<Case> cases{
      {disk({0.5, 0.5}, 0.5), [](Point p) { return std::pow(p[0] - 0.5, 2); },
       pi * std::pow(0.5, 4) / 4},
      {sphere({0, 0, 0}, 1), [](Point p) { return p[2] * p[2]; }, 4 * pi / 15},
      {rectangle({0, -1}, {2, 1}), [](Point p) { return p[0] * p[0] * p[1] * p[1]; },
       8.0 / 3 * 2.0 / 3},
      {polygon({{0, 0}, {1, 0}, {0, 1}}), [](Point p) { return p[0] * p[1]; }, 1.0 / 24},
      {time_product(disk({0, 0}, 1), 0, 1),
       [](Point p) { return p[2] * (p[0] * p[0] + p[1] * p[1]); }, 0.5 * pi / 2},
      {hypercube(4, 0, 1), [](Point p) { return p[0] * p[1] * p[2] * p[3]; }, 1.0 / 16}};
  for (const auto& c : cases) {
    for (auto method : {SampleMethod::halton, SampleMethod::sobol, SampleMethod::grid}) {
      const PointSet s = sample_interior(*c.g, 1 << 14, {.method = method, .seed = 1});
      // A grid cut by a curved boundary is first-order accurate: a looser tolerance.
      const double tol = method == SampleMethod::grid && !c.g->is_box() ? 2e-2 : 3e-3;
      EXPECT_NEAR(testing::integrate(s, c.f), c.exact, tol * std::abs(c.exact) + 1e-4)
          << c.g->describe() << " " << sample_method_name(method);
    }
    const PointSet s = sample_interior(*c.g, 1 << 14, {.seed = 1});  // Monte Carlo: ~1/sqrt(n)
    EXPECT_NEAR(testing::integrate(s, c.f), c.exact, 0.05 * std::abs(c.exact)) << c.g->describe();
  }
}

TEST(Sampler, BoundaryIntegralsMatchClosedForms) {
  // The flux of F(p) = p is dim x volume (divergence theorem); on a circle of radius r,
  // the integral of x^2 is pi r^3.
  for (const auto& g : primitives()) {
    if (g->dim() == 1) continue;
    const PointSet s = sample_boundary(*g, 1 << 14, {.method = SampleMethod::sobol, .seed = 1});
    EXPECT_NEAR(testing::flux_of_position(s), g->dim() * g->volume(), 2e-3 * g->volume())
        << g->describe();
  }
  const PointSet circle = sample_boundary(*disk({0, 0}, 2), 4096, {.method = SampleMethod::grid});
  EXPECT_NEAR(testing::integrate(circle, [](Point p) { return p[0] * p[0]; }), 8 * pi, 1e-9);
  const PointSet ends = sample_boundary(*interval(-1, 2), 7, {.method = SampleMethod::grid});
  ASSERT_EQ(ends.size(), 2u);  // one point for each end
  EXPECT_EQ(ends.points(0, 0), -1);
  EXPECT_EQ(ends.normals(0, 0), -1);
  EXPECT_EQ(ends.points(1, 0), 2);
  EXPECT_EQ(ends.weights(1, 0), 1);
}

TEST(Sampler, BoundaryPointsAreUniformOverPiecesOfDifferentSizes) {
  // A 4 x 1 rectangle: the long sides carry 80% of the points.
  auto g = rectangle({0, 0}, {4, 1});
  const PointSet s = sample_boundary(*g, 10000, {.method = SampleMethod::sobol, .seed = 2});
  int long_sides = 0;
  for (Eigen::Index i = 0; i < s.points.rows(); ++i)
    if (s.normals(i, 1) != 0) ++long_sides;
  EXPECT_NEAR(long_sides, 8000, 5);
}

TEST(Sampler, SeedsReproduceAndDifferentSeedsDiffer) {
  auto g = disk({0, 0}, 1);
  for (auto method : {SampleMethod::pseudo_random, SampleMethod::latin_hypercube,
                      SampleMethod::halton, SampleMethod::sobol}) {
    const SampleOptions a{.method = method, .seed = 5}, b{.method = method, .seed = 6};
    EXPECT_TRUE((sample_interior(*g, 100, a).points == sample_interior(*g, 100, a).points).all());
    EXPECT_FALSE((sample_interior(*g, 100, a).points == sample_interior(*g, 100, b).points).all());
    EXPECT_TRUE((sample_boundary(*g, 100, a).points == sample_boundary(*g, 100, a).points).all());
    EXPECT_FALSE((sample_boundary(*g, 100, a).points == sample_boundary(*g, 100, b).points).all());
  }
}

TEST(Sampler, RejectionGivesUpWhenTooLittleIsAccepted) {
  // A thin diagonal sliver fills about 2e-4 of its bounding box.
  auto sliver = polygon({{0, 0}, {1, 0.9999}, {1, 1}});
  jetpde::testing::expect_user_error(
      [&] { sample_interior(*sliver, 10, {}); },
      "interior sampling of polygon with 3 vertices [0, 1] x [0, 1]: only a fraction 5e-05 of the "
      "candidate points lies in it, below min_acceptance 0.001 of rejection sampling; sample a "
      "geometry with a tighter bounding box, or lower min_acceptance");
  EXPECT_EQ(sample_interior(*sliver, 10, {.min_acceptance = 1e-5}).size(), 10u);
  jetpde::testing::expect_user_error([&] { sample_interior(*sliver, 10, {.min_acceptance = 0}); },
                                     "sampling: min_acceptance must be in (0, 1], got 0");
}

TEST(Sampler, ZeroPointsGiveAnEmptySet) {
  const PointSet s = sample_interior(*disk({0, 0}, 1), 0);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.points.cols(), 2);
}

}  // namespace
}  // namespace jetpde::geometry
