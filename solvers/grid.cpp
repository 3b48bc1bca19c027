#include "solvers/grid.h"

#include <algorithm>

#include "autodiff/errors.h"

namespace jetpde::solvers {

long long grid_point_count(const geometry::Geometry& domain, const GridSpec& spec, bool has_time) {
  const int space = domain.bounds().dim() - (has_time ? 1 : 0);
  double n = has_time ? std::max(1, spec.time_steps) : 1;
  for (int a = 0; a < space; ++a)
    n *= spec.counts.empty()       ? 101
         : spec.counts.size() == 1 ? spec.counts[0]
         : static_cast<std::size_t>(a) < spec.counts.size()
             ? spec.counts[static_cast<std::size_t>(a)]
             : 1;
  return n < 9e18 ? static_cast<long long>(n) : 9000000000000000000LL;  // saturated
}

MatrixD spatial_grid(const geometry::Geometry& domain, const GridSpec& spec, bool has_time,
                     std::vector<int>* dims, std::vector<double>* times) {
  const geometry::Bounds b = domain.bounds();
  const int space = b.dim() - (has_time ? 1 : 0);
  dims->assign(static_cast<std::size_t>(space), 0);
  Eigen::Index n = 1;
  for (int a = 0; a < space; ++a) {
    const int c = spec.counts.empty()       ? 101
                  : spec.counts.size() == 1 ? spec.counts[0]
                                            : spec.counts.at(static_cast<std::size_t>(a));
    if (c < 2) throw UserError("output.grid: at least 2 points per axis, got " + std::to_string(c));
    (*dims)[static_cast<std::size_t>(a)] = c;
    n *= c;
  }
  MatrixD points(n, space);
  for (Eigen::Index k = 0; k < n; ++k) {
    Eigen::Index rest = k;
    for (int a = 0; a < space; ++a) {
      const int c = (*dims)[static_cast<std::size_t>(a)];
      const auto i = rest % c;
      rest /= c;
      points(k, a) = b.lo[static_cast<std::size_t>(a)] +
                     (b.hi[static_cast<std::size_t>(a)] - b.lo[static_cast<std::size_t>(a)]) *
                         static_cast<double>(i) / (c - 1);
    }
  }
  times->clear();
  if (has_time) {
    const int steps = std::max(1, spec.time_steps);
    const double t0 = b.lo.back(), t1 = b.hi.back();
    for (int s = 0; s < steps; ++s)
      times->push_back(steps == 1 ? t1 : t0 + (t1 - t0) * s / (steps - 1));
  }
  return points;
}

MatrixD with_times(const MatrixD& space, const std::vector<double>& times) {
  if (times.empty()) return space;
  MatrixD out(space.rows() * static_cast<Eigen::Index>(times.size()), space.cols() + 1);
  for (std::size_t l = 0; l < times.size(); ++l) {
    auto block = out.middleRows(static_cast<Eigen::Index>(l) * space.rows(), space.rows());
    block.leftCols(space.cols()) = space;
    block.col(space.cols()).setConstant(times[l]);
  }
  return out;
}

}  // namespace jetpde::solvers
