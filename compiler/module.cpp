#include "compiler/module.h"

#include "autodiff/errors.h"

namespace jetpde::compiler {

std::vector<Var> Module::output_vars() const {
  std::vector<Var> out;
  for (NodeId id : outputs) out.push_back(graph->var(id));
  return out;
}

namespace {

Module rewrite_graph(const Graph& source, std::span<const NodeId> outputs, DType default_dtype,
                     const RewriteRule& rule) {
  Module out{std::make_unique<Graph>(default_dtype), {}};
  std::vector<bool> needed(source.size(), false);
  for (NodeId id : outputs) needed[static_cast<std::size_t>(id)] = true;
  for (auto id = static_cast<NodeId>(source.size()) - 1; id >= 0; --id)
    if (needed[static_cast<std::size_t>(id)])
      for (NodeId a : source.node(id).args) needed[static_cast<std::size_t>(a)] = true;
  std::vector<Var> mapped(source.size());
  std::vector<Var> args;
  for (NodeId id = 0; id < static_cast<NodeId>(source.size()); ++id) {
    if (!needed[static_cast<std::size_t>(id)]) continue;
    const Node& node = source.node(id);
    args.clear();
    for (NodeId a : node.args) args.push_back(mapped[static_cast<std::size_t>(a)]);
    std::optional<Var> replaced;
    if (rule) replaced = rule(*out.graph, node, args);
    mapped[static_cast<std::size_t>(id)] = replaced ? *replaced : copy_node(*out.graph, node, args);
  }
  for (NodeId id : outputs) out.outputs.push_back(mapped[static_cast<std::size_t>(id)].id);
  return out;
}

}  // namespace

Var copy_node(Graph& target, const Node& node, std::span<const Var> args) {
  switch (node.op) {
    case Op::Input:
      return target.input(node.attrs.name, node.shape, node.dtype);
    case Op::Param:
      return target.param(node.attrs.name, node.shape, node.dtype);
    case Op::Const:
      return target.constant(node.shape, *node.attrs.data, node.dtype);
    default: {
      std::vector<NodeId> ids;
      for (Var a : args) ids.push_back(a.id);
      return target.make(node.op, ids, node.attrs, node.dtype);
    }
  }
}

Module module_of(std::span<const Var> outputs) {
  if (outputs.empty()) throw UserError("compile: no outputs");
  const Graph& g = *outputs[0].graph;
  std::vector<NodeId> ids;
  for (Var v : outputs) {
    if (v.graph != &g) throw UserError("compile: outputs belong to different graphs");
    ids.push_back(v.id);
  }
  return rewrite_graph(g, ids, g.default_dtype(), {});
}

Module rewrite(const Module& in, const RewriteRule& rule) {
  return rewrite_graph(*in.graph, in.outputs, in.graph->default_dtype(), rule);
}

}  // namespace jetpde::compiler
