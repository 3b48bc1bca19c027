// Mixed precision (docs/design.md section 8): gives every node a dtype by the policy and inserts
// casts.
//
//   fp64  every leaf in f64: the oracle.
//   fp32  every leaf in f32: the default.
//   bf16  GEMM operands rounded to bf16; products accumulate in f32 and everything else —
//         derivative streams, residuals, the loss, master weights — stays f32.
//   fp16  as bf16 with f16 operands, each scaled first: f16 overflows at 65504, and Taylor streams
//         of order k grow like k!, cotangents shrink with the loss. Every operand is multiplied
//         by 1 / rms(operand) before the cast and the product divided by both factors, so the
//         scaling is per stream (the pass runs before GEMM stacking, one operand per stream) and
//         per step (recomputed from the values every time), which covers loss scaling too.
//   auto  bf16 where the CPU runtime multiplies bf16 natively (oneDNN on AVX512-BF16 or AMX:
//         native_bf16_gemm_available()), else fp32. In training the trainer checks it against
//         fp32 and falls back to fp32 when they drift (solvers/trainer.h, PrecisionCheck). (The
//         CUDA runtime still emulates bf16 GEMMs with f32 cuBLAS calls on rounded operands.)
// Explicit casts in the user's graph are kept.
#include <array>
#include <fstream>

#include "autodiff/ops.h"
#include "autodiff/options.h"
#include "compiler/cpu_gemm.h"
#include "compiler/passes.h"

namespace jetpde::compiler {
namespace {

DType base_dtype(PrecisionPolicy p) { return p == PrecisionPolicy::fp64 ? DType::f64 : DType::f32; }

Var narrow(Var x, DType to, bool scaled, Var* factor) {
  if (!scaled) return cast(x, to);
  // 1 / rms(x), with a floor so that an all-zero operand stays zero.
  *factor = 1.0 / (sqrt(mean_all(square(x))) + 1e-30);
  return cast(x * *factor, to);
}

}  // namespace

bool cpu_has_bf16_instructions() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" avx512_bf16") != std::string::npos ||
             line.find(" amx_bf16") != std::string::npos;
  return false;
}

PrecisionPolicy resolve_auto(PrecisionPolicy p) {
  if (p != PrecisionPolicy::automatic) return p;
  // bf16 pays only where the GEMMs run on 16-bit hardware; emulated, it has bf16's error at f32's
  // speed.
  return native_bf16_gemm_available() ? PrecisionPolicy::bf16 : PrecisionPolicy::fp32;
}

namespace {
constexpr std::array<options::EnumName<PrecisionPolicy>, 6> kPrecisions{{
    {PrecisionPolicy::as_built, "as_built", "the dtypes the graph was built with", nullptr, false},
    {PrecisionPolicy::fp64, "fp64", "every leaf in f64 (the oracle)"},
    {PrecisionPolicy::fp32, "fp32", "every leaf in f32"},
    {PrecisionPolicy::bf16, "bf16", "GEMM operands in bf16, everything else in f32"},
    {PrecisionPolicy::fp16, "fp16", "as bf16 with f16 operands, each scaled first"},
    {PrecisionPolicy::automatic, "auto",
     "bf16 where the CPU multiplies bf16 natively, else fp32; in training checked against fp32 "
     "(training.precision_check), with L-BFGS stages in fp32"},
}};
}  // namespace

const options::EnumTable<PrecisionPolicy>& precision_names() {
  static constexpr options::EnumTable<PrecisionPolicy> table("precision", kPrecisions);
  return table;
}

std::string precision_name(PrecisionPolicy p) { return precision_names().name(p); }

options::KeyPtr precision_key() {
  return options::choice("precision", precision_names(), "fp32",
                         "Arithmetic of the compiled training step.");
}

Module apply_precision(const Module& in, PrecisionPolicy policy) {
  policy = resolve_auto(policy);
  if (policy == PrecisionPolicy::as_built) return rewrite(in);
  const DType base = base_dtype(policy);
  const bool narrow_gemms = policy == PrecisionPolicy::bf16 || policy == PrecisionPolicy::fp16;
  const DType low = policy == PrecisionPolicy::fp16 ? DType::f16 : DType::bf16;
  return rewrite(in, [&](Graph& g, const Node& n, std::span<const Var> a) -> std::optional<Var> {
    switch (n.op) {
      case Op::Input:
        return g.input(n.attrs.name, n.shape, base);
      case Op::Param:
        return g.param(n.attrs.name, n.shape, base);
      case Op::Const:
        return g.constant(n.shape, *n.attrs.data, base);
      case Op::MatMul: {
        if (!narrow_gemms) return std::nullopt;
        const bool scaled = policy == PrecisionPolicy::fp16;
        Var fa, fb;
        const Var product = matmul(narrow(a[0], low, scaled, &fa), narrow(a[1], low, scaled, &fb),
                                   n.attrs.ints[0] != 0, n.attrs.ints[1] != 0);
        return scaled ? product / (fa * fb) : product;
      }
      default:
        return std::nullopt;
    }
  });
}

}  // namespace jetpde::compiler
