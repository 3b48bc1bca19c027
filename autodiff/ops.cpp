#include "autodiff/ops.h"

#include <array>

#include "autodiff/errors.h"
#include "autodiff/primitive.h"

namespace jetpde {
namespace {

Graph& graph_of(Var a) {
  if (a.graph == nullptr || a.id < 0) throw UserError("operation on an empty Var");
  return *a.graph;
}

Graph& same_graph(Var a, Var b) {
  Graph& g = graph_of(a);
  if (&graph_of(b) != &g) throw UserError("operands belong to different graphs");
  return g;
}

Var unary_op(Op op, Var a, Attrs attrs = {}) {
  const std::array<NodeId, 1> args{a.id};
  return graph_of(a).make(op, args, std::move(attrs));
}

Var binary_op(Op op, Var a, Var b, Attrs attrs = {}) {
  const std::array<NodeId, 2> args{a.id, b.id};
  return same_graph(a, b).make(op, args, std::move(attrs));
}

Attrs ints(std::initializer_list<std::int64_t> values) {
  Attrs attrs;
  attrs.ints = values;
  return attrs;
}

template <Op op>
Var concat(std::span<const Var> parts) {
  if (parts.empty()) throw UserError(std::string(op_name(op)) + " of no operands");
  if (parts.size() == 1) return parts[0];
  std::vector<NodeId> ids;
  for (Var p : parts) {
    same_graph(parts[0], p);
    ids.push_back(p.id);
  }
  return parts[0].graph->make(op, ids);
}

}  // namespace

Var neg(Var a) { return unary_op(Op::Neg, a); }
Var add(Var a, Var b) { return binary_op(Op::Add, a, b); }
Var sub(Var a, Var b) { return binary_op(Op::Sub, a, b); }
Var mul(Var a, Var b) { return binary_op(Op::Mul, a, b); }
Var div(Var a, Var b) { return binary_op(Op::Div, a, b); }
Var exp(Var a) { return unary_op(Op::Exp, a); }
Var log(Var a) { return unary_op(Op::Log, a); }
Var sin(Var a) { return unary_op(Op::Sin, a); }
Var cos(Var a) { return unary_op(Op::Cos, a); }
Var tanh(Var a) { return unary_op(Op::Tanh, a); }
Var sigmoid(Var a) { return unary_op(Op::Sigmoid, a); }
Var sqrt(Var a) { return unary_op(Op::Sqrt, a); }
Var atan(Var a) { return unary_op(Op::Atan, a); }

Var pow(Var a, double exponent) {
  if (exponent == 1.0) return a;
  Attrs attrs;
  attrs.real = exponent;
  return unary_op(Op::PowC, a, std::move(attrs));
}

Var cast(Var a, DType dtype) {
  if (a.dtype() == dtype) return a;
  const std::array<NodeId, 1> args{a.id};
  return graph_of(a).make(Op::Cast, args, {}, dtype);
}

Var select(Var cond, Var a, Var b) {
  same_graph(cond, a);
  const std::array<NodeId, 3> args{cond.id, a.id, b.id};
  return same_graph(a, b).make(Op::Select, args);
}

Var matmul(Var a, Var b, bool transpose_a, bool transpose_b) {
  return binary_op(Op::MatMul, a, b, ints({transpose_a, transpose_b}));
}

Var broadcast(Var a, Shape shape) {
  if (a.shape() == shape) return a;
  return unary_op(Op::Broadcast, a, ints({shape.rows, shape.cols}));
}

Var slice_cols(Var a, std::int64_t begin, std::int64_t count) {
  if (begin == 0 && count == a.shape().cols) return a;
  return unary_op(Op::SliceCols, a, ints({begin, count}));
}

Var slice_rows(Var a, std::int64_t begin, std::int64_t count) {
  if (begin == 0 && count == a.shape().rows) return a;
  return unary_op(Op::SliceRows, a, ints({begin, count}));
}

Var concat_cols(std::span<const Var> parts) { return concat<Op::ConcatCols>(parts); }
Var concat_rows(std::span<const Var> parts) { return concat<Op::ConcatRows>(parts); }
Var concat_cols(std::initializer_list<Var> parts) { return concat_cols(std::span(parts)); }
Var concat_rows(std::initializer_list<Var> parts) { return concat_rows(std::span(parts)); }
Var sum_rows(Var a) { return unary_op(Op::SumRows, a); }
Var sum_cols(Var a) { return unary_op(Op::SumCols, a); }
Var mean_rows(Var a) { return unary_op(Op::MeanRows, a); }
Var mean_cols(Var a) { return unary_op(Op::MeanCols, a); }

Var col(Var a, std::int64_t j) { return slice_cols(a, j, 1); }

Var scale(Var a, double factor) {
  if (factor == 1.0) return a;
  if (factor == -1.0) return neg(a);
  return mul(a, graph_of(a).constant({1, 1}, {factor}, a.dtype()));
}

Var square(Var a) { return mul(a, a); }
Var sum_all(Var a) { return sum_cols(sum_rows(a)); }
Var mean_all(Var a) { return mean_cols(mean_rows(a)); }

Var zeros(Graph& graph, Shape shape, DType dtype) {
  return broadcast(graph.constant({1, 1}, {0.0}, dtype), shape);
}

bool is_scalar_constant(Var a, double* value) {
  const Node* n = &a.node();
  if (n->op == Op::Broadcast) n = &a.graph->node(n->args[0]);
  if (n->op != Op::Const || n->shape.size() != 1) return false;
  if (value) *value = (*n->attrs.data)[0];
  return true;
}

namespace {
Var scalar_like(Var a, double value) { return graph_of(a).constant({1, 1}, {value}, a.dtype()); }
}  // namespace

Var operator+(Var a, double b) { return add(a, scalar_like(a, b)); }
Var operator+(double a, Var b) { return add(scalar_like(b, a), b); }
Var operator-(Var a, double b) { return sub(a, scalar_like(a, b)); }
Var operator-(double a, Var b) { return sub(scalar_like(b, a), b); }
Var operator*(Var a, double b) { return scale(a, b); }
Var operator*(double a, Var b) { return scale(b, a); }
Var operator/(Var a, double b) { return div(a, scalar_like(a, b)); }
Var operator/(double a, Var b) { return div(scalar_like(b, a), b); }

}  // namespace jetpde
