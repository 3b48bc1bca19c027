#include "io/grid_output.h"

#include <cstdio>

#include "io/hdf5_write.h"
#include "io/vtk_write.h"

namespace jetpde::io {
namespace {

std::vector<VtkArray> vtk_arrays(const std::vector<solvers::NamedValues>& level) {
  std::vector<VtkArray> out;
  out.reserve(level.size());
  for (const solvers::NamedValues& a : level) out.push_back({a.name, a.values});
  return out;
}

}  // namespace

std::vector<std::string> write_grid_output(const solvers::FieldSource& source,
                                           const std::string& dir, const GridOutputOptions& o) {
  const solvers::GridFields g = source.fields_on_grid(
      {.grid = o.grid, .quantities = o.quantities, .residuals = o.residuals, .exact = o.exact});
  const bool has_time = source.has_time();
  const MatrixD& space = g.space;
  const std::vector<int>& dims = g.dims;
  const geometry::Bounds& b = g.bounds;
  const int levels = static_cast<int>(g.levels.size());
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
  for (int level = 0; vtk && level < levels; ++level) {
    const std::vector<VtkArray> arrays = vtk_arrays(g.levels[static_cast<std::size_t>(level)]);
    if (has_time) {
      char name[32];
      std::snprintf(name, sizeof name, "fields_%04d.vti", level);
      write_vti(dir + "/" + name, grid, arrays);
      series.push_back({g.times[static_cast<std::size_t>(level)], name});
      written.push_back(name);
    } else {
      write_vti(dir + "/fields.vti", grid, arrays);
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
    const std::vector<std::string>& names = source.coordinate_names();
    for (Eigen::Index a = 0; a < space.cols(); ++a) {
      std::vector<double> axis;
      const auto ua = static_cast<std::size_t>(a);
      for (int i = 0; i < dims[ua]; ++i)
        axis.push_back(b.lo[ua] + (b.hi[ua] - b.lo[ua]) * i / (dims[ua] - 1));
      h5.write("axes/" + names[static_cast<std::size_t>(a)], axis);
    }
    if (has_time) h5.write("times", g.times);
    const std::vector<solvers::NamedValues>& first = g.levels.front();
    for (std::size_t k = 0; k < first.size(); ++k) {
      MatrixD m(levels, space.rows());
      for (int level = 0; level < levels; ++level)
        m.row(level) = g.levels[static_cast<std::size_t>(level)][k].values.col(0).transpose();
      h5.write(first[k].name, m);
    }
    h5.commit();
    written.push_back("fields.h5");
  }
  return written;
}

}  // namespace jetpde::io
