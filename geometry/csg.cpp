#include "geometry/csg.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::geometry {
namespace {

const char* op_name(CsgOp op) {
  switch (op) {
    case CsgOp::unite:
      return "union";
    case CsgOp::intersect:
      return "intersection";
    case CsgOp::subtract:
      return "difference";
  }
  return "?";
}

Bounds combine(CsgOp op, const Bounds& a, const Bounds& b) {
  if (op == CsgOp::subtract) return a;
  Bounds out = a;
  for (int i = 0; i < a.dim(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    out.lo[k] = op == CsgOp::unite ? std::min(a.lo[k], b.lo[k]) : std::max(a.lo[k], b.lo[k]);
    out.hi[k] = op == CsgOp::unite ? std::max(a.hi[k], b.hi[k]) : std::min(a.hi[k], b.hi[k]);
  }
  return out;
}

// Where a boundary point of one child lies relative to the other child.
enum class Relation { outside, inside, same_face, opposite_face, crossing };

constexpr double kRelativeTolerance = 1e-9;

}  // namespace

Csg::Csg(CsgOp op, GeometryPtr a, GeometryPtr b)
    : Geometry(a ? a->dim() : 1), op_(op), a_(std::move(a)), b_(std::move(b)) {
  if (!a_ || !b_) throw UserError(std::string(op_name(op_)) + ": a geometry is missing (null)");
  if (a_->dim() != b_->dim())
    throw UserError(std::string(op_name(op_)) + " of " + a_->describe() + " (" +
                    std::to_string(a_->dim()) + "-D) and " + b_->describe() + " (" +
                    std::to_string(b_->dim()) + "-D): the dimensions differ");
  bounds_ = combine(op_, a_->bounds(), b_->bounds());
  for (int i = 0; i < dim(); ++i)
    if (!(bounds_.lo[static_cast<std::size_t>(i)] < bounds_.hi[static_cast<std::size_t>(i)]))
      throw UserError("intersection of " + a_->describe() + " and " + b_->describe() +
                      " is empty: their bounding boxes do not overlap");
  set_coordinate_names(a_->coordinate_names());
}

std::string Csg::describe() const {
  return std::string(op_name(op_)) + "(" + a_->describe() + ", " + b_->describe() + ")";
}

double Csg::signed_distance(Point p) const {
  const double da = a_->signed_distance(p), db = b_->signed_distance(p);
  switch (op_) {
    case CsgOp::unite:
      return std::min(da, db);
    case CsgOp::intersect:
      return std::max(da, db);
    case CsgOp::subtract:
      return std::max(da, -db);
  }
  return da;
}

void Csg::outward_normal(Point p, std::span<double> normal) const {
  const double da = a_->signed_distance(p), db = b_->signed_distance(p);
  const bool use_a = op_ == CsgOp::unite       ? da <= db
                     : op_ == CsgOp::intersect ? da >= db
                                               : da >= -db;
  (use_a ? a_ : b_)->outward_normal(p, normal);
  if (!use_a && op_ == CsgOp::subtract)
    for (double& n : normal) n = -n;  // the gradient of -b
}

bool Csg::keeps(bool from_a, Point point, Point normal) const {
  const Geometry& other = from_a ? *b_ : *a_;
  const double d = other.signed_distance(point), tol = kRelativeTolerance * size();
  Relation relation = d > tol    ? Relation::outside
                      : d < -tol ? Relation::inside
                                 : Relation::crossing;
  if (relation == Relation::crossing) {
    std::vector<double> other_normal(static_cast<std::size_t>(dim()));
    other.outward_normal(point, other_normal);
    double dot = 0;
    for (int i = 0; i < dim(); ++i)
      dot += normal[static_cast<std::size_t>(i)] * other_normal[static_cast<std::size_t>(i)];
    if (dot > 0.5) relation = Relation::same_face;
    if (dot < -0.5) relation = Relation::opposite_face;
  }
  switch (op_) {
    case CsgOp::unite:
      return relation == Relation::outside || relation == Relation::crossing ||
             (relation == Relation::same_face && from_a);
    case CsgOp::intersect:
      return relation == Relation::inside || relation == Relation::crossing ||
             (relation == Relation::same_face && from_a);
    case CsgOp::subtract:
      if (from_a)
        return relation == Relation::outside || relation == Relation::crossing ||
               relation == Relation::opposite_face;
      return relation == Relation::inside || relation == Relation::crossing;
  }
  return false;
}

std::vector<BoundaryPatch> Csg::boundary_patches() const {
  std::vector<BoundaryPatch> out;
  for (bool from_a : {true, false}) {
    for (BoundaryPatch& patch : (from_a ? a_ : b_)->boundary_patches()) {
      const bool flip = !from_a && op_ == CsgOp::subtract;
      if (flip)
        patch.map = [map = std::move(patch.map), d = dim()](const double* u, double* point,
                                                            double* normal) {
          map(u, point, normal);
          for (int i = 0; i < d; ++i) normal[i] = -normal[i];
        };
      // The child's `keep` and `keeps` see the child's own normal: undo the flip first. The
      // lambda refers to this geometry (not owned): patches live no longer than it.
      patch.keep = [self = this, inner = std::move(patch.keep), from_a, flip](Point point,
                                                                              Point normal) {
        if (!flip) return (!inner || inner(point, normal)) && self->keeps(from_a, point, normal);
        std::vector<double> child_normal(normal.begin(), normal.end());
        for (double& n : child_normal) n = -n;
        return (!inner || inner(point, child_normal)) && self->keeps(from_a, point, child_normal);
      };
      patch.kept_measure = -1;
      patch.kept_measure_exact = false;
      out.push_back(std::move(patch));
    }
  }
  return out;
}

std::shared_ptr<Csg> unite(GeometryPtr a, GeometryPtr b) {
  return std::make_shared<Csg>(CsgOp::unite, std::move(a), std::move(b));
}
std::shared_ptr<Csg> intersect(GeometryPtr a, GeometryPtr b) {
  return std::make_shared<Csg>(CsgOp::intersect, std::move(a), std::move(b));
}
std::shared_ptr<Csg> subtract(GeometryPtr a, GeometryPtr b) {
  return std::make_shared<Csg>(CsgOp::subtract, std::move(a), std::move(b));
}

}  // namespace jetpde::geometry
