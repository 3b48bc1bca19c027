#include "geometry/ball.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "autodiff/errors.h"

namespace jetpde::geometry {

Ball::Ball(std::vector<double> center, double radius)
    : Geometry(center.size() == 3 ? 3 : 2), center_(std::move(center)), radius_(radius) {
  const char* kind = center_.size() == 3 ? "sphere" : "disk";
  if (center_.size() != 2 && center_.size() != 3)
    throw UserError("ball: the center must have 2 (disk) or 3 (sphere) coordinates, got " +
                    std::to_string(center_.size()));
  for (double c : center_)
    if (!std::isfinite(c)) throw UserError(std::string(kind) + ": the center must be finite");
  if (!(radius_ > 0 && std::isfinite(radius_)))
    throw UserError(std::string(kind) + ": the radius must be positive, got " +
                    format_number(radius_));
}

std::string Ball::describe() const {
  std::string out = dim() == 3 ? "sphere (center (" : "disk (center (";
  for (std::size_t i = 0; i < center_.size(); ++i)
    out += (i ? ", " : "") + format_number(center_[i]);
  return out + "), radius " + format_number(radius_) + ")";
}

Bounds Ball::bounds() const {
  Bounds b;
  for (double c : center_) {
    b.lo.push_back(c - radius_);
    b.hi.push_back(c + radius_);
  }
  return b;
}

double Ball::signed_distance(Point p) const {
  double sum = 0;
  for (std::size_t i = 0; i < center_.size(); ++i) sum += (p[i] - center_[i]) * (p[i] - center_[i]);
  return std::sqrt(sum) - radius_;
}

void Ball::outward_normal(Point p, std::span<double> normal) const {
  double norm = 0;
  for (std::size_t i = 0; i < center_.size(); ++i) {
    normal[i] = p[i] - center_[i];
    norm += normal[i] * normal[i];
  }
  if (norm == 0) {  // the center: every direction is nearest; pick the first axis
    std::fill(normal.begin(), normal.end(), 0.0);
    normal[0] = 1;
    return;
  }
  for (double& n : normal) n /= std::sqrt(norm);
}

double Ball::compute_volume() const {
  const double pi = std::numbers::pi;
  return dim() == 2 ? pi * radius_ * radius_ : 4.0 / 3.0 * pi * radius_ * radius_ * radius_;
}

std::vector<BoundaryPatch> Ball::boundary_patches() const {
  const double pi = std::numbers::pi;
  BoundaryPatch patch;
  patch.dim = dim();
  patch.param_dim = dim() - 1;
  if (dim() == 2) {
    patch.names = {"circle"};
    patch.measure = 2 * pi * radius_;
    patch.extents = {patch.measure};
    patch.map = [c = center_, r = radius_, pi](const double* u, double* point, double* normal) {
      const double phi = 2 * pi * u[0];
      normal[0] = std::cos(phi);
      normal[1] = std::sin(phi);
      for (int i = 0; i < 2; ++i) point[i] = c[static_cast<std::size_t>(i)] + r * normal[i];
    };
  } else {
    patch.names = {"surface"};
    patch.measure = 4 * pi * radius_ * radius_;
    patch.extents = {2 * radius_, 2 * pi * radius_};
    patch.map = [c = center_, r = radius_, pi](const double* u, double* point, double* normal) {
      const double z = 1 - 2 * u[0], phi = 2 * pi * u[1];
      const double rho = std::sqrt(std::max(0.0, 1 - z * z));
      normal[0] = rho * std::cos(phi);
      normal[1] = rho * std::sin(phi);
      normal[2] = z;
      for (int i = 0; i < 3; ++i) point[i] = c[static_cast<std::size_t>(i)] + r * normal[i];
    };
  }
  return {std::move(patch)};
}

std::shared_ptr<Ball> disk(std::array<double, 2> center, double radius) {
  return std::make_shared<Ball>(std::vector<double>(center.begin(), center.end()), radius);
}

std::shared_ptr<Ball> sphere(std::array<double, 3> center, double radius) {
  return std::make_shared<Ball>(std::vector<double>(center.begin(), center.end()), radius);
}

}  // namespace jetpde::geometry
