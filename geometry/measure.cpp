#include "geometry/measure.h"

#include <vector>

#include "geometry/sequences.h"

namespace jetpde::geometry {

double estimate_volume(const Geometry& geometry, std::size_t points) {
  const Bounds box = geometry.bounds();
  const int dim = geometry.dim();
  const MatrixD unit = make_unit_cube_stream(SampleMethod::sobol, dim, 0, false)->next(points);
  std::vector<double> p(static_cast<std::size_t>(dim));
  std::size_t inside = 0;
  for (Eigen::Index i = 0; i < unit.rows(); ++i) {
    for (int j = 0; j < dim; ++j) {
      const auto k = static_cast<std::size_t>(j);
      p[k] = box.lo[k] + unit(i, j) * (box.hi[k] - box.lo[k]);
    }
    if (geometry.contains(p)) ++inside;
  }
  return box.volume() * static_cast<double>(inside) / static_cast<double>(points);
}

double estimate_kept_measure(const BoundaryPatch& patch, std::size_t points) {
  if (!patch.keep) return patch.measure;
  std::vector<double> point(static_cast<std::size_t>(patch.dim));
  std::vector<double> normal(point.size());
  if (patch.param_dim == 0) {
    patch.map(nullptr, point.data(), normal.data());
    return patch.keep(point, normal) ? patch.measure : 0.0;
  }
  const MatrixD unit =
      make_unit_cube_stream(SampleMethod::sobol, patch.param_dim, 0, false)->next(points);
  std::size_t kept = 0;
  for (Eigen::Index i = 0; i < unit.rows(); ++i) {
    patch.map(&unit(i, 0), point.data(), normal.data());
    if (patch.keep(point, normal)) ++kept;
  }
  return patch.measure * static_cast<double>(kept) / static_cast<double>(points);
}

}  // namespace jetpde::geometry
