// The parser of the equation language: text -> Equation (an Expr tree as written, and its core
// form), every name resolved against a Context.
//
// Grammar (lowest binding first; ^ is right-associative and binds tighter than unary minus, so
// -x^2 is -(x^2) and 2^-1 is 2^(-1)):
//
//   equation    := expr [ '=' expr ]           lhs = rhs means the residual lhs - rhs
//   expr        := conjunction { 'or' conjunction }
//   conjunction := negation { 'and' negation }
//   negation    := 'not' negation | comparison
//   comparison  := sum [ ('<' | '<=' | '>' | '>=' | '==' | '!=') sum ]   (1 where it holds, else 0)
//   sum         := term { ('+' | '-') term }
//   term        := unary { ('*' | '/') unary }
//   unary       := ('-' | '+') unary | power
//   power       := primary [ '^' unary ]
//   primary     := number | name | name '(' args ')' | '(' expr ')'
//
// Names: pi; n (the outward normal, a vector) and n_x (its x component); fields, coordinates,
// constants, parameters and definitions of the Context; u_x, u_xt, u_xxxx (derivatives of the
// field u, one letter per coordinate: multi-letter coordinates need d()).
// Calls: the functions of autodiff/functions.h (sin cos exp log tanh sqrt abs atan sinh cosh asin
// acos asinh acosh atanh erf atan2 min max where); d(e, x, 4), d(e, x, y), d(e, x, 2, y)
// (partial derivatives; of a non-field by the chain rule); laplacian(e) (over the spatial
// coordinates); grad(e) (vector); div(v); dot(v, w); vec(e1, ..., ed) (a vector from its
// components).
//
// Errors are UserErrors that quote the text and point at the column (equations/detail/
// diagnostics.h): unknown names, functions and coordinates, argument counts, unbalanced
// parentheses, vectors where scalars belong, a derivative of the normal, trailing text, and input
// beyond the limits of equations/limits.h (nesting depth, size, derivative order, expansion).
// Chains of + - (or * /) longer than limits::kChainRun are built as balanced trees of runs.
#pragma once

#include <string>
#include <vector>

#include "equations/context.h"
#include "equations/expr.h"

namespace jetpde::equations {

// One scalar equation: its residual, as written and expanded.
struct Equation {
  std::string name;  // a label ("continuity"); empty unless given
  std::string text;  // the source
  Expr expr;         // as written; `lhs = rhs` is lhs - rhs
  Expr core;         // the core form (equations/expand.h): what analysis and lowering read
  std::string str() const { return expr.str(); }
};

// Parses one equation: one residual per string.
Equation parse(const std::string& text, const Context& ctx, const std::string& name = "");
// Parses several, each on its own.
std::vector<Equation> parse_all(const std::vector<std::string>& texts, const Context& ctx);
// Parses the body of a definition (Context::define): an expression, scalar or vector, no '='.
Expr parse_definition(const std::string& text, const Context& ctx, const std::string& name);

}  // namespace jetpde::equations
