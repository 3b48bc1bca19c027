// Graph invariants, checked after every compiler pass in debug builds, and the textual form of
// the IR used by dumps, error messages and pass tests.
#pragma once

#include <span>
#include <string>

#include "autodiff/ir.h"

namespace jetpde {

// Checks that operands precede their users, that every node's shape and dtype agree with its
// primitive's rules, and that no two nodes are equal (interning holds). InternalError otherwise.
void verify(const Graph& graph);

// One line per node reachable from `outputs` (all nodes when empty), numbered densely:
//   %7 = tanh %6 : f32[8,16]
std::string to_text(const Graph& graph, std::span<const Var> outputs = {});

}  // namespace jetpde
