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
//   summary.json    status, steps and timings (this part and the whole run), final losses and
//                   metrics, trainable constants
//
// Training stops early on training.max_time, training.target_error or an interrupt
// (RunOptions::interrupt); each writes everything a finished run writes, with its status.
#pragma once

#include <algorithm>
#include <csignal>
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
  // Nonzero stops training after the current step (a SIGTERM/SIGINT handler sets it; not owned):
  // the checkpoint, the fields and summary.json are written as for a finished run, with status
  // "interrupted".
  const volatile std::sig_atomic_t* interrupt = nullptr;
  // Called after every step (after progress and history.csv have it); returning false stops
  // training after that step, with status "stopped", and everything is written as for a finished
  // run. Empty: none. (The Python module records the history and runs its callbacks through it.)
  std::function<bool(const solvers::StepInfo&)> on_step;
};

struct RunReport {
  std::string dir;
  solvers::TrainResult result;
  std::map<std::string, double> metrics;     // against the reference, at the end
  long long validation_points = 0;           // the points they are measured at
  std::map<std::string, double> parameters;  // trained constants, by name
  std::vector<std::string> files;            // written into dir
  double setup_seconds = 0, train_seconds = 0, output_seconds = 0;  // this part
  double run_train_seconds = 0;  // training time of the whole run (resumed parts included)
  int resumed_from = -1;         // the checkpoint's step, when resumed
  int part_steps() const { return result.steps - std::max(0, resumed_from); }
};

// UserError for an output folder that cannot be written (before anything is trained), a resume
// without a checkpoint or from one of a different config, a validation set too large for the
// memory available (reference.points).
RunReport run(const RunConfig& config, const RunOptions& options = {});

// The problem and trained parameters of a finished (or checkpointed) run folder, its resolved
// config (config.yaml) with `overrides` (KEY.PATH=VALUE, as `--set`: precision=fp64 evaluates an
// fp32 run in fp64) applied.
struct LoadedRun {
  RunConfig config;
  std::string trained_precision;  // config.yaml's, before the overrides
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
