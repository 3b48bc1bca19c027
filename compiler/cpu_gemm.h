// The CPU backend's single-precision GEMM: the fastest library measured on PINN shapes, chosen
// when jetpde is built (bench/gemm/README.md: oneDNN's sgemm at 1.2-2.0x OpenBLAS on stacked
// layers here; OpenBLAS where oneDNN is absent). Exactly one of cpu_gemm_onednn.cpp and
// cpu_gemm_openblas.cpp is compiled. Both run on the OpenMP thread pool the kernels use.
#pragma once

#include <cstdint>

namespace jetpde::compiler {

// Row-major c = op(a) op(b) + beta c; a, b, c with leading dimensions lda, ldb, ldc.
void sgemm_row_major(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc);

// "oneDNN 2.6.3" or "OpenBLAS 0.3.21 (OpenMP)": for reports.
const char* sgemm_library();

}  // namespace jetpde::compiler
