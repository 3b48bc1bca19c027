// A run described by a YAML config (docs/design.md section 10): the file is checked against the
// schema (config_schema.h), `--set` overrides are applied, defaults are filled in, and the result
// becomes a solvers::ProblemSpec, the trainer's stages and weighting, the reference to measure
// against and what to write.
//
//   io::RunConfig run = io::load_run_config("examples/burgers.yaml",
//   {"training.stages.0.steps=50"}); solvers::Problem problem(run.spec);
//
// Every error names the key path and, where the value came from the file, file:line:column.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "autodiff/options.h"
#include "autodiff/primitive.h"
#include "io/recipe.h"
#include "solvers/problem.h"
#include "solvers/solve.h"
#include "solvers/trainer.h"

namespace jetpde::io {

// Values read from a file (reference data, or measurements for a data condition): points
// [n, coordinates] in the problem's coordinate order and values [n, fields].
using PointData = solvers::PointData;

// Values on a grid in an HDF5 file (what a config's `coordinates:` data source reads): `axes`
// are (coordinate, 1-D dataset of its values) in the order of the value datasets' axes (u[i, j] =
// u(axes[0][i], axes[1][j]), row-major), `coordinates` the problem's coordinate order (the
// columns of the points), `fields` (field, dataset). UserError naming what does not fit.
PointData read_hdf5_grid(const std::string& file,
                         const std::vector<std::pair<std::string, std::string>>& axes,
                         const std::vector<std::string>& coordinates,
                         const std::vector<std::pair<std::string, std::string>>& fields);

// The reference section (solvers::Reference: `exact` is the built-in solution's name; the config
// never sets `function`).
using Reference = solvers::Reference;

struct OutputOptions {
  std::string dir;
  int checkpoint_every = 1000, history_every = 10, progress_every = 100;
  std::string progress = "auto";
  std::vector<int> grid{101};
  int time_steps = 11;
  std::vector<std::string> quantities;
  bool residuals = true, vtk = true, hdf5 = true;
};

// The keys of `output` (every member but `dir`'s default, runs/NAME, which needs the run's name).
const options::Declaration<OutputOptions>& output_options();

// How to solve (the `solver` section): the PINN (training), or a classical solver on a grid
// (solvers/classical: finite differences on PETSc; `jetpde run` then writes the same outputs).
struct SolverOptions {
  std::string type = "pinn";  // pinn | petsc
  std::vector<int> grid{65};  // petsc: points per spatial axis (one value: every axis)
  std::string options;        // petsc: PETSc options ("-snes_monitor -ksp_type gmres")
  double time_step = 0;       // petsc, time-dependent: the step (0: the smallest grid spacing)
};
const options::Declaration<SolverOptions>& solver_options();

// A classical solution as the reference (`reference: {solver: petsc, grid: [...]}`): a PINN run
// solves the problem on the grid first and validates against it (history.csv, summary.json).
struct ReferenceSolver {
  std::string solver = "none";  // none | petsc
  std::vector<int> grid{129};
  std::string options;
};
const options::Declaration<ReferenceSolver>& reference_solver_options();

struct RunConfig {
  std::string name;
  std::string source;   // the config file
  YAML::Node resolved;  // with every default; written into the run folder
  solvers::ProblemSpec spec;
  std::vector<solvers::Stage> stages;
  solvers::Weighting weighting;
  solvers::PrecisionCheck precision_check;  // training.precision_check
  double max_time = 0;                      // training.max_time, seconds (0: none)
  double target_error = 0;                  // training.target_error (0: none)
  int time_windows = 1;                     // training.time_windows (1: no time marching)
  solvers::WindowShares window_shares = solvers::WindowShares::equal;  // training.window_shares
  std::uint64_t seed = 0;
  int resample_every = 0;
  bool adaptive = false;
  int adaptive_candidates = 0;
  std::string device = "auto";
  bool require_device = false;
  int threads = 0;
  Reference reference;
  OutputOptions output;
  SolverOptions solver;
  ReferenceSolver reference_solver;
  Recipe recipe;  // the default recipe's choices, when it was applied (io/recipe.h)
};

// Reads, overrides, validates and converts. UserError for a file that cannot be read or parsed
// (with yaml-cpp's line and column), and for anything the schema or the problem rejects.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides = {});
// The same from YAML text; relative data paths are relative to `base_dir`.
RunConfig run_config_from_text(const std::string& text, const std::string& source,
                               const std::string& base_dir,
                               const std::vector<std::string>& overrides = {});

// The problem of `spec` (config.spec, or a copy with the device chosen). A SpecError about one
// condition or hard constraint (an empty boundary piece, a point outside the domain) comes back as
// a UserError with that entry's place in the config: "cfg.yaml:12:5: conditions[2]: ...".
// With several ranks (`comm`, not owned) a collective: every rank builds its share.
std::unique_ptr<solvers::Problem> build_problem(
    const RunConfig& config, const solvers::ProblemSpec& spec,
    const solvers::Communicator& comm = solvers::serial_communicator());

}  // namespace jetpde::io
