// The jetpde command: run a YAML config, evaluate or export a trained run, describe the build.
//
//   jetpde run examples/burgers.yaml [--set training.stages.0.steps=500] [--resume] [--check]
//   jetpde eval runs/burgers --points points.csv --fields u,u_x [--precision fp64] [--set K=V]
//   jetpde export runs/burgers --grid 201 --time-steps 51 [--precision fp64] [--set K=V]
//   jetpde export runs/burgers --library lib/ [--name burgers] [--fields u,u_x] [--block 1024]
//                 [--device cuda [--cuda-arch sm_90]]
//   jetpde info [--equations] [--config-reference]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/commands.h"
#include "autodiff/errors.h"
#include "solvers/mpi.h"

namespace {

// Expression lists split at the commas outside parentheses: `u,d(u, x, 2)` is two expressions.
std::vector<std::string> split_expressions(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& text : given) {
    int depth = 0;
    std::string current;
    for (char c : text) {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) {
        out.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    out.push_back(current);
  }
  return out;
}

// An error that ends the command: printed, and with several ranks every rank ended (the others
// may wait in a collective for this one forever). When all ranks fail alike (a config error)
// rank 0 speaks and ends the rest; a rank that fails alone says which it is.
int fail(const jetpde::solvers::MpiSession* mpi, int code, const char* kind, const char* what) {
  const jetpde::solvers::Communicator* world = mpi ? &mpi->world() : nullptr;
  if (!world || world->size() == 1) {
    std::fprintf(stderr, "jetpde: %s: %s\n", kind, what);
    return code;
  }
  if (world->rank() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::fprintf(stderr, "jetpde%s: %s: %s\n",
               world->rank() == 0 ? "" : (" (rank " + std::to_string(world->rank()) + ")").c_str(),
               kind, what);
  std::fflush(stderr);
  jetpde::solvers::abort_all_ranks(code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace jetpde::app;
  block_stop_signals();  // before any thread (MPI's, OpenMP's) starts
  CLI::App app{"jetpde " JETPDE_VERSION ": physics-informed neural networks for PDEs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("jetpde ") + JETPDE_VERSION);

  RunArgs run_args;
  CLI::App* run_cmd = app.add_subcommand("run", "Train the problem a YAML config describes");
  run_cmd->add_option("config", run_args.config, "The YAML config")->required();
  run_cmd->add_option("--set", run_args.overrides,
                      "Override a config value: KEY.PATH=VALUE (list entries by index: "
                      "training.stages.0.steps=100); repeatable");
  run_cmd->add_flag("--check", run_args.check,
                    "Validate the config and build the problem, then stop (no run folder, no "
                    "training)");
  run_cmd->add_flag("--resume", run_args.resume,
                    "Continue from the run folder's checkpoint.h5 (same config, same threads)");
  run_cmd
      ->add_option("--max-steps", run_args.max_steps,
                   "Cap every training stage at this many steps (smoke tests)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--output", run_args.output, "Run folder (overrides output.dir)");
  run_cmd->add_option("--progress", run_args.progress, "auto | line | plain | none")
      ->check(CLI::IsMember({"auto", "line", "plain", "none"}));
  run_cmd->add_option("--threads", run_args.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option(
      "--petsc-options", run_args.petsc_options,
      "PETSc options for solver: petsc and reference: {solver: petsc} (\"-snes_monitor "
      "-ksp_type gmres\"; -help lists them), read after solver.options and "
      "PETSC_OPTIONS");

  EvalArgs eval_args;
  CLI::App* eval_cmd = app.add_subcommand("eval", "Evaluate a trained run at given points");
  eval_cmd->add_option("run_dir", eval_args.run_dir, "A run folder (with checkpoint.h5)")
      ->required();
  eval_cmd
      ->add_option("--points", eval_args.points,
                   "A data file (.csv .dat .txt .tsv .h5 .npy .npz .mat) with a column or array "
                   "per coordinate, or an array 'points' [n, dims]")
      ->required();
  eval_cmd->add_option("--fields", eval_args.fields,
                       "Fields or expressions to evaluate (u,u_x,d(u, x, 3)); default: every "
                       "field");
  eval_cmd->add_option("--output", eval_args.output,
                       "Write to this .csv, .h5 or .vtu file instead of standard output");

  // eval and export read the run folder's config.yaml; these override it.
  const auto load_options = [](CLI::App* cmd, LoadArgs& load) {
    cmd->add_option("--set", load.overrides,
                    "Override a value of the run's config.yaml: KEY.PATH=VALUE; repeatable");
    cmd->add_option("--precision", load.precision,
                    "Arithmetic to evaluate in (default: the run's precision)")
        ->check(CLI::IsMember({"fp64", "fp32", "bf16", "fp16", "auto"}));
  };
  load_options(eval_cmd, eval_args.load);

  ExportArgs export_args;
  CLI::App* export_cmd =
      app.add_subcommand("export", "Write a trained run's fields on a grid (VTK and HDF5)");
  export_cmd->add_option("run_dir", export_args.run_dir, "A run folder")->required();
  export_cmd->add_option("--output", export_args.output, "Folder to write to (default: run_dir)");
  export_cmd->add_option("--grid", export_args.grid, "Points per axis (one value: every axis)")
      ->delimiter(',');
  export_cmd->add_option("--time-steps", export_args.time_steps, "Time levels")
      ->check(CLI::PositiveNumber);
  export_cmd->add_option("--quantities", export_args.quantities,
                         "Extra expressions (u_x,d(u, x, 3),...)");
  export_cmd->add_option("--library", export_args.library,
                         "Write the trained model as a standalone C library into this folder "
                         "(lib<name>.so, <name>.h, <name>Config.cmake, <name>.cpp) instead");
  export_cmd->add_option("--name", export_args.name,
                         "--library: the library's name, a C identifier (default: model)");
  export_cmd->add_option("--fields", export_args.fields,
                         "--library: the fields or expressions it computes (default: every field)");
  export_cmd
      ->add_option("--block", export_args.block,
                   "--library: points per block of its program (default: 1024)")
      ->check(CLI::Range(1L, 1L << 22));
  export_cmd
      ->add_option("--device", export_args.device,
                   "--library: where it evaluates: cpu (host memory, the default) or cuda "
                   "(points and values in GPU memory; compiled by nvcc)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  export_cmd->add_option("--cuda-arch", export_args.cuda_arch,
                         "--library --device cuda: GPU architectures, comma-separated "
                         "(sm_90,sm_80; default: the GPU here, else sm_80 and sm_90 with PTX)");
  load_options(export_cmd, export_args.load);

  InfoArgs info_args;
  CLI::App* info_cmd =
      app.add_subcommand("info", "Version, backends, BLAS, CUDA, MPI and the compile cache");
  info_cmd->add_flag("--equations", info_args.equations, "List the equation library");
  info_cmd->add_flag("--config-reference", info_args.config_reference,
                     "Print the config key reference (docs/config.md's table)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the error
    return code == 0 ? 0 : 2;
  }
  eval_args.fields = split_expressions(eval_args.fields);
  export_args.quantities = split_expressions(export_args.quantities);
  export_args.fields = split_expressions(export_args.fields);
  // Under mpirun/srun every rank runs this; `run` trains together (data parallelism), the other
  // commands run on rank 0 alone.
  std::unique_ptr<jetpde::solvers::MpiSession> mpi;
  try {
    mpi = std::make_unique<jetpde::solvers::MpiSession>(&argc, &argv);
    const jetpde::solvers::Communicator& world = mpi->world();
    if (*run_cmd) return run(run_args, world);
    if (world.rank() != 0) return 0;
    if (*eval_cmd) return eval(eval_args);
    if (*export_cmd) return export_fields(export_args);
    if (*info_cmd) return info(info_args);
  } catch (const jetpde::UserError& e) {
    return fail(mpi.get(), 1, "error", e.what());
  } catch (const std::exception& e) {
    return fail(mpi.get(), 70, "internal error", e.what());
  }
  return 0;
}
