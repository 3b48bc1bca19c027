// Axis-aligned boxes in any dimension: interval, rectangle, box, hypercube.
//
//   auto domain = jetpde::geometry::rectangle({0, 0}, {1, 2});   // [0, 1] x [0, 2]
//   auto cube = jetpde::geometry::hypercube(5, -1, 1);            // [-1, 1]^5
//
// The signed distance is exact. Boundary pieces, one per face: in 1-D "left" (x = lo) and "right";
// in 2-D "left", "right" (x), "bottom", "top" (y); in 3-D "left", "right" (x), "front", "back"
// (y), "bottom", "top" (z); and in every dimension "<c>_min" and "<c>_max" for each coordinate
// name c ("x_min", "x3_max"), following the current coordinate names.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "geometry/geometry.h"

namespace jetpde::geometry {

class AxisBox final : public Geometry {
 public:
  // UserError unless lo and hi have the same size (>= 1) and lo < hi, finite, in every coordinate.
  // `kind` names the shape in messages ("rectangle").
  AxisBox(std::vector<double> lo, std::vector<double> hi, std::string kind = "hypercube");

  const std::vector<double>& lo() const { return lo_; }
  const std::vector<double>& hi() const { return hi_; }

  std::string describe() const override;
  Bounds bounds() const override { return {lo_, hi_}; }
  double signed_distance(Point p) const override;
  using Geometry::signed_distance;
  void outward_normal(Point p, std::span<double> normal) const override;
  bool distance_is_exact() const override { return true; }
  bool volume_is_exact() const override { return true; }
  bool is_box() const override { return true; }
  std::vector<BoundaryPatch> boundary_patches() const override;

 protected:
  double compute_volume() const override { return bounds().volume(); }

 private:
  std::vector<double> lo_, hi_;
  std::string kind_;
};

std::shared_ptr<AxisBox> interval(double lo, double hi);
std::shared_ptr<AxisBox> rectangle(std::array<double, 2> lo, std::array<double, 2> hi);
std::shared_ptr<AxisBox> box(std::array<double, 3> lo, std::array<double, 3> hi);
std::shared_ptr<AxisBox> hypercube(std::vector<double> lo, std::vector<double> hi);
std::shared_ptr<AxisBox> hypercube(int dim, double lo, double hi);  // [lo, hi]^dim

}  // namespace jetpde::geometry
