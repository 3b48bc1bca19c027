// A graph together with the nodes it must compute: what every compiler pass takes and returns.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde::compiler {

struct Module {
  std::unique_ptr<Graph> graph;
  std::vector<NodeId> outputs;
  std::vector<Var> output_vars() const;
};

// Builds a module from nodes of an existing graph; nothing unreachable from them is copied.
Module module_of(std::span<const Var> outputs);

// The rewriting primitive of the passes: copies the nodes reachable from the module's outputs
// into a fresh graph, in topological order. `rule` sees each node with its already rewritten
// operands and returns a replacement, or nullopt to keep the node (copied as it is). Dead nodes
// disappear (DCE) and equal nodes merge (CSE, by interning).
using RewriteRule =
    std::function<std::optional<Var>(Graph& target, const Node& node, std::span<const Var> args)>;
Module rewrite(const Module& in, const RewriteRule& rule = {});

// Copies `node` into `target` with `args` as operands.
Var copy_node(Graph& target, const Node& node, std::span<const Var> args);

}  // namespace jetpde::compiler
