// Constructive solid geometry: union, intersection and difference of two geometries of the same
// dimension, nested to any depth.
//
//   using namespace jetpde::geometry;
//   GeometryPtr plate = subtract(rectangle({0, 0}, {1, 1}), disk({0.5, 0.5}, 0.2));
//   GeometryPtr both = unite(plate, rectangle({1, 0}, {2, 1}));
//
// Signed distance: min(a, b) (union), max(a, b) (intersection), max(a, -b) (difference). It is a
// bound, not exact: the sign is right, it is zero exactly on the boundary, and |value| is at most
// the distance to the boundary (exact outside a union only). distance_is_exact() is false.
//
// Volume and boundary measure are estimated once by quasi-Monte Carlo (measure.h).
//
// The boundary is the children's boundary patches, each cut down to the part that lies on the
// composite boundary: a point of a's boundary stays in a union if it is outside b, in an
// intersection if it is inside b, in a difference if it is outside b; a point of b's boundary
// stays in a difference if it is inside a, with its normal flipped (b's outside is the
// difference's inside). Where the two boundaries coincide (within 1e-9 of the size), faces with
// the same outward normal count once (from a) in a union and an intersection and not at all in a
// difference (the difference is empty on both sides there); faces with opposite normals vanish
// in a union and an intersection and count once (from a) in a difference. Piece names are the
// children's (a name used in both children names both parts).
//
// Coordinate names are the first child's (see Geometry::set_coordinate_names).
#pragma once

#include <memory>
#include <string>

#include "geometry/geometry.h"

namespace jetpde::geometry {

enum class CsgOp { unite, intersect, subtract };

class Csg final : public Geometry {
 public:
  // UserError when the dimensions differ, or when an intersection's bounding boxes do not overlap.
  Csg(CsgOp op, GeometryPtr a, GeometryPtr b);

  CsgOp op() const { return op_; }
  const GeometryPtr& a() const { return a_; }
  const GeometryPtr& b() const { return b_; }

  std::string describe() const override;
  Bounds bounds() const override { return bounds_; }
  double signed_distance(Point p) const override;
  using Geometry::signed_distance;
  void outward_normal(Point p, std::span<double> normal) const override;
  bool distance_is_exact() const override { return false; }
  std::vector<BoundaryPatch> boundary_patches() const override;

 private:
  // Whether a point of child `from_a ? a : b`'s boundary with that child's outward normal lies on
  // this geometry's boundary.
  bool keeps(bool from_a, Point point, Point normal) const;

  CsgOp op_;
  GeometryPtr a_, b_;
  Bounds bounds_;
};

std::shared_ptr<Csg> unite(GeometryPtr a, GeometryPtr b);
std::shared_ptr<Csg> intersect(GeometryPtr a, GeometryPtr b);
std::shared_ptr<Csg> subtract(GeometryPtr a, GeometryPtr b);  // a minus b

}  // namespace jetpde::geometry
