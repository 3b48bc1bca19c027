// Boundary pieces by name and by predicate (string and C++), and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

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

using jetpde::testing::expect_user_error;

// Every point satisfies `on_piece`, the normal is `normal`, and the weights sum to `measure`.
void expect_piece(const Geometry& g, const PointSet& s, const std::function<bool(Point)>& on_piece,
                  const std::vector<double>& normal, double measure) {
  ASSERT_GT(s.size(), 0u);
  testing::expect_boundary(g, s);
  for (Eigen::Index i = 0; i < s.points.rows(); ++i) {
    ASSERT_TRUE(on_piece(testing::row(s.points, i))) << "point " << i;
    for (int k = 0; k < g.dim(); ++k)
      ASSERT_EQ(s.normals(i, k), normal[static_cast<std::size_t>(k)]);
  }
  EXPECT_NEAR(s.weights.sum(), measure, 1e-9 * measure);
}

TEST(Pieces, RectangleSidesByName) {
  auto g = rectangle({0, 0}, {2, 1});
  EXPECT_EQ(g->piece_names(), (std::vector<std::string>{"left", "x_min", "right", "x_max", "bottom",
                                                        "y_min", "top", "y_max"}));
  const SampleOptions sobol{.method = SampleMethod::sobol};
  expect_piece(
      *g, sample_boundary(*g, 100, sobol, "left"), [](Point p) { return p[0] == 0; }, {-1, 0}, 1);
  expect_piece(
      *g, sample_boundary(*g, 100, sobol, "right"), [](Point p) { return p[0] == 2; }, {1, 0}, 1);
  expect_piece(
      *g, sample_boundary(*g, 100, sobol, "bottom"), [](Point p) { return p[1] == 0; }, {0, -1}, 2);
  expect_piece(
      *g, sample_boundary(*g, 100, sobol, "y_max"), [](Point p) { return p[1] == 1; }, {0, 1}, 2);
  const PointSet left = sample_boundary(*g, 100, sobol, "left");
  EXPECT_TRUE(left.measure_exact);
  EXPECT_EQ(left.size(), 100u);
}

TEST(Pieces, BoxFacesByName) {
  auto g = box({0, 0, 0}, {1, 2, 3});
  const std::vector<std::pair<std::string, std::vector<double>>> faces{
      {"left", {-1, 0, 0}}, {"right", {1, 0, 0}},   {"front", {0, -1, 0}},
      {"back", {0, 1, 0}},  {"bottom", {0, 0, -1}}, {"top", {0, 0, 1}}};
  const double areas[] = {6, 6, 3, 3, 2, 2};
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& [name, normal] = faces[f];
    const std::size_t axis = f / 2;
    const double value = f % 2 ? std::vector<double>{1, 2, 3}[axis] : 0.0;
    expect_piece(
        *g, sample_boundary(*g, 200, {.method = SampleMethod::halton}, name),
        [&](Point p) { return p[axis] == value; }, normal, areas[f]);
  }
}

TEST(Pieces, TimeProductInitialFinalAndSpatial) {
  auto g = time_product(rectangle({0, 0}, {1, 1}), 0.5, 2);
  const SampleOptions lhs{.method = SampleMethod::latin_hypercube, .seed = 1};
  expect_piece(
      *g, sample_boundary(*g, 300, lhs, "initial"), [](Point p) { return p[2] == 0.5; }, {0, 0, -1},
      1);
  expect_piece(
      *g, sample_boundary(*g, 300, lhs, "final"), [](Point p) { return p[2] == 2; }, {0, 0, 1}, 1);
  expect_piece(
      *g, sample_boundary(*g, 300, lhs, "left"),
      [](Point p) { return p[0] == 0 && p[2] >= 0.5 && p[2] <= 2; }, {-1, 0, 0}, 1.5);
  const PointSet spatial = sample_boundary(*g, 1000, lhs, "spatial");
  testing::expect_boundary(*g, spatial);
  EXPECT_DOUBLE_EQ(spatial.measure, 4 * 1.5);
  for (Eigen::Index i = 0; i < spatial.points.rows(); ++i) EXPECT_EQ(spatial.normals(i, 2), 0);
  // The same initial face by predicate.
  const PointSet by_predicate = sample_boundary(*g, 300, lhs, "t == 0.5");
  EXPECT_NEAR(by_predicate.measure, 1, 1e-12);
  for (Eigen::Index i = 0; i < by_predicate.points.rows(); ++i)
    EXPECT_EQ(by_predicate.points(i, 2), 0.5);
}

TEST(Pieces, PredicatesSelectTheRightPoints) {
  auto g = rectangle({0, 0}, {2, 1});
  const SampleOptions sobol{.method = SampleMethod::sobol, .seed = 3};
  // x == 0 is the left side; == tolerates rounding but not a visible offset.
  const PointSet left = sample_boundary(*g, 200, sobol, "x == 0");
  expect_piece(
      *g, left, [](Point p) { return p[0] == 0; }, {-1, 0}, 1);
  // The upper half of both vertical sides, and the right part of the top.
  const PointSet upper = sample_boundary(*g, 2000, sobol, "y >= 0.5 and (x == 0 or x == 2)");
  EXPECT_NEAR(upper.measure, 1, 1e-4);
  for (Eigen::Index i = 0; i < upper.points.rows(); ++i) {
    EXPECT_GE(upper.points(i, 1), 0.5 - 1e-7);
    EXPECT_TRUE(upper.points(i, 0) == 0 || upper.points(i, 0) == 2);
  }
  const PointSet top_right = sample_boundary(*g, 500, sobol, "y == 1 and x > pi / 2");
  EXPECT_NEAR(top_right.measure, 2 - std::numbers::pi / 2, 1e-4);
  for (Eigen::Index i = 0; i < top_right.points.rows(); ++i)
    EXPECT_GT(top_right.points(i, 0), std::numbers::pi / 2);
  // A C++ predicate and a name cut by a predicate.
  const PointSet cpp = sample_boundary(
      *g, 200, sobol,
      BoundaryPiece::where([](Point p) { return p[1] == 0 && p[0] < 1; }, "inflow"));
  EXPECT_NEAR(cpp.measure, 1, 1e-4);
  for (Eigen::Index i = 0; i < cpp.points.rows(); ++i) EXPECT_LT(cpp.points(i, 0), 1);
  const PointSet cut =
      sample_boundary(*g, 200, sobol, BoundaryPiece::named("bottom").and_where("x < 0.5"));
  EXPECT_NEAR(cut.measure, 0.5, 1e-4);
  EXPECT_FALSE(cut.measure_exact);
  // Points are uniform within the kept part: about half of the bottom-left quarter.
  const PointSet disk_part = sample_boundary(*disk({0, 0}, 1), 4000, sobol, "x > 0 and y > 0");
  EXPECT_NEAR(disk_part.measure, std::numbers::pi / 2, 1e-4);
  int below_diagonal = 0;
  for (Eigen::Index i = 0; i < disk_part.points.rows(); ++i)
    below_diagonal += disk_part.points(i, 1) < disk_part.points(i, 0);
  EXPECT_NEAR(below_diagonal, 2000, 20);
}

TEST(Pieces, PolygonEdgesByName) {
  auto g = polygon({{0, 0}, {0, 2}, {3, 0}});  // clockwise; edge1 is the hypotenuse
  const PointSet s = sample_boundary(*g, 100, {}, "edge1");
  const double n0 = 2 / std::sqrt(13.0), n1 = 3 / std::sqrt(13.0);
  expect_piece(
      *g, s, [](Point p) { return std::abs(2 * p[0] + 3 * p[1] - 6) < 1e-12; }, {n0, n1},
      std::sqrt(13.0));
}

TEST(Pieces, Errors) {
  auto g = rectangle({0, 0}, {1, 1});
  expect_user_error([&] { sample_boundary(*g, 10, {}, "lft"); },
                    "rectangle [0, 1] x [0, 1] has no boundary piece 'lft'; its pieces are left, "
                    "x_min, right, x_max, bottom, y_min, top, y_max");
  expect_user_error([&] { sample_boundary(*g, 10, {}, BoundaryPiece::named("circle")); },
                    "rectangle [0, 1] x [0, 1] has no boundary piece 'circle'; its pieces are "
                    "left, x_min, right, x_max, bottom, y_min, top, y_max");
  expect_user_error([&] { sample_boundary(*g, 10, {}, "x === 0"); },
                    "predicate 'x === 0', column 5: unexpected '='");
  expect_user_error([&] { sample_boundary(*g, 10, {}, "x == 0 and t > 1"); },
                    "predicate 'x == 0 and t > 1', column 12: unknown name 't'; the coordinates "
                    "are x, y");
  expect_user_error([&] { sample_boundary(*g, 10, {}, "x == 5"); },
                    "boundary piece 'x == 5' of rectangle [0, 1] x [0, 1] is empty: no boundary "
                    "point lies on it (or it has measure zero)");
  expect_user_error([&] { sample_boundary(*g, 10, {}, "x == 0.5 and y == 0.5"); },
                    "boundary piece 'x == 0.5 and y == 0.5' of rectangle [0, 1] x [0, 1] is "
                    "empty: no boundary point lies on it (or it has measure zero)");
  expect_user_error(
      [&] { sample_boundary(*g, 10, {}, BoundaryPiece::named("left").and_where("x > 0.5")); },
      "boundary piece 'left' where 'x > 0.5' of rectangle [0, 1] x [0, 1] is empty: no boundary "
      "point lies on it (or it has measure zero)");
  // A piece removed entirely by CSG is empty too.
  auto cut = subtract(g, rectangle({-1, -1}, {0.5, 2}));
  expect_user_error([&] { sample_boundary(*cut, 10, {}, "x_min"); },
                    "boundary piece 'x_min' of difference(rectangle [0, 1] x [0, 1], rectangle "
                    "[-1, 0.5] x [-1, 2]) is empty: no boundary point lies on it (or it has "
                    "measure zero)");
  // A tiny piece needs too many rejections (its measure is a deterministic estimate).
  jetpde::testing::expect_user_error(
      [&] { sample_boundary(*g, 10, {}, "x == 0 and y < 0.0005"); },
      "sampling boundary piece 'x == 0 and y < 0.0005' of rectangle [0, 1] x [0, 1]: only a "
      "fraction 0.000518799 of the candidate points lies in it, below min_acceptance 0.001 of "
      "rejection sampling; sample a geometry with a tighter bounding box, or lower min_acceptance");
}

}  // namespace
}  // namespace jetpde::geometry
