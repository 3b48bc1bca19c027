// Balls: the disk (2-D) and the sphere (the solid 3-D ball).
//
//   auto hole = jetpde::geometry::disk({0.5, 0.5}, 0.2);
//   auto ball = jetpde::geometry::sphere({0, 0, 0}, 1);
//
// The signed distance |p - c| - r is exact. One boundary piece: "circle" (disk) or "surface"
// (sphere), parametrized by arc length (disk) or by Archimedes' area-preserving map
// (z, phi) -> (sqrt(1 - z^2) cos phi, sqrt(1 - z^2) sin phi, z) (sphere).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "geometry/geometry.h"

namespace jetpde::geometry {

class Ball final : public Geometry {
 public:
  // UserError unless the center has 2 or 3 finite coordinates and the radius is positive.
  Ball(std::vector<double> center, double radius);

  const std::vector<double>& center() const { return center_; }
  double radius() const { return radius_; }

  std::string describe() const override;
  Bounds bounds() const override;
  double signed_distance(Point p) const override;
  using Geometry::signed_distance;
  void outward_normal(Point p, std::span<double> normal) const override;
  bool distance_is_exact() const override { return true; }
  bool volume_is_exact() const override { return true; }
  std::vector<BoundaryPatch> boundary_patches() const override;

 protected:
  double compute_volume() const override;

 private:
  std::vector<double> center_;
  double radius_;
};

std::shared_ptr<Ball> disk(std::array<double, 2> center, double radius);
std::shared_ptr<Ball> sphere(std::array<double, 3> center, double radius);

}  // namespace jetpde::geometry
