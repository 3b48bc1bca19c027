// A config-driven run from start to finish (what `jetpde run` does): the run folder, the problem,
// training with progress, history, checkpoints and validation, then the fields on a grid
// (VTK, HDF5) and summary.json.
//
//   io::RunConfig config = io::load_run_config("examples/burgers.yaml");
//   io::RunReport report = io::run(config, {.resume = false});
//
// Run folder (config.output.dir):
//   config.yaml     the resolved config (every default filled in)
//   checkpoint.h5   the latest training state (checkpoint.h); the final one when done
//   history.csv     one row every output.history_every steps
//   fields.vti | fields_NNNN.vti + fields.pvd, fields.h5
//   summary.json    status, steps, timings, final losses and metrics, trainable constants
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "io/config.h"
#include "solvers/problem.h"

namespace jetpde::io {

struct RunOptions {
  bool resume = false;  // continue from the run folder's checkpoint.h5
  int max_steps = 0;    // > 0: cap every stage at this many steps (smoke tests)
  std::FILE* log = stderr;
};

struct RunReport {
  std::string dir;
  solvers::TrainResult result;
  std::map<std::string, double> metrics;     // against the reference, at the end
  std::map<std::string, double> parameters;  // trained constants, by name
  std::vector<std::string> files;            // written into dir
  double setup_seconds = 0, train_seconds = 0, output_seconds = 0;
  int resumed_from = -1;  // the checkpoint's step, when resumed
};

// UserError for an output folder that cannot be written (before anything is trained), a resume
// without a checkpoint or from one of a different config.
RunReport run(const RunConfig& config, const RunOptions& options = {});

// The problem and trained parameters of a finished (or checkpointed) run folder.
struct LoadedRun {
  RunConfig config;
  std::unique_ptr<solvers::Problem> problem;
  Eigen::VectorXd theta;
  int step = 0;
};
// `overrides` (as --set gives them) change what the run folder's config.yaml says about the
// output (export's --grid, --time-steps, --quantities), checked like the config itself.
LoadedRun load_run(const std::string& dir, const std::vector<std::string>& overrides = {});

// The exact solution the config names (reference.exact or reference.expressions) at points
// [n, coordinates] -> [n, fields]; empty when it names none. Holds references to both arguments.
std::function<MatrixD(const MatrixD&)> exact_solution(const RunConfig& config,
                                                      solvers::Problem& problem);

// The config's device choice applied to a problem spec: the backend, and whether it must run.
// Prints a warning to `log` when cuda was asked for but cannot run (and is not required).
void choose_device(const RunConfig& config, solvers::ProblemSpec& spec, std::FILE* log);

}  // namespace jetpde::io
