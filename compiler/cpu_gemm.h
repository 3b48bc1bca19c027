// The CPU backend's single-precision GEMM: the fastest library measured on PINN shapes, chosen
// when jetpde is built (bench/gemm/README.md: oneDNN's sgemm at 1.2-2.0x OpenBLAS on stacked
// layers here; OpenBLAS where oneDNN is absent). Exactly one of cpu_gemm_onednn.cpp and
// cpu_gemm_openblas.cpp is compiled. Both run on the OpenMP thread pool the kernels use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace jetpde::compiler {

// Row-major c = op(a) op(b) + beta c; a, b, c with leading dimensions lda, ldb, ldc.
void sgemm_row_major(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc);

// "oneDNN 2.6.3" or "OpenBLAS 0.3.21 (OpenMP)": for reports.
const char* sgemm_library();

// Whether sgemm_row_major may be called from every thread of an OpenMP team at once, each call
// running on its caller alone (oneDNN's does, inside a parallel region; OpenBLAS's pthread build
// would start threads of its own), and jetpde was built with OpenMP: the CPU runtime's tiled
// regions need both (program.h, TiledRegion).
bool sgemm_runs_per_thread();

// Whether the CBLAS jetpde links (its f64 GEMMs; its f32 ones too where built without oneDNN) may
// be called from every thread of an OpenMP team at once, each call running on its caller alone:
// OpenBLAS's OpenMP build (openblas_get_parallel() == 2 runs one thread inside a parallel
// region), with jetpde built with OpenMP. Other builds and libraries: false.
bool cblas_runs_per_thread();

// A bf16 x bf16 -> f32 GEMM with 16-bit instructions: oneDNN's matmul, where jetpde was built
// with oneDNN and the CPU has AVX512-BF16 or AMX-BF16 (its implementation then multiplies bf16
// pairs with dot-product instructions and accumulates in f32). Operands are raw bf16 bit patterns.
bool native_bf16_gemm_available();

// One GEMM of fixed shape and strides, c = op(a) op(b) (c += op(a) op(b) where `accumulate`),
// row-major, leading dimensions as in sgemm_row_major, set up once (a oneDNN primitive) and run
// many times on any pointers. With `threads` = 0 it runs on the calling thread's pool (one caller
// at a time); with `threads` > 0, threads 0 .. threads-1 of an OpenMP team may each run it at once
// on their own operands (run(a, b, c, thread): each has its own scratchpad and memory objects, and
// oneDNN runs a primitive called inside a parallel region on its caller alone), as the CPU
// runtime's tiled regions do. Construct only where native_bf16_gemm_available().
class Bf16Gemm {
 public:
  Bf16Gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
           std::int64_t lda, std::int64_t ldb, std::int64_t ldc, bool accumulate = false,
           int threads = 0);
  ~Bf16Gemm();
  Bf16Gemm(const Bf16Gemm&) = delete;
  Bf16Gemm& operator=(const Bf16Gemm&) = delete;
  void run(const std::uint16_t* a, const std::uint16_t* b, float* c, int thread = 0);
  int threads() const;                        // as constructed
  const std::string& implementation() const;  // the library's name for the code it runs

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jetpde::compiler
