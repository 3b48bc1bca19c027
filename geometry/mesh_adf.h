// A smooth approximate distance function (ADF) to a closed triangle mesh, for hard constraints
// (solvers/problem.h HardConstraint): D = 0 on the surface, D > 0 and analytic inside, D close
// to the distance near a face. The exact mesh distance (StlMesh::signed_distance) is no good as
// D: it has kinks on the medial axis inside the part, where D*N cannot be smooth.
//
// The mean-value (inverse-distance) potential of the surface (Belyaev, Fayolle & Pasko 2013,
// "Signed Lp-distance fields"; used for exact boundary conditions by Sukumar & Srivastava 2022,
// "Exact imposition of boundary conditions with distance functions in physics-informed deep
// neural networks"):
//     W(x) = Σ_triangles ∫_T 1 / |x - y|^3 dS(y),    phi(x) = 2π / W(x).
// Near a flat face at height h the face's term is 2π/h and the rest stays bounded, so
// phi = h + O(h^2); inside, W is finite and analytic, so phi is. For a flat triangle with area A,
// unit outward normal n, h = n.(x - v0) and a, b, c the vectors from x to its vertices:
//     ∫_T 1/|x-y|^3 dS = 2 atan2(2 A h, Dn) / h,
//     Dn = |a||b||c| + (a.b)|c| + (a.c)|b| + (b.c)|a|
// (|Ω/h| with Ω the triangle's signed solid angle, Van Oosterom & Strackee 1983; the triple
// product a.(b x c) is -2 A h). It is even in h, so smooth through the triangle's plane away from
// the triangle. Evaluated in two forms of the same function, so that neither divides by ~0:
//     |2Ah| <= Dn:  (4A / Dn) F(z), z = 2Ah/Dn, F(z) = atan(z)/z (a series near z = 0)
//     otherwise:    2 (sign(h) π/2 - atan(Dn / 2Ah)) / h   (|h| is then bounded away from 0)
//
// Normalized: D = phi / scale(), scale() the largest phi inside: the best of the bounding box's
// 12^3 cell centres inside the mesh (a finer grid when none is), then a compass search from it to
// the local maximum. So D is 1 at the deepest point of the part (of the basin the grid found),
// as the automatic distances of boxes and balls are 1 at their middle.
// Note phi is not the distance deep inside: at the centre of a ball of radius r it is r/2.
//
// Derivatives: jets (autodiff/jet.h) of D to any order the jet capacity allows (4 in 3D), in
// double, OpenMP over points. Cost: every triangle contributes to every point (no far-field
// cut): measured on one thread, 0.4 us a triangle and point to order 2, 1.1 us to order 4, 16 ns
// for the value alone (the washer of examples/, 384 triangles, 2000 points: 0.31 s to order 2).
// Thread-safe after construction.
#pragma once

#include <array>
#include <vector>

#include "autodiff/jet.h"
#include "autodiff/primitive.h"

namespace jetpde::geometry {

class MeshAdf {
 public:
  using Vec3 = std::array<double, 3>;
  using Triangle = std::array<Vec3, 3>;  // counter-clockwise seen from outside

  // UserError for no triangles (zero-area ones are dropped) or a mesh with no grid point inside.
  // With `selected` (one flag per triangle), D is the distance to those triangles alone (a piece
  // of the surface): W sums over them, zero on them only; inside is still the whole mesh's.
  explicit MeshAdf(const std::vector<Triangle>& triangles, const std::vector<bool>& selected = {});

  std::size_t triangles() const { return tris_.size(); }
  double potential(const Vec3& x) const;  // W(x)
  double phi(const Vec3& x) const { return 2 * kPi / potential(x); }
  // The generalized winding number Σ Ω / 4π over every triangle: 1 inside a closed outward
  // mesh, 0 outside.
  double winding(const Vec3& x) const;
  double scale() const { return scale_; }
  double value(const Vec3& x) const { return phi(x) / scale_; }  // D(x)

  // The jet of D at x to the algebra's order (the algebra must have 3 variables). Within eps of
  // the surface (eps = 1e-10, 1e-10, 1e-5, 1e-4, 1e-3 of the bounding box's diagonal for orders
  // 0 to 4), on it included, the derivatives are those at the point eps inside (the one-sided
  // limit to O(eps): nearer, 1/W's jets cancel), the value the point's own.
  Jet jet(const JetAlgebra& algebra, const Vec3& x) const;
  // D's jets at the rows of `points` [n, 3]: [n, JetAlgebra(3, order).size()], the normalized
  // Taylor coefficients by the algebra's keys. UserError for points not of 3 columns.
  MatrixD jets(const MatrixD& points, int order) const;

 private:
  static constexpr double kPi = 3.14159265358979323846;
  struct Tri {
    Vec3 v[3];
    Vec3 n;  // unit outward normal
    double area;
  };
  std::vector<Tri> tris_;  // the selected triangles: W's
  std::vector<Tri> all_;   // every triangle: the winding number's
  double scale_ = 1;
  double diagonal_ = 1;  // of the bounding box
};

}  // namespace jetpde::geometry
