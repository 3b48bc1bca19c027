// A config-driven run from start to finish (what `jetpde run` does): the config becomes a
// solvers::ProblemSpec and solvers::SolveOptions, solvers::Solver trains (validation, resampling,
// stop conditions: solvers/solve.h), and io adds the files: the run folder, the progress line,
// history.csv, checkpoint.h5 (and resuming from it), the fields on a grid (VTK, HDF5) and
// summary.json.
//
//   io::RunConfig config = io::load_run_config("examples/burgers.yaml");
//   io::RunReport report = io::run(config, {.resume = false});
//   MatrixD u = report.solution.fields(points);
//
// Under MPI (RunOptions::communicator) every rank trains its share of the points and rank 0 writes
// everything below; summary.json then says how many ranks ran and rank 0's seconds in
// collectives.
//
// Run folder (config.output.dir):
//   config.yaml     the resolved config (every default filled in)
//   checkpoint.h5   the latest training state (checkpoint.h); the final one when done
//   history.csv     one row every output.history_every steps
//   fields.vti | fields_NNNN.vti + fields.pvd, fields.h5
//   summary.json    status, steps and timings (this part and the whole run), final losses and
//                   metrics, trainable constants, the backend and precision that ran
//
// With `solver: {type: petsc}` the problem is solved classically instead (solvers/classical:
// finite differences on a PETSc DMDA) and the folder holds config.yaml, the fields and
// summary.json (its "solver" entry: method, converged reason, iterations, residual norms, grid,
// seconds); the report's solution is then a Solution over the grid solution. With
// `reference: {solver: petsc}` a PINN run solves classically first and validates against that
// (summary.json's "reference_solver" records the solve).
//
// Training stops early on training.max_time, training.target_error or an interrupt
// (RunOptions::interrupt); each writes everything a finished run writes, with its status.
#pragma once

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "io/config.h"
#include "solvers/problem.h"
#include "solvers/solution.h"
#include "solvers/solve.h"

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
  // A classical solve (solver: petsc) calls it after the solve, once per Newton iteration or time
  // step (io::run_classical says what each carries); returning false stops the calls only.
  std::function<bool(const solvers::StepInfo&)> on_step;
  // The ranks of a data-parallel run (`mpirun -n N jetpde run`; not owned; null: serial). Every
  // rank calls run() with the same config; rank 0 alone writes the run folder, the progress and
  // the log; every rank returns the same parameters.
  const solvers::Communicator* communicator = nullptr;
  // PETSc options for the classical solves (`solver: {type: petsc}` and `reference: {solver:
  // petsc}`; `jetpde run --petsc-options`): read after solver.options (reference.options) and
  // PETSC_OPTIONS, so they override both. Not written into config.yaml.
  std::string petsc_options;
};

struct RunReport {
  std::string dir;
  // The trained problem: result, metrics, parameters, history, validation points, the setup and
  // training time of this part, resumed_from (the checkpoint's step, or -1).
  solvers::Solution solution;
  std::vector<std::string> files;    // written into dir
  double output_seconds = 0;         // writing the fields and summary.json
  int ranks = 1;                     // that trained together
  double communication_seconds = 0;  // this rank's, in collectives (waits included)
  double values_sent = 0;            // this rank's, in all messages (Communicator::values_sent)
  std::string gradient_exchange;     // "neighbours" (a decomposed model's) or "allreduce"

  const solvers::TrainResult& result() const { return solution.result(); }
  int resumed_from() const { return solution.resumed_from(); }
  int part_steps() const { return result().steps - std::max(0, resumed_from()); }
};

// The config's description of how to solve (stages capped at options.max_steps, seed,
// resampling, the reference, stop conditions, device); no callbacks and no checkpoints.
solvers::SolveOptions solve_options(const RunConfig& config, const RunOptions& options = {});

// `jetpde run --check` for the classical solver: what run() would refuse of `solver: {type:
// petsc}` and of `reference: {solver: petsc}` (the shape, the equation count, derivative orders,
// conditions, the grid), with run()'s messages, without starting PETSc or solving. Returns what it
// checked ("" when the config uses neither); UserError otherwise, and when built without PETSc.
std::string check_classical(const RunConfig& config);

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
  solvers::Solution solution;     // with the reference's exact solution, if any; no history
  int step = 0;                   // the checkpoint's
};
// `overrides` (as --set gives them) change what the run folder's config.yaml says about the
// output (export's --grid, --time-steps, --quantities), checked like the config itself. A
// classical (solver: petsc) folder has no checkpoint: its solution is solved again from
// config.yaml.
LoadedRun load_run(const std::string& dir, const std::vector<std::string>& overrides = {});

// The config's device choice applied to a problem spec (solvers::choose_device): the backend, and
// whether it must run. Prints a warning to `log` when cuda was asked for but cannot run (and is
// not required).
void choose_device(const RunConfig& config, solvers::ProblemSpec& spec, std::FILE* log);

}  // namespace jetpde::io
