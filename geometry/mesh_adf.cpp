#include "geometry/mesh_adf.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autodiff/errors.h"

namespace jetpde::geometry {

namespace {
using Vec3 = MeshAdf::Vec3;
Vec3 minus(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
// The vectors from x to a triangle's corners and the denominator of Van Oosterom & Strackee's
// solid angle, tan(Omega / 2) = a.(b x c) / dn: what the potential and the winding number share.
struct Corners {
  Vec3 a, b, c;
  double dn;
};
Corners corners(const Vec3 (&v)[3], const Vec3& x) {
  const Vec3 a = minus(v[0], x), b = minus(v[1], x), c = minus(v[2], x);
  const double la = std::sqrt(dot(a, a)), lb = std::sqrt(dot(b, b)), lc = std::sqrt(dot(c, c));
  return {a, b, c, la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la};
}
}  // namespace

MeshAdf::MeshAdf(const std::vector<Triangle>& triangles, const std::vector<bool>& selected) {
  if (!selected.empty() && selected.size() != triangles.size())
    throw UserError("mesh distance: " + std::to_string(selected.size()) + " flags for " +
                    std::to_string(triangles.size()) + " triangles");
  for (std::size_t k = 0; k < triangles.size(); ++k) {
    const Triangle& t = triangles[k];
    const Vec3 c = cross(minus(t[1], t[0]), minus(t[2], t[0]));
    const double twice = std::sqrt(dot(c, c));
    if (!(twice > 0)) continue;
    const Tri tri{{t[0], t[1], t[2]}, {c[0] / twice, c[1] / twice, c[2] / twice}, 0.5 * twice};
    all_.push_back(tri);
    if (selected.empty() || selected[k]) tris_.push_back(tri);
  }
  if (all_.empty()) throw UserError("mesh distance: the mesh has no triangle of nonzero area");
  if (tris_.empty()) throw UserError("mesh distance: no triangle of the piece has nonzero area");
  Vec3 lo = all_[0].v[0], hi = lo;
  for (const Tri& t : all_)
    for (const Vec3& v : t.v)
      for (std::size_t k = 0; k < 3; ++k)
        lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
  diagonal_ = std::sqrt(dot(minus(hi, lo), minus(hi, lo)));
  // The largest phi over the cell centres of a grid of the bounding box that are inside.
  for (int cells = 12; cells <= 96; cells *= 2) {
    const int total = cells * cells * cells;
    std::vector<double> best(static_cast<std::size_t>(total), 0.0);
    const auto centre = [&](int g) {
      const int idx[3] = {g % cells, (g / cells) % cells, g / (cells * cells)};
      Vec3 x;
      for (std::size_t k = 0; k < 3; ++k) x[k] = lo[k] + (idx[k] + 0.5) / cells * (hi[k] - lo[k]);
      return x;
    };
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (int g = 0; g < total; ++g) {
      const Vec3 x = centre(g);
      if (winding(x) > 0.5) best[static_cast<std::size_t>(g)] = phi(x);
    }
    const auto top = std::max_element(best.begin(), best.end());
    if (!(*top > 0)) continue;
    // From the best centre, a compass search (steps halved when no move along an axis helps)
    // to the local maximum, so the scale does not depend on where the grid falls.
    Vec3 x = centre(static_cast<int>(top - best.begin()));
    double value = *top, step = 0.5 * diagonal_ / cells;
    const double stop = 1e-6 * step * cells;
    while (step > stop) {
      bool moved = false;
      for (std::size_t k = 0; k < 3; ++k)
        for (const double sign : {1.0, -1.0}) {
          Vec3 y = x;
          y[k] += sign * step;
          if (winding(y) < 0.5) continue;
          const double v = phi(y);
          if (v > value) value = v, x = y, moved = true;
        }
      if (!moved) step *= 0.5;
    }
    scale_ = value;
    return;
  }
  throw UserError("mesh distance: no point of a 96^3 grid of the bounding box is inside the mesh");
}

double MeshAdf::potential(const Vec3& x) const {
  double w = 0;
  for (const Tri& t : tris_) {
    const auto [a, b, c, dn] = corners(t.v, x);
    const double h = -dot(t.n, a);
    if (h == 0) {
      // In the triangle's plane: off the triangle (Dn > 0) the limit 4A/Dn; on it (a point of
      // the surface) W is infinite and phi zero.
      if (!(dn > 0)) return std::numeric_limits<double>::infinity();
      w += 4 * t.area / dn;
    } else {
      w += 2 * std::atan2(2 * t.area * h, dn) / h;
    }
  }
  return w;
}

double MeshAdf::winding(const Vec3& x) const {
  double omega = 0;
  for (const Tri& t : all_) {
    const auto [a, b, c, dn] = corners(t.v, x);
    omega += 2 * std::atan2(dot(a, cross(b, c)), dn);
  }
  return omega / (4 * kPi);
}

Jet MeshAdf::jet(const JetAlgebra& J, const Vec3& point) const {
  // On or within eps of the surface W is huge and its jets cancel (the order-k coefficients of
  // 1/W lose about a factor eps^(1-k); and over an edge that two triangles of a flat face share,
  // each one's term is singular where their sum is not), up to 0/0 on the surface itself. There the
  // jet is taken at the point eps inside, along the inward normal of the nearest face (the
  // triangles the point projects into with the smallest |h|, their normals averaged at an edge or
  // corner): the one-sided limit to O(eps). The value stays the point's own.
  constexpr double kEps[5] = {1e-10, 1e-10, 1e-5, 1e-4, 1e-3};
  const double eps = kEps[std::min(J.order(), 4)] * diagonal_;
  Vec3 x = point;
  const double own = value(point);
  const bool near = !(own * scale_ >= eps);
  if (near) {
    double best = std::numeric_limits<double>::infinity();
    Vec3 normal{0, 0, 0};
    for (const Tri& t : tris_) {
      const double h = dot(t.n, minus(point, t.v[0]));
      if (std::abs(h) > best + 1e-9 * diagonal_) continue;
      // Inside the triangle's prism: the barycentric coordinates of the projection.
      const Vec3 e1 = minus(t.v[1], t.v[0]), e2 = minus(t.v[2], t.v[0]), q = minus(point, t.v[0]);
      const double d11 = dot(e1, e1), d12 = dot(e1, e2), d22 = dot(e2, e2);
      const double q1 = dot(q, e1), q2 = dot(q, e2), det = d11 * d22 - d12 * d12;
      const double u = (d22 * q1 - d12 * q2) / det, v = (d11 * q2 - d12 * q1) / det;
      if (u < -1e-9 || v < -1e-9 || u + v > 1 + 1e-9) continue;
      if (std::abs(h) < best - 1e-9 * diagonal_) normal = {0, 0, 0};  // a nearer face
      best = std::min(best, std::abs(h));
      for (std::size_t k = 0; k < 3; ++k) normal[k] += t.n[k];
    }
    const double length = std::sqrt(dot(normal, normal));
    if (length > 0)  // else (no face under it) the jet where it is
      for (std::size_t k = 0; k < 3; ++k) x[k] = point[k] - (eps - best) * normal[k] / length;
  }
  Jet w = J.constant(0.0);
  for (const Tri& t : tris_) {
    // Offsets x - v_i: the algebra's dot_offsets builds (x - v_i).(x - v_j) directly.
    const Vec3 p[3] = {minus(x, t.v[0]), minus(x, t.v[1]), minus(x, t.v[2])};
    const Jet la = J.sqrt(J.dot_offsets(p[0], p[0])), lb = J.sqrt(J.dot_offsets(p[1], p[1])),
              lc = J.sqrt(J.dot_offsets(p[2], p[2]));
    const Jet dn =
        J.add(J.add(J.mul(J.mul(la, lb), lc), J.mul(J.dot_offsets(p[0], p[1]), lc)),
              J.add(J.mul(J.dot_offsets(p[0], p[2]), lb), J.mul(J.dot_offsets(p[1], p[2]), la)));
    Jet h = J.constant(dot(t.n, p[0]));  // n.(x - v0): linear
    for (int k = 0; k < 3 && J.order() >= 1; ++k) h.c[static_cast<std::size_t>(1 + k)] = t.n[k];
    const Jet y = J.scale(h, 2 * t.area);
    Jet term;
    if (std::abs(y.c[0]) <= dn.c[0]) {
      const Jet inv = J.recip(dn);
      term = J.scale(J.mul(inv, J.atan_over(J.mul(y, inv))), 4 * t.area);
    } else {
      const double half = std::copysign(kPi / 2, y.c[0]);
      const Jet theta = J.add_constant(J.scale(J.atan(J.div(dn, y)), -1.0), half);
      term = J.scale(J.div(theta, h), 2.0);
    }
    w = J.add(w, term);
  }
  Jet d = J.scale(J.recip(w), 2 * kPi / scale_);
  if (near) d.c[0] = own;
  return d;
}

MatrixD MeshAdf::jets(const MatrixD& points, int order) const {
  if (points.cols() != 3)
    throw UserError("mesh distance: points have " + std::to_string(points.cols()) +
                    " columns, not 3");
  const JetAlgebra J(3, order);
  MatrixD out(points.rows(), J.size());
  const auto n = static_cast<std::int64_t>(points.rows());
  if (order == 0) {  // values only (the evaluators): the plain potential, 30x cheaper than jets
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 8)
#endif
    for (std::int64_t i = 0; i < n; ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      out(r, 0) = value({points(r, 0), points(r, 1), points(r, 2)});
    }
    return out;
  }
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 8)
#endif
  for (std::int64_t i = 0; i < n; ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    const Jet j = jet(J, {points(r, 0), points(r, 1), points(r, 2)});
    for (int k = 0; k < J.size(); ++k) out(r, k) = j.c[static_cast<std::size_t>(k)];
  }
  return out;
}

}  // namespace jetpde::geometry
