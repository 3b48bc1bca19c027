// The core form of an expression: what analysis (equations/analysis.h) and lowering
// (equations/lower.h) read. parse() computes it once; it is exposed for tests and tools.
//
// The core form holds scalars only: numbers, constants, params, coordinates, normal components,
// fields, derivative nodes (∂^α of a field), laplacian nodes of a field (order 1: Laplacian,
// order 2: biharmonic, each one collapsed Taylor stream), arithmetic and function calls.
// Expansion rules:
// - dot(v, w) = Σ_i v_i w_i over the spatial components; vectors are expanded by components:
//   n → (n_x, n_y, ...), grad(e) → (∂_x e, ∂_y e, ...), vec(a, b) → (a, b), and + - * / of those.
// - div(grad(e)) = laplacian(e); div distributes over + and -, and over factors that do not
//   depend on the coordinates; otherwise div(v) = Σ_i ∂_i v_i.
// - laplacian(u) of a field stays whole (collapsed); laplacian(laplacian(u)) is the biharmonic;
//   the Laplacian distributes over + and - and coordinate-free factors; otherwise it is
//   Σ_i ∂_i ∂_i e.
// - d(e, ...) of an expression that is not a field applies the chain and product rules
//   (d(sin(u), x) = cos(u)*u_x). The normal n is per-point data and has no derivative: an error.
// Expansion folds the zeros and ones it creates, so 0*u_xxx never asks for u_xxx. The result is a
// DAG: equal nodes are one node, each differentiated once, so d(u*u, x, 40) has 943 distinct
// nodes; more than limits::kMaxCoreNodes of them, a depth beyond limits::kMaxCoreDepth, or a
// derivative beyond limits::kMaxDerivativeOrder is a UserError at the d() (equations/limits.h).
#pragma once

#include "equations/context.h"
#include "equations/detail/diagnostics.h"
#include "equations/expr.h"

namespace jetpde::equations {

// UserError (quoting `source`, at the offending column) for a derivative of the normal, and for
// an expansion beyond the limits.
Expr expand(const Expr& e, const Context& ctx, const detail::Source& source);

}  // namespace jetpde::equations
