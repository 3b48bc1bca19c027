// Precision policies (DESIGN.md section 8): derivatives of orders 1 to 6 of a tanh MLP under each
// policy, compiled, against the f64 interpreter. The printed table is the accuracy report.
#include <gtest/gtest.h>

#include <iomanip>
#include <iostream>
#include <random>

#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "autodiff/verify.h"
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

TEST(PrecisionPass, AutoStaysFp32WhileBf16GemmsAreEmulated) {
  EXPECT_EQ(resolve_auto(PrecisionPolicy::automatic), PrecisionPolicy::fp32)
      << "auto may pick bf16 only once the CPU runtime multiplies bf16 natively";
  EXPECT_EQ(resolve_auto(PrecisionPolicy::fp16), PrecisionPolicy::fp16);
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
