// sgemm through the CBLAS interface (OpenBLAS).
#include <cblas.h>

#include "autodiff/errors.h"
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

// OpenBLAS's pthread build would start its own threads under every caller: no tiled regions
// there; its OpenMP build runs on the caller alone.
bool sgemm_runs_per_thread() { return cblas_runs_per_thread(); }

// Debian's OpenBLAS exports no bf16 GEMM (built without BUILD_BFLOAT16; bench/gemm/README.md):
// bf16 policies emulate with sgemm on bf16-rounded operands.
bool native_bf16_gemm_available() { return false; }

struct Bf16Gemm::Impl {};
Bf16Gemm::Bf16Gemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                   std::int64_t, bool, int) {
  throw InternalError("Bf16Gemm without a native bf16 GEMM (built without oneDNN)");
}
Bf16Gemm::~Bf16Gemm() = default;
void Bf16Gemm::run(const std::uint16_t*, const std::uint16_t*, float*, int) {}
int Bf16Gemm::threads() const { return 0; }
const std::string& Bf16Gemm::implementation() const {
  static const std::string none = "none";
  return none;
}

}  // namespace jetpde::compiler
