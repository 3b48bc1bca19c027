// Simplify: local algebraic identities, applied while rebuilding in topological order so that
// every rule sees simplified operands. The Taylor and reverse-mode transforms are zero-aware
// already; what remains are the zeros and ones that graph building leaves (a broadcast zero from
// a transpose rule, a scale by 1, chains of constant factors from the recurrences).
//
//   x + 0 = x     x - 0 = x     0 - x = -x     x * 0 = 0     x * 1 = x     x / 1 = x
//   0 / x = 0     -(-x) = x     c1 * (c2 * x) = (c1 c2) * x  x * -1 = -x   x + (-y) = x - y
//   x - (-y) = x + y            pow(x, 2) = x * x            pow(x, 0.5) = sqrt(x)
//   reductions, slices, broadcasts and matmuls of a zero are a zero; select(c, x, x) = x
//   concat(a_i) + concat(b_j) = concat(a + b) over common pieces (see add_concats)
//
// Multiplying by zero drops NaN and infinity propagation, as in every PINN framework's graph.
#include <algorithm>

#include "autodiff/ops.h"
#include "autodiff/primitive.h"
#include "compiler/passes.h"

namespace jetpde::compiler {
namespace {

bool scalar_is(Var v, double value) {
  double c = 0;
  return is_scalar_constant(v, &c) && c == value;
}

bool is_zero(Var v) {
  if (scalar_is(v, 0.0)) return true;
  const Node& n = v.node();
  return n.op == Op::Const &&
         std::all_of(n.attrs.data->begin(), n.attrs.data->end(), [](double x) { return x == 0.0; });
}

// `v` as a value of `shape` (broadcast when smaller), keeping the node's dtype.
Var fit(Var v, const Node& node) {
  if (v.dtype() != node.dtype) v = cast(v, node.dtype);
  return broadcast(v, node.shape);
}

Var zero_like(Graph& g, const Node& node) { return zeros(g, node.shape, node.dtype); }

// The parts of a concatenation along its axis, with their offsets; a non-concat is one part.
struct Part {
  std::int64_t begin, end;
  Var var;
};

std::vector<Part> parts_of(Var v, Op concat) {
  std::vector<Part> parts;
  const bool rows = concat == Op::ConcatRows;
  std::int64_t at = 0;
  auto push = [&](Var p) {
    const std::int64_t extent = rows ? p.shape().rows : p.shape().cols;
    parts.push_back({at, at + extent, p});
    at += extent;
  };
  if (v.op() == concat)
    for (NodeId id : v.node().args) push(v.graph->var(id));
  else
    push(v);
  return parts;
}

// Rows (or columns) [begin, end) of the part that covers them.
Var piece(const std::vector<Part>& parts, std::int64_t begin, std::int64_t end, Op concat,
          DType dtype) {
  const bool rows = concat == Op::ConcatRows;
  for (const Part& p : parts) {
    if (begin < p.begin || end > p.end) continue;
    const Shape s = p.var.shape();
    if (is_zero(p.var))
      return zeros(*p.var.graph, rows ? Shape{end - begin, s.cols} : Shape{s.rows, end - begin},
                   dtype);
    return rows ? slice_rows(p.var, begin - p.begin, end - begin)
                : slice_cols(p.var, begin - p.begin, end - begin);
  }
  return Var{};
}

// concat(a_i) + concat(b_j) -> concat of (a + b) over the common refinement of their parts,
// zeros dropped. The adjoint of a weight read row by row (the first layer's Taylor streams are
// rows of W) is a sum of one-row pieces padded with zeros; this makes it one concatenation of
// the rows, without a full-size addition per row.
Var add_concats(Var a, Var b, Op concat, const Node& n) {
  const std::vector<Part> pa = parts_of(a, concat), pb = parts_of(b, concat);
  std::vector<std::int64_t> cuts;
  for (const Part& p : pa) cuts.push_back(p.end);
  for (const Part& p : pb) cuts.push_back(p.end);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Var> pieces;
  std::int64_t begin = 0;
  for (std::int64_t end : cuts) {
    const Var x = piece(pa, begin, end, concat, n.dtype),
              y = piece(pb, begin, end, concat, n.dtype);
    pieces.push_back(is_zero(x) ? y : is_zero(y) ? x : add(x, y));
    begin = end;
  }
  // Neighbouring zero pieces become one.
  std::vector<Var> merged;
  for (Var p : pieces) {
    if (!merged.empty() && is_zero(merged.back()) && is_zero(p)) {
      const Shape s = merged.back().shape(), t = p.shape();
      merged.back() = zeros(*p.graph,
                            concat == Op::ConcatRows ? Shape{s.rows + t.rows, s.cols}
                                                     : Shape{s.rows, s.cols + t.cols},
                            n.dtype);
    } else {
      merged.push_back(p);
    }
  }
  return concat == Op::ConcatRows ? concat_rows(merged) : concat_cols(merged);
}

// Both operands concatenations along the same axis, of the node's full shape.
std::optional<Op> common_concat(std::span<const Var> a, const Node& n) {
  for (Op op : {Op::ConcatRows, Op::ConcatCols})
    if (a[0].op() == op && a[1].op() == op && a[0].shape() == n.shape && a[1].shape() == n.shape)
      return op;
  return std::nullopt;
}

// c * x with c a scalar constant: the factor and the other operand.
bool split_scale(Var v, double* factor, Var* rest) {
  if (v.op() != Op::Mul) return false;
  const Var a = v.graph->var(v.node().args[0]), b = v.graph->var(v.node().args[1]);
  if (is_scalar_constant(b, factor) && b.shape() == Shape{1, 1}) {
    *rest = a;
    return a.shape() == v.shape();
  }
  if (is_scalar_constant(a, factor) && a.shape() == Shape{1, 1}) {
    *rest = b;
    return b.shape() == v.shape();
  }
  return false;
}

std::optional<Var> simplify_arithmetic(Graph& g, const Node& n, std::span<const Var> a) {
  switch (n.op) {
    case Op::Add:
      if (is_zero(a[1])) return fit(a[0], n);
      if (is_zero(a[0])) return fit(a[1], n);
      if (a[1].op() == Op::Neg) return sub(a[0], g.var(a[1].node().args[0]));
      if (auto concat = common_concat(a, n)) return add_concats(a[0], a[1], *concat, n);
      return std::nullopt;
    case Op::Sub:
      if (is_zero(a[1])) return fit(a[0], n);
      if (is_zero(a[0])) return fit(neg(a[1]), n);
      if (a[1].op() == Op::Neg) return add(a[0], g.var(a[1].node().args[0]));
      return std::nullopt;
    case Op::Mul: {
      if (is_zero(a[0]) || is_zero(a[1])) return zero_like(g, n);
      if (scalar_is(a[0], 1.0)) return fit(a[1], n);
      if (scalar_is(a[1], 1.0)) return fit(a[0], n);
      if (scalar_is(a[1], -1.0)) return fit(neg(a[0]), n);
      if (scalar_is(a[0], -1.0)) return fit(neg(a[1]), n);
      double c1 = 0, c2 = 0;
      Var rest;
      const int k = is_scalar_constant(a[0], &c1) ? 0 : is_scalar_constant(a[1], &c1) ? 1 : -1;
      if (k >= 0 && a[k].shape() == Shape{1, 1} && split_scale(a[1 - k], &c2, &rest))
        return fit(scale(rest, c1 * c2), n);
      return std::nullopt;
    }
    case Op::Div:
      if (scalar_is(a[1], 1.0)) return fit(a[0], n);
      if (is_zero(a[0])) return zero_like(g, n);
      return std::nullopt;
    case Op::Neg:
      if (a[0].op() == Op::Neg) return g.var(a[0].node().args[0]);
      if (is_zero(a[0])) return zero_like(g, n);
      return std::nullopt;
    case Op::PowC:
      if (n.attrs.real == 2.0) return square(a[0]);
      if (n.attrs.real == 0.5) return sqrt(a[0]);
      if (n.attrs.real == 1.0) return a[0];
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<Var> simplify_structure(Graph& g, const Node& n, std::span<const Var> a) {
  switch (n.op) {
    case Op::MatMul:
      if (is_zero(a[0]) || is_zero(a[1])) return zero_like(g, n);
      return std::nullopt;
    case Op::SumRows:
    case Op::SumCols:
    case Op::MeanRows:
    case Op::MeanCols:
    case Op::SliceCols:
    case Op::SliceRows:
    case Op::Cast:
      if (is_zero(a[0])) return zero_like(g, n);
      return std::nullopt;
    case Op::Broadcast:
      if (is_zero(a[0])) return zero_like(g, n);
      if (a[0].op() == Op::Broadcast) return broadcast(g.var(a[0].node().args[0]), n.shape);
      return std::nullopt;
    case Op::ConcatCols:
    case Op::ConcatRows:
      if (std::all_of(a.begin(), a.end(), is_zero)) return zero_like(g, n);
      return std::nullopt;
    case Op::Select:
      if (a[1] == a[2]) return fit(a[1], n);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

Module simplify(const Module& in) {
  return rewrite(in, [](Graph& g, const Node& n, std::span<const Var> a) -> std::optional<Var> {
    if (n.args.empty()) return std::nullopt;
    if (auto v = simplify_arithmetic(g, n, a)) return v;
    return simplify_structure(g, n, a);
  });
}

}  // namespace jetpde::compiler
