// CSG: the signed distance is a bound with the right sign, volumes and boundary measures against
// closed forms, boundary samples on the composite boundary with outward normals (flipped on a
// difference's holes), coincident faces counted once, nesting.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/polygon.h"
#include "geometry/sampler.h"
#include "geometry/time_product.h"
#include "tests/geometry/geometry_checks.h"
#include "tests/support/user_error.h"

namespace jetpde::geometry {
namespace {

constexpr double pi = std::numbers::pi;

// Two unit disks whose centers are 1 apart: lens area 2 acos(1/2) - (1/2) sqrt(3).
const double kLens = 2 * std::acos(0.5) - 0.5 * std::sqrt(3.0);

GeometryPtr plate_with_hole() {
  return subtract(rectangle({0, 0}, {1, 1}), disk({0.5, 0.5}, 0.25));
}
GeometryPtr l_shape() { return subtract(rectangle({0, 0}, {2, 2}), rectangle({1, 1}, {2, 2})); }

TEST(Csg, DistanceIsABoundWithTheRightSign) {
  // Against the exact distance of the same L-shape as a polygon: same sign everywhere, and
  // |csg| <= |exact|.
  auto csg = l_shape();
  auto exact = polygon({{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}});
  EXPECT_FALSE(csg->distance_is_exact());
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 2.5);
  for (int i = 0; i < 2000; ++i) {
    const std::vector<double> p{u(rng), u(rng)};
    const double a = csg->signed_distance(p), b = exact->signed_distance(p);
    EXPECT_EQ(a < 0, b < 0);
    EXPECT_LE(std::abs(a), std::abs(b) + 1e-12);
  }
  // Outside a union the distance is exact.
  auto two = unite(disk({0, 0}, 1), disk({3, 0}, 1));
  EXPECT_DOUBLE_EQ(two->signed_distance(std::vector<double>{1.5, 0}), 0.5);
}

TEST(Csg, VolumesMatchClosedForms) {
  auto lens = intersect(disk({0, 0}, 1), disk({1, 0}, 1));
  auto pair = unite(disk({0, 0}, 1), disk({1, 0}, 1));
  EXPECT_NEAR(lens->volume(), kLens, 1e-3 * kLens);
  EXPECT_NEAR(pair->volume(), 2 * pi - kLens, 1e-3 * pi);
  EXPECT_NEAR(plate_with_hole()->volume(), 1 - pi / 16, 1e-3);
  EXPECT_NEAR(l_shape()->volume(), 3, 1e-3);
  EXPECT_FALSE(lens->volume_is_exact());
  // Ball minus a concentric ball.
  auto shell = subtract(sphere({0, 0, 0}, 1), sphere({0, 0, 0}, 0.5));
  EXPECT_NEAR(shell->volume(), 4.0 / 3 * pi * (1 - 0.125), 5e-3);
}

TEST(Csg, BoundaryMeasuresMatchClosedForms) {
  // Estimates from 2^15 points per patch: about 3e-5 relative.
  EXPECT_NEAR(plate_with_hole()->boundary_measure(), 4 + 2 * pi * 0.25, 5e-5 * 5.6);
  EXPECT_NEAR(l_shape()->boundary_measure(), 8, 5e-5 * 8);  // coincident faces counted right
  // Two unit squares side by side: the shared edge is interior to the union.
  auto domino = unite(rectangle({0, 0}, {1, 1}), rectangle({1, 0}, {2, 1}));
  EXPECT_NEAR(domino->boundary_measure(), 6, 5e-5 * 6);
  // Overlapping rectangles with collinear bottom edges: counted once.
  auto overlap = unite(rectangle({0, 0}, {2, 1}), rectangle({1, 0}, {3, 2}));
  EXPECT_NEAR(overlap->boundary_measure(), 3 + 2 + 1 + 1 + 2 + 1, 5e-5 * 10);
  // Intersection sharing a face with the same orientation.
  auto half = intersect(rectangle({0, 0}, {2, 1}), rectangle({1, 0}, {3, 1}));
  EXPECT_NEAR(half->boundary_measure(), 4, 5e-5 * 4);
  auto lens = intersect(disk({0, 0}, 1), disk({1, 0}, 1));
  EXPECT_NEAR(lens->boundary_measure(), 2 * (2 * pi / 3), 5e-5 * 4.2);
}

TEST(Csg, BoundarySamplesLieOnTheBoundaryWithOutwardNormals) {
  std::vector<GeometryPtr> shapes{
      plate_with_hole(), l_shape(), unite(disk({0, 0}, 1), disk({1, 0}, 1)),
      intersect(disk({0, 0}, 1), disk({1, 0}, 1)),
      unite(rectangle({0, 0}, {2, 1}), rectangle({1, 0}, {3, 2})),
      subtract(sphere({0, 0, 0}, 1), box({0.0123, -0.0456, 0.0789}, {2, 2, 2})),
      // nested: (square minus hole) union a disk, minus a small square
      subtract(unite(plate_with_hole(), disk({1, 0.5}, 0.3)), rectangle({0.1, 0.1}, {0.2, 0.2}))};
  for (const auto& g : shapes)
    for (auto method : {SampleMethod::pseudo_random, SampleMethod::sobol, SampleMethod::grid}) {
      SCOPED_TRACE(g->describe() + " " + sample_method_name(method));
      const PointSet s = sample_boundary(*g, 2000, {.method = method, .seed = 9});
      testing::expect_boundary(*g, s);
      if (method != SampleMethod::grid) {
        EXPECT_EQ(s.size(), 2000u);
      }
      testing::expect_interior(*g, sample_interior(*g, 2000, {.method = method, .seed = 9}));
    }
}

TEST(Csg, DivergenceTheoremHoldsOnTheSamples) {
  // The flux of F(p) = p through the boundary is dim x volume: checks weights and normals,
  // including the flipped normals of the hole.
  for (const auto& g :
       std::vector<GeometryPtr>{plate_with_hole(), l_shape(),
                                subtract(sphere({0, 0, 0}, 1), sphere({0.2, 0, 0}, 0.5))}) {
    const PointSet s = sample_boundary(*g, 1 << 14, {.method = SampleMethod::sobol, .seed = 1});
    EXPECT_NEAR(testing::flux_of_position(s), g->dim() * g->volume(), 1e-2 * g->volume())
        << g->describe();
  }
}

TEST(Csg, HoleNormalsPointIntoTheHole) {
  auto g = plate_with_hole();
  const PointSet s = sample_boundary(*g, 500, {.seed = 2}, BoundaryPiece::named("circle"));
  ASSERT_EQ(s.size(), 500u);
  for (Eigen::Index i = 0; i < s.points.rows(); ++i) {
    const double rx = s.points(i, 0) - 0.5, ry = s.points(i, 1) - 0.5;
    EXPECT_NEAR(std::hypot(rx, ry), 0.25, 1e-12);
    EXPECT_NEAR(s.normals(i, 0), -rx / 0.25, 1e-12);
    EXPECT_NEAR(s.normals(i, 1), -ry / 0.25, 1e-12);
  }
  EXPECT_NEAR(s.weights.sum(), 2 * pi * 0.25, 1e-12);
  EXPECT_TRUE(s.measure_exact == false);
}

TEST(Csg, SubtractedFacesOnTheOuterBoundaryAreDropped) {
  // The L-shape's removed corner square shares two edges with the outer square; none of its
  // points on them, nor the outer square's points there, may appear.
  auto g = l_shape();
  const PointSet s = sample_boundary(*g, 4000, {.method = SampleMethod::halton, .seed = 4});
  for (Eigen::Index i = 0; i < s.points.rows(); ++i) {
    const double x = s.points(i, 0), y = s.points(i, 1);
    EXPECT_FALSE(x > 1 + 1e-9 && y > 1 + 1e-9) << x << ", " << y;
  }
  // Edge lengths: 8 in all, of which x = 1 (1 < y < 2) and y = 1 (1 < x < 2) are the hole's.
  const PointSet inner =
      sample_boundary(*g, 100, {}, BoundaryPiece::named("left").and_where("x == 1"));
  EXPECT_NEAR(inner.measure, 1, 1e-4);
  for (Eigen::Index i = 0; i < inner.points.rows(); ++i) EXPECT_NEAR(inner.normals(i, 0), 1, 0);
}

TEST(Csg, Errors) {
  using jetpde::testing::expect_user_error;
  expect_user_error(
      [] {
        unite(rectangle({0, 0}, {1, 1}), sphere({0, 0, 0}, 1));
      },
      "union of rectangle [0, 1] x [0, 1] (2-D) and sphere (center (0, 0, 0), "
      "radius 1) (3-D): the dimensions differ");
  expect_user_error(
      [] {
        intersect(rectangle({0, 0}, {1, 1}), rectangle({2, 0}, {3, 1}));
      },
      "intersection of rectangle [0, 1] x [0, 1] and rectangle [2, 3] x [0, 1] is "
      "empty: their bounding boxes do not overlap");
}

TEST(Csg, SpaceTimeOverACsgSpace) {
  auto g = time_product(plate_with_hole(), 0, 2);
  EXPECT_NEAR(g->volume(), 2 * (1 - pi / 16), 2e-3);
  const PointSet initial = sample_boundary(*g, 1000, {.method = SampleMethod::sobol}, "initial");
  testing::expect_boundary(*g, initial);
  EXPECT_NEAR(initial.measure, 1 - pi / 16, 1e-3);
  for (Eigen::Index i = 0; i < initial.points.rows(); ++i) {
    EXPECT_EQ(initial.points(i, 2), 0);
    EXPECT_EQ(initial.normals(i, 2), -1);
  }
  const PointSet all = sample_boundary(*g, 1 << 14, {.method = SampleMethod::sobol});
  testing::expect_boundary(*g, all);
  EXPECT_NEAR(testing::flux_of_position(all), 3 * g->volume(), 1e-2 * g->volume());
}

}  // namespace
}  // namespace jetpde::geometry
