// The IR: interning, dtypes, verification, the textual form, and the interpreter's precisions.
#include <gtest/gtest.h>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/verify.h"

namespace jetpde {
namespace {

TEST(Interning, SameOperationOnSameOperandsIsTheSameNode) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  const Var w = g.param("W", {2, 3});
  EXPECT_EQ(matmul(x, w), matmul(x, w));
  EXPECT_EQ(tanh(x) + 1.0, tanh(x) + 1.0);
  EXPECT_EQ(g.input("x", {4, 2}), x);
  const std::size_t before = g.size();
  (void)(tanh(x) + 1.0);
  EXPECT_EQ(g.size(), before) << "rebuilding an existing expression must not add nodes";
}

TEST(Interning, AttributesAndOperandOrderDistinguishNodes) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  const Var y = g.input("y", {4, 2});
  EXPECT_NE(x - y, y - x);
  EXPECT_NE(slice_cols(x, 0, 1), slice_cols(x, 1, 1));
  EXPECT_NE(pow(x, 2.0), pow(x, 3.0));
  EXPECT_NE(matmul(x, y, false, true), matmul(x, y, true, false));
  EXPECT_EQ(g.scalar(2.0), g.scalar(2.0));
  EXPECT_NE(g.scalar(2.0), g.scalar(3.0));
}

TEST(Dtypes, PromotionAndCasts) {
  Graph g(DType::f32);
  const Var a = g.input("a", {2, 2});
  const Var b = g.input("b", {2, 2}, DType::f64);
  const Var c = g.input("c", {2, 2}, DType::bf16);
  EXPECT_EQ((a + b).dtype(), DType::f64);
  EXPECT_EQ((a * c).dtype(), DType::f32);
  EXPECT_EQ(cast(a, DType::f16).dtype(), DType::f16);
  EXPECT_EQ(cast(a, DType::f32), a);
}

TEST(Verify, AcceptsBuiltGraphsAndPrintsThem) {
  Graph g;
  const Var x = g.input("x", {4, 2});
  const Var w = g.param("W", {2, 3});
  const Var y = tanh(matmul(x, w));
  verify(g);
  const std::vector<Var> outs{y};
  EXPECT_EQ(to_text(g, outs),
            "%0 = input 'x' : f32[4,2]\n"
            "%1 = param 'W' : f32[2,3]\n"
            "%2 = matmul %0, %1 {0, 0} : f32[4,3]\n"
            "%3 = tanh %2 : f32[4,3]\n");
}

TEST(Interpreter, PrecisionsRoundAsTheirTypes) {
  Graph g;
  const Var x = g.input("x", {1, 1}, DType::f64);
  const Var third = x / 3.0;
  const Bindings b{{"x", MatrixD::Constant(1, 1, 1.0)}};
  EXPECT_EQ(evaluate(third, b, Precision::f64)(0, 0), 1.0 / 3.0);
  EXPECT_EQ(evaluate(third, b, Precision::f32)(0, 0), static_cast<double>(1.0f / 3.0f));
  // Per-node dtypes: a bf16 cast keeps 8 significant bits.
  const Var narrow = cast(third, DType::bf16);
  const double v = evaluate(narrow, b, Precision::node)(0, 0);
  EXPECT_EQ(v, 0.333984375);  // 1/3 rounded to bf16
  EXPECT_EQ(evaluate(cast(third, DType::f16), b, Precision::node)(0, 0), 0.333251953125);
}

TEST(Interpreter, RoundToBf16TiesToEven) {
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 1.0f / 256.0f), 1.0f);                 // tie, even below
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 3.0f / 256.0f), 1.0f + 1.0f / 64.0f);  // tie, even above
  EXPECT_EQ(round_to(DType::f32, 0.1f), 0.1f);
}

}  // namespace
}  // namespace jetpde
