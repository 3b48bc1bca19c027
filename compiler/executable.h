// Executable: compile a graph once; bind inputs and parameters; run; read outputs; run again
// without reallocating (docs/design.md section 7).
//
//   compiler::Executable exe(outputs);          // passes, lowering, memory plan, codegen, load
//   exe.set("x", points); exe.set("W0", w0);    // by leaf name; copied into the arena
//   exe.run();
//   MatrixD loss = exe.output(0);
#pragma once

#include <memory>
#include <span>
#include <string>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "compiler/backend.h"
#include "compiler/cpu_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/program.h"

namespace jetpde::compiler {

struct CompileOptions;
// Whether `backend` is built into this jetpde and can run here (a CUDA device answers, a host
// compiler exists); when not, `why` says why.
bool backend_can_run(Backend backend, const CompileOptions& options, std::string* why = nullptr);

struct CompileOptions {
  Backend backend = Backend::cpu;
  bool strict = false;  // a backend that cannot run is an error instead of a warning and fallback
  CpuCompileOptions cpu;
  PipelineOptions pipeline;
  // < 1: values the backward pass reads are recomputed there (rematerialize, compiler/lower.h)
  // until the arena is at most this fraction of the plain plan's, as far as recomputation
  // reaches: a memory budget's first resort (solvers::Problem), before batches of the points.
  double memory_fraction = 1.0;
  // CUDA: a step runs as one CUDA graph from its second run on (compiler/cuda/cuda_runtime.cpp).
  bool cuda_graphs = true;
  // Pipeline logging and dumps from the environment (JETPDE_LOG, JETPDE_DUMP_IR,
  // JETPDE_AUTO_PRECISION), and JETPDE_CUDA_GRAPHS=0 for cuda_graphs off.
  static CompileOptions from_environment();
};

struct CompileStats {
  std::size_t nodes_in = 0, nodes_optimized = 0;
  int kernels = 0, gemms = 0;
  int native_bf16_gemms = 0;  // of `gemms`: bf16 x bf16 -> f32 with 16-bit instructions
  std::int64_t arena_bytes = 0, peak_live_bytes = 0;
  int recomputed = 0;  // buffers rematerialized under CompileOptions::memory_fraction
  double optimize_seconds = 0, lower_seconds = 0, build_seconds = 0, total_seconds = 0;
  bool cache_hit = false;
  // Set by the first run: the tiled regions whose tile it measured (TiledRegion::tune; a tile
  // found in the compile cache is not measured again) and the seconds measuring took.
  int tiles_measured = 0;
  double tile_seconds = 0;
  // The tiled regions that run on kPreferredTile instead of a measured choice because other
  // processes kept the cores busy while they were measured, by this run or by the one that wrote
  // the cache (CpuCompileOptions::trust_busy_tiles); and the cache file that keeps the tiles
  // ("" where no tile is measured). Deleting the file has the next run measure them again.
  int tiles_busy = 0;
  std::string tile_file;
  // Set by the runs: the bytes of the threads' tile scratches (the tiled regions' locals,
  // TiledRegion::locals, one tile of them per thread), 0 where no region uses one.
  std::int64_t scratch_bytes = 0;
};

// The arena a program of `outputs` takes on `options.backend` (the CPU's, for the interpreter):
// the passes, lowering and memory plan an Executable would run, without generating or building
// code. For a caller that chooses what to compile under a memory budget (solvers::Problem).
struct MemoryEstimate {
  std::int64_t arena_bytes = 0, peak_live_bytes = 0;
};
MemoryEstimate estimate_memory(std::span<const Var> outputs, const CompileOptions& options);
// The program itself: what `options.backend`'s runtime runs for `outputs` (optimized, then
// lower_for), built without a device of that backend. For an exported library
// (compiler/library.h), which may be for a GPU this machine does not have.
Program plan_program(std::span<const Var> outputs, const CompileOptions& options);
// An optimized module lowered as the runtime of `backend` lowers it (the runtimes call it):
// lower, bf16 GEMM operands packed where the CPU multiplies them natively (not on CUDA), the
// memory planned within options.memory_fraction (the buffers recomputed to get there counted in
// *recomputed).
Program lower_for(const Module& module, Backend backend, const CompileOptions& options,
                  int* recomputed = nullptr);
// The bytes free now where `backend` keeps its arenas: the host's available memory (MemAvailable
// in /proc/meminfo, else the physical memory) for the CPU and the interpreter, the GPU's free
// memory for CUDA (0 when no device answers or CUDA is not built in).
std::int64_t available_memory(Backend backend);

class Executable {
 public:
  // Compiles `outputs` (all of one graph). A backend that cannot run here (no GPU, no host
  // compiler) falls back with a warning on stderr (cuda -> cpu -> interpreter), or is a
  // UserError when options.strict.
  explicit Executable(std::span<const Var> outputs,
                      const CompileOptions& options = CompileOptions::from_environment());
  ~Executable();
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;

  // Binds an input or param by name. UserError for an unknown name or a wrong shape.
  void set(const std::string& name, const MatrixD& value);
  void set(const Bindings& values);
  void run();
  // Runs once, timing each step: seconds per step, in program order (empty for the interpreter).
  std::vector<double> run_timed();
  MatrixD output(std::size_t k) const;
  std::size_t num_outputs() const;

  Backend backend() const;
  const CompileStats& stats() const;
  const Program& program() const;  // empty for the interpreter

 private:
  static Backend choose_backend(const CompileOptions& options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jetpde::compiler
