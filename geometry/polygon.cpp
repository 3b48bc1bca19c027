#include "geometry/polygon.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::geometry {
namespace {

using Vec = std::array<double, 2>;

double cross(const Vec& o, const Vec& a, const Vec& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

bool on_segment(const Vec& a, const Vec& b, const Vec& p) {
  return std::min(a[0], b[0]) <= p[0] && p[0] <= std::max(a[0], b[0]) &&
         std::min(a[1], b[1]) <= p[1] && p[1] <= std::max(a[1], b[1]);
}

// Whether the closed segments [a, b] and [c, d] share a point.
bool segments_meet(const Vec& a, const Vec& b, const Vec& c, const Vec& d) {
  const double d1 = cross(c, d, a), d2 = cross(c, d, b), d3 = cross(a, b, c), d4 = cross(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
    return true;
  return (d1 == 0 && on_segment(c, d, a)) || (d2 == 0 && on_segment(c, d, b)) ||
         (d3 == 0 && on_segment(a, b, c)) || (d4 == 0 && on_segment(a, b, d));
}

std::string format_vertex(const Vec& v) {
  return "(" + format_number(v[0]) + ", " + format_number(v[1]) + ")";
}

}  // namespace

Polygon::Polygon(std::vector<std::array<double, 2>> vertices)
    : Geometry(2), vertices_(std::move(vertices)) {
  const std::size_t n = vertices_.size();
  if (n < 3) throw UserError("polygon: needs at least 3 vertices, got " + std::to_string(n));
  for (std::size_t i = 0; i < n; ++i) {
    const Vec &a = vertices_[i], &b = vertices_[(i + 1) % n];
    if (!std::isfinite(a[0]) || !std::isfinite(a[1]))
      throw UserError("polygon: vertex " + std::to_string(i) + " is not finite");
    if (a == b)
      throw UserError("polygon: edge " + std::to_string(i) + " has zero length (vertex " +
                      format_vertex(a) + " repeated)");
    signed_area_ += 0.5 * (a[0] * b[1] - b[0] * a[1]);
  }
  check_simple();
  if (signed_area_ == 0) throw UserError("polygon: the area is zero");
}

void Polygon::check_simple() const {
  const std::size_t n = vertices_.size();
  auto edge_text = [&](std::size_t i) {
    return "edge " + std::to_string(i) + " " + format_vertex(vertices_[i]) + "-" +
           format_vertex(vertices_[(i + 1) % n]);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Vec &a = vertices_[i], &b = vertices_[(i + 1) % n], &c = vertices_[(i + 2) % n];
    // Consecutive edges share a vertex; they must not fold back onto each other.
    const double dot = (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1]);
    if (cross(a, b, c) == 0 && dot < 0)
      throw UserError("polygon: " + edge_text(i) + " and " + edge_text((i + 1) % n) +
                      " fold back onto each other; the polygon must be simple");
    for (std::size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent through vertex 0
      if (segments_meet(a, b, vertices_[j], vertices_[(j + 1) % n]))
        throw UserError("polygon: " + edge_text(i) + " and " + edge_text(j) +
                        " intersect; the polygon must be simple");
    }
  }
}

std::string Polygon::describe() const {
  return "polygon with " + std::to_string(vertices_.size()) + " vertices " +
         format_bounds(bounds());
}

Bounds Polygon::bounds() const {
  Bounds b{{INFINITY, INFINITY}, {-INFINITY, -INFINITY}};
  for (const Vec& v : vertices_)
    for (std::size_t k = 0; k < 2; ++k) {
      b.lo[k] = std::min(b.lo[k], v[k]);
      b.hi[k] = std::max(b.hi[k], v[k]);
    }
  return b;
}

double Polygon::edge_distance(Point p, std::size_t i, std::array<double, 2>& nearest) const {
  const Vec &a = vertices_[i], &b = vertices_[(i + 1) % vertices_.size()];
  const double ex = b[0] - a[0], ey = b[1] - a[1];
  const double t =
      std::clamp(((p[0] - a[0]) * ex + (p[1] - a[1]) * ey) / (ex * ex + ey * ey), 0.0, 1.0);
  nearest = {a[0] + t * ex, a[1] + t * ey};
  return std::hypot(p[0] - nearest[0], p[1] - nearest[1]);
}

std::array<double, 2> Polygon::edge_normal(std::size_t i) const {
  const Vec &a = vertices_[i], &b = vertices_[(i + 1) % vertices_.size()];
  const double length = std::hypot(b[0] - a[0], b[1] - a[1]);
  const double orientation = signed_area_ > 0 ? 1.0 : -1.0;  // (dy, -dx) is outward when CCW
  return {orientation * (b[1] - a[1]) / length, -orientation * (b[0] - a[0]) / length};
}

double Polygon::signed_distance(Point p) const {
  double distance = INFINITY;
  bool inside = false;
  const std::size_t n = vertices_.size();
  Vec nearest;
  for (std::size_t i = 0, j = n - 1; i < n; j = i++) {
    distance = std::min(distance, edge_distance(p, j, nearest));
    const Vec &a = vertices_[j], &b = vertices_[i];  // crossing number of a ray towards +x
    if ((a[1] > p[1]) != (b[1] > p[1]) &&
        p[0] < a[0] + (p[1] - a[1]) * (b[0] - a[0]) / (b[1] - a[1]))
      inside = !inside;
  }
  return inside ? -distance : distance;
}

void Polygon::outward_normal(Point p, std::span<double> normal) const {
  double best = INFINITY;
  std::size_t best_edge = 0;
  Vec nearest, best_nearest{};
  for (std::size_t i = 0; i < vertices_.size(); ++i) {
    const double d = edge_distance(p, i, nearest);
    if (d < best) best = d, best_edge = i, best_nearest = nearest;
  }
  if (best <= 1e-12 * size()) {  // on the boundary: the edge's normal
    const Vec n = edge_normal(best_edge);
    normal[0] = n[0], normal[1] = n[1];
    return;
  }
  const double sign = signed_distance(p) < 0 ? -1.0 : 1.0;  // inside: towards the boundary
  normal[0] = sign * (p[0] - best_nearest[0]) / best;
  normal[1] = sign * (p[1] - best_nearest[1]) / best;
}

std::vector<BoundaryPatch> Polygon::boundary_patches() const {
  std::vector<BoundaryPatch> patches;
  for (std::size_t i = 0; i < vertices_.size(); ++i) {
    const Vec a = vertices_[i], b = vertices_[(i + 1) % vertices_.size()];
    BoundaryPatch patch;
    patch.names = {"edge" + std::to_string(i)};
    patch.dim = 2;
    patch.param_dim = 1;
    patch.measure = std::hypot(b[0] - a[0], b[1] - a[1]);
    patch.extents = {patch.measure};
    patch.map = [a, b, n = edge_normal(i)](const double* u, double* point, double* normal) {
      point[0] = a[0] + u[0] * (b[0] - a[0]);
      point[1] = a[1] + u[0] * (b[1] - a[1]);
      normal[0] = n[0], normal[1] = n[1];
    };
    patches.push_back(std::move(patch));
  }
  return patches;
}

std::shared_ptr<Polygon> polygon(std::vector<std::array<double, 2>> vertices) {
  return std::make_shared<Polygon>(std::move(vertices));
}

}  // namespace jetpde::geometry
