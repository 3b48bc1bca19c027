// The CUDA backend's runtime (docs/design.md section 7): one device allocation holding the arena
// and the renderer's scratch, kernels compiled by NVRTC and loaded through the CUDA runtime's
// library API (cudaLibraryLoadData, so that nothing links libcuda.so and a program starts where no
// driver is installed), GEMMs by cuBLAS, every step in order on one stream. The PTX is for the
// device's own compute capability (the driver compiles it at load) and is cached where the CPU
// backend caches (CompileOptions::cpu.cache_dir). run() returns when the device is done; errors
// from the CUDA runtime or cuBLAS are UserErrors naming the call.
//
// GEMMs whose operands both hold bf16 or f16 values (the 16-bit policies; stored as f32) run on
// TF32 tensor cores (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32), which multiply such values
// exactly and accumulate in f32 (ColumnMajorGemm::tensor_cores); every other f32 GEMM is a plain
// SGEMM, tensor cores off, so fp32 stays fp32.
//
// CUDA Graphs (CompileOptions::cuda_graphs, JETPDE_CUDA_GRAPHS=0 turns them off): a step's
// launches never change (one argument, the arena, and fixed offsets into it), so from the second
// run() on the whole program is one graph, captured from the stream once and launched as one call;
// the first run goes step by step and lets cuBLAS settle (its handles' first calls allocate).
// set() uploads on the same stream before the launch, so a graph reads the values bound last. Where
// capturing fails, a warning says why and every later run goes step by step. run_timed() always
// goes step by step: it times each step between events.
//
// It registers itself for Backend::cuda from a static initializer; the library is linked whole
// (jetpde::compiler_backends) so that the linker keeps it although nothing names it.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <unordered_map>

#include "autodiff/errors.h"
#include "compiler/cpu_compiler.h"
#include "compiler/cuda/nvrtc.h"
#include "compiler/cuda/render_cuda.h"
#include "compiler/lower.h"
#include "compiler/runtime.h"

namespace jetpde::compiler {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw UserError("CUDA: " + what + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw UserError("cuBLAS: " + what + ": " + cublasGetStatusString(s));
}

// The device's architecture as an NVRTC target: compute_XY for its compute capability, or the
// newest one NVRTC knows below it.
std::string device_architecture() {
  int device = 0, major = 0, minor = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
        "compute capability");
  const int wanted = major * 10 + minor;
  int best = 0;
  for (int a : nvrtc_architectures())
    if (a <= wanted) best = std::max(best, a);
  if (best == 0)
    throw UserError("NVRTC " + nvrtc_version() +
                    " cannot compile for this GPU (compute capability " + std::to_string(major) +
                    "." + std::to_string(minor) + ")");
  return "compute_" + std::to_string(best);
}

struct Launch {
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
};

class CudaRuntime final : public Runtime {
 public:
  CudaRuntime(const Module& module, const CompileOptions& options, CompileStats& stats)
      : graphs_(options.cuda_graphs) {
    const auto t = Clock::now();
    program_ = lower_for(module, Backend::cuda, options, &stats.recomputed);
    const CudaSource source = render_cuda_source(program_);
    stats.lower_seconds = seconds_since(t);
    const auto build_start = Clock::now();
    const CudaBinary binary =
        compile_cuda(source.source, {device_architecture(), options.cpu.cache_dir});
    stats.cache_hit = binary.cache_hit;
    try {
      load(source, binary);
      allocate(source.device_bytes());
    } catch (...) {
      release();
      throw;
    }
    stats.build_seconds = seconds_since(build_start);
    for (const Step& s : program_.steps)
      ++(std::holds_alternative<Kernel>(s.op) ? stats.kernels : stats.gemms);
    stats.arena_bytes = source.device_bytes();
    stats.peak_live_bytes = program_.peak_live_bytes;
  }
  ~CudaRuntime() override { release(); }

  void set(const std::string& name, const MatrixD& value) override {
    auto it = buffer_by_name_.find(name);
    if (it == buffer_by_name_.end()) return;  // no output depends on it
    upload(program_.buffers[static_cast<std::size_t>(it->second)], value.data());
  }

  void run() override {
    if (graphs_ && runs_ > 0 && !graph_) capture();
    ++runs_;
    if (graph_) {
      check(cudaGraphLaunch(graph_, stream_), "launching the step's CUDA graph");
    } else {
      for (std::size_t s = 0; s < program_.steps.size(); ++s) step(s);
    }
    check(cudaStreamSynchronize(stream_), "running the program");
  }

  std::vector<double> run_timed() override {
    std::vector<cudaEvent_t> events(program_.steps.size() + 1);
    try {
      for (auto& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
      for (std::size_t s = 0; s < program_.steps.size(); ++s) {
        check(cudaEventRecord(events[s], stream_), "cudaEventRecord");
        step(s);
      }
      check(cudaEventRecord(events.back(), stream_), "cudaEventRecord");
      check(cudaStreamSynchronize(stream_), "running the program");
      std::vector<double> seconds;
      for (std::size_t s = 0; s < program_.steps.size(); ++s) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, events[s], events[s + 1]), "cudaEventElapsedTime");
        seconds.push_back(ms * 1e-3);
      }
      for (auto& e : events) cudaEventDestroy(e);
      return seconds;
    } catch (...) {
      for (auto& e : events)
        if (e) cudaEventDestroy(e);
      throw;
    }
  }

  MatrixD output(std::size_t k) const override {
    const View& v = program_.outputs[k];
    const Buffer& b = program_.buffers[static_cast<std::size_t>(v.buffer)];
    const MatrixD all = download(b);
    MatrixD out(v.shape.rows, v.shape.cols);
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j)
        out(i, j) = all(v.row0 + (v.row_broadcast ? 0 : i), v.col0 + (v.col_broadcast ? 0 : j));
    return out;
  }

  const Program* program() const override { return &program_; }

 private:
  void load(const CudaSource& source, const CudaBinary& binary) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaLibraryLoadData(&library_, binary.image.c_str(), nullptr, nullptr, 0, nullptr,
                              nullptr, 0),
          "loading the compiled kernels");
    launches_.resize(program_.steps.size());
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      if (!source.steps[s]) continue;
      for (const CudaLaunch& l : source.steps[s]->launches) {
        Launch launch;
        check(cudaLibraryGetKernel(&launch.kernel, library_, l.symbol.c_str()),
              "finding kernel " + l.symbol);
        launch.grid = dim3(l.grid[0], l.grid[1]);
        launch.block = dim3(l.block[0], l.block[1]);
        launches_[s].push_back(launch);
      }
    }
    check(cublasCreate(&cublas_), "cublasCreate");
    check(cublasSetStream(cublas_, stream_), "cublasSetStream");
  }

  void allocate(std::int64_t bytes) {
    check(cudaMalloc(reinterpret_cast<void**>(&arena_),
                     static_cast<std::size_t>(std::max<std::int64_t>(bytes, 256))),
          "allocating the arena (" + std::to_string(bytes) + " bytes)");
    for (std::size_t b = 0; b < program_.buffers.size(); ++b) {
      const Buffer& buf = program_.buffers[b];
      if (buf.kind == Buffer::Kind::Constant) upload(buf, buf.data.data());
      if (buf.kind == Buffer::Kind::Input || buf.kind == Buffer::Kind::Param)
        buffer_by_name_[buf.name] = static_cast<int>(b);
    }
    check(cudaStreamSynchronize(stream_), "uploading constants");
  }

  // Records every step's launches and GEMMs into one graph (graph_). On failure: a warning, and
  // graphs_ off for good, the stream out of capture mode and the error cleared.
  void capture() {
    std::string failed;
    cudaGraph_t graph = nullptr;
    if (const cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
        e != cudaSuccess) {
      failed = std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(e);
    } else {
      try {
        for (std::size_t s = 0; s < program_.steps.size(); ++s) step(s);
      } catch (const UserError& e) {
        failed = e.what();
      }
      const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
      if (failed.empty() && end != cudaSuccess)
        failed = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
    }
    if (failed.empty())
      if (const cudaError_t e = cudaGraphInstantiate(&graph_, graph, 0); e != cudaSuccess) {
        failed = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
        graph_ = nullptr;
      }
    if (graph) cudaGraphDestroy(graph);
    if (failed.empty()) return;
    cudaGetLastError();
    graphs_ = false;
    std::cerr << "jetpde: warning: the step's CUDA graph could not be built (" << failed
              << "); launching it step by step\n";
  }

  void release() noexcept {
    if (graph_) cudaGraphExecDestroy(graph_);
    graph_ = nullptr;
    if (arena_) cudaFree(arena_);
    if (cublas_) cublasDestroy(cublas_);
    if (library_) cudaLibraryUnload(library_);
    if (stream_) cudaStreamDestroy(stream_);
    arena_ = nullptr;
    cublas_ = nullptr;
    library_ = nullptr;
    stream_ = nullptr;
  }

  // Copies a buffer's values (row-major doubles) into the arena in its storage type. The copy
  // is from pageable memory, so cudaMemcpyAsync returns once `staged` may be freed.
  void upload(const Buffer& b, const double* values) {
    const auto n = static_cast<std::size_t>(b.shape.size());
    if (b.dtype == DType::f64) {
      check(cudaMemcpyAsync(arena_ + b.offset, values, n * sizeof(double), cudaMemcpyHostToDevice,
                            stream_),
            "uploading " + (b.name.empty() ? std::string("a constant") : "'" + b.name + "'"));
      return;
    }
    std::vector<float> staged(values, values + n);
    check(cudaMemcpyAsync(arena_ + b.offset, staged.data(), n * sizeof(float),
                          cudaMemcpyHostToDevice, stream_),
          "uploading " + (b.name.empty() ? std::string("a constant") : "'" + b.name + "'"));
  }

  MatrixD download(const Buffer& b) const {
    MatrixD out(b.shape.rows, b.shape.cols);
    const auto n = static_cast<std::size_t>(b.shape.size());
    if (b.dtype == DType::f64) {
      check(cudaMemcpyAsync(out.data(), arena_ + b.offset, n * sizeof(double),
                            cudaMemcpyDeviceToHost, stream_),
            "reading an output");
      check(cudaStreamSynchronize(stream_), "reading an output");
      return out;
    }
    std::vector<float> staged(n);
    check(cudaMemcpyAsync(staged.data(), arena_ + b.offset, n * sizeof(float),
                          cudaMemcpyDeviceToHost, stream_),
          "reading an output");
    check(cudaStreamSynchronize(stream_), "reading an output");
    std::copy(staged.begin(), staged.end(), out.data());
    return out;
  }

  void step(std::size_t s) {
    if (const auto* g = std::get_if<Gemm>(&program_.steps[s].op)) return gemm(*g);
    void* args[] = {&arena_};
    for (const Launch& l : launches_[s])
      check(cudaLaunchKernel(reinterpret_cast<const void*>(l.kernel), l.grid, l.block, args, 0,
                             stream_),
            "launching step " + std::to_string(s));
  }

  void gemm(const Gemm& g) {
    const ColumnMajorGemm cm = column_major_gemm(program_, g);
    const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
    if (cm.f64) {
      const double one = 1.0, zero = 0.0;
      check(cublasDgemm(cublas_, op(cm.transpose_first), op(cm.transpose_second), cm.m, cm.n, cm.k,
                        &one, reinterpret_cast<const double*>(arena_ + cm.first), cm.ld_first,
                        reinterpret_cast<const double*>(arena_ + cm.second), cm.ld_second, &zero,
                        reinterpret_cast<double*>(arena_ + cm.c), cm.ldc),
            "cublasDgemm");
    } else if (cm.tensor_cores) {
      const float one = 1.0f, zero = 0.0f;
      check(cublasGemmEx(cublas_, op(cm.transpose_first), op(cm.transpose_second), cm.m, cm.n, cm.k,
                         &one, arena_ + cm.first, CUDA_R_32F, cm.ld_first, arena_ + cm.second,
                         CUDA_R_32F, cm.ld_second, &zero, arena_ + cm.c, CUDA_R_32F, cm.ldc,
                         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx (16-bit operands on TF32 tensor cores)");
    } else {
      const float one = 1.0f, zero = 0.0f;
      check(cublasSgemm(cublas_, op(cm.transpose_first), op(cm.transpose_second), cm.m, cm.n, cm.k,
                        &one, reinterpret_cast<const float*>(arena_ + cm.first), cm.ld_first,
                        reinterpret_cast<const float*>(arena_ + cm.second), cm.ld_second, &zero,
                        reinterpret_cast<float*>(arena_ + cm.c), cm.ldc),
            "cublasSgemm");
    }
  }

  Program program_;
  std::vector<std::vector<Launch>> launches_;  // by step; empty for GEMMs
  std::unordered_map<std::string, int> buffer_by_name_;
  cudaStream_t stream_ = nullptr;
  cudaLibrary_t library_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  char* arena_ = nullptr;  // device memory: arena, then scratch
  bool graphs_ = true;     // CompileOptions::cuda_graphs, until a capture fails
  long runs_ = 0;
  cudaGraphExec_t graph_ = nullptr;  // the whole program, from the second run on
};

// Whether a CUDA device can run here, asked once: without a driver (or with one older than the
// runtime), cudaGetDeviceCount fails, and that means no device.
// The current device's free memory (cudaMemGetInfo); 0 when it cannot say.
std::int64_t cuda_free_memory() {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<std::int64_t>(free);
}

bool cuda_available(const CompileOptions&, std::string* why) {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      cudaGetLastError();  // clears the error
      return "no CUDA device: " + std::string(cudaGetErrorString(e));
    }
    if (count < 1) return std::string("no CUDA device: the CUDA runtime found none");
    return std::string();
  }();
  if (reason.empty()) return true;
  *why = reason;
  return false;
}

std::unique_ptr<Runtime> make_cuda(const Module& m, const CompileOptions& o, CompileStats& s) {
  return std::make_unique<CudaRuntime>(m, o, s);
}

[[maybe_unused]] const bool registered =
    register_runtime(Backend::cuda, {cuda_available, make_cuda, cuda_free_memory});

}  // namespace
}  // namespace jetpde::compiler
