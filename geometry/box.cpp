#include "geometry/box.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::geometry {
namespace {

// The conventional face names of 1-, 2- and 3-D boxes, [axis][0: lower, 1: upper].
std::vector<std::array<const char*, 2>> conventional_face_names(int dim) {
  if (dim == 1) return {{"left", "right"}};
  if (dim == 2) return {{"left", "right"}, {"bottom", "top"}};
  if (dim == 3) return {{"left", "right"}, {"front", "back"}, {"bottom", "top"}};
  return {};
}

std::string format_corner(const std::vector<double>& corner) {
  std::string out = "(";
  for (std::size_t i = 0; i < corner.size(); ++i) out += (i ? ", " : "") + format_number(corner[i]);
  return out + ")";
}

}  // namespace

AxisBox::AxisBox(std::vector<double> lo, std::vector<double> hi, std::string kind)
    : Geometry(std::max<int>(1, static_cast<int>(lo.size()))),
      lo_(std::move(lo)),
      hi_(std::move(hi)),
      kind_(std::move(kind)) {
  if (lo_.empty() || lo_.size() != hi_.size())
    throw UserError(kind_ + ": corners " + format_corner(lo_) + " and " + format_corner(hi_) +
                    " must have the same number (>= 1) of coordinates");
  for (std::size_t i = 0; i < lo_.size(); ++i)
    if (!(std::isfinite(lo_[i]) && std::isfinite(hi_[i]) && lo_[i] < hi_[i]))
      throw UserError(kind_ + ": lower corner " + format_corner(lo_) +
                      " must be below upper corner " + format_corner(hi_) +
                      " in every coordinate (coordinate " + std::to_string(i) + ")");
}

std::string AxisBox::describe() const { return kind_ + " " + format_bounds(bounds()); }

double AxisBox::signed_distance(Point p) const {
  double outside = 0, inside = -INFINITY;
  for (std::size_t i = 0; i < lo_.size(); ++i) {
    const double q = std::abs(p[i] - 0.5 * (lo_[i] + hi_[i])) - 0.5 * (hi_[i] - lo_[i]);
    outside += std::max(q, 0.0) * std::max(q, 0.0);
    inside = std::max(inside, q);
  }
  return std::sqrt(outside) + std::min(inside, 0.0);
}

void AxisBox::outward_normal(Point p, std::span<double> normal) const {
  double norm = 0, largest = -INFINITY;
  std::size_t largest_axis = 0;
  for (std::size_t i = 0; i < lo_.size(); ++i) {
    const double offset = p[i] - 0.5 * (lo_[i] + hi_[i]);
    const double q = std::abs(offset) - 0.5 * (hi_[i] - lo_[i]);
    normal[i] = std::max(q, 0.0) * (offset < 0 ? -1.0 : 1.0);
    norm += normal[i] * normal[i];
    if (q > largest) largest = q, largest_axis = i;
  }
  if (norm > 0) {  // outside: towards p from its nearest point of the box
    for (double& n : normal) n /= std::sqrt(norm);
    return;
  }
  std::fill(normal.begin(), normal.end(), 0.0);  // inside or on a face: the nearest face's normal
  const double offset = p[largest_axis] - 0.5 * (lo_[largest_axis] + hi_[largest_axis]);
  normal[largest_axis] = offset < 0 ? -1.0 : 1.0;
}

std::vector<BoundaryPatch> AxisBox::boundary_patches() const {
  const int d = dim();
  const auto conventional = conventional_face_names(d);
  std::vector<BoundaryPatch> patches;
  for (int axis = 0; axis < d; ++axis) {
    for (int side = 0; side < 2; ++side) {
      BoundaryPatch patch;
      if (!conventional.empty())
        patch.names.push_back(conventional[static_cast<std::size_t>(axis)][side]);
      patch.names.push_back(coordinate_names()[static_cast<std::size_t>(axis)] +
                            (side ? "_max" : "_min"));
      patch.dim = d;
      patch.param_dim = d - 1;
      patch.measure = 1;
      for (int j = 0; j < d; ++j)
        if (j != axis) {
          const auto k = static_cast<std::size_t>(j);
          patch.extents.push_back(hi_[k] - lo_[k]);
          patch.measure *= hi_[k] - lo_[k];
        }
      patch.map = [lo = lo_, hi = hi_, axis, side](const double* u, double* point, double* normal) {
        int param = 0;
        for (std::size_t j = 0; j < lo.size(); ++j) {
          normal[j] = 0;
          if (static_cast<int>(j) == axis) {
            point[j] = side ? hi[j] : lo[j];
            normal[j] = side ? 1.0 : -1.0;
          } else {
            point[j] = lo[j] + u[param++] * (hi[j] - lo[j]);
          }
        }
      };
      patches.push_back(std::move(patch));
    }
  }
  return patches;
}

std::shared_ptr<AxisBox> interval(double lo, double hi) {
  return std::make_shared<AxisBox>(std::vector<double>{lo}, std::vector<double>{hi}, "interval");
}

std::shared_ptr<AxisBox> rectangle(std::array<double, 2> lo, std::array<double, 2> hi) {
  return std::make_shared<AxisBox>(std::vector<double>(lo.begin(), lo.end()),
                                   std::vector<double>(hi.begin(), hi.end()), "rectangle");
}

std::shared_ptr<AxisBox> box(std::array<double, 3> lo, std::array<double, 3> hi) {
  return std::make_shared<AxisBox>(std::vector<double>(lo.begin(), lo.end()),
                                   std::vector<double>(hi.begin(), hi.end()), "box");
}

std::shared_ptr<AxisBox> hypercube(std::vector<double> lo, std::vector<double> hi) {
  return std::make_shared<AxisBox>(std::move(lo), std::move(hi), "hypercube");
}

std::shared_ptr<AxisBox> hypercube(int dim, double lo, double hi) {
  if (dim < 1)
    throw UserError("hypercube: dimension must be at least 1, got " + std::to_string(dim));
  return hypercube(std::vector<double>(static_cast<std::size_t>(dim), lo),
                   std::vector<double>(static_cast<std::size_t>(dim), hi));
}

}  // namespace jetpde::geometry
