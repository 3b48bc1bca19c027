#include "geometry/time_product.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::geometry {

TimeProduct::TimeProduct(GeometryPtr space, double t0, double t1, std::string time_name)
    : Geometry(space ? space->dim() + 1 : 2), space_(std::move(space)), t0_(t0), t1_(t1) {
  if (!space_) throw UserError("time product: the spatial geometry is missing (null)");
  if (!(std::isfinite(t0_) && std::isfinite(t1_) && t0_ < t1_))
    throw UserError("time product of " + space_->describe() + ": the time interval [" +
                    format_number(t0_) + ", " + format_number(t1_) + "] must have t0 < t1");
  std::vector<std::string> names = space_->coordinate_names();
  names.push_back(std::move(time_name));
  set_coordinate_names(std::move(names));
}

std::string TimeProduct::describe() const {
  return space_->describe() + " x time [" + format_number(t0_) + ", " + format_number(t1_) + "]";
}

Bounds TimeProduct::bounds() const {
  Bounds b = space_->bounds();
  b.lo.push_back(t0_);
  b.hi.push_back(t1_);
  return b;
}

double TimeProduct::signed_distance(Point p) const {
  const double ds = space_->signed_distance(p.first(p.size() - 1)), dt = time_distance(p.back());
  if (ds <= 0 && dt <= 0) return std::max(ds, dt);
  return std::hypot(std::max(ds, 0.0), std::max(dt, 0.0));
}

void TimeProduct::outward_normal(Point p, std::span<double> normal) const {
  const std::size_t ds_dim = p.size() - 1;
  const double ds = space_->signed_distance(p.first(ds_dim)), dt = time_distance(p.back());
  const double time_sign = p.back() < 0.5 * (t0_ + t1_) ? -1.0 : 1.0;
  space_->outward_normal(p.first(ds_dim), normal.first(ds_dim));
  if (ds <= 0 && dt <= 0) {  // inside or on the boundary: the nearer of the two
    if (dt > ds) {
      std::fill(normal.begin(), normal.end(), 0.0);
      normal.back() = time_sign;
    } else {
      normal.back() = 0;
    }
    return;
  }
  const double ws = std::max(ds, 0.0), wt = std::max(dt, 0.0), norm = std::hypot(ws, wt);
  for (std::size_t i = 0; i < ds_dim; ++i) normal[i] *= ws / norm;
  normal.back() = time_sign * wt / norm;
}

BoundaryPatch TimeProduct::time_face(bool final) const {
  const Bounds box = space_->bounds();
  const std::string& time_name = coordinate_names().back();
  BoundaryPatch patch;
  patch.names = {final ? "final" : "initial", time_name + (final ? "_max" : "_min")};
  patch.dim = dim();
  patch.param_dim = space_->dim();
  patch.measure = box.volume();
  for (int i = 0; i < box.dim(); ++i)
    patch.extents.push_back(box.hi[static_cast<std::size_t>(i)] -
                            box.lo[static_cast<std::size_t>(i)]);
  patch.map = [box, t = final ? t1_ : t0_, sign = final ? 1.0 : -1.0](
                  const double* u, double* point, double* normal) {
    const std::size_t d = box.lo.size();
    for (std::size_t i = 0; i < d; ++i) {
      point[i] = box.lo[i] + u[i] * (box.hi[i] - box.lo[i]);
      normal[i] = 0;
    }
    point[d] = t;
    normal[d] = sign;
  };
  if (!space_->is_box()) {
    patch.keep = [space = space_.get()](Point point, Point) {
      return space->contains(point.first(point.size() - 1));
    };
    patch.kept_measure = space_->volume();
    patch.kept_measure_exact = space_->volume_is_exact();
  }
  return patch;
}

std::vector<BoundaryPatch> TimeProduct::boundary_patches() const {
  std::vector<BoundaryPatch> out{time_face(false), time_face(true)};
  const double duration = t1_ - t0_;
  for (BoundaryPatch& patch : space_->boundary_patches()) {
    patch.names.push_back("spatial");
    const int m = patch.param_dim;
    patch.map = [map = std::move(patch.map), m, t0 = t0_, duration, d = patch.dim](
                    const double* u, double* point, double* normal) {
      map(u, point, normal);
      point[d] = t0 + u[m] * duration;
      normal[d] = 0;
    };
    if (patch.keep)
      patch.keep = [keep = std::move(patch.keep)](Point point, Point normal) {
        return keep(point.first(point.size() - 1), normal.first(normal.size() - 1));
      };
    patch.dim += 1;
    patch.param_dim += 1;
    patch.measure *= duration;
    patch.extents.push_back(duration);
    if (patch.kept_measure >= 0) patch.kept_measure *= duration;
    out.push_back(std::move(patch));
  }
  return out;
}

std::shared_ptr<TimeProduct> time_product(GeometryPtr space, double t0, double t1,
                                          std::string time_name) {
  return std::make_shared<TimeProduct>(std::move(space), t0, t1, std::move(time_name));
}

}  // namespace jetpde::geometry
