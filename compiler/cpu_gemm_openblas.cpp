// sgemm through the CBLAS interface (OpenBLAS).
#include <cblas.h>

#include "compiler/cpu_gemm.h"

namespace jetpde::compiler {

void sgemm_row_major(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

const char* sgemm_library() { return "CBLAS (OpenBLAS)"; }

}  // namespace jetpde::compiler
