#include "compiler/executable.h"

#include <cblas.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unordered_map>

#include "autodiff/errors.h"
#include "compiler/lower.h"
#include "compiler/render_c.h"

namespace jetpde::compiler {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

using KernelFn = void (*)(char*);

template <class T>
T* address(char* arena, const Program& p, const View& v) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
  return reinterpret_cast<T*>(arena + b.offset) + v.row0 * b.shape.cols + v.col0;
}

void run_gemm(char* arena, const Program& p, const Gemm& g) {
  const Buffer& bc = p.buffers[static_cast<std::size_t>(g.c.buffer)];
  const auto lda = p.buffers[static_cast<std::size_t>(g.a.buffer)].shape.cols;
  const auto ldb = p.buffers[static_cast<std::size_t>(g.b.buffer)].shape.cols;
  const auto ldc = bc.shape.cols;
  const auto m = g.c.shape.rows, n = g.c.shape.cols;
  const auto k = g.transpose_a ? g.a.shape.rows : g.a.shape.cols;
  const auto ta = g.transpose_a ? CblasTrans : CblasNoTrans;
  const auto tb = g.transpose_b ? CblasTrans : CblasNoTrans;
  if (bc.dtype == DType::f64)
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, address<double>(arena, p, g.a), lda,
                address<double>(arena, p, g.b), ldb, 0.0, address<double>(arena, p, g.c), ldc);
  else
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, address<float>(arena, p, g.a), lda,
                address<float>(arena, p, g.b), ldb, 0.0f, address<float>(arena, p, g.c), ldc);
}

template <class T>
void copy_in(char* arena, const Buffer& b, const MatrixD& value) {
  T* dst = reinterpret_cast<T*>(arena + b.offset);
  for (Eigen::Index i = 0; i < value.size(); ++i) dst[i] = static_cast<T>(value.data()[i]);
}

template <class T>
MatrixD copy_out(const char* arena, const Program& p, const View& v) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
  const T* src = reinterpret_cast<const T*>(arena + b.offset);
  MatrixD out(v.shape.rows, v.shape.cols);
  for (Eigen::Index i = 0; i < out.rows(); ++i)
    for (Eigen::Index j = 0; j < out.cols(); ++j)
      out(i, j) = src[(v.row0 + (v.row_broadcast ? 0 : i)) * b.shape.cols + v.col0 +
                      (v.col_broadcast ? 0 : j)];
  return out;
}

}  // namespace

std::string backend_name(Backend backend) {
  return backend == Backend::cpu ? "cpu" : "interpreter";
}

CompileOptions CompileOptions::from_environment() {
  CompileOptions o;
  o.pipeline = PipelineOptions::from_environment();
  return o;
}

struct Executable::Impl {
  Backend backend = Backend::cpu;
  Module module;
  std::unordered_map<std::string, Shape> leaf_shapes;  // every input and param of the source graph
  CompileStats stats;
  // cpu
  Program program;
  std::shared_ptr<SharedObject> object;
  std::vector<KernelFn> kernels;  // by step; null for GEMMs
  char* arena = nullptr;
  std::unordered_map<std::string, int> buffer_by_name;
  // interpreter
  Bindings bindings;
  std::vector<MatrixD> results;
  bool ran = false;

  ~Impl() { std::free(arena); }

  void compile_cpu(const CompileOptions& options) {
    auto t = Clock::now();
    program = lower(module);
    plan_memory(program);
    const std::string source = render_cpu_source(program);
    stats.lower_seconds = seconds_since(t);
    const CpuBuild build = build_shared_object(source, options.cpu);
    object = build.object;
    stats.build_seconds = build.seconds;
    stats.cache_hit = build.cache_hit;
    kernels.assign(program.steps.size(), nullptr);
    for (std::size_t s = 0; s < program.steps.size(); ++s) {
      if (std::holds_alternative<Kernel>(program.steps[s].op)) {
        kernels[s] = reinterpret_cast<KernelFn>(object->symbol(kernel_symbol(s)));
        ++stats.kernels;
      } else {
        ++stats.gemms;
      }
    }
    stats.arena_bytes = program.arena_bytes;
    stats.peak_live_bytes = program.peak_live_bytes;
    arena = static_cast<char*>(std::aligned_alloc(
        64, static_cast<std::size_t>(std::max<std::int64_t>(64, program.arena_bytes))));
    if (!arena)
      throw UserError("cannot allocate the arena (" + std::to_string(program.arena_bytes) +
                      " bytes)");
    for (std::size_t b = 0; b < program.buffers.size(); ++b) {
      const Buffer& buf = program.buffers[b];
      if (buf.kind == Buffer::Kind::Constant) {
        const MatrixD data =
            Eigen::Map<const MatrixD>(buf.data.data(), buf.shape.rows, buf.shape.cols);
        if (buf.dtype == DType::f64)
          copy_in<double>(arena, buf, data);
        else
          copy_in<float>(arena, buf, data);
      }
      if (buf.kind == Buffer::Kind::Input || buf.kind == Buffer::Kind::Param)
        buffer_by_name[buf.name] = static_cast<int>(b);
    }
  }
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
  impl_->module = optimize(std::move(impl_->module), options.pipeline);
  impl_->stats.nodes_optimized = impl_->module.graph->size();
  impl_->stats.optimize_seconds = seconds_since(start);
  impl_->backend = options.backend;
  if (impl_->backend == Backend::cpu && !host_compiler_available(options.cpu)) {
    std::cerr << "jetpde: warning: no working host compiler found; running the reference "
                 "interpreter instead of compiled code\n";
    impl_->backend = Backend::interpreter;
  }
  if (impl_->backend == Backend::cpu) impl_->compile_cpu(options);
  impl_->stats.total_seconds = seconds_since(start);
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
  if (impl_->backend == Backend::interpreter) {
    impl_->bindings[name] = value;
    return;
  }
  auto it = impl_->buffer_by_name.find(name);
  if (it == impl_->buffer_by_name.end()) return;  // no output depends on it
  const Buffer& b = impl_->program.buffers[static_cast<std::size_t>(it->second)];
  if (b.dtype == DType::f64)
    copy_in<double>(impl_->arena, b, value);
  else
    copy_in<float>(impl_->arena, b, value);
}

void Executable::set(const Bindings& values) {
  for (const auto& [name, value] : values) set(name, value);
}

void Executable::run() {
  Impl& m = *impl_;
  m.ran = true;
  if (m.backend == Backend::interpreter) {
    const std::vector<Var> outs = m.module.output_vars();
    m.results = evaluate(outs, m.bindings, Precision::node);
    return;
  }
  for (std::size_t s = 0; s < m.program.steps.size(); ++s) {
    if (m.kernels[s])
      m.kernels[s](m.arena);
    else
      run_gemm(m.arena, m.program, std::get<Gemm>(m.program.steps[s].op));
  }
}

std::vector<double> Executable::run_timed() {
  Impl& m = *impl_;
  m.ran = true;
  std::vector<double> seconds;
  if (m.backend == Backend::interpreter) {
    run();
    return seconds;
  }
  for (std::size_t s = 0; s < m.program.steps.size(); ++s) {
    const auto t = Clock::now();
    if (m.kernels[s])
      m.kernels[s](m.arena);
    else
      run_gemm(m.arena, m.program, std::get<Gemm>(m.program.steps[s].op));
    seconds.push_back(seconds_since(t));
  }
  return seconds;
}

MatrixD Executable::output(std::size_t k) const {
  const Impl& m = *impl_;
  if (k >= num_outputs()) throw UserError("executable: no output number " + std::to_string(k));
  if (!m.ran) throw UserError("executable: output read before run()");
  if (m.backend == Backend::interpreter) return m.results[k];
  const View& v = m.program.outputs[k];
  if (m.program.buffers[static_cast<std::size_t>(v.buffer)].dtype == DType::f64)
    return copy_out<double>(m.arena, m.program, v);
  return copy_out<float>(m.arena, m.program, v);
}

std::size_t Executable::num_outputs() const { return impl_->module.outputs.size(); }
Backend Executable::backend() const { return impl_->backend; }
const CompileStats& Executable::stats() const { return impl_->stats; }
const Program& Executable::program() const { return impl_->program; }

}  // namespace jetpde::compiler
