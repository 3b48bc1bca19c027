// A host emulation of the CUDA backend, so that the generated kernels' indexing, grid-stride
// loops, block sums and partial-sum layout are tested where there is no GPU.
//
// The renderer's `kernels` text (everything but the CUDA-only prelude) is compiled by the host
// compiler together with a shim that defines CUDA's built-in names: thread and block indices are
// globals, `__shared__` variables are statics (one block runs at a time), and each thread of a
// block that synchronizes runs as a ucontext coroutine that yields to a scheduler at
// __syncthreads (round robin, so every thread reaches a barrier before any passes it). GEMMs run
// through the same column-major operands cuBLAS gets (column_major_gemm), by plain loops.
//
// What it cannot check: the CUDA API calls, NVRTC's code generation, the GPU's math functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "compiler/cpu_compiler.h"
#include "compiler/cuda/render_cuda.h"
#include "compiler/program.h"
#include "compiler/render_c.h"

namespace jetpde::cudatest {

inline constexpr const char* kEmulatorShimHead =
    R"(// Host emulation of the CUDA built-ins the kernels use.
#include <cmath>
#include <cstring>
#include <vector>
#include <ucontext.h>
)";

inline constexpr const char* kEmulatorShim = R"(struct jp_dim3 { unsigned x, y, z; };
static jp_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define __shared__ static
static inline unsigned __float_as_uint(float x) { unsigned u; std::memcpy(&u, &x, 4); return u; }
static inline float __uint_as_float(unsigned u) { float x; std::memcpy(&x, &u, 4); return x; }
static inline float jp_f16(float x) { return (float)(_Float16)x; }
namespace jp_emulator {
struct Thread { ucontext_t context; jp_dim3 index; bool done; };
static ucontext_t scheduler;
static Thread* current = nullptr;
static void (*kernel)(char*) = nullptr;
static char* arena = nullptr;
static void entry() { kernel(arena); current->done = true; }
}
static void __syncthreads() {
  swapcontext(&jp_emulator::current->context, &jp_emulator::scheduler);
}
extern "C" void jp_emulate(void (*k)(char*), char* arena, unsigned gx, unsigned gy, unsigned bx,
                           unsigned by, int barriers) {
  using namespace jp_emulator;
  kernel = k; jp_emulator::arena = arena;
  gridDim = {gx, gy, 1}; blockDim = {bx, by, 1};
  const unsigned n = bx * by;
  static std::vector<Thread> threads;
  static std::vector<std::vector<char>> stacks;
  if (barriers && threads.size() < n) {
    threads.resize(n);
    stacks.resize(n);
    for (auto& s : stacks) s.resize(1 << 18);
  }
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x) {
      blockIdx = {x, y, 0};
      if (!barriers) {
        for (unsigned t = 0; t < n; ++t) { threadIdx = {t % bx, t / bx, 0}; k(arena); }
        continue;
      }
      for (unsigned t = 0; t < n; ++t) {
        Thread& th = threads[t];
        th.index = {t % bx, t / bx, 0};
        th.done = false;
        getcontext(&th.context);
        th.context.uc_stack.ss_sp = stacks[t].data();
        th.context.uc_stack.ss_size = stacks[t].size();
        th.context.uc_link = &scheduler;
        makecontext(&th.context, entry, 0);
      }
      for (bool running = true; running;) {
        running = false;
        for (unsigned t = 0; t < n; ++t) {
          if (threads[t].done) continue;
          running = true;
          current = &threads[t];
          threadIdx = threads[t].index;
          swapcontext(&scheduler, &threads[t].context);
        }
      }
    }
}
)";

// One program on the emulated device: an arena of the renderer's device bytes in host memory.
class EmulatedDevice {
 public:
  EmulatedDevice(compiler::Program program, const compiler::CudaRenderOptions& render,
                 const std::string& cache_dir)
      : p_(std::move(program)), source_(compiler::render_cuda_source(p_, render)) {
    object_ = compiler::build_shared_object(std::string(kEmulatorShimHead) +
                                                compiler::c_math_using_lines() + kEmulatorShim +
                                                source_.kernels,
                                            {cache_dir, {}})
                  .object;
    launch_ = reinterpret_cast<Launcher>(object_->symbol("jp_emulate"));
    arena_.assign(static_cast<std::size_t>(source_.device_bytes()) + 64, 0);
    // NaN in the scratch: a partial sum read before it is written shows.
    auto* scratch = reinterpret_cast<double*>(arena_.data() + source_.scratch_offset);
    for (std::int64_t i = 0; i < source_.scratch_bytes / 8; ++i) scratch[i] = NAN;
    for (const compiler::Buffer& b : p_.buffers) {
      if (b.kind == compiler::Buffer::Kind::Constant) store(b, b.data.data());
    }
  }

  void set(const Bindings& values) {
    for (const compiler::Buffer& b : p_.buffers) {
      if (b.kind != compiler::Buffer::Kind::Input && b.kind != compiler::Buffer::Kind::Param)
        continue;
      auto it = values.find(b.name);
      check_internal(it != values.end(), "emulator: no value for " + b.name);
      store(b, it->second.data());
    }
  }

  void run() {
    for (std::size_t s = 0; s < p_.steps.size(); ++s) {
      if (const auto* g = std::get_if<compiler::Gemm>(&p_.steps[s].op)) {
        gemm(compiler::column_major_gemm(p_, *g));
        continue;
      }
      for (const compiler::CudaLaunch& l : source_.steps[s]->launches)
        launch_(reinterpret_cast<void (*)(char*)>(object_->symbol(l.symbol)), arena_.data(),
                l.grid[0], l.grid[1], l.block[0], l.block[1], l.barriers ? 1 : 0);
    }
  }

  MatrixD output(std::size_t k) const {
    const compiler::View& v = p_.outputs[k];
    const compiler::Buffer& b = p_.buffers[static_cast<std::size_t>(v.buffer)];
    MatrixD out(v.shape.rows, v.shape.cols);
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j)
        out(i, j) = load(b, (v.row0 + (v.row_broadcast ? 0 : i)) * b.shape.cols + v.col0 +
                                (v.col_broadcast ? 0 : j));
    return out;
  }

  const compiler::CudaSource& source() const { return source_; }
  const compiler::Program& program() const { return p_; }
  // What TF32 tensor cores do to a GEMM's f32 operands (rounded to 10 mantissa bits, nearest,
  // ties to even): on the GEMMs cuBLAS gets FAST_TF32 for (ColumnMajorGemm::tensor_cores), or on
  // every f32 GEMM. Off by default.
  enum class Tf32 { off, tensor_core_gemms, every_f32_gemm };
  Tf32 tf32 = Tf32::off;

 private:
  using Launcher = void (*)(void (*)(char*), char*, unsigned, unsigned, unsigned, unsigned, int);

  double load(const compiler::Buffer& b, std::int64_t at) const {
    if (b.dtype == DType::f64) return reinterpret_cast<const double*>(arena_.data() + b.offset)[at];
    return reinterpret_cast<const float*>(arena_.data() + b.offset)[at];
  }

  void store(const compiler::Buffer& b, const double* values) {
    for (std::int64_t i = 0; i < b.shape.size(); ++i) {
      if (b.dtype == DType::f64)
        reinterpret_cast<double*>(arena_.data() + b.offset)[i] = values[i];
      else
        reinterpret_cast<float*>(arena_.data() + b.offset)[i] = static_cast<float>(values[i]);
    }
  }

  // What cuBLAS computes from these arguments: column-major C = op(first) op(second).
  static float to_tf32(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    bits += 0xFFFu + ((bits >> 13) & 1u);
    bits &= ~0x1FFFu;
    std::memcpy(&x, &bits, 4);
    return x;
  }

  template <class T>
  void gemm_as(const compiler::ColumnMajorGemm& g) {
    const T* first = reinterpret_cast<const T*>(arena_.data() + g.first);
    const T* second = reinterpret_cast<const T*>(arena_.data() + g.second);
    T* c = reinterpret_cast<T*>(arena_.data() + g.c);
    bool round = false;
    if constexpr (std::is_same_v<T, float>)
      round = tf32 == Tf32::every_f32_gemm || (tf32 == Tf32::tensor_core_gemms && g.tensor_cores);
    const auto value = [&](T v) {
      if constexpr (std::is_same_v<T, float>)
        if (round) return double(to_tf32(v));
      return double(v);
    };
    for (int col = 0; col < g.n; ++col)
      for (int row = 0; row < g.m; ++row) {
        double sum = 0;
        for (int q = 0; q < g.k; ++q)
          sum +=
              value(g.transpose_first ? first[q + row * g.ld_first] : first[row + q * g.ld_first]) *
              value(g.transpose_second ? second[col + q * g.ld_second]
                                       : second[q + col * g.ld_second]);
        c[row + col * g.ldc] = static_cast<T>(sum);
      }
  }

  void gemm(const compiler::ColumnMajorGemm& g) {
    if (g.f64)
      gemm_as<double>(g);
    else
      gemm_as<float>(g);
  }

  compiler::Program p_;
  compiler::CudaSource source_;
  std::shared_ptr<compiler::SharedObject> object_;
  Launcher launch_ = nullptr;
  std::vector<char> arena_;
};

}  // namespace jetpde::cudatest
