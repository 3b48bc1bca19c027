// The CPU GEMMs through oneDNN: sgemm (row-major, like cblas) and the bf16 x bf16 -> f32 matmul
// primitive (its brgemm kernels use AVX512-BF16 / AMX where the CPU has them).
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "autodiff/errors.h"
#include "compiler/cpu_gemm.h"
#include "compiler/passes.h"

namespace jetpde::compiler {

void sgemm_row_major(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k,
                                          1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    throw InternalError("dnnl_sgemm failed with status " + std::to_string(status));
}

bool sgemm_runs_per_thread() {
#if defined(JETPDE_COMPILER_OPENMP)
  return true;
#else
  return false;
#endif
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

namespace jetpde::compiler {
namespace {

void dnnl_check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw InternalError(std::string("oneDNN: ") + what + " failed with status " +
                        std::to_string(status));
}

dnnl_engine_t cpu_engine() {
  static const dnnl_engine_t engine = [] {
    dnnl_engine_t e = nullptr;
    dnnl_check(dnnl_engine_create(&e, dnnl_cpu, 0), "creating the CPU engine");
    return e;
  }();
  return engine;
}

}  // namespace

struct Bf16Gemm::Impl {
  dnnl_primitive_t primitive = nullptr;
  dnnl_stream_t stream = nullptr;
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr;
  std::string implementation;
};

Bf16Gemm::Bf16Gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc)
    : impl_(std::make_unique<Impl>()) {
  // The logical operands are a [m,k], b [k,n], c [m,n]; a transposed operand is the same
  // row-major memory read with swapped strides.
  const dnnl_dims_t a_dims = {m, k}, b_dims = {k, n}, c_dims = {m, n};
  const dnnl_dims_t a_strides = {transpose_a ? 1 : lda, transpose_a ? lda : 1};
  const dnnl_dims_t b_strides = {transpose_b ? 1 : ldb, transpose_b ? ldb : 1};
  const dnnl_dims_t c_strides = {ldc, 1};
  dnnl_memory_desc_t a_md, b_md, c_md;
  dnnl_check(dnnl_memory_desc_init_by_strides(&a_md, 2, a_dims, dnnl_bf16, a_strides), "a desc");
  dnnl_check(dnnl_memory_desc_init_by_strides(&b_md, 2, b_dims, dnnl_bf16, b_strides), "b desc");
  dnnl_check(dnnl_memory_desc_init_by_strides(&c_md, 2, c_dims, dnnl_f32, c_strides), "c desc");
  dnnl_matmul_desc_t desc;
  dnnl_check(dnnl_matmul_desc_init(&desc, &a_md, &b_md, nullptr, &c_md), "matmul desc");
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_check(dnnl_primitive_desc_create(&pd, &desc, nullptr, cpu_engine(), nullptr),
             "matmul primitive desc");
  const char* name = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success && name)
    impl_->implementation = name;
  const dnnl_status_t created = dnnl_primitive_create(&impl_->primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  dnnl_check(created, "matmul primitive");
  dnnl_check(dnnl_stream_create(&impl_->stream, cpu_engine(), dnnl_stream_default_flags), "stream");
  dnnl_check(dnnl_memory_create(&impl_->a, &a_md, cpu_engine(), DNNL_MEMORY_NONE), "a memory");
  dnnl_check(dnnl_memory_create(&impl_->b, &b_md, cpu_engine(), DNNL_MEMORY_NONE), "b memory");
  dnnl_check(dnnl_memory_create(&impl_->c, &c_md, cpu_engine(), DNNL_MEMORY_NONE), "c memory");
}

Bf16Gemm::~Bf16Gemm() {
  if (!impl_) return;
  for (dnnl_memory_t m : {impl_->a, impl_->b, impl_->c})
    if (m) dnnl_memory_destroy(m);
  if (impl_->stream) dnnl_stream_destroy(impl_->stream);
  if (impl_->primitive) dnnl_primitive_destroy(impl_->primitive);
}

void Bf16Gemm::run(const std::uint16_t* a, const std::uint16_t* b, float* c) {
  dnnl_check(dnnl_memory_set_data_handle(impl_->a, const_cast<std::uint16_t*>(a)), "binding a");
  dnnl_check(dnnl_memory_set_data_handle(impl_->b, const_cast<std::uint16_t*>(b)), "binding b");
  dnnl_check(dnnl_memory_set_data_handle(impl_->c, c), "binding c");
  const dnnl_exec_arg_t args[] = {
      {DNNL_ARG_SRC, impl_->a}, {DNNL_ARG_WEIGHTS, impl_->b}, {DNNL_ARG_DST, impl_->c}};
  dnnl_check(dnnl_primitive_execute(impl_->primitive, impl_->stream, 3, args), "matmul");
  dnnl_check(dnnl_stream_wait(impl_->stream), "waiting for the matmul");
}

const std::string& Bf16Gemm::implementation() const { return impl_->implementation; }

bool native_bf16_gemm_available() {
  // The instructions, and oneDNN choosing its bf16 kernels for them (not the reference code).
  static const bool available = [] {
    if (!cpu_has_bf16_instructions()) return false;
    const Bf16Gemm probe(false, false, 256, 64, 64, 64, 64, 64);
    return probe.implementation().rfind("ref", 0) != 0;
  }();
  return available;
}

}  // namespace jetpde::compiler
