// The smooth mesh distance (geometry/mesh_adf.h) on meshes built here: its potential against
// quadrature, the winding number, phi against the distance near faces, D > 0 inside with its
// normalization, and its jets against finite differences and against the Taylor transform of
// the same formula built as graph ops on a tetrahedron.
#include "geometry/mesh_adf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"

namespace jetpde::geometry {
namespace {

constexpr double pi = std::numbers::pi;
using Vec3 = MeshAdf::Vec3;
using Triangle = MeshAdf::Triangle;

// The 12 triangles of the unit cube, outward.
std::vector<Triangle> cube() {
  std::vector<Triangle> out;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      const auto corner = [&](double a, double b) {
        Vec3 p{};
        p[static_cast<std::size_t>(axis)] = side;
        p[static_cast<std::size_t>(u)] = a;
        p[static_cast<std::size_t>(v)] = b;
        return p;
      };
      // (u, v, axis) is right-handed: counter-clockwise in (u, v) faces +axis.
      Triangle t1{corner(0, 0), corner(1, 0), corner(1, 1)};
      Triangle t2{corner(0, 0), corner(1, 1), corner(0, 1)};
      if (!side) std::swap(t1[1], t1[2]), std::swap(t2[1], t2[2]);
      out.push_back(t1);
      out.push_back(t2);
    }
  return out;
}

// The tetrahedron with vertices 0, e_x, e_y, e_z, outward.
std::vector<Triangle> tetrahedron() {
  const Vec3 o{0, 0, 0}, x{1, 0, 0}, y{0, 1, 0}, z{0, 0, 1};
  return {{o, y, x}, {o, x, z}, {o, z, y}, {x, y, z}};
}

TEST(MeshAdf, PotentialMatchesQuadratureOverTheFaces) {
  const MeshAdf adf(cube());
  // ∫ 1/|x - y|^3 over each face of the cube by the midpoint rule on a fine grid (the point is
  // 0.3 from the nearest face, so the integrand is smooth there).
  const Vec3 x{0.3, 0.6, 0.45};
  const int n = 400;
  double w = 0;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          Vec3 y{};
          y[static_cast<std::size_t>(axis)] = side;
          y[static_cast<std::size_t>((axis + 1) % 3)] = (i + 0.5) / n;
          y[static_cast<std::size_t>((axis + 2) % 3)] = (j + 0.5) / n;
          const double r = std::hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]);
          w += 1.0 / (r * r * r) / (n * n);
        }
  EXPECT_NEAR(adf.potential(x), w, 1e-5 * w);
}

TEST(MeshAdf, WindingNumberIsOneInsideZeroOutside) {
  const MeshAdf adf(cube());
  EXPECT_NEAR(adf.winding({0.5, 0.5, 0.5}), 1.0, 1e-12);
  EXPECT_NEAR(adf.winding({0.01, 0.99, 0.3}), 1.0, 1e-12);
  EXPECT_NEAR(adf.winding({1.5, 0.5, 0.5}), 0.0, 1e-12);
  EXPECT_NEAR(adf.winding({-0.01, 0.5, 0.5}), 0.0, 1e-12);
}

TEST(MeshAdf, PhiIsTheDistanceNearAFace) {
  const MeshAdf adf(cube());
  // Above the middle of a face (on the diagonal its two triangles share), above a point inside
  // one triangle, and on the face x = 1 seen from inside: phi/h - 1 = O(h).
  for (const auto& [u, v] : {std::pair{0.5, 0.5}, {0.3, 0.6}, {0.8, 0.25}}) {
    double previous = 1;
    for (const double h : {1e-2, 1e-3, 1e-4}) {
      const double err_z = std::abs(adf.phi({u, v, h}) / h - 1);
      const double err_x = std::abs(adf.phi({1 - h, u, v}) / h - 1);
      EXPECT_LT(err_z, 2 * h) << u << " " << v << " h " << h;
      EXPECT_LT(err_x, 2 * h) << u << " " << v << " h " << h;
      EXPECT_LT(err_z, previous);
      previous = err_z;
    }
  }
}

TEST(MeshAdf, PositiveInsideAndAboutOneAtTheDeepestPoint) {
  const MeshAdf adf(cube());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(1e-6, 1 - 1e-6);
  double most = 0;
  for (int i = 0; i < 2000; ++i) {
    const Vec3 x{u(rng), u(rng), u(rng)};
    const double d = adf.value(x);
    EXPECT_GT(d, 0) << x[0] << " " << x[1] << " " << x[2];
    most = std::max(most, d);
  }
  // The scale is the largest phi: a random sample's largest is near 1, never above it.
  EXPECT_GT(most, 0.95);
  EXPECT_LE(most, 1.0 + 1e-12);
  EXPECT_NEAR(adf.value({0.5, 0.5, 0.5}), 1.0, 1e-9);  // the deepest point of the cube
  // Zero on the surface (exactly on a face, on an edge, at a corner), D ~ h near it; both the
  // values and the jets.
  EXPECT_LT(adf.value({0.5, 0.5, 1e-9}), 1e-8);
  for (const Vec3& x : {Vec3{0.3, 0.6, 0.0}, Vec3{0.5, 0.5, 0.0}, Vec3{1.0, 0.2, 0.7},
                        Vec3{0.0, 0.0, 0.4}, Vec3{1.0, 1.0, 1.0}}) {
    EXPECT_LT(adf.value(x), 1e-12) << x[0] << " " << x[1] << " " << x[2];
    EXPECT_LT(adf.jets((MatrixD(1, 3) << x[0], x[1], x[2]).finished(), 0)(0, 0), 1e-12);
  }
}

TEST(MeshAdf, JetsOnTheSurfaceAreTheLimitsFromInside) {
  // On a face (h = 0 exactly), over the diagonal its two triangles share, 1e-12 inside, and on
  // another face: finite jets, the gradient the inward normal over the scale (D ~ h/scale), and
  // for orders 1 and 2 close to the jets 1e-4 further in (D's third normal derivative is about
  // -400 there, so "close" is to the depth's first order). The order-4 jets, taken 1e-3 of the
  // diagonal inside, are only checked finite with the right gradient: their coefficients vary
  // too fast there to compare with another depth.
  const MeshAdf adf(cube());
  for (const auto& [order, depth, tolerance] :
       {std::tuple{1, 1e-4, 1e-2}, std::tuple{2, 1e-4, 1e-2}, std::tuple{4, 0.0, 0.0}}) {
    const JetAlgebra J(3, order);
    for (const Vec3& x :
         {Vec3{0.3, 0.6, 0.0}, Vec3{0.5, 0.5, 0.0}, Vec3{0.3, 0.6, 1e-12}, Vec3{0.4, 1.0, 0.7}}) {
      const Jet on = adf.jet(J, x);
      const bool top = x[1] == 1.0;
      const Vec3 in = top ? Vec3{x[0], 1 - depth, x[2]} : Vec3{x[0], x[1], depth};
      const Jet near = adf.jet(J, in);
      EXPECT_LT(on.value(), 1e-11);
      for (int k = 0; k < J.size(); ++k) ASSERT_TRUE(std::isfinite(on.c[k])) << order << " " << k;
      const double inward = top ? -on.c[J.key_of({0, 1, 0})] : on.c[J.key_of({0, 0, 1})];
      EXPECT_NEAR(inward * adf.scale(), 1.0, 1e-2) << order;
      for (int k = 1; k < J.size() && depth > 0; ++k)
        EXPECT_NEAR(on.c[k], near.c[k], tolerance * (1 + std::abs(near.c[k])))
            << "order " << order << " key " << k << " at " << x[0] << " " << x[1] << " " << x[2];
    }
  }
}

TEST(MeshAdf, RejectsDegenerateMeshes) {
  const Vec3 o{0, 0, 0};
  EXPECT_THROW(MeshAdf({{o, o, o}}), UserError);
  // One triangle: an open surface, no inside to scale by.
  EXPECT_THROW(MeshAdf({{Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}}}), UserError);
}

// c_β = ∂_i c_{β - e_i} / β_i for every β with β_i > 0: each coefficient of the order-4 jet
// against a central difference of a lower one.
void expect_jets_match_differences(const MeshAdf& adf, const Vec3& x) {
  const JetAlgebra J(3, 4);
  const Jet at = adf.jet(J, x);
  const double step = 1e-5;
  double largest = 0;
  for (int k = 0; k < J.size(); ++k) largest = std::max(largest, std::abs(at.c[k]));
  for (int i = 0; i < 3; ++i) {
    Vec3 xp = x, xm = x;
    xp[static_cast<std::size_t>(i)] += step;
    xm[static_cast<std::size_t>(i)] -= step;
    const Jet p = adf.jet(J, xp), m = adf.jet(J, xm);
    for (int k = 0; k < J.size(); ++k) {
      MultiIndex beta = J.indices()[static_cast<std::size_t>(k)];
      if (beta[static_cast<std::size_t>(i)] == 0) continue;
      const int bi = beta[static_cast<std::size_t>(i)]--;
      const int lower = J.key_of(beta);
      const double fd = (p.c[lower] - m.c[lower]) / (2 * step) / bi;
      EXPECT_NEAR(at.c[k], fd, 1e-6 * largest)
          << "coefficient " << multi_index_str(J.indices()[static_cast<std::size_t>(k)])
          << " along " << i << " at " << x[0] << " " << x[1] << " " << x[2];
    }
  }
  // A lower order is the same jet truncated.
  const JetAlgebra J2(3, 2);
  const Jet low = adf.jet(J2, x);
  for (int k = 0; k < J2.size(); ++k)
    EXPECT_NEAR(low.c[k], at.c[J.key_of(J2.indices()[static_cast<std::size_t>(k)])],
                1e-13 * largest);
  EXPECT_NEAR(at.value(), adf.value(x), 1e-14);
}

TEST(MeshAdf, JetsMatchFiniteDifferences) {
  const MeshAdf box(cube()), tet(tetrahedron());
  // Deep inside, near faces (the second form of a triangle's term), near an edge and a corner.
  for (const Vec3& x : {Vec3{0.5, 0.5, 0.5}, Vec3{0.3, 0.6, 0.05}, Vec3{0.2, 0.04, 0.03},
                        Vec3{0.95, 0.9, 0.93}, Vec3{0.5, 0.7, 0.995}})
    expect_jets_match_differences(box, x);
  for (const Vec3& x : {Vec3{0.2, 0.2, 0.2}, Vec3{0.1, 0.3, 0.05}, Vec3{0.5, 0.2, 0.25}})
    expect_jets_match_differences(tet, x);
}

TEST(MeshAdf, APieceIsTheDistanceToItsTrianglesAlone) {
  // The cube's bottom face (z = 0: its two triangles) selected: D vanishes there only, is about
  // h/scale above it, positive on the other faces, and its jets are still smooth inside.
  const std::vector<Triangle> tris = cube();
  std::vector<bool> bottom;
  for (const Triangle& t : tris) bottom.push_back(t[0][2] == 0 && t[1][2] == 0 && t[2][2] == 0);
  ASSERT_EQ(std::count(bottom.begin(), bottom.end(), true), 2);
  const MeshAdf piece(tris, bottom);
  EXPECT_NEAR(piece.winding({0.5, 0.5, 0.5}), 1.0, 1e-12);  // inside is the whole mesh's
  EXPECT_LT(piece.value({0.3, 0.6, 0.0}), 1e-12);
  EXPECT_NEAR(piece.phi({0.3, 0.6, 1e-4}) / 1e-4, 1.0, 1e-3);
  EXPECT_GT(piece.value({0.3, 0.6, 1.0}), 0.5);  // the top face is far from the piece
  EXPECT_GT(piece.value({1.0, 0.6, 0.5}), 0.1);  // a side face
  EXPECT_LE(piece.value({0.5, 0.5, 0.99}), 1.0 + 1e-12);
  expect_jets_match_differences(piece, {0.4, 0.3, 0.6});
  expect_jets_match_differences(piece, {0.2, 0.9, 0.05});
  EXPECT_THROW(MeshAdf(tris, std::vector<bool>(tris.size(), false)), UserError);
  EXPECT_THROW(MeshAdf(tris, std::vector<bool>(3, true)), UserError);
}

// The same D built as graph ops on the tetrahedron: inside it every face has h < 0, where a
// triangle's term is 2 (-π/2 - atan(Dn / 2Ah)) / h for every point (the second form), so one
// formula holds at all points; the transform's streams must equal the jets (which switch forms).
TEST(MeshAdf, JetsMatchTheTaylorTransformOnATetrahedron) {
  const MeshAdf adf(tetrahedron());
  const std::vector<Triangle> tris = tetrahedron();
  const MatrixD points = (MatrixD(5, 3) << 0.2, 0.2, 0.2, 0.1, 0.3, 0.05, 0.5, 0.2, 0.25, 0.05,
                          0.05, 0.85, 0.3, 0.3, 0.38)
                             .finished();
  Graph g(DType::f64);
  const Var x = g.input("x", {points.rows(), 3});
  const Var cx[3] = {col(x, 0), col(x, 1), col(x, 2)};
  Var w;
  for (const Triangle& t : tris) {
    Var a[3][3];  // a[i][k]: component k of v_i - x
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) a[i][k] = t[i][k] - cx[k];
    const auto dotv = [&](int i, int j) {
      return a[i][0] * a[j][0] + a[i][1] * a[j][1] + a[i][2] * a[j][2];
    };
    const Var la = sqrt(dotv(0, 0)), lb = sqrt(dotv(1, 1)), lc = sqrt(dotv(2, 2));
    const Var dn = la * lb * lc + dotv(0, 1) * lc + dotv(0, 2) * lb + dotv(1, 2) * la;
    const Vec3 e1{t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]},
        e2{t[2][0] - t[0][0], t[2][1] - t[0][1], t[2][2] - t[0][2]};
    const Vec3 c{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                 e1[0] * e2[1] - e1[1] * e2[0]};
    const double twice = std::hypot(c[0], c[1], c[2]);
    const Var h = (a[0][0] * c[0] + a[0][1] * c[1] + a[0][2] * c[2]) * (-1.0 / twice);
    const Var theta = -pi / 2 - atan(dn / (h * twice));
    const Var term = 2.0 * theta / h;
    w = w.id < 0 ? term : w + term;
  }
  const Var d = (2 * pi / adf.scale()) / w;
  const DerivativeSum lap = laplacian_sum(3), bih = biharmonic_sum(3);
  std::vector<MultiIndex> partials;
  const JetAlgebra J(3, 4);
  for (const MultiIndex& m : J.indices())
    if (degree(m) >= 1) partials.push_back(m);
  Taylor taylor(TaylorPlan({{x, 0}, {x, 1}, {x, 2}}, partials, {lap, bih}));
  std::vector<Var> outs{d};
  for (const MultiIndex& m : partials) outs.push_back(taylor.derivative(d, m));
  outs.push_back(taylor.sum(d, "laplacian"));
  outs.push_back(taylor.sum(d, std::size_t{1}));
  const std::vector<MatrixD> got = evaluate(outs, {{"x", points}});
  const MatrixD jets = adf.jets(points, 4);
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    double largest = 0;
    for (int k = 0; k < J.size(); ++k) largest = std::max(largest, std::abs(jets(r, k)));
    EXPECT_NEAR(got[0](r, 0), jets(r, 0), 1e-12 * largest);
    double laplacian = 0, biharmonic = 0;
    for (std::size_t p = 0; p < partials.size(); ++p) {
      double factorial = 1;
      for (int a : partials[p])
        for (int k = 2; k <= a; ++k) factorial *= k;
      const double want = jets(r, J.key_of(partials[p])) * factorial;
      EXPECT_NEAR(got[p + 1](r, 0), want, 1e-9 * largest * factorial)
          << multi_index_str(partials[p]) << " at row " << r;
      for (const auto& [alpha, u] : lap.terms)
        if (alpha == partials[p]) laplacian += u * want;
      for (const auto& [alpha, u] : bih.terms)
        if (alpha == partials[p]) biharmonic += u * want;
    }
    EXPECT_NEAR(got[partials.size() + 1](r, 0), laplacian, 1e-9 * largest * 2);
    EXPECT_NEAR(got[partials.size() + 2](r, 0), biharmonic, 1e-9 * largest * 24 * 3);
  }
}

}  // namespace
}  // namespace jetpde::geometry
