// The domain of a problem: a bounded open region of R^d, its signed distance, its boundary.
//
// Every geometry (box.h, ball.h, polygon.h, csg.h, time_product.h) answers:
//   - signed_distance(p): negative inside, positive outside, zero exactly on the boundary. Each
//     class says whether it is exact (|value| is the Euclidean distance to the boundary) or a
//     bound (the sign is right, the zero set is the boundary, and |value| <= the distance): see
//     distance_is_exact(). The hard-constraint ansatz u = g + D(x) N(x) needs only the bound.
//   - outward_normal(p): the unit gradient of the signed distance; on the boundary, the outward
//     unit normal of the boundary piece nearest to p.
//   - volume() and boundary_measure(): exact for primitives and time products of them; for CSG,
//     estimated once by quasi-Monte Carlo (volume_is_exact() says which).
//   - boundary_patches(): the boundary as a list of parametrized pieces (for samplers).
//   - coordinate_names(): one name per column (default x, y, z; x1, x2, ... above three
//     dimensions; a time product appends t), so that later layers can map names to columns.
//
// Points are rows of a MatrixD [n, dim] (batch functions) or spans of dim doubles (one point).
// Geometries are immutable once shared, except for their coordinate names: set those before
// building CSG or time products from a geometry (children keep their own names).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "autodiff/primitive.h"

namespace jetpde::geometry {

using Point = std::span<const double>;

// An axis-aligned bounding box [lo, hi].
struct Bounds {
  std::vector<double> lo, hi;
  int dim() const { return static_cast<int>(lo.size()); }
  double volume() const;    // product of the side lengths
  double diameter() const;  // length of the diagonal
};

// One smooth piece of a geometry's boundary, parametrized by the unit cube [0, 1]^param_dim
// (param_dim = dim - 1, or 0 for the two end points of an interval). `map` is measure-preserving
// up to the constant `measure`: uniform parameters give uniform points on the piece. `keep`, when
// set, cuts the piece down (CSG keeps only what lies on the composite boundary; a time product's
// initial face keeps the points of its space's bounding box that lie in the space): the piece is
// then the kept part of the map's image. Samplers use this (sampler.h); users select pieces by
// the `names` (boundary.h). `map` and `keep` may refer to the geometry that made the patch (not
// owned): use patches while it lives.
struct BoundaryPatch {
  std::vector<std::string> names;  // the piece names this patch answers to ("left", "x_min", ...)
  int dim = 0;                     // of the points (the geometry's dimension)
  int param_dim = 0;
  double measure = 0;           // length/area/... of the map's image (a point counts 1)
  std::vector<double> extents;  // length along each parameter axis (for grids)
  // map(u, point, normal): the point for parameters u and its outward unit normal.
  std::function<void(const double* u, double* point, double* normal)> map;
  std::function<bool(Point point, Point normal)> keep;  // empty: keep everything
  double kept_measure = -1;  // measure of the kept part when known (-1: unknown)
  bool kept_measure_exact = false;
};

class Geometry {
 public:
  explicit Geometry(int dim);
  virtual ~Geometry() = default;
  Geometry(const Geometry&) = delete;
  Geometry& operator=(const Geometry&) = delete;

  int dim() const { return dim_; }
  const std::vector<std::string>& coordinate_names() const { return names_; }
  // UserError unless there are dim() distinct names, each an identifier ([A-Za-z_][A-Za-z0-9_]*)
  // other than the predicate keywords and, or, not, pi.
  Geometry& set_coordinate_names(std::vector<std::string> names);
  // The column of a coordinate name; UserError listing the names when there is none.
  int coordinate_index(const std::string& name) const;

  // "rectangle [0, 1] x [0, 2]": names the geometry in messages.
  virtual std::string describe() const = 0;
  virtual Bounds bounds() const = 0;
  virtual double signed_distance(Point p) const = 0;
  virtual void outward_normal(Point p, std::span<double> normal) const = 0;
  virtual bool distance_is_exact() const = 0;
  // True when the geometry is its bounding box (then interior sampling rejects nothing).
  virtual bool is_box() const { return false; }
  virtual std::vector<BoundaryPatch> boundary_patches() const = 0;

  bool contains(Point p) const { return signed_distance(p) < 0; }
  double size() const { return bounds().diameter(); }  // the length scale of tolerances

  double volume() const;  // computed once (compute_volume), then cached
  virtual bool volume_is_exact() const { return false; }
  double boundary_measure() const;
  bool boundary_measure_is_exact() const;
  // The boundary piece names, in the order the patches list them (each name once).
  std::vector<std::string> piece_names() const;

  // Batch versions: points [n, dim] -> distances [n, 1] or normals [n, dim].
  MatrixD signed_distance(const MatrixD& points) const;
  MatrixD outward_normals(const MatrixD& points) const;

 protected:
  // The volume: closed forms in the primitives (which also override volume_is_exact), a
  // quasi-Monte Carlo estimate here (measure.h).
  virtual double compute_volume() const;

 private:
  int dim_;
  std::vector<std::string> names_;
  mutable std::once_flag volume_once_, boundary_once_;
  mutable double volume_ = 0, boundary_measure_ = 0;
  mutable bool boundary_exact_ = false;
};

using GeometryPtr = std::shared_ptr<const Geometry>;

// The default coordinate names of a d-dimensional space: x | x, y | x, y, z | x1, ..., xd.
std::vector<std::string> default_coordinate_names(int dim);

// "[0, 1] x [0, 2]" for messages; numbers printed with up to 6 significant digits.
std::string format_number(double value);
std::string format_bounds(const Bounds& bounds);

}  // namespace jetpde::geometry
