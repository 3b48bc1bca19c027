// Pass tests: small graphs as textual IR before and after each pass, including graphs a pass
// must leave unchanged (in the manner of MLIR's test/Transforms).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "autodiff/ops.h"
#include "autodiff/verify.h"
#include "compiler/executable.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"

namespace jetpde::compiler {
namespace {

std::string text(const Module& m) {
  const std::vector<Var> outs = m.output_vars();
  return to_text(*m.graph, outs);
}

Module one(Var v) {
  const std::vector<Var> outs{v};
  return module_of(outs);
}

TEST(Simplify, AddingZeroAndMultiplyingByOneVanish) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  EXPECT_EQ(text(simplify(one((x * 1.0) + 0.0))), "%0 = input 'x' : f32[4,2]\n");
}

TEST(Simplify, ChainsOfConstantFactorsMultiply) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  EXPECT_EQ(text(simplify(one(2.0 * (3.0 * x)))),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = const [6] : f32[1,1]\n"
            "%2 = mul %0, %1 : f32[4,2]\n");
}

TEST(Simplify, DoubleNegationAndSubtractingANegation) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  const Var y = g.input("y", {4, 2});
  EXPECT_EQ(text(simplify(one(neg(neg(x)) - neg(y)))),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = input 'y' : f32[4,2]\n"
            "%2 = add %0, %1 : f32[4,2]\n");
}

TEST(Simplify, SquareBecomesAProduct) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  EXPECT_EQ(text(simplify(one(pow(x, 2.0)))),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = mul %0, %0 : f32[4,2]\n");
}

TEST(Simplify, ZerosPropagateThroughMatmulAndReductions) {
  Graph g;
  const Var w = g.param("W", {2, 3});
  const Var z = zeros(g, {4, 2}, DType::f32);
  EXPECT_EQ(text(simplify(one(sum_rows(matmul(z, w))))),
            "%0 = const [0] : f32[1,1]\n"
            "%1 = broadcast %0 {1, 3} : f32[1,3]\n");
}

TEST(Simplify, SumsOfPaddedRowsBecomeOneConcatenation) {
  Graph g;
  const Var r0 = g.input("r0", {1, 3});
  const Var r2 = g.input("r2", {1, 3});
  const Var z2 = zeros(g, {2, 3}, DType::f32);
  // The adjoint of W read as rows 0 and 2 (the transposes of two slice_rows).
  const Var sum = concat_rows({r0, z2}) + concat_rows({z2, r2});
  EXPECT_EQ(text(simplify(one(sum))),
            "%0 = input 'r0' : f32[1,3]\n"
            "%1 = input 'r2' : f32[1,3]\n"
            "%2 = const [0] : f32[1,1]\n"
            "%3 = broadcast %2 {1, 3} : f32[1,3]\n"
            "%4 = concat_rows %0, %3, %1 : f32[3,3]\n");
}

TEST(Simplify, LeavesOrdinaryArithmeticUnchanged) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  const Var y = g.input("y", {1, 2});
  const Module m = one(tanh(x) * y - exp(x) / 3.0);
  EXPECT_EQ(text(simplify(m)), text(m));
}

TEST(FoldConstants, SmallConstantExpressionsFold) {
  Graph g(DType::f64);
  const Var a = g.constant({1, 2}, {1.0, 2.0});
  const Var b = g.constant({1, 2}, {0.5, 4.0});
  EXPECT_EQ(text(fold_constants(one(exp(a * b - 0.5)))), "%0 = const [1 1808.04] : f64[1,2]\n");
}

TEST(FoldConstants, LeavesBroadcastsAndLargeResultsUnfolded) {
  Graph g(DType::f64);
  const Var c = g.scalar(2.0);
  const Module wide = one(broadcast(c, {100, 100}));
  EXPECT_EQ(text(fold_constants(wide)), text(wide));
  const Var big = g.constant({1, 5000}, std::vector<double>(5000, 1.0));
  const Module large = one(exp(big));
  EXPECT_EQ(text(fold_constants(large)), text(large));
}

TEST(EliminateDeadCode, DropsWhatNoOutputNeeds) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  (void)exp(x);  // dead
  const Var keep = tanh(x);
  EXPECT_EQ(text(eliminate_dead_code(one(keep))),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = tanh %0 : f32[4,2]\n");
}

// Matmuls sharing a weight stack by point set: the two parts of 512 rows together, the two of
// 300 together, and the parts smaller than a tiled region's two tiles (100 and 50 rows) together;
// weight gradients Σ aᵢᵀ bᵢ likewise, one stacked GEMM per set, added up.
TEST(StackGemms, PartsStackByPointSetAndSmallSetsShareAStack) {
  Graph g;
  const Var w = g.param("W", {8, 16});
  std::vector<Var> outs;
  Var gradient;
  int k = 0;
  for (const std::int64_t rows : {512, 512, 300, 300, 100, 50}) {
    const Var a = tanh(g.input("x" + std::to_string(k), {rows, 8}));
    outs.push_back(matmul(a, w));
    const Var term = matmul(a, g.input("g" + std::to_string(k++), {rows, 16}), true, false);
    gradient = gradient.id < 0 ? term : gradient + term;
  }
  outs.push_back(gradient);
  const std::string out = text(stack_gemms(module_of(outs)));
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (std::size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("= matmul"), 6) << out;
  // Each set's stacked streams (the forward GEMM's a, the weight gradient's a), its product and
  // its stacked b.
  for (const std::string rows : {"1024", "600", "150"}) {
    EXPECT_EQ(count(": f32[" + rows + ",8]\n"), 1) << rows << "\n" << out;
    EXPECT_EQ(count(": f32[" + rows + ",16]\n"), 2) << rows << "\n" << out;
  }
  EXPECT_EQ(count("= add"), 2) << out;
}

TEST(Pipeline, DumpsTheIrAfterEveryPass) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  PipelineOptions o;
  o.dump_ir = ::testing::TempDir() + "jetpde-dump";
  std::filesystem::remove_all(o.dump_ir);
  const Module m = optimize(one(x * 1.0), o);
  verify(*m.graph);
  for (const char* file : {"00-input.ir", "01-simplify.ir", "02-fold_constants.ir",
                           "03-stack_gemms.ir", "04-eliminate_dead_code.ir"})
    EXPECT_TRUE(std::ifstream(o.dump_ir + "/" + file).good()) << file;
}

// With dump_ir set, each kernel program lowered is written beside the IR, numbered in order.
TEST(Pipeline, DumpsEachKernelProgramLowered) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  CompileOptions o;
  o.backend = Backend::interpreter;
  o.pipeline.dump_ir = ::testing::TempDir() + "jetpde-dump-kernels";
  std::filesystem::remove_all(o.pipeline.dump_ir);
  const std::vector<Var> outs{matmul(tanh(x), g.param("W", {2, 3}))};
  const MemoryEstimate first = estimate_memory(outs, o);
  (void)estimate_memory(outs, o);
  for (const char* file : {"kernels-0.txt", "kernels-1.txt"}) {
    std::ifstream in(o.pipeline.dump_ir + "/" + file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("gemm"), std::string::npos) << file << ":\n" << text;
    EXPECT_NE(text.find("arena: " + std::to_string(first.arena_bytes) + " bytes"),
              std::string::npos)
        << file << ":\n"
        << text;
  }
  std::filesystem::remove_all(o.pipeline.dump_ir);
}

}  // namespace
}  // namespace jetpde::compiler
