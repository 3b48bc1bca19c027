#include "io/grid_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_write.h"
#include "io/vtk_write.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

std::vector<VtkArray> vtk_arrays(const std::vector<solvers::NamedValues>& level) {
  std::vector<VtkArray> out;
  out.reserve(level.size());
  for (const solvers::NamedValues& a : level) out.push_back({a.name, a.values});
  return out;
}

// A decomposed model's subdomains as a multiblock data set: `dir`/subdomains.vtm and one .vti
// per subdomain in `dir`/subdomains/, over its box (with the overlap) cut to the bounding box,
// in all coordinates (space-time for a time-dependent problem; up to 3), at about the spacing of
// the global grid. Arrays: the fields, the subdomain's window w_j and its index; with pieces
// given as geometries, `inside`: 1 at the points of the piece
// (its box, for fbpinn) that are in the domain, 0 elsewhere (as fields.vti marks the domain).
// A point of a box that no subdomain's box covers (pieces' boxes need not tile the bounding box)
// has fields and window 0 and is outside.
std::vector<std::string> write_subdomains(const solvers::FieldSource& source,
                                          const std::string& dir, const solvers::GridFields& g,
                                          int time_levels) {
  const solvers::Model* model = source.model();
  if (!model || !model->decomposed() || source.coordinate_names().size() > 3) return {};
  const std::size_t dim = source.coordinate_names().size();
  const geometry::Bounds& b = g.bounds;
  // Points per unit length per axis, from the global grid.
  std::vector<double> density(dim);
  for (std::size_t a = 0; a < dim; ++a) {
    const int n = a < g.dims.size() ? g.dims[a] : std::max(time_levels, 2);
    density[a] = (n - 1) / std::max(b.hi[a] - b.lo[a], 1e-300);
  }
  fs::create_directories(dir + "/subdomains");
  // Every piece's grid first, then one evaluation of all of them (one compiled program).
  const std::size_t boxes = model->boxes().size();
  std::vector<VtkGrid> grids(boxes);
  std::vector<Eigen::Index> first(boxes + 1, 0);
  for (std::size_t j = 0; j < boxes; ++j) {
    const geometry::Bounds& box = model->boxes()[j];
    VtkGrid& grid = grids[j];
    for (std::size_t a = 0; a < dim; ++a) {
      const double lo = std::max(box.lo[a], b.lo[a]), hi = std::min(box.hi[a], b.hi[a]);
      const int n = std::max(2, static_cast<int>(std::lround((hi - lo) * density[a])) + 1);
      grid.dims[a] = n;
      grid.origin[a] = lo;
      grid.spacing[a] = (hi - lo) / (n - 1);
    }
    first[j + 1] = first[j] + static_cast<Eigen::Index>(grid.dims[0]) * grid.dims[1] * grid.dims[2];
  }
  MatrixD points(first[boxes], static_cast<Eigen::Index>(dim));
  for (std::size_t j = 0; j < boxes; ++j)
    for (Eigen::Index r = 0; r < first[j + 1] - first[j]; ++r) {
      Eigen::Index rest = r;
      for (std::size_t a = 0; a < 3; ++a) {
        const Eigen::Index i = rest % grids[j].dims[a];
        rest /= grids[j].dims[a];
        if (a < dim)
          points(first[j] + r, static_cast<Eigen::Index>(a)) =
              grids[j].origin[a] + grids[j].spacing[a] * static_cast<double>(i);
      }
    }
  // Only the points some subdomain covers are evaluated (a grid's boxes cover their bounding
  // box; pieces' boxes may leave gaps, as an L-shape's missing corner).
  std::vector<Eigen::Index> covered;
  std::vector<double> p(dim);
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    for (std::size_t a = 0; a < dim; ++a) p[a] = points(i, static_cast<Eigen::Index>(a));
    if (!model->region_of(p.data()).empty()) covered.push_back(i);
  }
  MatrixD at(static_cast<Eigen::Index>(covered.size()), points.cols());
  for (std::size_t k = 0; k < covered.size(); ++k)
    at.row(static_cast<Eigen::Index>(k)) = points.row(covered[k]);
  const MatrixD uc = source.fields(at), wc = model->windows(at);
  MatrixD u = MatrixD::Zero(points.rows(), uc.cols()), w = MatrixD::Zero(points.rows(), wc.cols());
  MatrixD in = MatrixD::Zero(points.rows(), 1);
  for (std::size_t k = 0; k < covered.size(); ++k) {
    u.row(covered[k]) = uc.row(static_cast<Eigen::Index>(k));
    w.row(covered[k]) = wc.row(static_cast<Eigen::Index>(k));
    in(covered[k], 0) = 1;
  }
  const bool masked = model->has_pieces();
  if (masked) {
    const MatrixD sd = source.domain().signed_distance(points);
    for (Eigen::Index i = 0; i < points.rows(); ++i)
      if (sd(i, 0) > 0) in(i, 0) = 0;
  }
  std::vector<VtmBlock> blocks;
  for (std::size_t j = 0; j < boxes; ++j) {
    const Eigen::Index count = first[j + 1] - first[j];
    std::vector<VtkArray> arrays;
    for (std::size_t f = 0; f < source.field_names().size(); ++f)
      arrays.push_back(
          {source.field_names()[f], u.block(first[j], static_cast<Eigen::Index>(f), count, 1)});
    arrays.push_back({"window", w.block(first[j], static_cast<Eigen::Index>(j), count, 1)});
    arrays.push_back({"subdomain", MatrixD::Constant(count, 1, static_cast<double>(j))});
    if (masked) {
      MatrixD mine = in.middleRows(first[j], count);
      // An xpinn piece's own points: its network's alone (fbpinn boxes: the whole box).
      if (model->has_pieces() && model->method() == solvers::DecompositionMethod::xpinn) {
        const MatrixD sd = model->pieces()[j]->signed_distance(points.middleRows(first[j], count));
        for (Eigen::Index i = 0; i < count; ++i)
          if (sd(i, 0) > model->tolerance()) mine(i, 0) = 0;
      }
      arrays.push_back({"inside", mine});
    }
    char name[48];
    std::snprintf(name, sizeof name, "subdomains/subdomain_%04zu.vti", j);
    write_vti(dir + "/" + name, grids[j], arrays);
    blocks.push_back({"subdomain " + std::to_string(j), name});
  }
  write_vtm(dir + "/subdomains.vtm", blocks);
  return {"subdomains.vtm", "subdomains/"};
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
  if (o.vtk)
    for (std::string& f : write_subdomains(source, dir, g, o.grid.time_steps))
      written.push_back(std::move(f));
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
