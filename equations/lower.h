// Lowering: an Equation's core form -> the residual as a graph node [n, 1], built with
// autodiff/ops.h, reading every derivative from one Taylor object.
//
//   Graph g(DType::f64);
//   nn::Mlp mlp(g, {2, {32, 32}, 1, nn::Activation::tanh, ""});
//   Var xt = g.input("xt", {n, 2});                       // columns in the Context's order
//   std::vector<Equation> eqs{parse("u_t + u*u_x - nu*u_xx", ctx)};
//   Taylor taylor(plan_for(eqs, ctx, xt));                // every derivative, one sweep
//   std::vector<Var> r = lower(eqs, ctx, {.coordinates = xt, .outputs = mlp(xt)}, taylor);
//
// Numbers and constants become scalar constants ([1,1], broadcast), parameters become [1,1]
// graph params named param_prefix + name (initial_params() gives their starting values),
// coordinates are columns of `coordinates`, n_x a column of `normal`. Integer powers become
// products (exact where the base is zero or negative); other constant powers use pow; a^b with
// a non-constant b is exp(b log a). abs(a) is sqrt(a*a): its derivatives are undefined at 0.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/taylor.h"
#include "equations/context.h"
#include "equations/parser.h"

namespace jetpde::equations {

struct LowerInputs {
  Var coordinates;  // the input leaf [n, d]; column j is the Context's coordinate j
  Var outputs;      // [n, k]: column j is the Context's field j (for fields not in `fields`)
  std::map<std::string, Var> fields;  // a [n, 1] node per field, overriding `outputs`
  Var normal;                         // [n, spatial dims]; needed only when an equation uses n
  std::string param_prefix = "pde_";  // graph name of the parameter p: param_prefix + p
};

// The residual of `equation`, [n, 1]. `taylor`'s plan must differentiate by the columns of
// inputs.coordinates in order (plan_for() makes such a plan). UserError, quoting the equation
// and pointing at the column, for a derivative the plan does not hold ("a derivative order
// beyond what was planned"); UserError for a missing field, normal or misshapen input.
Var lower(const Equation& equation, const Context& ctx, const LowerInputs& inputs, Taylor& taylor);
std::vector<Var> lower(const std::vector<Equation>& equations, const Context& ctx,
                       const LowerInputs& inputs, Taylor& taylor);

// The initial values of the Context's parameters, [1,1] each, under their graph names.
Bindings initial_params(const Context& ctx, const std::string& param_prefix = "pde_");

}  // namespace jetpde::equations
