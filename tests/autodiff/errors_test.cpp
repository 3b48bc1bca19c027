// Every user error of the autodiff core has a test asserting its message (docs/design.md section
// 12).
#include <gtest/gtest.h>

#include "tests/support/user_error.h"

#include <functional>

#include "autodiff/errors.h"
#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "nn/mlp.h"

namespace jetpde {
namespace {

using jetpde::testing::expect_user_error;

TEST(UserErrors, DerivativeWithRespectToAParam) {
  Graph g;
  const Var w = g.param("W1", {2, 64});
  expect_user_error(
      [&] {
        TaylorPlan({{w, 0}}, {{1}});
      },
      "taylor: coordinate 0 is param 'W1' f32[2,64], not an input; derivatives are "
      "taken with respect to input columns");
}

TEST(UserErrors, DerivativeWithRespectToAnIntermediateNode) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  const Var h = tanh(x);
  expect_user_error(
      [&] {
        TaylorPlan({{x, 0}, {h, 1}}, {{1, 1}});
      },
      "taylor: coordinate 1 is tanh #1 f32[8,2], not an input; derivatives are "
      "taken with respect to input columns");
}

TEST(UserErrors, CoordinateColumnOutOfRange) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  expect_user_error(
      [&] {
        TaylorPlan({{x, 2}}, {{1}});
      },
      "taylor: coordinate 0 is column 2 of input 'x' f32[8,2], out of range");
}

TEST(UserErrors, RepeatedCoordinate) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  expect_user_error(
      [&] {
        TaylorPlan({{x, 1}, {x, 1}}, {{1, 1}});
      },
      "taylor: coordinates 0 and 1 are the same column");
}

TEST(UserErrors, MultiIndexOfWrongLength) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  expect_user_error(
      [&] {
        TaylorPlan({{x, 0}, {x, 1}}, {{2, 0, 1}});
      },
      "taylor: derivative 201 has 3 entries; the plan has 2 coordinates");
}

TEST(UserErrors, DerivativeBeyondThePlan) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  Taylor t(TaylorPlan({{x, 0}, {x, 1}}, {{2, 0}}));
  const Var u = tanh(x);
  expect_user_error(
      [&] {
        t.derivative(u, {3, 0});
      },
      "taylor: the derivative 30 was not planned; the plan has 3 streams: 00 10 20");
}

TEST(UserErrors, UnknownSumName) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  Taylor t(TaylorPlan({{x, 0}, {x, 1}}, {}, {laplacian_sum(2)}));
  expect_user_error([&] { t.sum(tanh(x), "biharmonic"); },
                    "taylor: the plan has no sum named 'biharmonic'");
}

TEST(UserErrors, ElementwiseShapeMismatch) {
  Graph g;
  const Var a = g.input("a", {8, 3});
  const Var b = g.param("b", {8, 4});
  expect_user_error([&] { add(a, b); },
                    "add: shapes [8,3] and [8,4] do not broadcast (operands: input 'a' f32[8,3], "
                    "param 'b' f32[8,4])");
}

TEST(UserErrors, MatmulInnerDimensionMismatch) {
  Graph g;
  const Var a = g.input("a", {8, 3});
  const Var w = g.param("W", {4, 16});
  expect_user_error([&] { matmul(a, w); },
                    "matmul: inner dimensions differ: [8,3] @ [4,16] (operands: input 'a' "
                    "f32[8,3], param 'W' f32[4,16])");
}

TEST(UserErrors, SliceOutOfRange) {
  Graph g;
  const Var a = g.input("a", {8, 3});
  expect_user_error([&] { slice_cols(a, 2, 2); },
                    "slice_cols: columns [2, 4) out of range 0..3 (operands: input 'a' f32[8,3])");
}

TEST(UserErrors, ConcatRowCountsDiffer) {
  Graph g;
  const Var a = g.input("a", {8, 3});
  const Var b = g.input("b", {4, 3});
  expect_user_error(
      [&] {
        concat_cols({a, b});
      },
      "concat_cols: row counts differ: [8,3] and [4,3] (operands: input 'a' f32[8,3], "
      "input 'b' f32[4,3])");
}

TEST(UserErrors, LeafRedeclaredWithAnotherShape) {
  Graph g;
  g.input("x", {8, 2});
  expect_user_error(
      [&] {
        g.input("x", {8, 3});
      },
      "input 'x' f32[8,3] clashes with the existing input 'x' f32[8,2]");
}

TEST(UserErrors, LossIsNotAScalar) {
  Graph g;
  const Var p = g.param("p", {8, 2});
  const std::vector<Var> wrt{p};
  expect_user_error([&] { grad(square(p), wrt); },
                    "grad: the loss must be a scalar [1,1], got mul #1 f32[8,2]");
}

TEST(UserErrors, UnboundAndMisshapenInputs) {
  Graph g;
  const Var x = g.input("x", {8, 2});
  expect_user_error([&] { evaluate(tanh(x), {}); },
                    "evaluate: no value bound for input 'x' f32[8,2]");
  expect_user_error(
      [&] {
        evaluate(tanh(x), {{"x", MatrixD::Zero(8, 3)}});
      },
      "evaluate: input 'x' f32[8,2] is bound to a value of shape [8,3]");
}

TEST(UserErrors, NetworkInputWidth) {
  Graph g;
  const nn::Mlp mlp(g, {2, {4}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {8, 3});
  expect_user_error([&] { mlp(x); }, "mlp: expects 2 input columns, got input 'x' f32[8,3]");
}

}  // namespace
}  // namespace jetpde
