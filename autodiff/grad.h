// Reverse mode (docs/design.md section 6) as a graph-to-graph transform: walks the graph backwards
// from a scalar loss, applies each primitive's transpose rule and accumulates adjoints. Symbolic
// zeros are never built, and only nodes that depend on a `wrt` node get an adjoint. The result is
// an ordinary graph (Taylor streams included), which the compiler optimizes like any other.
#pragma once

#include <span>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde {

// d loss / d wrt[k] for each k, each with the shape of wrt[k] (a broadcast zero where the loss
// does not depend on it). `loss` must be [1,1]; UserError otherwise.
std::vector<Var> grad(Var loss, std::span<const Var> wrt);

// Sums or broadcasts `a` to `shape` (the adjoint of broadcasting): rows and columns of size 1 in
// `shape` are summed over, rows and columns of size 1 in `a` are broadcast.
Var fit_to(Var a, Shape shape);

}  // namespace jetpde
