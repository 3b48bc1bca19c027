// The jetpde subcommands, each a function of its parsed options (jetpde.cpp declares the options
// with CLI11 and calls these). Each returns the process exit status; user errors are thrown as
// jetpde::UserError and reported by main.
#pragma once

#include <string>
#include <vector>

#include "solvers/communicator.h"

namespace jetpde::app {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;  // --set KEY=VALUE
  bool resume = false;
  bool check = false;  // --check: validate the config and build the problem, then stop
  int max_steps = 0;
  std::string output;    // --output DIR (output.dir)
  std::string progress;  // --progress MODE (output.progress)
  int threads = -1;      // --threads N (threads)
  // --petsc-options "...": the classical solves' PETSc options, after solver.options and
  // PETSC_OPTIONS (io::RunOptions::petsc_options).
  std::string petsc_options;
};
// SIGTERM and SIGINT blocked in this thread and every thread started after it, and taken by a
// thread of their own (commands.cpp says why): call first in main. `run` then stops cleanly at
// the first (after the current step); elsewhere, and at the second, they end the process.
void block_stop_signals();

// With several ranks (mpirun) every rank trains its share; rank 0 writes and prints.
int run(const RunArgs& args, const solvers::Communicator& comm = solvers::serial_communicator());

// eval and export: the run folder's config.yaml with --set KEY=VALUE overrides and --precision
// (precision=...) applied.
struct LoadArgs {
  std::vector<std::string> overrides;
  std::string precision;
};

struct EvalArgs {
  std::string run_dir, points, output;
  std::vector<std::string> fields;  // expressions; empty: every field
  LoadArgs load;
};
int eval(const EvalArgs& args);

struct ExportArgs {
  std::string run_dir, output;
  std::vector<int> grid;
  int time_steps = 0;
  std::vector<std::string> quantities;
  LoadArgs load;
  // --library DIR: the trained model as a standalone C library instead of grid files.
  std::string library, name = "model";
  std::vector<std::string> fields;  // expressions; empty: every field
  long block = 1024;                // points per block of the library's program
  std::string device = "cpu";       // cpu: host pointers; cuda: device pointers (nvcc, cuBLAS)
  std::string cuda_arch;            // --device cuda: nvcc's targets (empty: the GPU here, or a set)
};
int export_fields(const ExportArgs& args);

struct InfoArgs {
  bool equations = false, config_reference = false;
};
int info(const InfoArgs& args);

// Sets the OpenMP thread count (0: leave the default, all cores).
void set_threads(int threads);

}  // namespace jetpde::app
