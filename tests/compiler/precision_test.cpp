// Precision policies (docs/design.md section 8): derivatives of orders 1 to 6 of a tanh MLP under
// each policy, compiled, against the f64 interpreter. The printed table is the accuracy report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <random>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "autodiff/verify.h"
#include "compiler/cpu_gemm.h"
#include "compiler/executable.h"
#include "compiler/lower.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"
#include "nn/mlp.h"
#include "tests/support/user_error.h"

namespace jetpde::compiler {
namespace {

using jetpde::testing::expect_user_error;

struct PolicyCase {
  PrecisionPolicy policy;
  double tolerance;  // largest relative error allowed at any order
};

void PrintTo(const PolicyCase& c, std::ostream* os) { *os << precision_name(c.policy); }

class Policies : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(Policies, DerivativesUpToOrderSixAgainstF64) {
  const PolicyCase c = GetParam();
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {1, {32, 32, 32}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {256, 1});
  const Var u = mlp(x);
  Taylor t(TaylorPlan({{x, 0}}, {{6}}));
  std::vector<Var> outs;
  for (int k = 1; k <= 6; ++k) outs.push_back(t.derivative(u, {k}));
  Bindings b = mlp.init_glorot_normal(3, 0.1);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> uniform(-1, 1);
  b["x"] = MatrixD(256, 1);
  for (auto& v : b["x"].reshaped()) v = uniform(rng);
  const std::vector<MatrixD> want = evaluate(outs, b, Precision::f64);

  CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = c.policy;
  Executable exe(outs, o);
  exe.set(b);
  exe.run();
  std::cout << "  " << std::setw(10) << precision_name(c.policy) << " relative error, orders 1-6:";
  for (int k = 0; k < 6; ++k) {
    const double err = (exe.output(k) - want[k]).abs().maxCoeff() / want[k].abs().maxCoeff();
    std::cout << " " << std::scientific << std::setprecision(1) << err;
    EXPECT_LE(err, c.tolerance) << "order " << k + 1;
    EXPECT_GT(err, c.policy == PrecisionPolicy::fp64 ? -1.0 : 1e-12)
        << "order " << k + 1 << ": a reduced precision cannot be exact";
  }
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, Policies,
                         ::testing::Values(PolicyCase{PrecisionPolicy::fp64, 1e-12},
                                           PolicyCase{PrecisionPolicy::fp32, 1e-5},
                                           PolicyCase{PrecisionPolicy::bf16, 5e-2},
                                           // No weight gradient here: every GEMM in f32.
                                           PolicyCase{PrecisionPolicy::bf16_wgrad, 1e-5},
                                           PolicyCase{PrecisionPolicy::fp16, 1e-2}),
                         [](const auto& info) { return precision_name(info.param.policy); });

TEST(PrecisionPass, AutoIsBf16WeightGradientsExactlyWhereTheCpuHasAmx) {
  using P = PrecisionPolicy;
  EXPECT_EQ(resolve_auto(P::automatic, Backend::cpu),
            native_bf16_gemm_available() && cpu_has_amx_bf16() ? P::bf16_wgrad : P::fp32)
      << "emulated bf16 has bf16's error at f32's speed, and AVX512-BF16 alone was measured no "
         "faster: auto must not pick either";
  EXPECT_EQ(resolve_auto(P::automatic, Backend::cuda), P::fp32) << "bf16 GEMMs are emulated there";
  EXPECT_EQ(resolve_auto(P::automatic, Backend::interpreter), P::fp32);
  for (const P p : {P::fp64, P::fp32, P::bf16, P::bf16_wgrad, P::fp16})
    EXPECT_EQ(resolve_auto(p, Backend::cuda), p) << precision_name(p);
  // PipelineOptions::resolved: auto_as where set, else the machine's choice; other policies as
  // they are.
  PipelineOptions o;
  o.precision = P::automatic;
  EXPECT_EQ(o.resolved(Backend::cuda), P::fp32);
  o.auto_as = P::bf16;
  EXPECT_EQ(o.resolved(Backend::cuda), P::bf16);
  o.precision = P::fp16;
  EXPECT_EQ(o.resolved(Backend::cpu), P::fp16);
  o.precision = P::automatic;
  o.auto_as = P::automatic;
  EXPECT_THROW(o.resolved(Backend::cpu), UserError);
  // JETPDE_AUTO_PRECISION sets auto_as, by a policy's name; a wrong name says where it came from.
  ::setenv("JETPDE_AUTO_PRECISION", "bf16_wgrad", 1);
  EXPECT_EQ(PipelineOptions::from_environment().auto_as, P::bf16_wgrad);
  ::setenv("JETPDE_AUTO_PRECISION", "bf17", 1);
  expect_user_error([] { PipelineOptions::from_environment(); },
                    "JETPDE_AUTO_PRECISION: unknown precision 'bf17' (known: fp64, fp32, bf16, "
                    "bf16_wgrad, fp16, auto)");
  ::setenv("JETPDE_AUTO_PRECISION", "auto", 1);
  expect_user_error([] { PipelineOptions::from_environment(); },
                    "JETPDE_AUTO_PRECISION: auto cannot stand for itself");
  ::unsetenv("JETPDE_AUTO_PRECISION");
  EXPECT_FALSE(PipelineOptions::from_environment().auto_as.has_value());
}

// A loss with first and second derivatives (Burgers' residual) of a tanh MLP, and its gradient
// with respect to every parameter: outputs {loss, gradients...}.
struct BurgersLoss {
  Graph g{DType::f64};
  nn::Mlp mlp{g, {2, {64, 64, 64}, 1, nn::Activation::tanh, ""}};
  std::vector<Var> outs;
  Bindings b;
  BurgersLoss() {
    const Var x = g.input("x", {1000, 2});
    const Var u = mlp(x);
    Taylor t(TaylorPlan({{x, 0}, {x, 1}}, {{2, 0}, {0, 1}}));
    const Var r = t.derivative(u, {0, 1}) + u * t.derivative(u, {1, 0}) - t.derivative(u, {2, 0});
    const Var loss = mean_all(square(r));
    outs.push_back(loss);
    for (const Var& d : grad(loss, mlp.params())) outs.push_back(d);
    b = mlp.init_glorot_normal(5, 0.1);
    b["x"] = MatrixD::Random(1000, 2);
  }
  std::vector<MatrixD> run(PrecisionPolicy policy) const {
    CompileOptions o;
    o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
    o.pipeline.precision = policy;
    o.strict = true;
    Executable exe(outs, o);
    exe.set(b);
    exe.run();
    std::vector<MatrixD> out;
    for (std::size_t k = 0; k < outs.size(); ++k) out.push_back(exe.output(k));
    return out;
  }
};

// bf16_wgrad: bf16 operands exactly in the GEMMs whose first operand is transposed (X^T dY, the
// weight gradients) and whose weight is at least kNativeBf16MinWidth wide each way, f32 in the
// forward and input-gradient ones and in the narrow weight gradients (the first layer's, 2 x 64,
// and the last's, 64 x 1). So the loss is fp32's (the forward pass is the same program) and only
// the gradient carries bf16's rounding.
TEST(PrecisionPass, Bf16WgradNarrowsOnlyTheWideWeightGradientGemms) {
  const BurgersLoss l;
  const Module m = apply_precision(module_of(l.outs), PrecisionPolicy::bf16_wgrad);
  int narrowed = 0, narrow_weights = 0, f32 = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(m.graph->size()); ++id) {
    const Node& n = m.graph->node(id);
    if (n.op != Op::MatMul) continue;
    const bool weight_gradient = n.attrs.ints[0] != 0;
    const bool wide = std::min(n.shape.rows, n.shape.cols) >= kNativeBf16MinWidth;
    for (NodeId a : n.args)
      EXPECT_EQ(m.graph->node(a).dtype, weight_gradient && wide ? DType::bf16 : DType::f32)
          << "matmul %" << id;
    if (weight_gradient && !wide) ++narrow_weights;
    ++(weight_gradient && wide ? narrowed : f32);
  }
  EXPECT_GT(narrowed, 0);
  EXPECT_GT(narrow_weights, 0) << "the first and last layers' weight gradients stay f32";
  EXPECT_GT(f32, narrowed) << "forward (every stream) and input-gradient GEMMs stay f32";

  const std::vector<MatrixD> fp32 = l.run(PrecisionPolicy::fp32);
  const std::vector<MatrixD> wgrad = l.run(PrecisionPolicy::bf16_wgrad);
  EXPECT_NEAR(wgrad[0](0, 0), fp32[0](0, 0), 1e-6 * std::abs(fp32[0](0, 0))) << "the loss";
  double diff = 0, size = 0;
  for (std::size_t k = 1; k < fp32.size(); ++k) {
    diff += (wgrad[k] - fp32[k]).square().sum();
    size += fp32[k].square().sum();
  }
  const double drift = std::sqrt(diff / size);
  EXPECT_GT(drift, 1e-6) << "bf16 operands: not fp32's gradient";
  EXPECT_LT(drift, 2e-2) << "bf16 rounding (2^-9) summed over 1000 points, not noise";
}

// A GEMM operand's 16-bit copy is stored by the kernel computing the value, while it is at hand:
// every kernel storing to a bf16 buffer casts a value it computes (or a leaf it loads), never a
// temporary it loads back. In graph order the weight gradients' casts came with them at the end
// of the step, in one kernel reading every layer's streams again (and keeping them alive until
// then), which cost what the bf16 products saved.
TEST(PrecisionPass, SixteenBitCopiesAreStoredWhereTheirValuesAreComputed) {
  const BurgersLoss l;
  for (const PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::bf16_wgrad}) {
    SCOPED_TRACE(precision_name(policy));
    PipelineOptions o;
    o.precision = policy;
    const Program p = lower(optimize(module_of(l.outs), o));
    int copies = 0;
    for (std::size_t s = 0; s < p.steps.size(); ++s) {
      const auto* k = std::get_if<Kernel>(&p.steps[s].op);
      if (!k) continue;
      for (const Kernel::Store& st : k->stores) {
        if (p.buffers[st.target.buffer].dtype != DType::bf16) continue;
        ++copies;
        const Value& v = k->values[st.value];
        ASSERT_EQ(v.op, Op::Cast) << "step " << s << "\n" << p.to_text();
        const Value& from = k->values[v.args[0]];
        if (from.kind != Value::Kind::Load) continue;
        EXPECT_NE(p.buffers[k->loads[from.load].buffer].kind, Buffer::Kind::Temp)
            << "step " << s << " loads a temporary back to cast it\n"
            << p.to_text();
      }
    }
    EXPECT_GT(copies, 0);
  }
}

// The bf16 policy's native GEMMs (oneDNN, 2-byte operands written by the kernels, forward and
// transposed backward products over stacked, strided operands) against the emulation (f32 GEMMs
// on bf16-rounded operands): both multiply the same bf16 numbers exactly and accumulate in f32,
// so they differ only by the order of the f32 sums.
TEST(NativeBf16, MatchesTheEmulationOnALossAndItsGradient) {
  if (!native_bf16_gemm_available())
    GTEST_SKIP() << "no native bf16 GEMM here (needs oneDNN and AVX512-BF16 or AMX-BF16)";
  const BurgersLoss l;
  const std::vector<Var>& outs = l.outs;
  const Bindings& b = l.b;

  for (const PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::bf16_wgrad}) {
    SCOPED_TRACE(precision_name(policy));
    CompileOptions o;
    o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
    o.pipeline.precision = policy;
    o.strict = true;
    Executable native(outs, o);
    o.cpu.native_bf16 = false;
    Executable emulated(outs, o);
    // Native where the GEMM is at least kNativeBf16MinWidth wide besides the points: the two
    // 64 x 64 layers' products, not the first layer's (2 inputs) nor the last's (1 output), which
    // run as f32 GEMMs on the rounded operands.
    ASSERT_EQ(kNativeBf16MinWidth, 32);
    if (policy == PrecisionPolicy::bf16) {  // forward, input and weight gradients: 3 x 2 of 11
      EXPECT_EQ(native.stats().native_bf16_gemms, 6);
      EXPECT_EQ(native.stats().gemms, 11);
    } else {  // the weight gradients only
      EXPECT_EQ(native.stats().native_bf16_gemms, 2);
    }
    EXPECT_EQ(emulated.stats().native_bf16_gemms, 0);
    EXPECT_LT(native.stats().arena_bytes, emulated.stats().arena_bytes) << "2-byte operands";
    native.set(b);
    emulated.set(b);
    native.run();
    emulated.run();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const MatrixD want = emulated.output(k);
      const double err = (native.output(k) - want).abs().maxCoeff() / want.abs().maxCoeff();
      EXPECT_LE(err, 1e-4) << "output " << k;
    }
  }
}

TEST(PrecisionPass, Bf16NarrowsOnlyGemmOperands) {
  Graph g(DType::f64);
  const Var x = g.input("x", {4, 2});
  const Var w = g.param("W", {2, 3});
  const std::vector<Var> outs{tanh(matmul(x, w))};
  const Module m = apply_precision(module_of(outs), PrecisionPolicy::bf16);
  const std::vector<Var> o = m.output_vars();
  EXPECT_EQ(to_text(*m.graph, o),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = param 'W' : f32[2,3]\n"
            "%2 = cast %1 : bf16[2,3]\n"
            "%3 = cast %0 : bf16[4,2]\n"
            "%4 = matmul %3, %2 {0, 0} : f32[4,3]\n"
            "%5 = tanh %4 : f32[4,3]\n");
}

}  // namespace
}  // namespace jetpde::compiler
