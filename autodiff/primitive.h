// One record per primitive (docs/design.md section 4): arity, shape rule, reference evaluation,
// Taylor rule, transpose rule and the C expression the renderers print. Adding an op means adding a
// record in primitives.cpp and a row in tests/autodiff/primitives_test.cpp, nothing scattered.
#pragma once

#include <Eigen/Core>
#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde {

template <class T>
using Matrix = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Matrix<double>;

// Reference evaluation of one node from its operands' values.
template <class T>
using EvalFn = std::function<Matrix<T>(const Node&, std::span<const Matrix<T>* const>)>;

// Shape rule: the shape of `node` from its operands (already in the graph); UserError when the
// operands do not fit.
using ShapeFn = Shape (*)(const Graph&, const Node&);

// Transpose (vector-Jacobian) rule: given the node `out` and the cotangent `ct` of its value,
// the cotangent of each operand, in operand order; a Var with id -1 is a symbolic zero. Results
// may have a broadcastable shape; the caller reduces them to the operand's shape.
using TransposeFn = std::vector<Var> (*)(Var out, Var ct);

// The Taylor rule of a primitive is one of a few families (docs/design.md section 5); taylor.cpp
// implements each family once.
enum class TaylorFamily : std::uint8_t {
  Leaf,       // inputs seed unit streams; params and constants have none
  Linear,     // acts stream by stream: the same op on the operands' streams
  Mul,        // bilinear: multivariate Cauchy product
  MatMul,     // bilinear: Cauchy product of matrix products
  Div,        // z = x / y, solved from y z = x
  UnaryPoly,  // f' = g(f) with g a quadratic polynomial in f (exp, tanh, sigmoid)
  Pair,       // sin/cos, sinh/cosh: z' = w and w' = ±z, propagated together
  Log,        // x z' = x'
  Sqrt,       // z z = x
  Chain,      // z' = Σ_j g_j x_j', the partials g_j built in the graph from the operands
  Pow,        // x z' = p z x'
  Select,     // linear in the two branches; the condition carries no derivative
  Step,       // piecewise constant (comparisons): no derivative
};

struct Primitive {
  Op op;
  const char* name;
  int arity;  // number of operands; -1 for one or more
  ShapeFn shape;
  EvalFn<double> eval_f64;
  EvalFn<float> eval_f32;
  TaylorFamily taylor;
  std::array<double, 3> taylor_poly{};  // UnaryPoly: g(f) = p0 + p1 f + p2 f^2
  TransposeFn transpose;
  // Chain: the partial derivatives with respect to each operand, built from the operands.
  std::vector<Var> (*partials)(std::span<const Var> operands) = nullptr;
  // Pair: the partner w of z = f(x): z' = pair_signs[0] w and w' = pair_signs[1] z.
  Op partner = Op::Input;
  std::array<double, 2> pair_signs{1.0, 1.0};
  const char* c_expr = nullptr;  // elementwise ops: C expression over {0}, {1}, {2} and {p}
  bool elementwise = false;      // operands broadcast against each other
};

const Primitive& primitive(Op op);
// The C math functions the C expressions call (for `using std::name;` in generated sources).
const std::vector<std::string>& c_math_functions();
inline const char* op_name(Op op) { return primitive(op).name; }

}  // namespace jetpde
