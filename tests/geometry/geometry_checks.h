// Checks shared by the geometry tests: samples against the signed distance, normals by stepping.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "geometry/geometry.h"
#include "geometry/sampler.h"

namespace jetpde::geometry::testing {

inline Point row(const MatrixD& m, Eigen::Index i) {
  return Point(&m(i, 0), static_cast<std::size_t>(m.cols()));
}

// Every point strictly inside; weights sum to the volume.
inline void expect_interior(const Geometry& g, const PointSet& s) {
  ASSERT_EQ(s.points.cols(), g.dim());
  ASSERT_EQ(s.weights.rows(), s.points.rows());
  for (Eigen::Index i = 0; i < s.points.rows(); ++i)
    ASSERT_LT(g.signed_distance(row(s.points, i)), 0.0) << "point " << i << " of " << g.describe();
  EXPECT_NEAR(s.weights.sum(), g.volume(), 1e-12 * g.volume());
}

// Every point on the boundary (|sdf| <= 1e-9 size), normals of unit length, a step of 1e-6 size
// along the normal leaves the domain and a step against it enters; weights sum to the measure.
inline void expect_boundary(const Geometry& g, const PointSet& s) {
  ASSERT_EQ(s.points.cols(), g.dim());
  ASSERT_EQ(s.normals.rows(), s.points.rows());
  const double size = g.size(), step = 1e-6 * size;
  std::vector<double> out(static_cast<std::size_t>(g.dim())), in(out.size());
  for (Eigen::Index i = 0; i < s.points.rows(); ++i) {
    ASSERT_LE(std::abs(g.signed_distance(row(s.points, i))), 1e-9 * size)
        << "point " << i << " of " << g.describe();
    double norm = 0;
    for (int k = 0; k < g.dim(); ++k) {
      const auto j = static_cast<std::size_t>(k);
      norm += s.normals(i, k) * s.normals(i, k);
      out[j] = s.points(i, k) + step * s.normals(i, k);
      in[j] = s.points(i, k) - step * s.normals(i, k);
    }
    ASSERT_NEAR(norm, 1.0, 1e-12);
    ASSERT_GT(g.signed_distance(out), 0.0) << "outward step at point " << i;
    ASSERT_LT(g.signed_distance(in), 0.0) << "inward step at point " << i;
  }
  EXPECT_NEAR(s.weights.sum(), s.measure, 1e-12 * s.measure);
}

// sum w f(p) over a point set.
inline double integrate(const PointSet& s, const std::function<double(Point)>& f) {
  double sum = 0;
  for (Eigen::Index i = 0; i < s.points.rows(); ++i) sum += s.weights(i, 0) * f(row(s.points, i));
  return sum;
}

// Divergence theorem with F(p) = p: the boundary integral of p.n is dim x volume.
inline double flux_of_position(const PointSet& s) {
  double sum = 0;
  for (Eigen::Index i = 0; i < s.points.rows(); ++i)
    sum += s.weights(i, 0) * (s.points.row(i) * s.normals.row(i)).sum();
  return sum;
}

}  // namespace jetpde::geometry::testing
