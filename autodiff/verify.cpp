#include "autodiff/verify.h"

#include <sstream>
#include <unordered_set>

#include "autodiff/errors.h"
#include "autodiff/primitive.h"

namespace jetpde {

void verify(const Graph& graph) {
  for (NodeId id = 0; id < static_cast<NodeId>(graph.size()); ++id) {
    const Node& n = graph.node(id);
    const Primitive& p = primitive(n.op);
    const std::string where = graph.describe(id);
    for (NodeId a : n.args) check_internal(a >= 0 && a < id, where + ": operand not older");
    if (p.taylor == TaylorFamily::Leaf) {
      check_internal(n.args.empty(), where + ": a leaf with operands");
      if (n.op == Op::Const)
        check_internal(
            n.attrs.data && static_cast<std::int64_t>(n.attrs.data->size()) == n.shape.size(),
            where + ": constant data does not fill its shape");
      continue;
    }
    check_internal(p.arity < 0 || static_cast<int>(n.args.size()) == p.arity,
                   where + ": wrong operand count");
    check_internal(p.shape(graph, n) == n.shape, where + ": shape disagrees with its rule");
    check_internal(n.op == Op::Cast || graph.result_dtype(n.op, n.args) == n.dtype,
                   where + ": dtype disagrees with its operands");
  }
}

namespace {
std::string attrs_text(const Node& n) {
  std::string s;
  for (std::int64_t i : n.attrs.ints) s += (s.empty() ? " {" : ", ") + std::to_string(i);
  if (!s.empty()) s += "}";
  if (n.op == Op::PowC) {
    std::ostringstream os;
    os << " ^" << n.attrs.real;
    s += os.str();
  }
  if (n.op == Op::Input || n.op == Op::Param) s += " '" + n.attrs.name + "'";
  if (n.op == Op::Const) {
    std::ostringstream os;
    os << " [";
    for (std::size_t i = 0; i < n.attrs.data->size() && i < 8; ++i)
      os << (i ? " " : "") << (*n.attrs.data)[i];
    if (n.attrs.data->size() > 8) os << " ...";
    os << "]";
    s += os.str();
  }
  return s;
}
}  // namespace

std::string to_text(const Graph& graph, std::span<const Var> outputs) {
  std::vector<bool> keep(graph.size(), outputs.empty());
  for (Var v : outputs) keep[static_cast<std::size_t>(v.id)] = true;
  for (auto id = static_cast<NodeId>(graph.size()) - 1; id >= 0; --id)
    if (keep[static_cast<std::size_t>(id)])
      for (NodeId a : graph.node(id).args) keep[static_cast<std::size_t>(a)] = true;
  // Printed nodes are numbered densely in order, so dead nodes never show in the text.
  std::vector<int> number(graph.size(), -1);
  int next = 0;
  std::ostringstream os;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.size()); ++id) {
    if (!keep[static_cast<std::size_t>(id)]) continue;
    number[static_cast<std::size_t>(id)] = next;
    const Node& n = graph.node(id);
    os << "%" << next++ << " = " << op_name(n.op);
    for (std::size_t i = 0; i < n.args.size(); ++i)
      os << (i ? ", %" : " %") << number[static_cast<std::size_t>(n.args[i])];
    os << attrs_text(n) << " : " << dtype_name(n.dtype) << n.shape.str() << "\n";
  }
  return os.str();
}

}  // namespace jetpde
