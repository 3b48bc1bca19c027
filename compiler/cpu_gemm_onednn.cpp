// sgemm through oneDNN (row-major, like cblas).
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "autodiff/errors.h"
#include "compiler/cpu_gemm.h"

namespace jetpde::compiler {

void sgemm_row_major(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k,
                                          1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    throw InternalError("dnnl_sgemm failed with status " + std::to_string(status));
}

const char* sgemm_library() {
  static const std::string name = [] {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  return name.c_str();
}

}  // namespace jetpde::compiler
