#include "io/grid_output.h"

#include <cstdio>
#include <filesystem>

#include "autodiff/errors.h"
#include "io/hdf5_write.h"
#include "io/vtk_write.h"

namespace jetpde::io {
namespace {

// One time level: the named arrays at `points`.
std::vector<VtkArray> arrays_at(solvers::Problem& problem, const Eigen::VectorXd& theta,
                                const MatrixD& points, const GridOutputOptions& o) {
  const solvers::ProblemSpec& spec = problem.spec();
  const std::vector<std::string>& fields = spec.context.field_names();
  std::vector<VtkArray> out;
  const MatrixD u = problem.evaluate(theta, points);
  for (std::size_t f = 0; f < fields.size(); ++f)
    out.push_back({fields[f], u.col(static_cast<Eigen::Index>(f))});
  if (o.exact) {
    const MatrixD exact = o.exact(points);
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const auto c = static_cast<Eigen::Index>(f);
      out.push_back({fields[f] + "_exact", exact.col(c)});
      out.push_back({fields[f] + "_error", u.col(c) - exact.col(c)});
    }
  }
  std::vector<std::string> names = o.quantities, texts = o.quantities;
  if (o.residuals)
    for (std::size_t e = 0; e < spec.equations.size(); ++e) {
      names.push_back(
          "residual_" +
          (spec.equation_names.empty()
               ? (spec.equations.size() == 1 ? std::string("pde") : "pde" + std::to_string(e + 1))
               : spec.equation_names[e]));
      texts.push_back(spec.equations[e]);
    }
  if (!texts.empty()) {
    const MatrixD q = problem.evaluate_expressions(theta, points, texts);
    for (std::size_t k = 0; k < texts.size(); ++k)
      out.push_back({names[k], q.col(static_cast<Eigen::Index>(k))});
  }
  if (!spec.domain->is_box()) {
    const MatrixD sd = spec.domain->signed_distance(points);
    MatrixD inside(points.rows(), 1);
    for (Eigen::Index i = 0; i < points.rows(); ++i) inside(i, 0) = sd(i, 0) <= 0 ? 1.0 : 0.0;
    out.push_back({"inside", inside});
  }
  return out;
}

}  // namespace

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

std::vector<std::string> write_grid_output(solvers::Problem& problem, const Eigen::VectorXd& theta,
                                           const std::string& dir, const GridOutputOptions& o) {
  const solvers::ProblemSpec& spec = problem.spec();
  const bool has_time = spec.context.time_index() >= 0;
  std::vector<int> dims;
  std::vector<double> times;
  const MatrixD space = spatial_grid(*spec.domain, o.grid, has_time, &dims, &times);
  const geometry::Bounds b = spec.domain->bounds();
  const int levels = has_time ? static_cast<int>(times.size()) : 1;
  const bool vtk = o.vtk && space.cols() <= 3;
  VtkGrid grid;
  for (Eigen::Index a = 0; vtk && a < space.cols(); ++a) {
    grid.dims[static_cast<std::size_t>(a)] = dims[static_cast<std::size_t>(a)];
    grid.origin[static_cast<std::size_t>(a)] = b.lo[static_cast<std::size_t>(a)];
    grid.spacing[static_cast<std::size_t>(a)] =
        (b.hi[static_cast<std::size_t>(a)] - b.lo[static_cast<std::size_t>(a)]) /
        (dims[static_cast<std::size_t>(a)] - 1);
  }
  std::vector<std::string> written;
  std::vector<PvdEntry> series;
  std::vector<std::vector<VtkArray>> all;
  for (int level = 0; level < levels; ++level) {
    MatrixD points(space.rows(), space.cols() + (has_time ? 1 : 0));
    points.leftCols(space.cols()) = space;
    if (has_time) points.col(space.cols()).setConstant(times[static_cast<std::size_t>(level)]);
    all.push_back(arrays_at(problem, theta, points, o));
    if (!vtk) continue;
    if (has_time) {
      char name[32];
      std::snprintf(name, sizeof name, "fields_%04d.vti", level);
      write_vti(dir + "/" + name, grid, all.back());
      series.push_back({times[static_cast<std::size_t>(level)], name});
      written.push_back(name);
    } else {
      write_vti(dir + "/fields.vti", grid, all.back());
      written.push_back("fields.vti");
    }
  }
  if (vtk && has_time) {
    write_pvd(dir + "/fields.pvd", series);
    written.push_back("fields.pvd");
  }
  if (o.hdf5) {
    // One dataset per array, [time levels, grid points] (x fastest), and the axes.
    Hdf5Writer h5(dir + "/fields.h5");
    h5.attribute("layout",
                 "array[level, k], k = i + nx*(j + ny*l) over the axes in coordinate "
                 "order (x fastest); level indexes `times` (one level without time)");
    const std::vector<std::string>& names = spec.domain->coordinate_names();
    for (Eigen::Index a = 0; a < space.cols(); ++a) {
      std::vector<double> axis;
      const auto ua = static_cast<std::size_t>(a);
      for (int i = 0; i < dims[ua]; ++i)
        axis.push_back(b.lo[ua] + (b.hi[ua] - b.lo[ua]) * i / (dims[ua] - 1));
      h5.write("axes/" + names[static_cast<std::size_t>(a)], axis);
    }
    if (has_time) h5.write("times", times);
    for (std::size_t k = 0; k < all.front().size(); ++k) {
      MatrixD m(levels, space.rows());
      for (int level = 0; level < levels; ++level)
        m.row(level) = all[static_cast<std::size_t>(level)][k].values.col(0).transpose();
      h5.write(all.front()[k].name, m);
    }
    h5.commit();
    written.push_back("fields.h5");
  }
  return written;
}

}  // namespace jetpde::io
