// Analysis: which derivatives of which fields an equation needs, so that the caller builds one
// TaylorPlan for all of its equations (docs/design.md section 5).
//
//   Needs needs = analyze(parse("u_t + u*u_x - nu*u_xx", ctx), ctx);
//   // needs.fields["u"].partials == {00, 10, 01, 20} over (x, t); needs.max_order == 2
//   TaylorPlan plan = plan_for(equations, ctx, xt);   // the union, as one plan
//
// A Laplacian written as a whole (laplacian(u), div(grad(u))) is requested as the collapsed
// DerivativeSum laplacian_sum over the spatial coordinates, laplacian(laplacian(u)) as
// biharmonic_sum: a 32-D Poisson equation needs 34 streams, not 1 + 32 + 32.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "autodiff/taylor.h"
#include "equations/context.h"
#include "equations/parser.h"

namespace jetpde::equations {

struct FieldNeeds {
  std::set<MultiIndex> partials;  // the zero multi-index when the field's value is used
  bool laplacian = false;         // laplacian(u) as a whole
  bool biharmonic = false;        // laplacian(laplacian(u)) as a whole
  friend bool operator==(const FieldNeeds&, const FieldNeeds&) = default;
};

struct Needs {
  std::map<std::string, FieldNeeds> fields;  // the fields used, by name
  int max_order = 0;                         // the highest total order (Laplacian: 2)
  bool normal = false;                       // uses the normal n
  std::set<std::string> params;              // trainable parameters used
  void merge(const Needs& other);
};

Needs analyze(const Equation& equation, const Context& ctx);
Needs analyze(const std::vector<Equation>& equations, const Context& ctx);

// The TaylorPlan for `needs`: coordinates are the columns of `coordinates` (an input leaf
// [n, d] whose column j is the Context's coordinate j), partials the union over all fields,
// plus laplacian_sum / biharmonic_sum over the spatial coordinates when asked for.
// UserError when `coordinates` is not an input with one column per coordinate.
TaylorPlan plan_for(const Needs& needs, const Context& ctx, Var coordinates);
TaylorPlan plan_for(const std::vector<Equation>& equations, const Context& ctx, Var coordinates);

// The collapsed sums of the Context's spatial coordinates, named "laplacian" and "biharmonic".
DerivativeSum spatial_laplacian(const Context& ctx);
DerivativeSum spatial_biharmonic(const Context& ctx);

}  // namespace jetpde::equations
