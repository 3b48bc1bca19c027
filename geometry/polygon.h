// Simple polygons in 2-D, vertices in either order (clockwise or counter-clockwise).
//
//   auto l_shape = jetpde::geometry::polygon({{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}});
//
// The signed distance is exact: the distance to the nearest edge, negative inside (even-odd
// rule). Boundary pieces: "edge0", "edge1", ...: edge i runs from vertex i to vertex i + 1 (the
// last back to vertex 0), in the order the vertices were given.
#pragma once

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "geometry/geometry.h"

namespace jetpde::geometry {

class Polygon final : public Geometry {
 public:
  // UserError for fewer than 3 vertices, non-finite coordinates, a zero-length edge, edges that
  // cross, touch or fold back, or zero area.
  explicit Polygon(std::vector<std::array<double, 2>> vertices);

  const std::vector<std::array<double, 2>>& vertices() const { return vertices_; }
  double signed_area() const { return signed_area_; }  // > 0: counter-clockwise

  std::string describe() const override;
  Bounds bounds() const override;
  double signed_distance(Point p) const override;
  using Geometry::signed_distance;
  void outward_normal(Point p, std::span<double> normal) const override;
  bool distance_is_exact() const override { return true; }
  bool volume_is_exact() const override { return true; }
  std::vector<BoundaryPatch> boundary_patches() const override;

 protected:
  double compute_volume() const override { return std::abs(signed_area_); }

 private:
  // Distance from p to edge i and the nearest point on it.
  double edge_distance(Point p, std::size_t i, std::array<double, 2>& nearest) const;
  std::array<double, 2> edge_normal(std::size_t i) const;  // outward unit normal
  void check_simple() const;

  std::vector<std::array<double, 2>> vertices_;
  double signed_area_ = 0;
};

std::shared_ptr<Polygon> polygon(std::vector<std::array<double, 2>> vertices);

}  // namespace jetpde::geometry
