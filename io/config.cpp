#include "io/config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "autodiff/errors.h"
#include "equations/library.h"
#include "equations/parser.h"
#include "geometry/ball.h"
#include "geometry/boundary.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/polygon.h"
#include "geometry/stl.h"
#include "geometry/time_product.h"
#include "io/config_schema.h"
#include "io/data_files.h"
#include "io/progress.h"
#include "nn/activation.h"
#include "nn/detail/names.h"
#include "nn/init.h"
#include "solvers/marching.h"
#include "solvers/model.h"
#include "solvers/option_keys.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;
using Kind = solvers::Condition::Kind;

// An error that already says where it is: not wrapped again by Reader::at.
class PlacedError : public UserError {
 public:
  using UserError::UserError;
};

// Where a value came from: file:line:column when it is in the file, else just the source.
struct Reader {
  std::string source, base_dir;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         const std::string& what) const {
    throw PlacedError(config_place(node, source) + path + ": " + what);
  }
  // Runs f; a UserError from deeper down (an expression, a geometry) gets this node's place.
  template <class F>
  auto at(const YAML::Node& node, const std::string& path, F&& f) const {
    try {
      return f();
    } catch (const PlacedError&) {
      throw;
    } catch (const UserError& e) {
      fail(node, path, e.what());
    }
  }
  std::string path_of(const std::string& file) const {
    const fs::path p(file);
    return p.is_absolute() || base_dir.empty() ? p.string() : (fs::path(base_dir) / p).string();
  }
};

std::vector<double> numbers(const YAML::Node& n) {
  std::vector<double> out;
  if (n)
    for (const auto& v : n) out.push_back(v.as<double>());
  return out;
}

std::vector<std::string> texts(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n)
    for (const auto& v : n) out.push_back(v.as<std::string>());
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// ---- geometry ----------------------------------------------------------------------------------

geometry::GeometryPtr shape(const Reader& r, const YAML::Node& g, const std::string& path) {
  const std::string type = g["type"].as<std::string>();
  const auto want = [&](const char* k, std::size_t count) {
    const YAML::Node n = g[k];
    if (!n) r.fail(g["type"], path + "." + k, "missing (a " + type + " needs it)");
    const std::vector<double> v = numbers(n);
    if (count && v.size() != count)
      r.fail(n, path + "." + k,
             "a " + type + " needs " + std::to_string(count) + " values, got " +
                 std::to_string(v.size()));
    return v;
  };
  return r.at(g["type"], path, [&]() -> geometry::GeometryPtr {
    if (type == "interval") return geometry::interval(want("min", 1)[0], want("max", 1)[0]);
    if (type == "rectangle") {
      const auto lo = want("min", 2), hi = want("max", 2);
      return geometry::rectangle({lo[0], lo[1]}, {hi[0], hi[1]});
    }
    if (type == "box") {
      const auto lo = want("min", 3), hi = want("max", 3);
      return geometry::box({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]});
    }
    if (type == "hypercube") return geometry::hypercube(want("min", 0), want("max", 0));
    if (type == "disk" || type == "sphere") {
      const auto c = want("center", type == "disk" ? 2 : 3);
      if (!g["radius"]) r.fail(g["type"], path + ".radius", "missing (a " + type + " needs it)");
      const double radius = g["radius"].as<double>();
      return type == "disk" ? geometry::GeometryPtr(geometry::disk({c[0], c[1]}, radius))
                            : geometry::GeometryPtr(geometry::sphere({c[0], c[1], c[2]}, radius));
    }
    if (type == "polygon") {
      const auto v = want("vertices", 0);
      if (v.size() % 2 != 0 || v.size() < 6)
        r.fail(g["vertices"], path + ".vertices",
               "expected at least 3 vertices as [x0, y0, x1, y1, ...], got " +
                   std::to_string(v.size()) + " numbers");
      std::vector<std::array<double, 2>> vertices;
      for (std::size_t i = 0; i < v.size(); i += 2) vertices.push_back({v[i], v[i + 1]});
      return geometry::polygon(vertices);
    }
    if (type == "stl") {
      if (!g["file"]) r.fail(g["type"], path + ".file", "missing (an stl geometry needs it)");
      return r.at(g["file"], path + ".file", [&] {
        return geometry::GeometryPtr(geometry::stl(r.path_of(g["file"].as<std::string>())));
      });
    }
    const YAML::Node of = g["of"];
    if (!of || of.size() < 2)
      r.fail(g["type"], path + ".of", "a " + type + " needs at least two shapes in `of`");
    for (std::size_t i = 0; i < of.size(); ++i)
      if (of[i]["time"])
        r.fail(of[i]["time"], path + ".of[" + std::to_string(i) + "].time",
               "a time interval belongs on the outermost geometry, not on a shape it combines");
    geometry::GeometryPtr out = shape(r, of[0], path + ".of[0]");
    for (std::size_t i = 1; i < of.size(); ++i) {
      geometry::GeometryPtr next = shape(r, of[i], path + ".of[" + std::to_string(i) + "]");
      out = type == "union"          ? geometry::GeometryPtr(geometry::unite(out, next))
            : type == "intersection" ? geometry::GeometryPtr(geometry::intersect(out, next))
                                     : geometry::GeometryPtr(geometry::subtract(out, next));
    }
    return out;
  });
}

// `geometry`, or a decomposition's piece (`path`: where it is), with its coordinate names and
// time interval.
geometry::GeometryPtr domain(const Reader& r, const YAML::Node& g,
                             const std::string& path = "geometry") {
  geometry::GeometryPtr space = shape(r, g, path);
  if (const YAML::Node names = g["coordinates"])
    r.at(names, path + ".coordinates", [&] {
      std::const_pointer_cast<geometry::Geometry>(space)->set_coordinate_names(texts(names));
    });
  const YAML::Node time = g["time"];
  if (!time) return space;
  const std::vector<double> t = numbers(time);
  if (t.size() != 2 || !(t[1] > t[0]))
    r.fail(time, path + ".time", "expected [t0, t1] with t1 > t0");
  return r.at(time, path + ".time", [&] {
    return geometry::GeometryPtr(
        geometry::time_product(space, t[0], t[1], g["time_coordinate"].as<std::string>()));
  });
}

}  // namespace

const options::Declaration<SolverOptions>& solver_options() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  static const options::Declaration<SolverOptions> d = [] {
    options::Declaration<SolverOptions> d;
    d.add(options::choice("type", {"pinn", "petsc"}, "pinn",
                          "`pinn`: train the network; `petsc`: finite differences on a PETSc DMDA "
                          "(boxes only; SNES, or TS for a time coordinate), written as a run."),
          &SolverOptions::type);
    d.add(at_least(3, key("grid", T::integers, "[65]",
                          "petsc: points per spatial axis, ends included (a periodic axis: n "
                          "points, the upper end being the lower); one value: every axis.")),
          &SolverOptions::grid);
    d.add(key("options", T::string, "",
              "petsc: PETSc options (`-snes_monitor -ksp_type gmres`; `-help` lists those the "
              "solve reads); PETSC_OPTIONS from the environment comes after them, then "
              "`jetpde run --petsc-options`."),
          &SolverOptions::options);
    d.add(at_least(0, key("time_step", T::number, "0",
                          "petsc, time-dependent: the time step (0: the smallest grid spacing, "
                          "at most the interval between output.time_steps levels).")),
          &SolverOptions::time_step);
    return d;
  }();
  return d;
}

const options::Declaration<ReferenceSolver>& reference_solver_options() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  static const options::Declaration<ReferenceSolver> d = [] {
    options::Declaration<ReferenceSolver> d;
    d.add(options::choice("solver", {"none", "petsc"}, "none",
                          "`petsc`: solve the problem classically first (finite differences on "
                          "a PETSc DMDA, as `solver: {type: petsc}`) and validate against that "
                          "solution."),
          &ReferenceSolver::solver);
    d.add(at_least(3, key("grid", T::integers, "[129]",
                          "solver petsc: points per spatial axis of the reference's grid.")),
          &ReferenceSolver::grid);
    d.add(key("options", T::string, "", "solver petsc: PETSc options for the reference's solve."),
          &ReferenceSolver::options);
    return d;
  }();
  return d;
}

const options::Declaration<OutputOptions>& output_options() {
  using options::at_least;
  using options::key;
  using options::within;
  using T = options::Key::Type;
  static const options::Declaration<OutputOptions> d = [] {
    options::Declaration<OutputOptions> d;
    d.add(key("dir", T::string, "",
              "Run folder (default runs/NAME, relative to the working directory)."),
          &OutputOptions::dir);
    d.add(at_least(1, key("checkpoint_every", T::integer, "1000",
                          "Steps between checkpoints (checkpoint.h5).")),
          &OutputOptions::checkpoint_every);
    d.add(at_least(1, key("history_every", T::integer, "10", "Steps between rows of history.csv.")),
          &OutputOptions::history_every);
    d.add(
        options::choice("progress", Progress::mode_names(), "auto", "How training shows progress."),
        &OutputOptions::progress);
    d.add(at_least(1,
                   key("progress_every", T::integer, "100", "Steps between plain progress lines.")),
          &OutputOptions::progress_every);
    d.add(at_least(2, key("grid", T::integers, "[101]",
                          "Points per spatial axis of the output grid (one value: every axis, else "
                          "one per axis); its size is checked against the memory available before "
                          "training.")),
          &OutputOptions::grid);
    d.add(within(1, 10000,
                 key("time_steps", T::integer, "11",
                     "Time-dependent: grid snapshots (a .pvd series).")),
          &OutputOptions::time_steps);
    d.add(key("quantities", T::strings, "[]",
              "Extra expressions on the grid: derivatives (`u_x`), anything else."),
          &OutputOptions::quantities);
    d.add(key("residuals", T::boolean, "true", "Write the equations' residuals on the grid."),
          &OutputOptions::residuals);
    d.add(key("vtk", T::boolean, "true", "Write .vti (and .pvd) files."), &OutputOptions::vtk);
    d.add(key("hdf5", T::boolean, "true", "Write fields.h5."), &OutputOptions::hdf5);
    return d;
  }();
  return d;
}

PointData read_hdf5_grid(const std::string& file,
                         const std::vector<std::pair<std::string, std::string>>& axes,
                         const std::vector<std::string>& coords,
                         const std::vector<std::pair<std::string, std::string>>& fields) {
  const std::string ext = fs::path(file).extension().string();
  if (ext != ".h5" && ext != ".hdf5")
    throw UserError("'" + file + "': expected an HDF5 file (.h5, .hdf5)");
  return read_point_data(*open_data_file(file),
                         {.axes = axes, .coordinates = coords, .fields = fields});
}

namespace {

// ---- data files --------------------------------------------------------------------------------

// A random subset and noise, both from the source's seed.
void subsample_and_perturb(PointData& d, int samples, double noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (samples > 0 && samples < d.points.rows()) {
    std::vector<Eigen::Index> index(static_cast<std::size_t>(d.points.rows()));
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<Eigen::Index>(i);
    std::shuffle(index.begin(), index.end(), rng);
    index.resize(static_cast<std::size_t>(samples));
    std::sort(index.begin(), index.end());
    MatrixD p(samples, d.points.cols()), v(samples, d.values.cols());
    for (int i = 0; i < samples; ++i) {
      p.row(i) = d.points.row(index[static_cast<std::size_t>(i)]);
      v.row(i) = d.values.row(index[static_cast<std::size_t>(i)]);
    }
    d.points = p;
    d.values = v;
  }
  if (noise > 0) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Eigen::Index f = 0; f < d.values.cols(); ++f) {
      const double mean = d.values.col(f).mean();
      const double sd = std::sqrt((d.values.col(f) - mean).square().mean());
      for (Eigen::Index i = 0; i < d.values.rows(); ++i) d.values(i, f) += noise * sd * normal(rng);
    }
  }
}

PointData read_data(const Reader& r, const YAML::Node& n, const std::string& path,
                    const std::vector<std::string>& coords, std::vector<std::string> wanted) {
  const std::string file = r.path_of(n["file"].as<std::string>());
  if (!fs::exists(file)) r.fail(n["file"], path + ".file", "no such file: " + file);
  DataLayout layout{.coordinates = coords};
  if (const YAML::Node map = n["fields"]) {
    wanted.clear();
    for (const auto& item : map)
      layout.fields.push_back({item.first.as<std::string>(), item.second.as<std::string>()});
  } else {
    for (const std::string& f : wanted) layout.fields.push_back({f, f});
  }
  if (n["coordinates"])
    for (const auto& item : n["coordinates"])
      layout.axes.push_back({item.first.as<std::string>(), item.second.as<std::string>()});
  if (n["points"]) layout.points = n["points"].as<std::string>();
  if (!layout.axes.empty() && !layout.points.empty())
    r.fail(n["points"], path + ".points", "give `coordinates` (a grid) or `points`, not both");
  const DataFileOptions options{.columns = texts(n["columns"])};
  PointData d = r.at(n["file"], path,
                     [&] { return read_point_data(*open_data_file(file, options), layout); });
  subsample_and_perturb(d, n["samples"].as<int>(), n["noise"].as<double>(),
                        n["seed"].as<std::uint64_t>());
  return d;
}

// ---- problem -----------------------------------------------------------------------------------

double constant_value(const Reader& r, const YAML::Node& v, const std::string& path,
                      const equations::Context& ctx) {
  return r.at(v, path, [&] {
    const equations::Equation e = equations::parse(v.as<std::string>(), ctx);
    double value = 0;
    if (!equations::constant_value(e.expr, &value))
      throw UserError("'" + v.as<std::string>() + "' is not a constant");
    if (!std::isfinite(value))
      throw UserError("'" + v.as<std::string>() + "' evaluates to " + std::to_string(value) +
                      ": a constant must be finite");
    return value;
  });
}

// The context: from a library equation when there is one, else from `fields` and the domain.
void build_context(const Reader& r, const YAML::Node& c, RunConfig& run,
                   std::vector<std::string>& library_texts,
                   std::vector<std::string>& library_names) {
  solvers::ProblemSpec& spec = run.spec;
  std::vector<std::string> coords = spec.math.domain->coordinate_names();
  const auto* tp = dynamic_cast<const geometry::TimeProduct*>(spec.math.domain.get());
  std::string time_name = tp ? coords.back() : "";
  if (tp) coords.pop_back();
  const YAML::Node eqs = c["equations"];
  if (!eqs || eqs.size() == 0) r.fail(c, "equations", "missing (at least one equation)");
  int library_entries = 0;
  for (std::size_t i = 0; i < eqs.size(); ++i) {
    const YAML::Node e = eqs[i];
    const std::string path = "equations[" + std::to_string(i) + "]";
    const bool lib = static_cast<bool>(e["library"]), expr = static_cast<bool>(e["expression"]);
    if (lib == expr)
      r.fail(e[lib ? "library" : "name"] ? e[lib ? "library" : "name"] : eqs, path,
             "give exactly one of `expression` and `library`");
    if (!lib) continue;
    if (++library_entries > 1)
      r.fail(e["library"], path + ".library", "only one library equation per problem");
    std::map<std::string, std::string> values;
    if (e["parameters"])
      for (const auto& item : e["parameters"])
        values[item.first.as<std::string>()] = item.second.as<std::string>();
    const std::vector<std::string> trainable = texts(e["trainable"]);
    const equations::Pde pde = r.at(e["library"], path + ".library", [&] {
      return equations::library_equation(e["library"].as<std::string>(), values,
                                         {trainable.begin(), trainable.end()});
    });
    std::vector<std::string> lib_coords = pde.context.coordinate_names();
    if (lib_coords != spec.math.domain->coordinate_names()) {
      std::string a, b;
      for (const auto& s : lib_coords) a += (a.empty() ? "" : ", ") + s;
      for (const auto& s : spec.math.domain->coordinate_names()) b += (b.empty() ? "" : ", ") + s;
      r.fail(e["library"], path + ".library",
             "the equation's coordinates are (" + a + ") but the geometry's are (" + b +
                 "): set geometry.coordinates / geometry.time, or the library's dim/steady");
    }
    if (c["fields"] && texts(c["fields"]) != pde.context.field_names())
      r.fail(c["fields"], "fields",
             "the library equation '" + e["library"].as<std::string>() +
                 "' has its own fields; leave `fields` out");
    spec.math.context = pde.context;
    for (const auto& eq : pde.equations) {
      library_texts.push_back(eq.text);
      library_names.push_back(eq.name);
    }
  }
  equations::Context& ctx = spec.math.context;
  if (library_entries == 0) {
    const std::vector<std::string> fields =
        c["fields"] ? texts(c["fields"]) : std::vector<std::string>{"u"};
    r.at(c["fields"] ? c["fields"] : c["geometry"], "fields", [&] { ctx.fields(fields); });
    ctx.coordinates(coords);
    if (!time_name.empty()) ctx.time(time_name);
  }
  for (const char* section : {"constants", "parameters", "definitions"}) {
    if (!c[section]) continue;
    for (const auto& item : c[section]) {
      const std::string name = item.first.as<std::string>();
      const std::string path = std::string(section) + "." + name;
      r.at(item.first, path, [&] {
        if (std::string(section) == "constants") {
          ctx.constant(name, constant_value(r, item.second, path, ctx));
        } else if (std::string(section) == "parameters") {
          ctx.param(name, constant_value(r, item.second, path, ctx));
        } else {
          ctx.define(name, item.second.as<std::string>());
        }
      });
    }
  }
}

void build_equations(const Reader& r, const YAML::Node& c, RunConfig& run,
                     const std::vector<std::string>& library_texts,
                     const std::vector<std::string>& library_names) {
  solvers::ProblemSpec& spec = run.spec;
  const YAML::Node eqs = c["equations"];
  if (!eqs || eqs.size() == 0) r.fail(c, "equations", "missing (at least one equation)");
  bool named = false;
  for (std::size_t i = 0; i < eqs.size(); ++i) {
    const YAML::Node e = eqs[i];
    const std::string path = "equations[" + std::to_string(i) + "]";
    std::vector<std::string> these, labels;
    if (e["library"]) {
      these = library_texts;
      labels = library_names;  // the library's own ("momentum_x", "continuity", ...)
    } else {
      these = {e["expression"].as<std::string>()};
      r.at(e["expression"], path + ".expression",
           [&] { equations::parse(these[0], spec.math.context); });
    }
    for (std::size_t k = 0; k < these.size(); ++k) {
      spec.math.equations.push_back(these[k]);
      spec.pinn.equation_weights.push_back(e["weight"].as<double>());
      std::string name = e["name"] ? e["name"].as<std::string>() : "";
      if (!name.empty() && these.size() > 1) name += std::to_string(k + 1);
      if (name.empty() && k < labels.size()) name = labels[k];
      named = named || !name.empty();
      spec.math.equation_names.push_back(name);
    }
  }
  if (!named) {
    spec.math.equation_names.clear();
  } else {
    for (std::size_t i = 0; i < spec.math.equation_names.size(); ++i)
      if (spec.math.equation_names[i].empty())
        spec.math.equation_names[i] = i == 0 ? "pde" : "pde" + std::to_string(i + 1);
  }
}

void build_conditions(const Reader& r, const YAML::Node& c, RunConfig& run) {
  solvers::ProblemSpec& spec = run.spec;
  const std::vector<std::string> coords = spec.math.domain->coordinate_names();
  const YAML::Node list = c["conditions"];
  for (std::size_t i = 0; list && i < list.size(); ++i) {
    const YAML::Node n = list[i];
    const std::string path = "conditions[" + std::to_string(i) + "]";
    solvers::Condition cond;
    read_declared(solvers::condition_options(), n, cond);
    if (const YAML::Node at = n["at"]) {
      if (at.size() == 0)
        r.fail(at, path + ".at", "no points (give at least one, or leave out `at`)");
      cond.at.resize(static_cast<Eigen::Index>(at.size()), static_cast<Eigen::Index>(at[0].size()));
      for (std::size_t p = 0; p < at.size(); ++p)
        for (std::size_t j = 0; j < at[p].size(); ++j)
          cond.at(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(j)) =
              at[p][j].as<double>();
    }
    const solvers::ConditionOptions options{.points = n["points"].as<int>(),
                                            .weight = n["weight"].as<double>()};
    const solvers::ConditionKind& kind = solvers::condition_kind(cond.kind);
    if (cond.kind == Kind::residual && cond.expression.empty())
      r.fail(n["kind"], path + ".expression", "missing (a residual condition needs it)");
    if (cond.kind == Kind::periodic && cond.coordinate.empty())
      r.fail(n["kind"], path + ".coordinate", "missing (a periodic condition needs it)");
    // Checked here, against what the user wrote: the problem parses them again inside a
    // residual it builds ("(u) - (g)"), whose columns are not the user's.
    if (kind.takes_field && spec.math.context.field_index(cond.field) < 0)
      r.fail(n["field"], path + ".field",
             "'" + cond.field +
                 "' is not a field (fields: " + joined(spec.math.context.field_names()) + ")");
    if (cond.kind == Kind::periodic &&
        std::find(coords.begin(), coords.end(), cond.coordinate) == coords.end())
      r.fail(n["coordinate"], path + ".coordinate",
             "'" + cond.coordinate + "' is not a coordinate (coordinates: " + joined(coords) + ")");
    if (cond.kind != Kind::periodic && cond.kind != Kind::data && cond.kind != Kind::residual)
      r.at(n["value"], path + ".value", [&] { equations::parse(cond.value, spec.math.context); });
    if (kind.needs_time && spec.math.context.time_index() < 0)
      r.fail(n["kind"], path + ".kind",
             "an initial condition needs a time coordinate (give geometry.time)");
    if (kind.points == solvers::ConditionPoints::piece && !cond.on.empty())
      r.at(n["on"], path + ".on", [&] {
        const geometry::BoundaryPiece piece =
            geometry::BoundaryPiece::parse(*spec.math.domain, cond.on);
        for (const auto& where : piece.conditions())
          if (!where.fn)
            geometry::compile_predicate(where.text, coords, geometry::kPredicateRelativeTolerance);
      });
    if (cond.kind == Kind::residual || (cond.kind == Kind::data && !cond.expression.empty()))
      r.at(n["expression"], path + ".expression",
           [&] { equations::parse(cond.expression, spec.math.context); });
    if (cond.kind == Kind::data) {
      if (!n["data"]) r.fail(n["kind"], path + ".data", "missing (a data condition needs it)");
      const PointData d = read_data(r, n["data"], path + ".data", coords, {cond.field});
      if (d.values.cols() != 1)
        r.fail(n["data"], path + ".data.fields", "a data condition takes one field");
      cond.data_points = d.points;
      cond.data_values = d.values;
    }
    if (cond.at.rows() > 0)
      r.at(n["at"], path + ".at", [&] { solvers::check_fixed_points(cond, *spec.math.domain); });
    spec.math.conditions.push_back(cond);
    spec.pinn.conditions.push_back(options);
  }
  const YAML::Node hard = c["hard_constraints"];
  for (std::size_t i = 0; hard && i < hard.size(); ++i) {
    const YAML::Node n = hard[i];
    const std::string path = "hard_constraints[" + std::to_string(i) + "]";
    const std::string field = n["field"].as<std::string>();
    if (spec.math.context.field_index(field) < 0)
      r.fail(n["field"], path + ".field", "'" + field + "' is not a field");
    r.at(n["value"], path + ".value",
         [&] { equations::parse(n["value"].as<std::string>(), spec.math.context); });
    if (n["distance"])
      r.at(n["distance"], path + ".distance",
           [&] { equations::parse(n["distance"].as<std::string>(), spec.math.context); });
    solvers::HardConstraint constraint;
    read_declared(solvers::hard_constraint_options(), n, constraint);
    spec.pinn.hard_constraints.push_back(constraint);
  }
}

// `n` is the section at `key` (network, or decomposition.network), named so in messages.
void build_network(const Reader& r, const YAML::Node& n, const std::string& key, RunConfig& run) {
  nn::NetworkSpec& net = run.spec.pinn.network;
  read_declared(nn::network_options(), n, net);
  net.fourier.seed = run.seed;
  const std::vector<std::string> coords = run.spec.math.domain->coordinate_names();
  if (n["normalize"].as<bool>()) {
    const geometry::Bounds b = run.spec.math.domain->bounds();
    net.normalization = nn::InputNormalization{b.lo, b.hi};
  }
  const YAML::Node periodic = n["periodic"];
  for (std::size_t i = 0; periodic && i < periodic.size(); ++i) {
    const YAML::Node p = periodic[i];
    const std::string name = p["coordinate"].as<std::string>();
    const auto it = std::find(coords.begin(), coords.end(), name);
    if (it == coords.end())
      r.fail(p["coordinate"], key + ".periodic[" + std::to_string(i) + "].coordinate",
             "'" + name + "' is not a coordinate");
    nn::PeriodicInput input{.column = static_cast<int>(it - coords.begin())};
    read_declared(nn::periodic_input_options(), p, input);
    if (input.slope_jump) {
      // The seam is where the domain ends and starts again: the input 4 s (1 - s) is periodic
      // in value over one period from the lower bound, which must be the whole domain.
      const geometry::Bounds b = run.spec.math.domain->bounds();
      const auto c = static_cast<std::size_t>(input.column);
      const double length = b.hi[c] - b.lo[c];
      if (std::abs(input.period - length) > 1e-9 * length)
        r.fail(p["slope_jump"], key + ".periodic[" + std::to_string(i) + "].slope_jump",
               "needs the period to be the domain's length along " + name + " (" +
                   geometry::format_number(length) + "), not " +
                   geometry::format_number(input.period));
      input.seam = b.lo[c];
    }
    net.periodic.push_back(input);
  }
  if (const YAML::Node w = n["rwf"]) {
    nn::WeightFactorization rwf;
    read_declared(nn::weight_factorization_options(), w, rwf);
    net.rwf = rwf;
  }
  if (net.architecture == nn::Architecture::pirate) {
    // Its widths and Fourier features are tied (the residual blocks add the embedding): checked
    // here, where the keys have their places, on throwaway networks of this spec (the widths
    // alone first, then the features).
    nn::NetworkSpec s = net;
    s.inputs = static_cast<int>(coords.size());
    const auto build = [&] {
      Graph scratch(DType::f64);
      nn::Network(scratch, s);
    };
    s.fourier.features = 0;
    r.at(n["hidden"], key + ".hidden", build);
    s.fourier.features = net.fourier.features;
    r.at(n["fourier_features"], key + ".fourier_features", build);
  }
}

// decomposition: read after the network (the subdomains' network defaults to it), checked
// against the domain's bounding box here, where the keys have their places.
void build_decomposition(const Reader& r, const YAML::Node& n, RunConfig& run) {
  if (!n) return;
  solvers::Decomposition& d = run.spec.pinn.decomposition;
  read_declared(solvers::decomposition_options(), n, d);
  if (const YAML::Node pieces = n["pieces"]) {
    if (n["subdomains"])
      r.fail(n["subdomains"], "decomposition.subdomains",
             "give either subdomains (a grid of boxes) or pieces (geometries), not both");
    if (d.automatic)
      r.fail(n["method"], "decomposition.method",
             "auto chooses a grid of boxes: with pieces, give method fbpinn or xpinn");
    for (std::size_t i = 0; i < pieces.size(); ++i)
      d.pieces.push_back(domain(r, pieces[i], "decomposition.pieces[" + std::to_string(i) + "]"));
  } else if (!d.automatic && !n["subdomains"])
    r.fail(n["method"], "decomposition.subdomains",
           "missing: give the boxes per coordinate ([4], [2, 2]), pieces (geometries), or "
           "method: auto");
  if (const YAML::Node i = n["interface"]) {
    if (d.method != solvers::DecompositionMethod::xpinn)
      r.fail(i, "decomposition.interface", "only method xpinn has interface terms");
    d.interface_points = i["points"].as<int>();
    d.solution_weight = i["solution_weight"].as<double>();
    d.flux_weight = i["flux_weight"].as<double>();
    d.residual_weight = i["residual_weight"].as<double>();
  }
  if (n["network"]) {
    // The top-level network's reading (bounds, periodic columns, seed), then this section's
    // keys over it (the raw config's gaps were filled from `network` before resolving).
    RunConfig sub;
    sub.seed = run.seed;
    sub.spec.math.domain = run.spec.math.domain;
    build_network(r, n["network"], "decomposition.network", sub);
    d.network = sub.spec.pinn.network;
  }
  YAML::Node where = n["pieces"] ? n["pieces"] : n["subdomains"] ? n["subdomains"] : n["method"];
  try {
    nn::NetworkSpec net = run.spec.pinn.network;
    net.inputs = static_cast<int>(run.spec.math.domain->coordinate_names().size());
    net.outputs = static_cast<int>(run.spec.math.context.field_names().size());
    solvers::Model(net, d, *run.spec.math.domain);
  } catch (const UserError& e) {  // its message starts with the key's path
    // A message about one piece is placed at that piece.
    const std::string text = e.what(), key = "decomposition.pieces[";
    if (text.rfind(key, 0) == 0) {
      const std::size_t i = std::stoul(text.substr(key.size()));
      if (i < n["pieces"].size()) where = n["pieces"][i];
    }
    throw PlacedError(config_place(where, r.source) + e.what());
  }
}

// `decomposition: auto` is short for {method: auto}; a `decomposition.network` takes the keys
// it does not give from the top-level `network` (resolving would fill them with the defaults).
void decomposition_shorthand(YAML::Node& raw) {
  if (!raw.IsMap() || !raw["decomposition"]) return;
  YAML::Node d = raw["decomposition"];
  if (d.IsScalar() && d.Scalar() == "auto") {
    YAML::Node m(YAML::NodeType::Map);
    m["method"] = "auto";
    raw["decomposition"] = m;
    return;
  }
  if (!d.IsMap() || !d["network"] || !d["network"].IsMap()) return;
  const YAML::Node top = raw["network"];
  if (!top || !top.IsMap()) return;
  YAML::Node sub = d["network"];
  for (const auto& item : top)
    if (item.first.IsScalar() && !sub[item.first.Scalar()]) sub[item.first.Scalar()] = item.second;
}

// A stage's options are those its optimizer's kind declares (solvers::OptimizerKind::keys).
solvers::Stage build_stage(const YAML::Node& s) {
  return solvers::stage_from_values(option_values(solvers::stage_keys(), s));
}

void build_training(const Reader& r, const YAML::Node& c, RunConfig& run) {
  const YAML::Node t = c["training"];
  const YAML::Node stages = t["stages"];
  if (!stages || stages.size() == 0) {
    run.stages = {solvers::Stage{}};
  } else {
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const std::string path = "training.stages[" + std::to_string(i) + "]";
      if (stages[i]["steps"].as<int>() < 1)
        r.fail(stages[i]["steps"], path + ".steps", "must be at least 1");
      run.stages.push_back(
          r.at(stages[i]["optimizer"] ? stages[i]["optimizer"] : stages[i]["steps"], path, [&] {
            solvers::Stage s = build_stage(stages[i]);
            solvers::make_optimizer(s, {});  // checks the options (the schedule's too)
            return s;
          }));
    }
  }
  read_declared(solvers::weighting_options(), t["weighting"], run.weighting);
  read_declared(solvers::precision_check_options(), t["precision_check"], run.precision_check);
  solvers::SolveOptions budgets;
  read_declared(solvers::training_options(), t, budgets);
  run.max_time = budgets.max_time;
  if (run.max_time < 0) r.fail(t["max_time"], "training.max_time", "must not be negative");
  run.target_error = budgets.target_error;
  if (run.target_error < 0)
    r.fail(t["target_error"], "training.target_error", "must not be negative");
  run.time_windows = budgets.time_windows;
  run.window_shares = budgets.window_shares;
  if (run.time_windows > 1) try {
      solvers::check_time_windows(run.spec, run.time_windows);
    } catch (const UserError& e) {
      // The check names the key; here the config's place does.
      std::string what = e.what();
      const std::string key = "training.time_windows: ";
      if (what.rfind(key, 0) == 0) what = what.substr(key.size());
      r.fail(t["time_windows"], "training.time_windows", what);
    }
}

void build_sampling(const Reader& r, const YAML::Node& s, RunConfig& run) {
  const options::Values values = option_values(solvers::sampling_options().keys(), s);
  run.spec.pinn.sampling = {.seed = run.seed};
  geometry::sample_options().read(run.spec.pinn.sampling, values);
  run.spec.pinn.interior_points = s["interior_points"].as<int>();
  if (run.spec.pinn.interior_points < 1)
    r.fail(s["interior_points"], "sampling.interior_points", "must be at least 1");
  run.spec.pinn.time_chunks = s["time_chunks"].as<int>();
  solvers::SolveOptions resampling;
  solvers::sampling_options().read(resampling, values);
  run.resample_every = resampling.resample_every;
  run.adaptive = resampling.adaptive;
  run.adaptive_candidates = resampling.adaptive_candidates;
}

// RAD draws only when something resamples: sampling.resample_every or a stage's own rule.
void check_adaptive(const Reader& r, const YAML::Node& s, const RunConfig& run) {
  const bool drawn = run.resample_every > 0 ||
                     std::any_of(run.stages.begin(), run.stages.end(),
                                 [](const solvers::Stage& st) { return st.resample_every > 0; });
  if (run.adaptive && !drawn)
    r.fail(s["adaptive"], "sampling.adaptive",
           "needs sampling.resample_every > 0 or a training.stages[].resample_every");
}

void build_reference(const Reader& r, const YAML::Node& c, RunConfig& run) {
  const YAML::Node n = c["reference"];
  Reference& ref = run.reference;
  read_declared(solvers::reference_options(), n, ref);
  if (n["expressions"])
    for (const auto& item : n["expressions"]) {
      const std::string field = item.first.as<std::string>();
      if (run.spec.math.context.field_index(field) < 0)
        r.fail(item.first, "reference.expressions." + field, "'" + field + "' is not a field");
      ref.expressions[field] = item.second.as<std::string>();
      r.at(item.second, "reference.expressions." + field,
           [&] { equations::parse(ref.expressions[field], run.spec.math.context); });
    }
  if (!ref.expressions.empty())
    for (const std::string& f : run.spec.math.context.field_names())
      if (!ref.expressions.count(f))
        r.fail(n["expressions"], "reference.expressions",
               "no exact solution for field '" + f + "' (give one per field)");
  if (ref.exact == "burgers_sine" && !run.spec.math.context.find("nu"))
    r.fail(n["exact"], "reference.exact", "burgers_sine takes nu from the constants: declare nu");
  if (ref.points < 0) r.fail(n["points"], "reference.points", "must not be negative");
  if (n["metrics"])
    for (const auto& item : n["metrics"]) {
      const std::string name = item.first.as<std::string>();
      ref.metrics[name] = item.second.as<std::string>();
      r.at(item.second, "reference.metrics." + name,
           [&] { equations::parse(ref.metrics[name], run.spec.math.context); });
    }
  if (n["data"]) {
    ref.data = read_data(r, n["data"], "reference.data", run.spec.math.domain->coordinate_names(),
                         run.spec.math.context.field_names());
    for (const std::string& f : ref.data->fields)
      if (run.spec.math.context.field_index(f) < 0)
        r.fail(n["data"]["fields"] ? n["data"]["fields"] : n["data"], "reference.data.fields",
               "'" + f + "' is not a field of this problem");
  }
  read_declared(reference_solver_options(), n, run.reference_solver);
  if (run.reference_solver.solver != "none") {
    if (ref.exact != "none" || !ref.expressions.empty() || ref.data)
      r.fail(n["solver"], "reference.solver",
             "give one reference: the classical solution, or exact, expressions or data");
    const std::size_t space = run.spec.math.context.spatial().size();
    if (run.reference_solver.grid.size() != 1 && run.reference_solver.grid.size() != space)
      r.fail(n["grid"], "reference.grid",
             "give one count (every axis) or one per spatial axis (" + std::to_string(space) +
                 "), got " + std::to_string(run.reference_solver.grid.size()));
  }
  const YAML::Node t = c["training"];
  if (run.target_error > 0 && !ref.any() && run.reference_solver.solver == "none")
    r.fail(t["target_error"], "training.target_error",
           "needs a reference to measure the error against (reference.exact, expressions or "
           "data)");
  if (run.target_error > 0 && ref.every < 1)
    r.fail(t["target_error"], "training.target_error",
           "needs reference.every > 0 (the error is only measured at the end otherwise)");
}

void build_solver(const Reader& r, const YAML::Node& n, RunConfig& run) {
  read_declared(solver_options(), n, run.solver);
  const std::size_t space = run.spec.math.context.spatial().size();
  if (run.solver.grid.size() != 1 && run.solver.grid.size() != space)
    r.fail(n["grid"], "solver.grid",
           "give one count (every axis) or one per spatial axis (" + std::to_string(space) +
               "), got " + std::to_string(run.solver.grid.size()));
}

void build_output(const Reader& r, const YAML::Node& o, RunConfig& run) {
  OutputOptions& out = run.output;
  out.dir = "runs/" + run.name;
  read_declared(output_options(), o, out);
  const std::size_t space = static_cast<std::size_t>(run.spec.math.domain->bounds().dim() -
                                                     (run.spec.math.context.time_index() >= 0));
  if (out.grid.size() != 1 && out.grid.size() != space)
    r.fail(o["grid"], "output.grid",
           "give one count (every axis) or one per spatial axis (" + std::to_string(space) +
               "), got " + std::to_string(out.grid.size()));
  // Parsed now, not after training: an unknown name is found before anything runs.
  for (std::size_t i = 0; i < out.quantities.size(); ++i)
    r.at(o["quantities"].IsSequence() ? o["quantities"][i] : o["quantities"],
         "output.quantities[" + std::to_string(i) + "]",
         [&] { equations::parse(out.quantities[i], run.spec.math.context); });
}

// ---- sizes -------------------------------------------------------------------------------------

std::string bytes_text(double b) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (b >= 1000 && u < 6) {
    b /= 1000;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.3g %s", b, units[u]);
  return text;
}

// What the run will hold in memory, estimated from the config before anything is allocated: the
// point sets (their activations in training are planned against memory_budget when the problem
// is built), the activations of adaptive sampling's candidates, the parameters with the
// optimizers' state, the output grid and its arrays. Each is refused with its estimate when it
// exceeds the memory available (not std::bad_alloc after training).
void check_sizes(const Reader& r, const YAML::Node& c, const RunConfig& run) {
  const solvers::ProblemSpec& spec = run.spec;
  const auto available = static_cast<double>(compiler::available_memory(compiler::Backend::cpu));
  const double d = static_cast<double>(spec.math.domain->bounds().dim());
  const double fields = static_cast<double>(spec.math.context.field_names().size());
  const nn::NetworkSpec& net = spec.pinn.network;
  // Network: widths of the activations per point, parameters.
  double widths = 2.0 * net.fourier.features, parameters = 0, in = d;
  for (const auto& p : net.periodic) in += 2.0 * p.harmonics + (p.slope_jump ? 1 : 0);
  if (net.fourier.features > 0) {
    parameters += in * net.fourier.features;
    in = 2.0 * net.fourier.features;
  }
  for (int h : net.hidden) {
    parameters += (in + 1) * h;
    widths += h;
    in = h;
  }
  parameters += (in + 1) * fields;
  // Derivatives carried per activation (value, first and second order: what most PDEs take).
  const double jets = 1 + d + d * (d + 1) / 2;
  const auto refuse = [&](const YAML::Node& n, const std::string& path, double need,
                          const std::string& what, const std::string& advice = "") {
    if (need > available)
      r.fail(n, path,
             what + " needs about " + bytes_text(need) + ", more than the " +
                 bytes_text(available) + " of memory available" +
                 (advice.empty() ? "" : "; " + advice));
  };
  // The parameters and their gradient, and the largest optimizer state of any stage.
  int state_vectors = 0;
  for (const auto& s : run.stages)
    state_vectors = std::max(state_vectors, solvers::make_optimizer(s, {})->state_vectors());
  refuse(c["network"]["hidden"], "network", parameters * 8 * (2.0 + state_vectors),
         "a network of " + nn::detail::short_number(parameters, 3) +
             " parameters (with the optimizer's state)");
  const double per_point = (widths + d + fields) * jets * 8 * 2;
  refuse(c["network"]["fourier_features"], "network.fourier_features",
         net.fourier.features * (d + 2.0 * spec.pinn.interior_points * jets) * 8,
         std::to_string(net.fourier.features) + " Fourier features at " +
             std::to_string(spec.pinn.interior_points) + " points");
  double points = spec.pinn.interior_points;
  for (std::size_t k = 0; k < spec.math.conditions.size(); ++k) {
    const solvers::Condition& cond = spec.math.conditions[k];
    const int count = spec.pinn.condition(k).points;
    switch (solvers::condition_kind(cond.kind).points) {
      case solvers::ConditionPoints::periodic_pairs:
        points += 2.0 * count;
        break;
      case solvers::ConditionPoints::data:
        points += static_cast<double>(cond.data_points.rows());
        break;
      default:
        points += count;
    }
  }
  // The activations in training fit the memory budget (Problem runs a step in batches of the
  // points where they do not); the points themselves are held whole, twice (the set and its
  // batches): coordinates, normals and values.
  refuse(c["sampling"]["interior_points"], "sampling", points * (2 * d + fields) * 8 * 2,
         "training on " + nn::detail::short_number(points, 3) +
             " points (interior and conditions), held whole beside their batches,");
  if (run.adaptive) {
    const double candidates =
        run.adaptive_candidates > 0 ? run.adaptive_candidates : 8.0 * spec.pinn.interior_points;
    refuse(c["sampling"]["adaptive_candidates"], "sampling.adaptive_candidates",
           candidates * per_point,
           "adaptive resampling over " + nn::detail::short_number(candidates, 3) + " candidates");
  }
  if (spec.pinn.time_chunks > spec.pinn.interior_points)
    r.fail(c["sampling"]["time_chunks"], "sampling.time_chunks",
           std::to_string(spec.pinn.time_chunks) + " chunks of " +
               std::to_string(spec.pinn.interior_points) +
               " interior points: at most one chunk per point");
  // The output grid: every level's arrays are kept for fields.h5 (the values only: what the
  // evaluation needs on top depends on the compiled plan).
  const bool has_time = spec.math.context.time_index() >= 0;
  const std::size_t space = static_cast<std::size_t>(d) - (has_time ? 1 : 0);
  double grid = 1;
  for (std::size_t a = 0; a < space; ++a)
    grid *= run.output.grid.size() == 1 ? run.output.grid[0] : run.output.grid[a];
  const double levels = has_time ? run.output.time_steps : 1;
  const double arrays = 3 * fields + static_cast<double>(run.output.quantities.size()) +
                        static_cast<double>(spec.math.equations.size()) + 1 + d;
  const YAML::Node o = c["output"];
  refuse(o["grid"], "output.grid", grid * levels * arrays * 8,
         "an output grid of " + nn::detail::short_number(grid, 3) + " points" +
             (has_time ? " x " + std::to_string(run.output.time_steps) + " time levels" : ""),
         "give fewer points per axis (output.grid, output.time_steps)");
}

// memory_budget: "auto", a size ("2 GB", "512 MiB", "1e9": bytes) or a share of the memory free
// ("25%").
void read_memory_budget(const Reader& r, const YAML::Node& n, solvers::MemoryOptions& m) {
  const std::string text = n.as<std::string>();
  if (text == "auto") return;
  const auto bad = [&](const std::string& why) {
    r.fail(n, "memory_budget",
           "'" + text + "': " + why +
               " (a size such as 2 GB, 512 MiB or 1e9 bytes, a share of the memory free such as "
               "25%, or auto)");
  };
  std::size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    bad("not a number");
  }
  std::string unit = text.substr(end);
  unit.erase(0, unit.find_first_not_of(' '));
  if (!std::isfinite(value) || value <= 0) bad("not a positive amount");
  if (unit == "%") {
    if (value > 100) bad("more than 100%");
    m.share = value / 100;
    return;
  }
  static const std::map<std::string, double> units = {{"", 1},
                                                      {"B", 1},
                                                      {"bytes", 1},
                                                      {"kB", 1e3},  // as jetpde prints it
                                                      {"KB", 1e3},
                                                      {"MB", 1e6},
                                                      {"GB", 1e9},
                                                      {"TB", 1e12},
                                                      {"KiB", 1024.0},
                                                      {"MiB", 1048576.0},
                                                      {"GiB", 1073741824.0},
                                                      {"TiB", 1099511627776.0}};
  const auto u = units.find(unit);
  if (u == units.end()) bad("unknown unit '" + unit + "'");
  const double bytes = value * u->second;
  if (bytes < 1e6) bad("less than 1 MB");
  if (bytes > 9e18) bad("more than 9e18 bytes");
  m.budget = static_cast<std::int64_t>(bytes);
}

RunConfig build(const YAML::Node& c, const Reader& r) {
  RunConfig run;
  run.source = r.source;
  run.resolved = c;
  run.name = c["name"] ? c["name"].as<std::string>() : fs::path(r.source).stem().string();
  solvers::SolveOptions top;
  read_declared(solvers::run_options(), c, top);
  run.seed = top.seed;
  run.device = c["device"].as<std::string>();  // RunConfig keeps the name (io::choose_device)
  run.require_device = top.require_device;
  run.threads = c["threads"].as<int>();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (run.threads > 4 * cores)
    r.fail(c["threads"], "threads",
           std::to_string(run.threads) + " is more than 4 x the " + std::to_string(cores) +
               " cores of this machine (0: all cores)");
  read_memory_budget(r, c["memory_budget"], run.spec.pinn.memory);
  run.spec.compile.pipeline.precision =
      compiler::precision_names().from_name(c["precision"].as<std::string>());
  run.spec.math.domain = domain(r, c["geometry"]);
  std::vector<std::string> library_texts, library_names;
  build_context(r, c, run, library_texts, library_names);
  build_equations(r, c, run, library_texts, library_names);
  build_sampling(r, c["sampling"], run);
  read_declared(solvers::parallel_options(), c["parallel"], run.spec.pinn);
  build_conditions(r, c, run);
  build_network(r, c["network"], "network", run);
  build_decomposition(r, c["decomposition"], run);
  build_training(r, c, run);
  check_adaptive(r, c["sampling"], run);
  build_reference(r, c, run);
  build_solver(r, c["solver"], run);
  build_output(r, c["output"], run);
  check_sizes(r, c, run);
  return run;
}

// Data file paths made absolute (relative ones are relative to the config's folder), so that the
// resolved config written into a run folder still finds them.
void absolute_data_paths(YAML::Node& raw, const std::string& base_dir) {
  const auto fix = [&](YAML::Node source) {
    if (!source.IsMap() || !source["file"] || !source["file"].IsScalar()) return;
    const fs::path p(source["file"].Scalar());
    if (p.is_absolute()) return;
    source["file"] =
        fs::absolute(fs::path(base_dir.empty() ? "." : base_dir) / p).lexically_normal().string();
  };
  if (raw["reference"] && raw["reference"].IsMap()) fix(raw["reference"]["data"]);
  // Geometry files (type stl), at any depth of `of`.
  const std::function<void(YAML::Node)> fix_geometry = [&](YAML::Node g) {
    if (!g.IsMap()) return;
    fix(g);
    if (g["of"] && g["of"].IsSequence())
      for (std::size_t i = 0; i < g["of"].size(); ++i) fix_geometry(g["of"][i]);
  };
  if (raw["geometry"]) fix_geometry(raw["geometry"]);
  if (raw["decomposition"] && raw["decomposition"].IsMap() && raw["decomposition"]["pieces"] &&
      raw["decomposition"]["pieces"].IsSequence())
    for (std::size_t i = 0; i < raw["decomposition"]["pieces"].size(); ++i)
      fix_geometry(raw["decomposition"]["pieces"][i]);
  if (raw["conditions"] && raw["conditions"].IsSequence())
    for (std::size_t i = 0; i < raw["conditions"].size(); ++i)
      if (raw["conditions"][i].IsMap()) fix(raw["conditions"][i]["data"]);
}

// build() with what yaml-cpp throws for a value the schema let through as the user's error.
RunConfig build_checked(const YAML::Node& resolved, const Reader& r) {
  try {
    return build(resolved, r);
  } catch (const YAML::Exception& e) {
    // The schema let through something a reader did not expect: still the user's input, so a
    // UserError with the place rather than an internal error.
    throw UserError((e.mark.is_null() ? r.source
                                      : r.source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                            std::to_string(e.mark.column + 1)) +
                    ": unexpected value: " + e.msg);
  }
}

}  // namespace

RunConfig run_config_from_text(const std::string& text, const std::string& source,
                               const std::string& base_dir,
                               const std::vector<std::string>& overrides) {
  // The text as the user wrote it, overrides applied (parsed again for each reading: resolving
  // changes the nodes in place, and a copy would lose their places in the file).
  const auto parse = [&] {
    YAML::Node raw;
    try {
      raw = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw UserError(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
    }
    if (!raw.IsMap() && !raw.IsNull())
      throw UserError(source + ": expected a mapping of keys at the top, got " +
                      (raw.IsSequence() ? std::string("a list") : "'" + raw.Scalar() + "'"));
    for (const std::string& o : overrides) apply_override(raw, o);
    decomposition_shorthand(raw);
    return raw;
  };
  YAML::Node raw = parse();
  // The default recipe reads the problem first (its errors are the config's, found here), then
  // fills in what the config leaves to it; the second reading is the run's. The first reading
  // leaves out the sections the recipe fills (a sampling key given alone may need one the recipe
  // adds); their errors come from the second.
  Recipe recipe;
  if (wants_recipe(raw)) {
    YAML::Node mathematics = parse();
    for (const char* section : {"network", "sampling", "training", "decomposition"})
      mathematics.remove(section);
    YAML::Node first = resolve_config(mathematics, source);
    absolute_data_paths(first, base_dir);
    const RunConfig problem = build_checked(first, Reader{source, base_dir});
    recipe = apply_recipe(raw, problem_facts(problem.spec));
  }
  // Paths made absolute once the config is known to expand to a bounded size (resolve_config
  // checks that first): the walk through geometry.of would follow aliases without end.
  YAML::Node resolved = resolve_config(raw, source);
  absolute_data_paths(resolved, base_dir);
  RunConfig run = build_checked(resolved, Reader{source, base_dir});
  run.recipe = std::move(recipe);
  return run;
}

std::unique_ptr<solvers::Problem> build_problem(const RunConfig& config,
                                                const solvers::ProblemSpec& spec,
                                                const solvers::Communicator& comm) {
  try {
    // The memory plan counts the programs the trainer will compile (stages, weighting).
    solvers::ProblemSpec counted = spec;
    solvers::SolveOptions training;
    training.stages = config.stages;
    training.weighting = config.weighting;
    training.precision_check = config.precision_check;
    solvers::count_training_programs(training, counted);
    return std::make_unique<solvers::Problem>(std::move(counted), comm);
  } catch (const solvers::SpecError& e) {
    // "conditions[2]" -> the entry's node; a resolved mapping has no position of its own, its
    // values do (the first one that has one stands for the entry).
    YAML::Node node;
    const std::string& entry = e.entry();
    const auto open = entry.find('['), close = entry.find(']');
    if (open != std::string::npos && close != std::string::npos && config.resolved.IsMap()) {
      const YAML::Node list = config.resolved[entry.substr(0, open)];
      const std::size_t index = std::stoul(entry.substr(open + 1, close - open - 1));
      if (list && list.IsSequence() && index < list.size()) node = list[index];
    }
    if (node && node.IsMap() && node.Mark().is_null())
      for (const auto& item : node)
        if (!item.second.Mark().is_null()) {
          node = item.second;
          break;
        }
    throw UserError((node ? config_place(node, config.source) : config.source + ": ") + entry +
                    ": " + e.detail());
  }
}

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UserError(path + ": is a folder, not a config file (give a .yaml file)");
  std::ifstream in(path);
  if (!in) throw UserError(path + ": cannot read the config file (" + std::strerror(errno) + ")");
  std::stringstream text;
  text << in.rdbuf();
  return run_config_from_text(text.str(), path, fs::path(path).parent_path().string(), overrides);
}

}  // namespace jetpde::io
