// A space-time domain: a spatial geometry times a time interval [t0, t1], time the last
// coordinate (named "t" unless told otherwise).
//
//   auto domain = jetpde::geometry::time_product(jetpde::geometry::interval(-1, 1), 0, 1);
//   // columns (x, t); pieces "initial" (t = 0), "final" (t = 1), "spatial", "left", "right"
//
// Signed distance: inside, max(d_space, d_time) (the nearer of the spatial boundary and the
// initial/final faces); outside, sqrt(max(d_space, 0)^2 + max(d_time, 0)^2). Exact when the
// space's distance is exact (the distance to a product of sets separates), a bound otherwise.
//
// Boundary pieces: "initial" (t = t0, normal -e_t) and "final" (t = t1, normal +e_t), also named
// "<t>_min" and "<t>_max"; the spatial boundary times [t0, t1], named "spatial" and also by the
// space's own piece names ("left", "circle", ...), normals (n_space, 0). The initial and final
// faces of a non-box space are cut from its bounding box by the space's signed distance.
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include "geometry/geometry.h"

namespace jetpde::geometry {

class TimeProduct final : public Geometry {
 public:
  // UserError unless t0 < t1 (finite) and time_name is a valid name not used by the space.
  TimeProduct(GeometryPtr space, double t0, double t1, std::string time_name = "t");

  const GeometryPtr& space() const { return space_; }
  double t0() const { return t0_; }
  double t1() const { return t1_; }

  std::string describe() const override;
  Bounds bounds() const override;
  double signed_distance(Point p) const override;
  using Geometry::signed_distance;
  void outward_normal(Point p, std::span<double> normal) const override;
  bool distance_is_exact() const override { return space_->distance_is_exact(); }
  bool is_box() const override { return space_->is_box(); }
  bool volume_is_exact() const override { return space_->volume_is_exact(); }
  std::vector<BoundaryPatch> boundary_patches() const override;

 protected:
  double compute_volume() const override { return space_->volume() * (t1_ - t0_); }

 private:
  double time_distance(double t) const {
    return std::abs(t - 0.5 * (t0_ + t1_)) - 0.5 * (t1_ - t0_);
  }
  BoundaryPatch time_face(bool final) const;

  GeometryPtr space_;
  double t0_, t1_;
};

std::shared_ptr<TimeProduct> time_product(GeometryPtr space, double t0, double t1,
                                          std::string time_name = "t");

}  // namespace jetpde::geometry
