// Primitives: exact signed distance against a brute-force distance to densely sampled boundary
// points, volumes and boundary measures, names, and the messages of bad constructions.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/polygon.h"
#include "geometry/sampler.h"
#include "geometry/time_product.h"
#include "tests/geometry/geometry_checks.h"
#include "tests/support/user_error.h"

namespace jetpde::geometry {
namespace {

using testing::row;
constexpr double pi = std::numbers::pi;

// Brute-force distance from random points of the enlarged bounding box to a dense boundary
// sample: the exact signed distance must agree (up to the sample's spacing `resolution`), and
// its sign must match contains().
void expect_exact_distance(const Geometry& g, std::size_t boundary_points, double resolution) {
  const PointSet boundary =
      sample_boundary(g, boundary_points, {.method = SampleMethod::grid, .seed = 0});
  const Bounds box = g.bounds();
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unit(-0.2, 1.2);
  std::vector<double> p(static_cast<std::size_t>(g.dim()));
  for (int trial = 0; trial < 200; ++trial) {
    for (int k = 0; k < g.dim(); ++k) {
      const auto j = static_cast<std::size_t>(k);
      p[j] = box.lo[j] + unit(rng) * (box.hi[j] - box.lo[j]);
    }
    double nearest = INFINITY;
    for (Eigen::Index i = 0; i < boundary.points.rows(); ++i) {
      double d2 = 0;
      for (int k = 0; k < g.dim(); ++k)
        d2 += std::pow(p[static_cast<std::size_t>(k)] - boundary.points(i, k), 2);
      nearest = std::min(nearest, std::sqrt(d2));
    }
    const double sdf = g.signed_distance(p);
    EXPECT_NEAR(std::abs(sdf), nearest, resolution) << g.describe();
    EXPECT_LE(std::abs(sdf), nearest + 1e-12) << g.describe();  // never above a boundary point's
  }
}

TEST(Primitives, SignedDistancesAreExact) {
  expect_exact_distance(*rectangle({0, 0}, {2, 1}), 20000, 5e-4);
  expect_exact_distance(*disk({0.3, -0.2}, 0.7), 20000, 5e-4);
  expect_exact_distance(*polygon({{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}}), 20000, 5e-4);
  expect_exact_distance(*polygon({{0, 0}, {0, 1}, {1, 0}}), 20000, 5e-4);  // clockwise
  expect_exact_distance(*box({0, 0, 0}, {1, 2, 0.5}), 200000, 1e-2);
  expect_exact_distance(*sphere({0, 0, 1}, 0.5), 100000, 5e-3);
  expect_exact_distance(*time_product(disk({0, 0}, 1), 0, 1), 200000, 2e-2);
}

TEST(Primitives, SignedDistanceValues) {
  auto line = interval(-1, 2);
  EXPECT_DOUBLE_EQ(line->signed_distance(std::vector<double>{0}), -1);
  EXPECT_DOUBLE_EQ(line->signed_distance(std::vector<double>{3}), 1);
  EXPECT_DOUBLE_EQ(line->signed_distance(std::vector<double>{2}), 0);
  auto square = rectangle({0, 0}, {1, 1});
  EXPECT_DOUBLE_EQ(square->signed_distance(std::vector<double>{2, 2}), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(square->signed_distance(std::vector<double>{0.5, 0.25}), -0.25);
  auto slab = time_product(interval(0, 1), 0, 10);
  EXPECT_DOUBLE_EQ(slab->signed_distance(std::vector<double>{0.5, 5}), -0.5);
  EXPECT_NEAR(slab->signed_distance(std::vector<double>{0.5, 9.9}), -0.1, 1e-14);
  EXPECT_DOUBLE_EQ(slab->signed_distance(std::vector<double>{4, 14}), 5);
  MatrixD points(2, 2);
  points << 0.5, 0.5, 1, 0.5;
  const MatrixD d = square->signed_distance(points);
  EXPECT_DOUBLE_EQ(d(0, 0), -0.5);
  EXPECT_DOUBLE_EQ(d(1, 0), 0);
}

TEST(Primitives, NormalsAreTheUnitGradientOfTheDistance) {
  // Central differences of the signed distance at points away from kinks.
  std::vector<GeometryPtr> shapes{
      rectangle({0, 0}, {2, 1}), disk({0, 0}, 1),           polygon({{0, 0}, {3, 0}, {0, 2}}),
      sphere({0, 0, 0}, 1),      box({0, 0, 0}, {1, 1, 1}), time_product(disk({0, 0}, 1), 0, 4)};
  std::mt19937_64 rng(5);
  for (const auto& g : shapes) {
    const Bounds box = g->bounds();
    std::uniform_real_distribution<double> unit(-0.3, 1.3);
    int checked = 0;
    for (int trial = 0; trial < 400 && checked < 100; ++trial) {
      std::vector<double> p(static_cast<std::size_t>(g->dim())), n(p.size());
      for (std::size_t j = 0; j < p.size(); ++j)
        p[j] = box.lo[j] + unit(rng) * (box.hi[j] - box.lo[j]);
      g->outward_normal(p, n);
      std::vector<double> fd(p.size());
      const double h = 1e-6;
      for (std::size_t j = 0; j < p.size(); ++j) {
        auto plus = p, minus = p;
        plus[j] += h, minus[j] -= h;
        fd[j] = (g->signed_distance(plus) - g->signed_distance(minus)) / (2 * h);
      }
      double fd_norm = 0;
      for (double v : fd) fd_norm += v * v;
      if (std::abs(std::sqrt(fd_norm) - 1) > 1e-6) continue;  // a kink (medial axis) nearby
      ++checked;
      for (std::size_t j = 0; j < p.size(); ++j) EXPECT_NEAR(n[j], fd[j], 1e-6) << g->describe();
    }
    EXPECT_GT(checked, 50) << g->describe();
  }
}

TEST(Primitives, VolumesAndBoundaryMeasuresAreExact) {
  EXPECT_DOUBLE_EQ(interval(-1, 2)->volume(), 3);
  EXPECT_DOUBLE_EQ(interval(-1, 2)->boundary_measure(), 2);  // two points
  EXPECT_DOUBLE_EQ(rectangle({0, 0}, {2, 3})->volume(), 6);
  EXPECT_DOUBLE_EQ(rectangle({0, 0}, {2, 3})->boundary_measure(), 10);
  EXPECT_DOUBLE_EQ(box({0, 0, 0}, {1, 2, 3})->boundary_measure(), 22);
  EXPECT_DOUBLE_EQ(hypercube(4, 0, 2)->volume(), 16);
  EXPECT_DOUBLE_EQ(hypercube(4, 0, 2)->boundary_measure(), 8 * 8);
  EXPECT_DOUBLE_EQ(disk({1, 1}, 2)->volume(), 4 * pi);
  EXPECT_DOUBLE_EQ(disk({1, 1}, 2)->boundary_measure(), 4 * pi);
  EXPECT_DOUBLE_EQ(sphere({0, 0, 0}, 2)->volume(), 32.0 / 3 * pi);
  EXPECT_DOUBLE_EQ(sphere({0, 0, 0}, 2)->boundary_measure(), 16 * pi);
  auto l_shape = polygon({{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}});
  EXPECT_DOUBLE_EQ(l_shape->volume(), 3);
  EXPECT_DOUBLE_EQ(l_shape->boundary_measure(), 8);
  auto cylinder = time_product(disk({0, 0}, 1), 0, 2);
  EXPECT_DOUBLE_EQ(cylinder->volume(), 2 * pi);
  EXPECT_DOUBLE_EQ(cylinder->boundary_measure(), 2 * pi * 2 + 2 * pi);
  EXPECT_TRUE(cylinder->volume_is_exact());
  EXPECT_TRUE(cylinder->boundary_measure_is_exact());
  EXPECT_TRUE(cylinder->distance_is_exact());
}

TEST(Primitives, CoordinateNames) {
  EXPECT_EQ(interval(0, 1)->coordinate_names(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(box({0, 0, 0}, {1, 1, 1})->coordinate_names(),
            (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(hypercube(4, 0, 1)->coordinate_names(),
            (std::vector<std::string>{"x1", "x2", "x3", "x4"}));
  EXPECT_EQ(time_product(rectangle({0, 0}, {1, 1}), 0, 1)->coordinate_names(),
            (std::vector<std::string>{"x", "y", "t"}));
  auto line = interval(0, 1);
  line->set_coordinate_names({"r"});
  auto tp = time_product(line, 0, 1, "tau");
  EXPECT_EQ(tp->coordinate_names(), (std::vector<std::string>{"r", "tau"}));
  EXPECT_EQ(tp->coordinate_index("tau"), 1);
  const auto pieces = tp->piece_names();
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "r_min"), pieces.end());
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "tau_max"), pieces.end());
}

TEST(Primitives, BadConstructionsNameTheProblem) {
  using jetpde::testing::expect_user_error;
  expect_user_error([] { interval(1, 0); },
                    "interval: lower corner (1) must be below upper corner (0) in every coordinate "
                    "(coordinate 0)");
  expect_user_error(
      [] {
        rectangle({0, 0}, {1, 0});
      },
      "rectangle: lower corner (0, 0) must be below upper corner (1, 0) in every "
      "coordinate (coordinate 1)");
  expect_user_error(
      [] {
        hypercube({0, 0}, {1});
      },
      "hypercube: corners (0, 0) and (1) must have the same number (>= 1) of "
      "coordinates");
  expect_user_error([] { disk({0, 0}, -1); }, "disk: the radius must be positive, got -1");
  expect_user_error([] { sphere({0, 0, 0}, 0); }, "sphere: the radius must be positive, got 0");
  expect_user_error([] { polygon({{0, 0}, {1, 0}}); }, "polygon: needs at least 3 vertices, got 2");
  expect_user_error(
      [] {
        polygon({{0, 0}, {1, 1}, {1, 0}, {0, 1}});
      },
      "polygon: edge 0 (0, 0)-(1, 1) and edge 2 (1, 0)-(0, 1) intersect; the polygon "
      "must be simple");
  expect_user_error(
      [] {
        polygon({{0, 0}, {1, 0}, {1, 0}, {0, 1}});
      },
      "polygon: edge 1 has zero length (vertex (1, 0) repeated)");
  expect_user_error(
      [] {
        polygon({{0, 0}, {2, 0}, {1, 0}});
      },
      "polygon: edge 0 (0, 0)-(2, 0) and edge 1 (2, 0)-(1, 0) fold back onto each "
      "other; the polygon must be simple");
  expect_user_error([] { time_product(interval(0, 1), 1, 1); },
                    "time product of interval [0, 1]: the time interval [1, 1] must have t0 < t1");
  expect_user_error([] { time_product(interval(0, 1), 0, 1, "x"); },
                    "interval [0, 1] x time [0, 1]: coordinate names (x, x): 'x' appears twice");
  expect_user_error(
      [] {
        rectangle({0, 0}, {1, 1})->set_coordinate_names({"x"});
      },
      "rectangle [0, 1] x [0, 1]: coordinate names (x): expected 2 names, got 1");
  expect_user_error(
      [] {
        rectangle({0, 0}, {1, 1})->set_coordinate_names({"x", "and"});
      },
      "rectangle [0, 1] x [0, 1]: coordinate names (x, and): 'and' is not a valid "
      "name (letters, digits and _, not a keyword)");
  expect_user_error(
      [] {
        rectangle({0, 0}, {1, 1})->coordinate_index("t");
      },
      "rectangle [0, 1] x [0, 1] has no coordinate 't'; its coordinates are x, y");
}

}  // namespace
}  // namespace jetpde::geometry
