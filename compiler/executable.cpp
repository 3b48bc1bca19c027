#include "compiler/executable.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <unordered_map>

#include "autodiff/errors.h"
#include "compiler/cpu_gemm.h"
#include "compiler/lower.h"
#include "compiler/runtime.h"

namespace jetpde::compiler {

void register_cpu_runtime();  // cpu_runtime.cpp

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::map<Backend, RuntimeFactory>& registry() {
  static std::map<Backend, RuntimeFactory> runtimes;
  return runtimes;
}

// The pipeline's options with `auto` resolved for the backend that compiles.
PipelineOptions resolved_pipeline(const CompileOptions& options, Backend backend) {
  PipelineOptions p = options.pipeline;
  p.precision = p.resolved(backend);
  return p;
}

// The reference interpreter behind the Executable interface.
class InterpreterRuntime final : public Runtime {
 public:
  explicit InterpreterRuntime(const Module& m) : outputs_(m.output_vars()) {}
  void set(const std::string& name, const MatrixD& value) override { bindings_[name] = value; }
  void run() override { results_ = evaluate(outputs_, bindings_, Precision::node); }
  MatrixD output(std::size_t k) const override { return results_[k]; }

 private:
  std::vector<Var> outputs_;
  Bindings bindings_;
  std::vector<MatrixD> results_;
};

}  // namespace

bool register_runtime(Backend backend, RuntimeFactory factory) {
  registry()[backend] = factory;
  return true;
}

const RuntimeFactory* find_runtime(Backend backend) {
  static const bool cpu = (register_cpu_runtime(), true);
  (void)cpu;
  auto it = registry().find(backend);
  return it == registry().end() ? nullptr : &it->second;
}

std::string backend_name(Backend backend) {
  switch (backend) {
    case Backend::cpu:
      return "cpu";
    case Backend::cuda:
      return "cuda";
    case Backend::interpreter:
      return "interpreter";
  }
  return "?";
}

CompileOptions CompileOptions::from_environment() {
  CompileOptions o;
  o.pipeline = PipelineOptions::from_environment();
  if (const char* graphs = std::getenv("JETPDE_CUDA_GRAPHS"); graphs && *graphs) {
    const std::string v = graphs;
    if (v != "0" && v != "1")
      throw UserError("JETPDE_CUDA_GRAPHS: '" + v + "' is neither 0 (off) nor 1 (on)");
    o.cuda_graphs = v == "1";
  }
  return o;
}

struct Executable::Impl {
  Backend backend = Backend::cpu;
  Module module;
  std::unordered_map<std::string, Shape> leaf_shapes;  // every input and param of the source graph
  CompileStats stats;
  std::unique_ptr<Runtime> runtime;
  bool ran = false;
};

Executable::Executable(std::span<const Var> outputs, const CompileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const auto start = Clock::now();
  impl_->module = module_of(outputs);
  for (Var leaf : outputs[0].graph->inputs())
    impl_->leaf_shapes[leaf.node().attrs.name] = leaf.shape();
  for (Var leaf : outputs[0].graph->params())
    impl_->leaf_shapes[leaf.node().attrs.name] = leaf.shape();
  impl_->stats.nodes_in = outputs[0].graph->size();
  // The backend first: what precision `auto` stands for depends on it.
  impl_->backend = choose_backend(options);
  const auto optimizing = Clock::now();
  impl_->module = optimize(std::move(impl_->module), resolved_pipeline(options, impl_->backend));
  impl_->stats.nodes_optimized = impl_->module.graph->size();
  impl_->stats.optimize_seconds = seconds_since(optimizing);
  if (impl_->backend == Backend::interpreter)
    impl_->runtime = std::make_unique<InterpreterRuntime>(impl_->module);
  else
    impl_->runtime = find_runtime(impl_->backend)->make(impl_->module, options, impl_->stats);
  impl_->stats.total_seconds = seconds_since(start);
}

// The requested backend where it can run; otherwise a warning and the next one down
// (cuda -> cpu -> interpreter), or a UserError when the request is strict.
bool backend_can_run(Backend backend, const CompileOptions& options, std::string* why) {
  if (backend == Backend::interpreter) return true;
  std::string reason = "not built into this jetpde";
  const RuntimeFactory* f = find_runtime(backend);
  const bool ok = f && f->available(options, &reason);
  if (!ok && why) *why = reason;
  return ok;
}

Backend Executable::choose_backend(const CompileOptions& options) {
  Backend b = options.backend;
  while (b != Backend::interpreter) {
    std::string why = "not built into this jetpde";
    const RuntimeFactory* f = find_runtime(b);
    if (f && f->available(options, &why)) return b;
    if (options.strict)
      throw UserError("backend " + backend_name(b) + " was required but cannot run: " + why);
    const Backend next = b == Backend::cuda ? Backend::cpu : Backend::interpreter;
    std::cerr << "jetpde: warning: backend " << backend_name(b) << " cannot run (" << why
              << "); using " << (next == Backend::cpu ? "cpu" : "the reference interpreter")
              << " instead\n";
    b = next;
  }
  return b;
}

std::int64_t available_memory(Backend backend) {
  if (backend == Backend::cuda) {
    const RuntimeFactory* f = find_runtime(backend);
    return f && f->free_memory ? f->free_memory() : 0;
  }
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0)
      return static_cast<std::int64_t>(std::stod(line.substr(13)) * 1024.0);
  return static_cast<std::int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
}

Program lower_for(const Module& module, Backend backend, const CompileOptions& options,
                  int* recomputed) {
  Program program = lower(module);
  if (backend != Backend::cuda && options.cpu.native_bf16 && native_bf16_gemm_available())
    pack_bf16_gemm_operands(program);
  const int n = plan_memory_within(program, options.memory_fraction);
  if (recomputed) *recomputed = n;
  // Tiled regions on the CPU, where its sgemm runs per thread (its f64 GEMMs too where the CBLAS's
  // dgemm does). Not under a memory budget: a region keeps its buffers live through all its steps,
  // which the budget's plan did not count.
  if (backend == Backend::cpu && options.memory_fraction >= 1.0 && sgemm_runs_per_thread() &&
      find_tiled_regions(program, tile_rows(options.cpu), cblas_runs_per_thread()) > 0)
    plan_memory(program);
  if (!options.pipeline.dump_ir.empty()) dump_program(options.pipeline, program.to_text());
  return program;
}

std::int64_t tile_rows(const CpuCompileOptions& options) {
  if (options.tile_rows != 0) return options.tile_rows;
  const std::int64_t automatic = options.measure_tiles ? 0 : kPreferredTile;
  if (const char* env = std::getenv("JETPDE_TILE_ROWS"); env && *env) {
    if (std::string(env) == "auto") return automatic;
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (*end != '\0')
      throw UserError(std::string("JETPDE_TILE_ROWS: '") + env +
                      "' is neither a whole number (points per tile; 0 or less: no tiling) nor "
                      "auto");
    return v > 0 ? v : -1;
  }
  return automatic;
}

Program plan_program(std::span<const Var> outputs, const CompileOptions& options) {
  return lower_for(optimize(module_of(outputs), resolved_pipeline(options, options.backend)),
                   options.backend, options);
}

MemoryEstimate estimate_memory(std::span<const Var> outputs, const CompileOptions& options) {
  const Program program = plan_program(outputs, options);
  return {program.arena_bytes, program.peak_live_bytes};
}

Executable::~Executable() = default;
Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;

void Executable::set(const std::string& name, const MatrixD& value) {
  auto shape = impl_->leaf_shapes.find(name);
  if (shape == impl_->leaf_shapes.end())
    throw UserError("executable: the graph has no input or param named '" + name + "'");
  if (value.rows() != shape->second.rows || value.cols() != shape->second.cols)
    throw UserError("executable: '" + name + "' " + shape->second.str() +
                    " is bound to a value of shape [" + std::to_string(value.rows()) + "," +
                    std::to_string(value.cols()) + "]");
  impl_->runtime->set(name, value);
}

void Executable::set(const Bindings& values) {
  for (const auto& [name, value] : values) set(name, value);
}

void Executable::run() {
  impl_->ran = true;
  impl_->runtime->run();
}

std::vector<double> Executable::run_timed() {
  impl_->ran = true;
  return impl_->runtime->run_timed();
}

MatrixD Executable::output(std::size_t k) const {
  if (k >= num_outputs()) throw UserError("executable: no output number " + std::to_string(k));
  if (!impl_->ran) throw UserError("executable: output read before run()");
  return impl_->runtime->output(k);
}

std::size_t Executable::num_outputs() const { return impl_->module.outputs.size(); }
Backend Executable::backend() const { return impl_->backend; }
const CompileStats& Executable::stats() const { return impl_->stats; }
const Program& Executable::program() const {
  static const Program empty;
  const Program* p = impl_->runtime->program();
  return p ? *p : empty;
}

}  // namespace jetpde::compiler
