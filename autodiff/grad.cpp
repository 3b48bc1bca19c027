#include "autodiff/grad.h"

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"

namespace jetpde {

Var fit_to(Var a, Shape shape) {
  if (a.shape().rows != shape.rows && shape.rows == 1) a = sum_rows(a);
  if (a.shape().cols != shape.cols && shape.cols == 1) a = sum_cols(a);
  return broadcast(a, shape);
}

std::vector<Var> grad(Var loss, std::span<const Var> wrt) {
  if (loss.graph == nullptr) throw UserError("grad: empty loss");
  Graph& g = *loss.graph;
  if (loss.shape() != Shape{1, 1})
    throw UserError("grad: the loss must be a scalar [1,1], got " + g.describe(loss.id));
  const auto n = static_cast<std::size_t>(loss.id) + 1;

  // Which nodes lie between a wrt node and the loss.
  std::vector<bool> from_wrt(n, false), to_loss(n, false);
  for (Var w : wrt) {
    if (w.graph != &g) throw UserError("grad: a wrt node belongs to another graph");
    if (static_cast<std::size_t>(w.id) < n) from_wrt[static_cast<std::size_t>(w.id)] = true;
  }
  for (std::size_t id = 0; id < n; ++id)
    for (NodeId a : g.node(static_cast<NodeId>(id)).args)
      if (from_wrt[static_cast<std::size_t>(a)]) from_wrt[id] = true;
  to_loss[n - 1] = true;
  for (std::size_t id = n; id-- > 0;)
    if (to_loss[id])
      for (NodeId a : g.node(static_cast<NodeId>(id)).args)
        to_loss[static_cast<std::size_t>(a)] = true;

  std::vector<NodeId> adjoint(n, -1);
  adjoint[n - 1] = g.scalar(1.0).id;
  if (loss.dtype() != g.default_dtype())
    adjoint[n - 1] = cast(g.var(adjoint[n - 1]), loss.dtype()).id;
  for (std::size_t id = n; id-- > 0;) {
    if (adjoint[id] < 0 || !from_wrt[id]) continue;
    const Node node = g.node(static_cast<NodeId>(id));
    if (node.args.empty()) continue;
    const std::vector<Var> cts =
        primitive(node.op).transpose(g.var(static_cast<NodeId>(id)), g.var(adjoint[id]));
    for (std::size_t i = 0; i < node.args.size(); ++i) {
      const auto a = static_cast<std::size_t>(node.args[i]);
      if (cts[i].id < 0 || !from_wrt[a] || !to_loss[a]) continue;
      const Var ct = fit_to(cts[i], g.node(node.args[i]).shape);
      adjoint[a] = adjoint[a] < 0 ? ct.id : add(g.var(adjoint[a]), ct).id;
    }
  }
  std::vector<Var> out;
  for (Var w : wrt) {
    const auto id = static_cast<std::size_t>(w.id);
    out.push_back(id < n && adjoint[id] >= 0 ? g.var(adjoint[id]) : zeros(g, w.shape(), w.dtype()));
  }
  return out;
}

}  // namespace jetpde
