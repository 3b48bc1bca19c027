// Mixed precision (docs/design.md section 8): gives every node a dtype by the policy and inserts
// casts.
//
//   fp64        every leaf in f64: the oracle.
//   fp32        every leaf in f32: the default.
//   bf16        GEMM operands rounded to bf16; products accumulate in f32 and everything else —
//               derivative streams, residuals, the loss, master weights — stays f32.
//   bf16_wgrad  as bf16 for the weight-gradient GEMMs only: those whose first operand is
//               transposed, X^T dY, which sum over the points (the rows) into a weight-shaped
//               result, and only where that weight is at least kNativeBf16MinWidth wide each way
//               (the products a CPU runs natively, pack_bf16_gemm_operands). The forward GEMMs
//               (X W, every Taylor stream's) and the input-gradient ones (dY W^T) stay f32. A
//               PINN's residual is a small difference of large derivative terms; bf16's 3 digits
//               in the forward GEMMs leave it, and the gradient built from it, mostly noise once
//               training has made it small (bench/README.md: 61-106% off fp32's gradient within
//               500 Adam steps of the three examples), while bf16 operands in the
//               weight-gradient sums alone kept it within 0.4-7% over 2,000. Narrower weight
//               gradients stay f32: rounded, they ran as f32 GEMMs on rounded operands at a cost
//               and no gain (the 20-wide Burgers example 1.2-1.3x slower a step than fp32 on an
//               AMX CPU, bench/README.md "On an AMX CPU"); so a network narrower than 32 runs
//               bf16_wgrad as fp32.
//   fp16        as bf16 with f16 operands, each scaled first: f16 overflows at 65504, and Taylor
//               streams of order k grow like k!, cotangents shrink with the loss. Every operand
//               is multiplied by 1 / rms(operand) before the cast and the product divided by both
//               factors, so the scaling is per stream (the pass runs before GEMM stacking, one
//               operand per stream) and per step (recomputed from the values every time), which
//               covers loss scaling too.
//   auto        resolved per backend before this pass (resolve_auto, PipelineOptions::resolved):
//               bf16_wgrad where the CPU runtime's bf16 GEMMs run on AMX tiles, else fp32. Where
//               bf16 products come only from AVX512-BF16 (Zen 4 and 5), bf16_wgrad saves 5-10% of
//               a 64-wide example's step now that its GEMMs run in the tiled regions (Zen 5,
//               bench/README.md, "bf16 in the tiled regions"), too little for the accuracy it
//               risks; the CUDA runtime still emulates bf16 GEMMs with f32 cuBLAS calls on rounded
//               operands: there bf16 would cost accuracy for nothing. In training the trainer
//               checks it against fp32 and goes on in fp32 when they drift (solvers/trainer.h,
//               PrecisionCheck).
// Explicit casts in the user's graph are kept.
#include <algorithm>
#include <array>
#include <fstream>
#include <initializer_list>
#include <string>

#include "autodiff/ops.h"
#include "autodiff/options.h"
#include "compiler/cpu_gemm.h"
#include "compiler/passes.h"
#include "compiler/program.h"

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

namespace {

// Whether /proc/cpuinfo's flags name any of `flags` (whole names: "amx_bf16").
bool cpu_flag(std::initializer_list<const char*> flags) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      line += ' ';
      for (const char* f : flags)
        if (line.find(std::string(" ") + f + " ") != std::string::npos) return true;
      return false;
    }
  return false;
}

}  // namespace

bool cpu_has_bf16_instructions() { return cpu_flag({"avx512_bf16", "amx_bf16"}); }
bool cpu_has_amx_bf16() { return cpu_flag({"amx_bf16"}); }

PrecisionPolicy resolve_auto(PrecisionPolicy p, Backend backend) {
  if (p != PrecisionPolicy::automatic) return p;
  static const bool amx = native_bf16_gemm_available() && cpu_has_amx_bf16();
  return backend == Backend::cpu && amx ? PrecisionPolicy::bf16_wgrad : PrecisionPolicy::fp32;
}

namespace {
constexpr std::array<options::EnumName<PrecisionPolicy>, 7> kPrecisions{{
    {PrecisionPolicy::as_built, "as_built", "the dtypes the graph was built with", nullptr, false},
    {PrecisionPolicy::fp64, "fp64", "every leaf in f64 (the oracle)"},
    {PrecisionPolicy::fp32, "fp32", "every leaf in f32"},
    {PrecisionPolicy::bf16, "bf16",
     "GEMM operands in bf16, everything else in f32 (for speed measurements: a PINN's gradient "
     "is mostly noise after a few hundred steps of it)"},
    {PrecisionPolicy::bf16_wgrad, "bf16_wgrad",
     "bf16 operands in the weight-gradient GEMMs of weights at least 32 wide each way (those "
     "multiplied natively) only, every other GEMM in f32"},
    {PrecisionPolicy::fp16, "fp16", "as bf16 with f16 operands, each scaled first"},
    {PrecisionPolicy::automatic, "auto",
     "bf16_wgrad on a CPU with AMX, else fp32; in training checked against fp32 "
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
  check_internal(policy != PrecisionPolicy::automatic,
                 "apply_precision: auto must be resolved for a backend first");
  if (policy == PrecisionPolicy::as_built) return rewrite(in);
  const DType base = base_dtype(policy);
  const bool weight_gradients_only = policy == PrecisionPolicy::bf16_wgrad;
  const bool narrow_gemms =
      policy == PrecisionPolicy::bf16 || policy == PrecisionPolicy::fp16 || weight_gradients_only;
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
        // A weight gradient sums over the points: its first operand comes transposed. Only
        // those with a native bf16 product (at least kNativeBf16MinWidth wide each way).
        if (weight_gradients_only &&
            (n.attrs.ints[0] == 0 || std::min(n.shape.rows, n.shape.cols) < kNativeBf16MinWidth))
          return std::nullopt;
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
