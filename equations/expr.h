// Expr: the immutable expression tree of the equation language (docs/design.md section 9).
//
// An Expr is a shared handle to a const node; copying it is cheap and nodes never change, so
// subtrees are shared freely. The parser (equations/parser.h) builds Exprs with every name
// resolved against a Context: a field, a coordinate, a constant, a trainable parameter, the
// normal n. Two forms exist:
//
// - as written: what the parser returns; it may hold vector forms (n, grad, vec, div, dot),
//   derivatives of expressions (d(sin(u), x)) and Laplacians of expressions. str() prints it back
//   as text that parses to an equal tree.
// - core: what expand() (equations/expand.h) makes of it for analysis and lowering; only scalars,
//   with every derivative applied to a field (derivative nodes), and Laplacians only of fields
//   (collapsed into one Taylor stream).
//
// Vectors have one component per spatial coordinate (the coordinates less time, in declaration
// order). Vector-valued nodes are n, grad(s), vec(s1, ..., sd), and v + w, v - w, -v, s*v, v*s,
// v/s of those; dot(v, w) and div(v) make scalars again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/functions.h"
#include "autodiff/taylor.h"

namespace jetpde::equations {

enum class ExprKind : std::uint8_t {
  number,            // value
  constant,          // name, value: pi or a Context constant
  param,             // name, value (initial): a trainable scalar
  coordinate,        // name, index among the Context's coordinates
  field,             // name, index among the Context's fields
  derivative,        // ∂^alpha of the field (name, index); alpha over all coordinates
  normal,            // the outward normal n (vector)
  normal_component,  // n_x: name is the coordinate's, index the spatial component
  neg,
  add,
  sub,
  mul,
  div,
  pow,
  call,        // function(args...): a record of autodiff/functions.h (operators < and ... too)
  diff,        // ∂^alpha args[0] of an expression that is not a field (chain rule in expand)
  laplacian,   // laplacian(args[0]); `order` 2 is the biharmonic (core form only)
  grad,        // grad(args[0]): vector of spatial first derivatives
  divergence,  // div(args[0]) of a vector
  dot,         // dot(args[0], args[1]) of two vectors
  vec,         // vec(args...): a vector from its spatial components
};

// A function of the language: the index of its record in functions::All (autodiff/functions.h).
enum class Function : std::uint8_t {};
template <class F>
constexpr Function function_of() {
  return static_cast<Function>(functions::index_of<F>());
}
const char* function_name(Function f);

struct ExprNode;

class Expr {
 public:
  Expr() = default;
  const ExprNode& operator*() const { return *node_; }
  const ExprNode* operator->() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }

  // The expression as text in the language; parsing it gives an equal tree.
  std::string str() const;
  // Structural equality (source columns are ignored).
  friend bool operator==(const Expr& a, const Expr& b);

  // Factories. `column` is the 1-based source column the node came from (0: none), used to
  // point at it in errors found after parsing.
  static Expr number(double value, int column = 0);
  static Expr constant(std::string name, double value, int column = 0);
  static Expr param(std::string name, double initial, int column = 0);
  static Expr coordinate(std::string name, int index, int column = 0);
  static Expr field(std::string name, int index, int column = 0);
  // ∂^alpha of a field; `coordinates` are the names alpha's entries refer to (for printing).
  // A zero alpha gives the field itself.
  static Expr derivative(std::string field, int index, MultiIndex alpha,
                         std::vector<std::string> coordinates, int column = 0);
  static Expr normal(int column = 0);
  static Expr normal_component(std::string coordinate, int component, int column = 0);
  static Expr unary(ExprKind kind, Expr operand, int column = 0);     // neg, grad, divergence
  static Expr binary(ExprKind kind, Expr a, Expr b, int column = 0);  // add sub mul div pow dot
  static Expr call(Function function, std::vector<Expr> args, int column = 0);
  static Expr call(Function function, Expr operand, int column = 0);
  static Expr diff(Expr operand, MultiIndex alpha, std::vector<std::string> coordinates,
                   int column = 0);
  static Expr laplacian(Expr operand, int order = 1, int column = 0);
  static Expr vec(std::vector<Expr> components, int column = 0);

  // A copy with every node's column set to `column` (inlining a definition).
  Expr relocated(int column) const;

 private:
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  static Expr make(ExprNode node);
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprKind kind = ExprKind::number;
  Function function{};                   // call
  std::string name;                      // symbols, field of a derivative, coordinate of n_x
  double value = 0.0;                    // number, constant, param (initial value)
  int index = -1;                        // field, coordinate, normal component
  int order = 1;                         // laplacian: 1 Laplacian, 2 biharmonic
  MultiIndex alpha;                      // derivative, diff
  std::vector<std::string> coordinates;  // derivative, diff: the names alpha refers to
  std::vector<Expr> args;
  int column = 0;       // 1-based source column; 0 when synthesized
  bool vector = false;  // a vector-valued node
  // Set by the factories: the longest path to a leaf (a leaf has depth 1), and the number of
  // nodes of the tree as written out (shared subtrees counted each time), saturating at
  // kSizeSaturation. The parser and expand() bound both (equations/limits.h).
  int depth = 1;
  std::int64_t size = 1;
  static constexpr std::int64_t kSizeSaturation = std::int64_t{1} << 40;
};

// The value of an expression made only of numbers, constants (pi included), arithmetic and
// functions, or false when it depends on anything else (fields, coordinates, params, n).
bool constant_value(const Expr& e, double* value);

}  // namespace jetpde::equations
