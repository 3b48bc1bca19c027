// Solution: evaluation, VTK output and the trained constants of a trained problem; load_run.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "autodiff/errors.h"
#include "io/grid_output.h"
#include "io/vtk_write.h"
#include "python/src/bindings.h"
#include "python/src/py_solution.h"
#include "python/src/signals.h"

namespace jetpde::python {

namespace {

namespace fs = std::filesystem;

constexpr Eigen::Index kBlock = 16384;          // points per evaluation of a grid (bounds memory)
constexpr long long kMaxGridPoints = 50000000;  // write_vtk's refusal: a typo like 10001^2

// The rows of `points` in blocks of kBlock, the last padded with its first row: one compiled
// program serves every block.
template <class F>
MatrixD in_blocks(const MatrixD& points, F&& f) {
  if (points.rows() <= kBlock) return f(points);
  MatrixD out;
  for (Eigen::Index begin = 0; begin < points.rows(); begin += kBlock) {
    const Eigen::Index n = std::min(kBlock, points.rows() - begin);
    MatrixD block(kBlock, points.cols());
    block.topRows(n) = points.middleRows(begin, n);
    for (Eigen::Index i = n; i < kBlock; ++i) block.row(i) = points.row(begin);
    const MatrixD values = f(block);
    if (out.size() == 0) out.resize(points.rows(), values.cols());
    out.middleRows(begin, n) = values.topRows(n);
  }
  return out;
}

// A numpy array [n, columns] of float64 (any numeric dtype is converted) as a MatrixD; UserError
// naming `what` and the expected columns otherwise.
MatrixD points_from(const py::handle& obj, const std::vector<std::string>& coords,
                    const std::string& what) {
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!a)
    throw UserError(what + ": expected an array of numbers [n, " + std::to_string(coords.size()) +
                    "]");
  std::string names;
  for (const auto& c : coords) names += (names.empty() ? "" : ", ") + c;
  if (a.ndim() != 2 || a.shape(1) != static_cast<py::ssize_t>(coords.size())) {
    std::string shape = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
      shape += (d ? ", " : "") + std::to_string(a.shape(d));
    if (a.ndim() == 1) shape += ",";
    throw UserError(what + ": expected an array [n, " + std::to_string(coords.size()) +
                    "] (columns " + names + "), got shape " + shape + ")");
  }
  // C order float64 is what MatrixD is: one copy into the matrix the C++ API takes.
  return Eigen::Map<const MatrixD>(a.data(), a.shape(0), a.shape(1));
}

}  // namespace

PySolution::PySolution(io::LoadedRun run, std::string dir)
    : run_(std::move(run)), dir_(std::move(dir)) {}

std::shared_ptr<io::RunConfig> PySolution::config_copy() const {
  return std::make_shared<io::RunConfig>(run_.config);
}

const std::vector<std::string>& PySolution::coordinates() const {
  return run_.config.spec.math.domain->coordinate_names();
}

const std::vector<std::string>& PySolution::fields() const {
  return run_.config.spec.math.context.field_names();
}

std::vector<std::string> PySolution::loss_terms() const {
  // A classical solution (solver: petsc) minimizes no weighted loss: it has no terms, and its
  // history's `loss` is the Newton residual's norm.
  if (run_.config.solver.type == "petsc") return {};
  return run_.solution.problem().objective().slot_names();
}

std::map<std::string, double> PySolution::parameters() const { return run_.solution.parameters(); }

MatrixD PySolution::evaluate_locked(const MatrixD& points,
                                    const std::vector<std::string>& expressions) {
  return run_.solution.evaluate(points, expressions);
}

MatrixD PySolution::evaluate(const MatrixD& points, std::vector<std::string> expressions) {
  if (expressions.empty()) expressions = fields();
  // No points, no values (a compiled program needs at least one row).
  if (points.rows() == 0) return MatrixD(0, static_cast<Eigen::Index>(expressions.size()));
  std::lock_guard lock(mutex_);
  return evaluate_locked(points, expressions);
}

void PySolution::write_vti(const std::string& path, std::vector<int> grid,
                           const std::vector<std::string>& quantities) {
  if (fs::path(path).extension() != ".vti")
    throw UserError("write_vtk: '" + path + "': expected a .vti file name");
  const geometry::Bounds b = run_.config.spec.math.domain->bounds();
  const int dims = b.dim();
  if (dims > 3)
    throw UserError("write_vtk: the domain has " + std::to_string(dims) +
                    " coordinates; a .vti image has at most 3 axes (export() writes a spatial "
                    "grid per time level)");
  const int time = run_.config.spec.math.context.time_index();
  if (grid.empty()) {
    const std::vector<int>& g = run_.config.output.grid;
    for (int d = 0, s = 0; d < dims; ++d)
      grid.push_back(d == time ? run_.config.output.time_steps
                               : g[std::min<std::size_t>(s++, g.size() - 1)]);
  }
  if (grid.size() == 1) grid.assign(static_cast<std::size_t>(dims), grid[0]);
  if (grid.size() != static_cast<std::size_t>(dims))
    throw UserError("write_vtk: grid: " + std::to_string(grid.size()) + " counts for a domain of " +
                    std::to_string(dims) + " coordinates; give one count, or one per coordinate");
  long long n = 1;
  for (int d = 0; d < dims; ++d) {
    if (grid[d] < 2)
      throw UserError("write_vtk: grid[" + std::to_string(d) + "]: " + std::to_string(grid[d]) +
                      " points; give at least 2 per axis");
    n *= grid[d];
    if (n > kMaxGridPoints)
      throw UserError("write_vtk: grid: more than " + std::to_string(kMaxGridPoints) +
                      " points; give fewer");
  }
  io::VtkGrid vg;
  MatrixD points(n, dims);
  for (int d = 0; d < dims; ++d) {
    vg.dims[d] = grid[d];
    vg.origin[d] = b.lo[d];
    vg.spacing[d] = (b.hi[d] - b.lo[d]) / (grid[d] - 1);
  }
  // VTK's order: axis 0 fastest.
  for (long long r = 0; r < n; ++r) {
    long long rest = r;
    for (int d = 0; d < dims; ++d) {
      const long long i = rest % grid[d];
      rest /= grid[d];
      points(r, d) = i + 1 == grid[d] ? b.hi[d] : b.lo[d] + static_cast<double>(i) * vg.spacing[d];
    }
  }
  std::vector<std::string> names = fields();
  names.insert(names.end(), quantities.begin(), quantities.end());
  std::lock_guard lock(mutex_);
  const MatrixD values =
      in_blocks(points, [&](const MatrixD& block) { return evaluate_locked(block, names); });
  std::vector<io::VtkArray> arrays;
  for (std::size_t k = 0; k < names.size(); ++k)
    arrays.push_back({names[k], values.col(static_cast<Eigen::Index>(k))});
  io::write_vti(path, vg, arrays);
}

std::vector<std::string> PySolution::export_fields(const std::string& dir,
                                                   const std::vector<int>& grid, int time_steps,
                                                   const std::vector<std::string>& quantities) {
  const io::OutputOptions& o = run_.config.output;
  io::GridSpec spec{grid.empty() ? o.grid : grid, time_steps > 0 ? time_steps : o.time_steps};
  for (int g : spec.counts)
    if (g < 2) throw UserError("export: grid: " + std::to_string(g) + " points; give at least 2");
  const bool has_time = run_.config.spec.math.context.time_index() >= 0;
  if (io::grid_point_count(*run_.config.spec.math.domain, spec, has_time) > kMaxGridPoints)
    throw UserError("export: the grid has more than " + std::to_string(kMaxGridPoints) +
                    " points over its time levels; give fewer");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("export: cannot create '" + dir + "': " + ec.message());
  std::lock_guard lock(mutex_);
  return io::write_grid_output(run_.solution, dir,
                               {.grid = spec,
                                .quantities = quantities.empty() ? o.quantities : quantities,
                                .residuals = o.residuals,
                                .vtk = true,
                                .hdf5 = true,
                                .exact = run_.solution.exact()});
}

void define_solution(py::module_& m) {
  py::class_<PySolution>(m, "Solution")
      .def(
          "evaluate",
          [](PySolution& s, const py::handle& points, std::vector<std::string> expressions) {
            MatrixD p = points_from(points, s.coordinates(), "evaluate: points");
            MatrixD out;
            {
              const ComputeSignals computing;
              py::gil_scoped_release released;
              out = s.evaluate(p, std::move(expressions));
            }
            return out;  // moved into the numpy array, not copied
          },
          py::arg("points"), py::arg("expressions") = std::vector<std::string>{})
      .def("write_vti", &PySolution::write_vti, py::arg("path"), py::arg("grid"),
           py::arg("quantities"), py::call_guard<ComputeSignals, py::gil_scoped_release>())
      .def("export_fields", &PySolution::export_fields, py::arg("dir"), py::arg("grid"),
           py::arg("time_steps"), py::arg("quantities"),
           py::call_guard<ComputeSignals, py::gil_scoped_release>())
      .def_property_readonly("parameters", &PySolution::parameters)
      .def_property_readonly("config", &PySolution::config_copy)
      .def_property_readonly("dir", &PySolution::dir)
      .def_property_readonly("step", &PySolution::step)
      .def_property_readonly("coordinates", &PySolution::coordinates)
      .def_property_readonly("fields", &PySolution::fields)
      .def_property_readonly("loss_terms", &PySolution::loss_terms)
      .def_property_readonly("theta",
                             [](const PySolution& s) { return Eigen::VectorXd(s.theta()); })
      .def_readonly("status", &PySolution::status)
      .def_readonly("message", &PySolution::message)
      .def_readonly("metrics", &PySolution::metrics)
      .def_readonly("files", &PySolution::files)
      .def_readonly("train_seconds", &PySolution::train_seconds)
      .def_readonly("rank", &PySolution::rank)
      .def("history", [](const PySolution& s) {
        // One entry per step, in history.csv's columns (its header names them).
        const std::vector<std::string> slots = s.loss_terms();
        const auto n = static_cast<py::ssize_t>(s.steps.size());
        // Metrics in history.csv's order (io::run's), then any it does not list.
        std::vector<std::string> metric_names;
        {
          std::string header = s.history_header, column;
          if (header.empty()) {
            std::ifstream in(s.dir() + "/history.csv");
            std::getline(in, header);
          }
          std::istringstream columns(header);
          for (int k = 0; std::getline(columns, column, ','); ++k)
            if (k >= 5 + 2 * static_cast<int>(slots.size())) metric_names.push_back(column);
        }
        for (const auto& info : s.steps)
          for (const auto& [name, value] : info.metrics)
            if (std::find(metric_names.begin(), metric_names.end(), name) == metric_names.end())
              metric_names.push_back(name);
        py::array_t<long long> step(n);
        py::list stage;
        const auto column = [n]() { return py::array_t<double>(n); };
        py::array_t<double> seconds = column(), loss = column(), lr = column();
        std::vector<py::array_t<double>> losses, weights, metrics;
        for (std::size_t k = 0; k < slots.size(); ++k) {
          losses.push_back(column());
          weights.push_back(column());
        }
        for (std::size_t k = 0; k < metric_names.size(); ++k) metrics.push_back(column());
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (py::ssize_t i = 0; i < n; ++i) {
          const solvers::StepInfo& info = s.steps[static_cast<std::size_t>(i)];
          step.mutable_at(i) = info.step;
          stage.append(info.stage);
          seconds.mutable_at(i) = info.run_seconds;
          loss.mutable_at(i) = info.loss;
          lr.mutable_at(i) = info.learning_rate;
          for (std::size_t k = 0; k < slots.size(); ++k) {
            losses[k].mutable_at(i) = k < info.slot_losses.size() ? info.slot_losses[k] : nan;
            weights[k].mutable_at(i) = k < info.weights.size() ? info.weights[k] : nan;
          }
          for (std::size_t k = 0; k < metric_names.size(); ++k) {
            const auto it = info.metrics.find(metric_names[k]);
            metrics[k].mutable_at(i) = it == info.metrics.end() ? nan : it->second;
          }
        }
        py::dict out;
        out["step"] = step;
        out["stage"] = stage;
        out["seconds"] = seconds;
        out["loss"] = loss;
        out["learning_rate"] = lr;
        for (std::size_t k = 0; k < slots.size(); ++k)
          out[("loss_" + slots[k]).c_str()] = losses[k];
        for (std::size_t k = 0; k < slots.size(); ++k)
          out[("weight_" + slots[k]).c_str()] = weights[k];
        for (std::size_t k = 0; k < metric_names.size(); ++k)
          out[metric_names[k].c_str()] = metrics[k];
        return out;
      });

  m.def(
      "load_run",
      [](const std::string& dir, const std::vector<std::string>& overrides) {
        const ComputeSignals computing;
        py::gil_scoped_release released;
        return std::make_unique<PySolution>(io::load_run(dir, overrides), dir);
      },
      py::arg("dir"), py::arg("overrides") = std::vector<std::string>{});
}

}  // namespace jetpde::python
