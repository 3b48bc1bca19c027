#include "geometry/geometry.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

#include "autodiff/errors.h"
#include "geometry/boundary.h"
#include "geometry/measure.h"

namespace jetpde::geometry {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

double Bounds::volume() const {
  double v = 1;
  for (std::size_t i = 0; i < lo.size(); ++i) v *= hi[i] - lo[i];
  return v;
}

double Bounds::diameter() const {
  double sum = 0;
  for (std::size_t i = 0; i < lo.size(); ++i) sum += (hi[i] - lo[i]) * (hi[i] - lo[i]);
  return std::sqrt(sum);
}

Geometry::Geometry(int dim) : dim_(dim), names_(default_coordinate_names(dim)) {
  check_internal(dim >= 1, "geometry of dimension < 1");
}

Geometry& Geometry::set_coordinate_names(std::vector<std::string> names) {
  const std::string where = describe() + ": coordinate names (" + join(names) + ")";
  if (static_cast<int>(names.size()) != dim_)
    throw UserError(where + ": expected " + std::to_string(dim_) + " names, got " +
                    std::to_string(names.size()));
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (!is_identifier(name) || name == "and" || name == "or" || name == "not" || name == "pi")
      throw UserError(where + ": '" + name +
                      "' is not a valid name (letters, digits and _, not a keyword)");
    if (!seen.insert(name).second) throw UserError(where + ": '" + name + "' appears twice");
  }
  names_ = std::move(names);
  return *this;
}

int Geometry::coordinate_index(const std::string& name) const {
  for (int i = 0; i < dim_; ++i)
    if (names_[static_cast<std::size_t>(i)] == name) return i;
  throw UserError(describe() + " has no coordinate '" + name + "'; its coordinates are " +
                  join(names_));
}

double Geometry::volume() const {
  std::call_once(volume_once_, [this] { volume_ = compute_volume(); });
  return volume_;
}

double Geometry::compute_volume() const { return estimate_volume(*this); }

double Geometry::boundary_measure() const {
  std::call_once(boundary_once_, [this] {
    const ResolvedPiece whole = resolve_piece(*this, BoundaryPiece());
    boundary_measure_ = whole.measure;
    boundary_exact_ = whole.measure_exact;
  });
  return boundary_measure_;
}

bool Geometry::boundary_measure_is_exact() const {
  boundary_measure();
  return boundary_exact_;
}

std::vector<std::string> Geometry::piece_names() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& patch : boundary_patches())
    for (const auto& name : patch.names)
      if (seen.insert(name).second) out.push_back(name);
  return out;
}

MatrixD Geometry::signed_distance(const MatrixD& points) const {
  if (points.cols() != dim_)
    throw UserError(describe() + ": points have " + std::to_string(points.cols()) +
                    " columns, expected " + std::to_string(dim_));
  MatrixD out(points.rows(), 1);
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    out(i, 0) = signed_distance(Point(&points(i, 0), static_cast<std::size_t>(dim_)));
  return out;
}

MatrixD Geometry::outward_normals(const MatrixD& points) const {
  if (points.cols() != dim_)
    throw UserError(describe() + ": points have " + std::to_string(points.cols()) +
                    " columns, expected " + std::to_string(dim_));
  MatrixD out(points.rows(), dim_);
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    outward_normal(Point(&points(i, 0), static_cast<std::size_t>(dim_)),
                   std::span<double>(&out(i, 0), static_cast<std::size_t>(dim_)));
  return out;
}

std::vector<std::string> default_coordinate_names(int dim) {
  if (dim == 1) return {"x"};
  if (dim == 2) return {"x", "y"};
  if (dim == 3) return {"x", "y", "z"};
  std::vector<std::string> out;
  for (int i = 1; i <= dim; ++i) out.push_back("x" + std::to_string(i));
  return out;
}

std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string format_bounds(const Bounds& bounds) {
  std::string out;
  for (int i = 0; i < bounds.dim(); ++i)
    out += (i ? " x [" : "[") + format_number(bounds.lo[static_cast<std::size_t>(i)]) + ", " +
           format_number(bounds.hi[static_cast<std::size_t>(i)]) + "]";
  return out;
}

}  // namespace jetpde::geometry
