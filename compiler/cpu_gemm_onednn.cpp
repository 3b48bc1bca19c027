// The CPU GEMMs through oneDNN: sgemm (row-major, like cblas) and the bf16 x bf16 -> f32 matmul
// primitive (its brgemm kernels use AVX512-BF16 / AMX where the CPU has them).
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

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

// What one caller of a Bf16Gemm binds its pointers to: memory objects whose handles it sets, a
// stream, and (where the Bf16Gemm runs per thread) its own scratchpad.
struct Bf16Context {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  dnnl_stream_t stream = nullptr;
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr, scratchpad = nullptr;
  std::unique_ptr<char, Free> scratch;  // 64-byte aligned, as oneDNN's own buffers are
};

struct Bf16Gemm::Impl {
  dnnl_primitive_t primitive = nullptr;
  std::vector<Bf16Context> contexts;  // one, or one per thread
  bool per_thread = false;
  std::string implementation;
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {  // also where the constructor throws half way
    for (Bf16Context& x : contexts) {
      for (dnnl_memory_t m : {x.a, x.b, x.c, x.scratchpad})
        if (m) dnnl_memory_destroy(m);
      if (x.stream) dnnl_stream_destroy(x.stream);
    }
    if (primitive) dnnl_primitive_destroy(primitive);
  }
};

Bf16Gemm::Bf16Gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                   bool accumulate, int threads)
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
  // c += a b: a sum post-op. Per thread: the user's scratchpads (the library's one is shared by
  // every primitive and must not be used by two threads at once).
  impl_->per_thread = threads > 0;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_check(dnnl_primitive_attr_create(&attr), "matmul attributes");
  dnnl_post_ops_t post_ops = nullptr;
  dnnl_status_t status = dnnl_success;
  if (impl_->per_thread)
    status = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (status == dnnl_success && accumulate) {
    status = dnnl_post_ops_create(&post_ops);
    if (status == dnnl_success) status = dnnl_post_ops_append_sum(post_ops, 1.0f);
    if (status == dnnl_success) status = dnnl_primitive_attr_set_post_ops(attr, post_ops);
  }
  dnnl_primitive_desc_t pd = nullptr;
  if (status == dnnl_success)
    status = dnnl_primitive_desc_create(&pd, &desc, attr, cpu_engine(), nullptr);
  if (post_ops) dnnl_post_ops_destroy(post_ops);
  dnnl_primitive_attr_destroy(attr);
  dnnl_check(status, "matmul primitive desc");
  const char* name = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success && name)
    impl_->implementation = name;
  // (A copy: the descriptor goes with the primitive descriptor.)
  dnnl_memory_desc_t scratch_md{};
  if (const dnnl_memory_desc_t* md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0))
    scratch_md = *md;
  const std::size_t scratch_bytes = impl_->per_thread ? dnnl_memory_desc_get_size(&scratch_md) : 0;
  const dnnl_status_t created = dnnl_primitive_create(&impl_->primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  dnnl_check(created, "matmul primitive");
  impl_->contexts.resize(static_cast<std::size_t>(std::max(threads, 1)));
  for (Bf16Context& x : impl_->contexts) {
    dnnl_check(dnnl_stream_create(&x.stream, cpu_engine(), dnnl_stream_default_flags), "stream");
    dnnl_check(dnnl_memory_create(&x.a, &a_md, cpu_engine(), DNNL_MEMORY_NONE), "a memory");
    dnnl_check(dnnl_memory_create(&x.b, &b_md, cpu_engine(), DNNL_MEMORY_NONE), "b memory");
    dnnl_check(dnnl_memory_create(&x.c, &c_md, cpu_engine(), DNNL_MEMORY_NONE), "c memory");
    if (scratch_bytes > 0) {
      x.scratch.reset(static_cast<char*>(std::aligned_alloc(64, (scratch_bytes + 63) / 64 * 64)));
      if (!x.scratch) throw InternalError("cannot allocate a bf16 GEMM's scratchpad");
      dnnl_check(dnnl_memory_create(&x.scratchpad, &scratch_md, cpu_engine(), x.scratch.get()),
                 "scratchpad memory");
    }
  }
}

Bf16Gemm::~Bf16Gemm() = default;

void Bf16Gemm::run(const std::uint16_t* a, const std::uint16_t* b, float* c, int thread) {
  Bf16Context& x = impl_->contexts[static_cast<std::size_t>(thread)];
  dnnl_check(dnnl_memory_set_data_handle(x.a, const_cast<std::uint16_t*>(a)), "binding a");
  dnnl_check(dnnl_memory_set_data_handle(x.b, const_cast<std::uint16_t*>(b)), "binding b");
  dnnl_check(dnnl_memory_set_data_handle(x.c, c), "binding c");
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, x.a},
                                  {DNNL_ARG_WEIGHTS, x.b},
                                  {DNNL_ARG_DST, x.c},
                                  {DNNL_ARG_SCRATCHPAD, x.scratchpad}};
  dnnl_check(dnnl_primitive_execute(impl_->primitive, x.stream, x.scratchpad ? 4 : 3, args),
             "matmul");
  dnnl_check(dnnl_stream_wait(x.stream), "waiting for the matmul");
}

int Bf16Gemm::threads() const {
  return impl_->per_thread ? static_cast<int>(impl_->contexts.size()) : 0;
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
