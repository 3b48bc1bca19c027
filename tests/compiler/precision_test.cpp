// Precision policies (docs/design.md section 8): derivatives of orders 1 to 6 of a tanh MLP under
// each policy, compiled, against the f64 interpreter. The printed table is the accuracy report.
#include <gtest/gtest.h>

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
#include "compiler/passes.h"
#include "nn/mlp.h"

namespace jetpde::compiler {
namespace {

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
  std::cout << "  " << std::setw(5) << precision_name(c.policy) << " relative error, orders 1-6:";
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
                                           PolicyCase{PrecisionPolicy::fp16, 1e-2}),
                         [](const auto& info) { return precision_name(info.param.policy); });

TEST(PrecisionPass, AutoIsBf16ExactlyWhereBf16GemmsAreNative) {
  EXPECT_EQ(resolve_auto(PrecisionPolicy::automatic),
            native_bf16_gemm_available() ? PrecisionPolicy::bf16 : PrecisionPolicy::fp32)
      << "emulated bf16 has bf16's error at f32's speed: auto must not pick it";
  EXPECT_EQ(resolve_auto(PrecisionPolicy::fp16), PrecisionPolicy::fp16);
}

// The bf16 policy's native GEMMs (oneDNN, 2-byte operands written by the kernels, forward and
// transposed backward products over stacked, strided operands) against the emulation (f32 GEMMs
// on bf16-rounded operands): both multiply the same bf16 numbers exactly and accumulate in f32,
// so they differ only by the order of the f32 sums.
TEST(NativeBf16, MatchesTheEmulationOnALossAndItsGradient) {
  if (!native_bf16_gemm_available())
    GTEST_SKIP() << "no native bf16 GEMM here (needs oneDNN and AVX512-BF16 or AMX-BF16)";
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {2, {64, 64, 64}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {1000, 2});
  const Var u = mlp(x);
  Taylor t(TaylorPlan({{x, 0}, {x, 1}}, {{2, 0}, {0, 1}}));
  const Var r = t.derivative(u, {0, 1}) + u * t.derivative(u, {1, 0}) - t.derivative(u, {2, 0});
  const Var loss = mean_all(square(r));
  std::vector<Var> outs{loss};
  const std::vector<Var> params = mlp.params();
  for (const Var& d : grad(loss, params)) outs.push_back(d);
  Bindings b = mlp.init_glorot_normal(5, 0.1);
  b["x"] = MatrixD::Random(1000, 2);

  CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = PrecisionPolicy::bf16;
  o.strict = true;
  Executable native(outs, o);
  o.cpu.native_bf16 = false;
  Executable emulated(outs, o);
  EXPECT_EQ(native.stats().native_bf16_gemms, native.stats().gemms);
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
