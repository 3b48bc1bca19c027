// The Taylor transform: propagates a plan's streams node by node with each primitive's Taylor
// rule family (docs/design.md section 5). Every rule has the form
//     z_α = top(x_α, y_α, ...) + lower(α)
// where top is linear in the operands' streams of the same multi-index with an α-independent
// coefficient, and lower sums products of strictly lower streams over the plan's splits. A
// collapsed stream s = Σ w_α z_α is then top(s_x, s_y, ...) + Σ w_α lower(α): the same rule.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"
#include "autodiff/taylor.h"

namespace jetpde {

namespace {
// "<coords>#<tag>": the input's name before its last '#', or "" for a name that is no given
// leaf (stream inputs carry an '@').
std::string given_coordinates(const std::string& name) {
  if (name.find('@') != std::string::npos) return "";
  const std::size_t hash = name.rfind('#');
  return hash == std::string::npos ? "" : name.substr(0, hash);
}

std::string stream_name(const std::string& leaf,
                        const std::vector<std::pair<MultiIndex, double>>& terms) {
  std::string s = leaf + "@";
  for (std::size_t t = 0; t < terms.size(); ++t) {
    if (t) s += "+";
    for (std::size_t i = 0; i < terms[t].first.size(); ++i)
      s += (i ? "." : "") + std::to_string(terms[t].first[i]);
    char w[32];
    std::snprintf(w, sizeof w, "*%.17g", terms[t].second);
    s += w;
  }
  return s;
}
}  // namespace

std::string given_leaf_name(const std::string& coordinates, const std::string& tag) {
  if (tag.empty() || tag.find_first_of("#@") != std::string::npos)
    throw UserError("taylor: a given leaf's tag must be nonempty, without '#' or '@' (got '" + tag +
                    "')");
  if (coordinates.find('@') != std::string::npos)
    throw UserError("taylor: coordinates named '" + coordinates + "' cannot have given leaves");
  return coordinates + "#" + tag;
}

Var given_leaf(Var coordinates, const std::string& tag) {
  if (coordinates.op() != Op::Input)
    throw UserError("taylor: a given leaf needs coordinates that are an input, not " +
                    coordinates.graph->describe(coordinates.id));
  const std::string name = given_leaf_name(coordinates.node().attrs.name, tag);
  return coordinates.graph->input(name, {coordinates.shape().rows, 1}, coordinates.dtype());
}

std::vector<GivenStream> given_streams(Graph& g, const std::string& leaf) {
  std::vector<GivenStream> out;
  const std::string prefix = leaf + "@";
  for (const Var& v : g.inputs()) {
    const std::string& name = v.node().attrs.name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    GivenStream s{name, {}};
    std::size_t at = prefix.size();
    while (at < name.size()) {
      const std::size_t star = name.find('*', at),
                        end = std::min(name.find('+', star), name.size());
      MultiIndex alpha;
      for (std::size_t i = at; i < star;) {
        const std::size_t dot = std::min(name.find('.', i), star);
        alpha.push_back(std::stoi(name.substr(i, dot - i)));
        i = dot + 1;
      }
      s.terms.push_back({alpha, std::stod(name.substr(star + 1, end - star - 1))});
      at = end + 1;
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace detail {

namespace {
constexpr NodeId kZero = -1;  // a symbolic zero stream
}

class TaylorState {
 public:
  explicit TaylorState(TaylorPlan plan)
      : plan_(std::move(plan)), g_(*plan_.vars()[0].input.graph) {}

  const TaylorPlan& plan() const { return plan_; }
  Graph& graph() { return g_; }

  // The stream `key` of node `id`, propagating through its cone first when needed.
  NodeId stream(NodeId id, int key) {
    ensure(id);
    return get(id, key);
  }

 private:
  using Term = TaylorPlan::Term;
  using Streams = std::vector<NodeId>;

  // ---- zero-aware arithmetic on streams -------------------------------------------------------
  Var v(NodeId id) { return g_.var(id); }
  NodeId zadd(NodeId a, NodeId b) {
    if (a == kZero) return b;
    if (b == kZero) return a;
    return add(v(a), v(b)).id;
  }
  NodeId zsub(NodeId a, NodeId b) {
    if (b == kZero) return a;
    if (a == kZero) return neg(v(b)).id;
    return sub(v(a), v(b)).id;
  }
  NodeId zmul(NodeId a, NodeId b) {
    if (a == kZero || b == kZero) return kZero;
    return mul(v(a), v(b)).id;
  }
  NodeId zdiv(NodeId a, NodeId b) { return a == kZero ? kZero : div(v(a), v(b)).id; }
  NodeId zscale(NodeId a, double c) {
    if (a == kZero || c == 0.0) return kZero;
    return scale(v(a), c).id;
  }
  // `a` broadcast to `shape` (a zero becomes a broadcast zero).
  Var full(NodeId a, Shape shape, DType dtype) {
    return a == kZero ? zeros(g_, shape, dtype) : broadcast(v(a), shape);
  }

  // ---- bookkeeping ----------------------------------------------------------------------------
  bool depends(NodeId id) {
    if (static_cast<std::size_t>(id) >= depends_.size()) depends_.resize(g_.size(), -1);
    int8_t& d = depends_[static_cast<std::size_t>(id)];
    if (d >= 0) return d != 0;
    const Node& n = g_.node(id);
    bool dep = false;
    if (primitive(n.op).taylor == TaylorFamily::Step) {
      dep = false;  // piecewise constant: no streams, whatever its operands
    } else if (n.op == Op::Input) {
      const std::string coords = given_coordinates(n.attrs.name);
      for (const TaylorVar& var : plan_.vars())
        dep =
            dep || var.input.id == id || (!coords.empty() && var.input.node().attrs.name == coords);
    } else {
      for (std::size_t i = (n.op == Op::Select ? 1 : 0); i < n.args.size(); ++i)
        dep = dep || depends(n.args[i]);
    }
    d = dep ? 1 : 0;
    return dep;
  }

  NodeId get(NodeId id, int key) {
    if (!depends(id)) return key == 0 ? id : kZero;
    return streams_.at(id)[static_cast<std::size_t>(key)];
  }

  void ensure(NodeId root) {
    if (!depends(root) || streams_.count(root)) return;
    std::vector<NodeId> todo, stack{root};
    std::unordered_set<NodeId> seen;
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (!depends(id) || streams_.count(id) || !seen.insert(id).second) continue;
      todo.push_back(id);
      for (NodeId a : g_.node(id).args) stack.push_back(a);
    }
    std::sort(todo.begin(), todo.end());  // operands first
    for (NodeId id : todo)
      if (!streams_.count(id)) propagate(id);
  }

  void propagate(NodeId id) {
    const Node& n = g_.node(id);
    Streams out(static_cast<std::size_t>(plan_.stream_count()), kZero);
    out[0] = id;
    switch (primitive(n.op).taylor) {
      case TaylorFamily::Leaf:
        seed(id, out);
        break;
      case TaylorFamily::Linear:
        linear(id, out);
        break;
      case TaylorFamily::Select:
        select_rule(id, out);
        break;
      case TaylorFamily::Mul:
        product(id, out, false);
        break;
      case TaylorFamily::MatMul:
        product(id, out, true);
        break;
      case TaylorFamily::Div:
        division(id, out);
        break;
      case TaylorFamily::UnaryPoly:
        unary_poly(id, out);
        break;
      case TaylorFamily::Pair:
        pair(id);
        return;
      case TaylorFamily::Step:
        break;
      case TaylorFamily::Log:
        logarithm(id, out);
        break;
      case TaylorFamily::Sqrt:
        square_root(id, out);
        break;
      case TaylorFamily::Chain:
        chain(id, out);
        break;
      case TaylorFamily::Pow:
        power(id, out);
        break;
    }
    streams_[id] = std::move(out);
  }

  // Σ over a stream's terms of weight * f(term), for the lower parts.
  template <class F>
  NodeId lower_sum(int key, F f) {
    NodeId acc = kZero;
    for (const Term& t : plan_.streams()[static_cast<std::size_t>(key)].terms)
      acc = zadd(acc, zscale(f(t), t.weight));
    return acc;
  }

  // ---- families -------------------------------------------------------------------------------
  // Inputs: unit seeds, a one-hot row per coordinate ([1, cols], broadcast over points).
  void seed(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    const bool coordinate = std::any_of(plan_.vars().begin(), plan_.vars().end(),
                                        [&](const TaylorVar& v) { return v.input.id == id; });
    if (!coordinate && !given_coordinates(n.attrs.name).empty()) return given(id, out);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      std::vector<double> row(static_cast<std::size_t>(n.shape.cols), 0.0);
      bool any = false;
      for (const Term& t : plan_.streams()[static_cast<std::size_t>(key)].terms) {
        if (degree(t.alpha) != 1) continue;
        const TaylorVar& var = plan_.vars()[static_cast<std::size_t>(t.axis)];
        if (var.input.id != id) continue;
        row[static_cast<std::size_t>(var.column)] += t.weight;
        any = true;
      }
      if (any) out[static_cast<std::size_t>(key)] = g_.constant({1, n.shape.cols}, row, n.dtype).id;
    }
  }

  // A given leaf: each stream is the input named by its terms over the columns of the leaf's
  // coordinates; terms in coordinates of other inputs vanish (f does not depend on them).
  void given(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    const std::string coords = given_coordinates(n.attrs.name);
    const Var c = g_.leaf(coords);
    const auto cols = static_cast<std::size_t>(c.shape().cols);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      std::vector<std::pair<MultiIndex, double>> terms;
      for (const Term& t : plan_.streams()[static_cast<std::size_t>(key)].terms) {
        MultiIndex full(cols, 0);
        bool other = false;
        for (std::size_t k = 0; k < t.alpha.size(); ++k) {
          if (t.alpha[k] == 0) continue;
          const TaylorVar& var = plan_.vars()[k];
          if (var.input.id != c.id)
            other = true;
          else
            full[static_cast<std::size_t>(var.column)] += t.alpha[k];
        }
        if (!other) terms.push_back({full, t.weight});
      }
      if (terms.empty()) continue;
      out[static_cast<std::size_t>(key)] =
          g_.input(stream_name(n.attrs.name, terms), n.shape, n.dtype).id;
    }
  }

  // The same op on the operands' streams. Streams may be smaller than their node (a broadcast
  // row or column); ops that mix rows or columns either keep that form or materialize it.
  void linear(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      std::vector<NodeId> s;
      for (NodeId a : n.args) s.push_back(get(a, key));
      if (std::all_of(s.begin(), s.end(), [](NodeId x) { return x == kZero; })) continue;
      out[static_cast<std::size_t>(key)] = linear_stream(n, s);
    }
  }

  NodeId linear_stream(const Node& n, const std::vector<NodeId>& s) {
    const Shape a = g_.node(n.args[0]).shape;
    const auto same = [&](NodeId x) { return g_.node(x).shape; };  // a stream's own shape
    switch (n.op) {
      case Op::Neg:
        return neg(v(s[0])).id;
      case Op::Add:
        return zadd(s[0], s[1]);
      case Op::Sub:
        return zsub(s[0], s[1]);
      case Op::Cast:
        return cast(v(s[0]), n.dtype).id;
      case Op::Broadcast:
        return s[0];
      case Op::SliceCols:
        return same(s[0]).cols == a.cols ? g_.make(n.op, s, n.attrs).id : s[0];
      case Op::SliceRows:
        return same(s[0]).rows == a.rows ? g_.make(n.op, s, n.attrs).id : s[0];
      case Op::SumRows:
        return same(s[0]).rows == a.rows ? sum_rows(v(s[0])).id
                                         : zscale(s[0], static_cast<double>(a.rows));
      case Op::SumCols:
        return same(s[0]).cols == a.cols ? sum_cols(v(s[0])).id
                                         : zscale(s[0], static_cast<double>(a.cols));
      case Op::MeanRows:
        return same(s[0]).rows == a.rows ? mean_rows(v(s[0])).id : s[0];
      case Op::MeanCols:
        return same(s[0]).cols == a.cols ? mean_cols(v(s[0])).id : s[0];
      case Op::ConcatCols:
      case Op::ConcatRows: {
        std::vector<NodeId> parts;
        for (std::size_t i = 0; i < s.size(); ++i) {
          const Shape arg_shape = g_.node(n.args[i]).shape;
          parts.push_back(full(s[i], arg_shape, n.dtype).id);
        }
        return g_.make(n.op, parts, n.attrs).id;
      }
      default:
        throw InternalError(std::string("no linear Taylor rule for ") + op_name(n.op));
    }
  }

  void select_rule(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId a = get(n.args[1], key), b = get(n.args[2], key);
      if (a == kZero && b == kZero) continue;
      const Var zero = g_.constant({1, 1}, {0.0}, n.dtype);
      out[static_cast<std::size_t>(key)] =
          select(v(n.args[0]), a == kZero ? zero : v(a), b == kZero ? zero : v(b)).id;
    }
  }

  // One term x_β ∘ y_γ of a product (∘ elementwise or matrix product).
  NodeId times(const Node& n, bool matrix, NodeId x, NodeId y) {
    if (x == kZero || y == kZero) return kZero;
    if (!matrix) return zmul(x, y);
    const bool ta = n.attrs.ints[0] != 0, tb = n.attrs.ints[1] != 0;
    const Node& a_node = g_.node(n.args[0]);  // copied: building nodes may move the graph's nodes
    const Node& b_node = g_.node(n.args[1]);
    const struct {
      Shape shape;
      DType dtype;
    } a{a_node.shape, a_node.dtype}, b{b_node.shape, b_node.dtype};
    // The first layer: a one-hot seed row times W is a row of W.
    if (!ta && !tb)
      if (auto j = one_hot_column(x)) return slice_rows(full(y, b.shape, b.dtype), *j, 1).id;
    // A broadcast row of the left operand stays a row; anything else is materialized.
    const Shape xs = g_.node(x).shape;
    const Var lhs = (!ta && xs.cols == a.shape.cols) ? v(x) : full(x, a.shape, a.dtype);
    return matmul(lhs, full(y, b.shape, b.dtype), ta, tb).id;
  }

  std::optional<std::int64_t> one_hot_column(NodeId id) {
    const Node& n = g_.node(id);
    if (n.op != Op::Const || n.shape.rows != 1) return std::nullopt;
    std::optional<std::int64_t> at;
    for (std::size_t j = 0; j < n.attrs.data->size(); ++j) {
      const double x = (*n.attrs.data)[j];
      if (x == 0.0) continue;
      if (x != 1.0 || at) return std::nullopt;
      at = static_cast<std::int64_t>(j);
    }
    return at;
  }

  // z_α = x_α y_0 + x_0 y_α + Σ_{0<β<α} x_β y_{α-β}
  void product(NodeId id, Streams& out, bool matrix) {
    const Node n = g_.node(id);
    const NodeId x = n.args[0], y = n.args[1];
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId top = zadd(times(n, matrix, get(x, key), y), times(n, matrix, x, get(y, key)));
      const NodeId low = lower_sum(key, [&](const Term& t) {
        NodeId acc = kZero;
        for (auto [b, c] : t.inner) acc = zadd(acc, times(n, matrix, get(x, b), get(y, c)));
        return acc;
      });
      out[static_cast<std::size_t>(key)] = zadd(top, low);
    }
  }

  // y_0 z_α = x_α - z_0 y_α - Σ_{0<β<α} y_β z_{α-β}
  void division(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    const NodeId x = n.args[0], y = n.args[1];
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId low = lower_sum(key, [&](const Term& t) {
        NodeId acc = kZero;
        for (auto [b, c] : t.inner)
          acc = zadd(acc, zmul(get(y, b), out[static_cast<std::size_t>(c)]));
        return acc;
      });
      const NodeId num = zsub(zsub(get(x, key), zmul(id, get(y, key))), low);
      out[static_cast<std::size_t>(key)] = zdiv(num, y);
    }
  }

  // The recurrence of a unary f with f' = w (w's streams given by `w`):
  //   z_α = w_0 x_α + (1/α_i) Σ_{0<β<α, β_i>0} β_i x_β w_{α-β}
  template <class W>
  NodeId recurrence(NodeId x, int key, NodeId w0, W w) {
    const NodeId top = zmul(w0, get(x, key));
    const NodeId low = lower_sum(key, [&](const Term& t) {
      NodeId acc = kZero;
      for (auto [b, c] : t.inner) {
        const int bi =
            plan_.closure()[static_cast<std::size_t>(b)][static_cast<std::size_t>(t.axis)];
        if (bi > 0) acc = zadd(acc, zscale(zmul(get(x, b), w(c)), bi));
      }
      return zscale(acc, 1.0 / t.alpha[static_cast<std::size_t>(t.axis)]);
    });
    return zadd(top, low);
  }

  // f' = p0 + p1 f + p2 f² (exp, tanh, sigmoid); w's streams follow from z's.
  void unary_poly(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    const auto& p = primitive(n.op).taylor_poly;
    Streams w(out.size(), kZero);
    w[0] = poly_value(id, p, n.dtype);
    std::vector<bool> done(out.size(), false);
    done[0] = true;
    const auto w_of = [&](int c) {
      if (!done[static_cast<std::size_t>(c)]) {  // w_γ = p1 z_γ + p2 Σ_{β≤γ} z_β z_{γ-β}
        const Term& t = plan_.streams()[static_cast<std::size_t>(c)].terms[0];
        NodeId sq = zscale(zmul(id, out[static_cast<std::size_t>(c)]), 2.0);
        for (auto [b, e] : t.inner)
          sq = zadd(sq, zmul(out[static_cast<std::size_t>(b)], out[static_cast<std::size_t>(e)]));
        w[static_cast<std::size_t>(c)] =
            zadd(zscale(out[static_cast<std::size_t>(c)], p[1]), zscale(sq, p[2]));
        done[static_cast<std::size_t>(c)] = true;
      }
      return w[static_cast<std::size_t>(c)];
    };
    for (int key = 1; key < plan_.stream_count(); ++key)
      out[static_cast<std::size_t>(key)] = recurrence(n.args[0], key, w[0], w_of);
  }

  NodeId poly_value(NodeId z, const std::array<double, 3>& p, DType dtype) {
    NodeId acc = kZero;
    if (p[0] != 0.0) acc = g_.constant({1, 1}, {p[0]}, dtype).id;
    acc = zadd(acc, zscale(z, p[1]));
    return zadd(acc, zscale(zmul(z, z), p[2]));
  }

  // z = f(x) and w = g(x) of the same operand, propagated together: f' = s_f g, g' = s_g f
  // (sin/cos: s_sin = 1, s_cos = -1; sinh/cosh: 1 and 1).
  void pair(NodeId id) {
    const Node n = g_.node(id);
    const Primitive& pf = primitive(n.op);
    const std::array<NodeId, 1> operand{n.args[0]};
    const NodeId x = n.args[0], z = id, w = g_.make(pf.partner, operand).id;
    const double zs = pf.pair_signs[0], ws = pf.pair_signs[1];  // z' = zs w, w' = ws z
    Streams sz(static_cast<std::size_t>(plan_.stream_count()), kZero), sw = sz;
    sz[0] = z;
    sw[0] = w;
    const NodeId dz0 = zs == 1.0 ? w : neg(v(w)).id, dw0 = ws == 1.0 ? z : neg(v(z)).id;
    for (int key = 1; key < plan_.stream_count(); ++key) {
      sz[static_cast<std::size_t>(key)] = recurrence(
          x, key, dz0, [&](int k) { return zscale(sw[static_cast<std::size_t>(k)], zs); });
      sw[static_cast<std::size_t>(key)] = recurrence(
          x, key, dw0, [&](int k) { return zscale(sz[static_cast<std::size_t>(k)], ws); });
    }
    depends(z);
    depends(w);
    streams_[z] = std::move(sz);
    streams_[w] = std::move(sw);
  }

  // x_0 z_α = x_α - (1/α_i) Σ_{0<β<α, β_i>0} β_i z_β x_{α-β}
  void logarithm(NodeId id, Streams& out) {
    const NodeId x = g_.node(id).args[0];
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId low = lower_sum(key, [&](const Term& t) {
        NodeId acc = kZero;
        for (auto [b, c] : t.inner) {
          const int bi =
              plan_.closure()[static_cast<std::size_t>(b)][static_cast<std::size_t>(t.axis)];
          if (bi > 0)
            acc = zadd(acc, zscale(zmul(out[static_cast<std::size_t>(b)], get(x, c)), bi));
        }
        return zscale(acc, 1.0 / t.alpha[static_cast<std::size_t>(t.axis)]);
      });
      out[static_cast<std::size_t>(key)] = zdiv(zsub(get(x, key), low), x);
    }
  }

  // 2 z_0 z_α = x_α - Σ_{0<β<α} z_β z_{α-β}
  void square_root(NodeId id, Streams& out) {
    const NodeId x = g_.node(id).args[0];
    const NodeId two_z = zscale(id, 2.0);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId low = lower_sum(key, [&](const Term& t) {
        NodeId acc = kZero;
        for (auto [b, c] : t.inner)
          acc = zadd(acc, zmul(out[static_cast<std::size_t>(b)], out[static_cast<std::size_t>(c)]));
        return acc;
      });
      out[static_cast<std::size_t>(key)] = zdiv(zsub(get(x, key), low), two_z);
    }
  }

  // z' = Σ_j g_j x_j' with the partials g_j built from the operands in the graph (their streams
  // by the families of their ops): z follows by the recurrence of a unary f with f' = g_j, summed
  // over the operands.
  void chain(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    std::vector<Var> operands;
    for (NodeId a : n.args) operands.push_back(v(a));
    const std::vector<Var> partials = primitive(n.op).partials(operands);
    for (const Var& g : partials) ensure(g.id);
    for (int key = 1; key < plan_.stream_count(); ++key) {
      NodeId sum = kZero;
      for (std::size_t j = 0; j < partials.size(); ++j) {
        const NodeId g = partials[j].id;
        sum = zadd(sum, recurrence(n.args[j], key, g, [&](int c) { return get(g, c); }));
      }
      out[static_cast<std::size_t>(key)] = sum;
    }
  }

  // x_0 z_α = p z_0 x_α + (1/α_i) Σ_{0<β<α, β_i>0} β_i (p x_β z_{α-β} - z_β x_{α-β})
  void power(NodeId id, Streams& out) {
    const Node n = g_.node(id);
    const NodeId x = n.args[0];
    const double p = n.attrs.real;
    for (int key = 1; key < plan_.stream_count(); ++key) {
      const NodeId top = zscale(zmul(id, get(x, key)), p);
      const NodeId low = lower_sum(key, [&](const Term& t) {
        NodeId acc = kZero;
        for (auto [b, c] : t.inner) {
          const int bi =
              plan_.closure()[static_cast<std::size_t>(b)][static_cast<std::size_t>(t.axis)];
          if (bi == 0) continue;
          const NodeId d = zsub(zscale(zmul(get(x, b), out[static_cast<std::size_t>(c)]), p),
                                zmul(out[static_cast<std::size_t>(b)], get(x, c)));
          acc = zadd(acc, zscale(d, bi));
        }
        return zscale(acc, 1.0 / t.alpha[static_cast<std::size_t>(t.axis)]);
      });
      out[static_cast<std::size_t>(key)] = zdiv(zadd(top, low), x);
    }
  }

  TaylorPlan plan_;
  Graph& g_;
  std::unordered_map<NodeId, Streams> streams_;
  std::vector<int8_t> depends_;
};

}  // namespace detail

Taylor::Taylor(TaylorPlan plan) : state_(std::make_unique<detail::TaylorState>(std::move(plan))) {}
Taylor::~Taylor() = default;

const TaylorPlan& Taylor::plan() const { return state_->plan(); }

Var Taylor::stream(Var y, int key) {
  Graph& g = state_->graph();
  if (y.graph != &g) throw UserError("taylor: the node is not in the plan's graph");
  if (key < 0 || key >= plan().stream_count())
    throw UserError("taylor: stream " + std::to_string(key) + " is out of range");
  return Var{&g, state_->stream(y.id, key)};
}

namespace {
Var read_out(Graph& g, Var stream, Var y, double factor) {
  if (stream.id < 0) return zeros(g, y.shape(), y.dtype());
  return broadcast(scale(stream, factor), y.shape());
}

double factorial(const MultiIndex& alpha) {
  double f = 1.0;
  for (int a : alpha)
    for (int k = 2; k <= a; ++k) f *= k;
  return f;
}
}  // namespace

Var Taylor::derivative(Var y, const MultiIndex& alpha) {
  const int key = plan().key_of(alpha);
  if (key < 0)
    throw UserError("taylor: the derivative " + multi_index_str(alpha) +
                    " was not planned; the plan has " + plan().str());
  return read_out(*y.graph, stream(y, key), y, factorial(alpha));
}

Var Taylor::sum(Var y, std::size_t k) {
  const auto& sums = plan().sums();
  if (k >= sums.size()) throw UserError("taylor: the plan has no sum number " + std::to_string(k));
  if (plan().collapsed(k)) return read_out(*y.graph, stream(y, plan().collapsed_key(k)), y, 1.0);
  Var acc{};
  for (const auto& [alpha, coeff] : sums[k].terms) {
    const Var term = scale(derivative(y, alpha), coeff);
    acc = acc.id < 0 ? term : add(acc, term);
  }
  return acc;
}

Var Taylor::sum(Var y, const std::string& name) {
  const auto& sums = plan().sums();
  for (std::size_t k = 0; k < sums.size(); ++k)
    if (sums[k].name == name) return sum(y, k);
  throw UserError("taylor: the plan has no sum named '" + name + "'");
}

}  // namespace jetpde
