#include "compiler/lower.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/errors.h"
#include "autodiff/primitive.h"

namespace jetpde::compiler {
namespace {

// Where a node's value is: a view of a buffer, a value of a kernel, or a scalar literal.
struct Location {
  std::optional<View> view;
  int kernel = -1;
  int value = -1;
  std::optional<double> literal;
};

struct KernelState {
  Kernel kernel;
  bool open = true;
  std::vector<NodeId> members;     // nodes whose value lives in this kernel
  std::unordered_set<int> writes;  // buffers it stores to
};

// Whether the kernel stores to any of `buffers` (then it cannot also load them).
bool writes_any(const KernelState& ks, const std::unordered_set<int>& buffers) {
  for (int b : buffers)
    if (ks.writes.count(b) > 0) return true;
  return false;
}

// `v` read as a value of `shape`: dimensions of size 1 broadcast.
View broadcast_view(View v, Shape shape) {
  v.row_broadcast = v.row_broadcast || (v.shape.rows == 1 && shape.rows > 1);
  v.col_broadcast = v.col_broadcast || (v.shape.cols == 1 && shape.cols > 1);
  v.shape = shape;
  return v;
}

bool is_reduction(Op op) {
  return op == Op::SumRows || op == Op::SumCols || op == Op::MeanRows || op == Op::MeanCols;
}

class Lowering {
 public:
  explicit Lowering(const Module& m) : m_(m), g_(*m.graph), loc_(g_.size()) {}

  Program run() {
    std::vector<bool> needed(g_.size(), false);
    for (NodeId id : m_.outputs) needed[static_cast<std::size_t>(id)] = true;
    for (auto id = static_cast<NodeId>(g_.size()) - 1; id >= 0; --id)
      if (needed[static_cast<std::size_t>(id)])
        for (NodeId a : g_.node(id).args) needed[static_cast<std::size_t>(a)] = true;
    // Sums over the rows (row reductions, weight gradients aᵀ b) and what is computed from them
    // alone are lowered last, unless a node of the other kind needs them; first the row
    // reductions of what is lowered before (they join the kernels computing their operands),
    // then the rest. In graph order, each would seal the kernels over the points it reads (a
    // kernel's loads follow their stores), splitting what can be one kernel into one per stream
    // (a first layer's input derivatives, one per dimension, each summed into a gradient).
    const auto row_sum = [&](const Node& n) { return n.op == Op::SumRows || n.op == Op::MeanRows; };
    std::vector<bool> sums(g_.size(), false), early(g_.size(), false);
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id) {
      const Node& n = node(id);
      if (row_sum(n) || (n.op == Op::MatMul && n.attrs.ints[0] != 0)) {
        sums[static_cast<std::size_t>(id)] = true;
        continue;
      }
      bool any = false, all = true;
      for (NodeId a : n.args) {
        const Op op = node(a).op;
        if (op == Op::Input || op == Op::Param || op == Op::Const) continue;
        any = true;
        all = all && sums[static_cast<std::size_t>(a)];
      }
      sums[static_cast<std::size_t>(id)] = any && all;
    }
    std::vector<int> pass(g_.size(), -1);  // 0, 1, 2 as above; -1 not needed
    for (auto id = static_cast<NodeId>(g_.size()) - 1; id >= 0; --id) {
      const auto i = static_cast<std::size_t>(id);
      if (!needed[i] || (sums[i] && !early[i])) continue;
      early[i] = true;
      pass[i] = 0;
      for (NodeId a : node(id).args) early[static_cast<std::size_t>(a)] = true;
    }
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id) {
      const auto i = static_cast<std::size_t>(id);
      if (!needed[i] || early[i]) continue;
      bool after_early = row_sum(node(id));
      for (NodeId a : node(id).args)
        after_early = after_early && early[static_cast<std::size_t>(a)];
      pass[i] = after_early ? 1 : 2;
    }
    // A cast to a 16-bit type (a GEMM operand under a bf16/f16 policy) is lowered as soon as its
    // operand is, and a stack of such casts as soon as its parts are: they join the kernel
    // computing the operand, which stores the 16-bit copy (straight into its slice of the stack)
    // while the value is at hand. In graph order a weight gradient's casts would come with it,
    // at the end, in a kernel of their own that reads every layer's streams back and keeps them
    // alive until then.
    std::vector<std::vector<NodeId>> users(g_.size());
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id)
      if (pass[static_cast<std::size_t>(id)] >= 0)
        for (NodeId a : node(id).args) users[static_cast<std::size_t>(a)].push_back(id);
    const auto narrowing = [&](NodeId id) {
      const Node& n = node(id);
      return n.op == Op::Cast && (n.dtype == DType::bf16 || n.dtype == DType::f16);
    };
    const auto eager = [&](NodeId id) {
      const Node& n = node(id);
      if (narrowing(id)) return true;
      if (n.op != Op::ConcatRows) return false;
      return std::all_of(n.args.begin(), n.args.end(), narrowing);
    };
    std::vector<bool> lowered(g_.size(), false);
    const auto lower_from = [&](auto& self, NodeId id) -> void {
      lower_node(id);
      lowered[static_cast<std::size_t>(id)] = true;
      for (NodeId u : users[static_cast<std::size_t>(id)]) {
        if (lowered[static_cast<std::size_t>(u)] || !eager(u)) continue;
        const auto& args = node(u).args;
        if (std::all_of(args.begin(), args.end(),
                        [&](NodeId a) { return lowered[static_cast<std::size_t>(a)]; }))
          self(self, u);
      }
    };
    for (const int p : {0, 1, 2})
      for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id)
        if (pass[static_cast<std::size_t>(id)] == p && !lowered[static_cast<std::size_t>(id)])
          lower_from(lower_from, id);
    for (NodeId id : m_.outputs) {
      const View v = materialize(id);
      use(v, -1);
      p_.outputs.push_back(v);
    }
    for (std::size_t k = 0; k < kernels_.size(); ++k) seal(static_cast<int>(k));
    return std::move(p_);
  }

 private:
  const Node& node(NodeId id) const { return g_.node(id); }
  Location& loc(NodeId id) { return loc_[static_cast<std::size_t>(id)]; }

  int add_buffer(Buffer b) {
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size() - 1);
  }

  View full_view(int buffer) const { return View{buffer, 0, 0, p_.buffers[buffer].shape}; }

  int new_temp(Shape shape, DType dtype) {
    Buffer b;
    b.kind = Buffer::Kind::Temp;
    b.shape = shape;
    b.dtype = storage_dtype(dtype);
    return add_buffer(std::move(b));
  }

  // Buffers keep the node's dtype; a bf16 or f16 buffer holds f32 values rounded to it, unless
  // a runtime packs it (pack_bf16_gemm_operands).
  static DType storage_dtype(DType d) { return d; }

  // ---- kernels --------------------------------------------------------------------------------
  int new_kernel(Shape domain) {
    kernels_.push_back({});
    kernels_.back().kernel.domain = domain;
    return static_cast<int>(kernels_.size() - 1);
  }

  void seal(int k) {
    KernelState& ks = kernels_[static_cast<std::size_t>(k)];
    if (!ks.open) return;
    ks.open = false;
    p_.steps.push_back(Step{std::move(ks.kernel)});
    emitted_[k] = static_cast<int>(p_.steps.size() - 1);
    for (int b : ks.writes) std::erase(pending_writers_[b], k);
  }

  Kernel& kernel_of(int k) {
    KernelState& ks = kernels_[static_cast<std::size_t>(k)];
    if (ks.open) return ks.kernel;
    return std::get<Kernel>(p_.steps[static_cast<std::size_t>(emitted_.at(k))].op);
  }

  // A step (kernel `reader`, or -1 for a GEMM or an output) reads `v`: every other kernel still
  // writing its buffer must run first.
  void use(const View& v, int reader) {
    auto it = pending_writers_.find(v.buffer);
    if (it == pending_writers_.end()) return;
    const std::vector<int> writers = it->second;
    for (int w : writers)
      if (w != reader) seal(w);
  }

  void add_store(int k, int value, const View& target) {
    kernel_of(k).stores.push_back({value, target});
    note_write(k, target.buffer);
  }

  void note_write(int k, int buffer) {
    KernelState& ks = kernels_[static_cast<std::size_t>(k)];
    ks.writes.insert(buffer);
    if (ks.open) pending_writers_[buffer].push_back(k);
  }

  int add_value(int k, Value v) {
    Kernel& kern = kernels_[static_cast<std::size_t>(k)].kernel;
    kern.values.push_back(std::move(v));
    return static_cast<int>(kern.values.size() - 1);
  }

  // Merges open kernel `from` into open kernel `into` (same domain).
  void merge(int into, int from) {
    KernelState& a = kernels_[static_cast<std::size_t>(into)];
    KernelState& b = kernels_[static_cast<std::size_t>(from)];
    const int value_base = static_cast<int>(a.kernel.values.size());
    const int load_base = static_cast<int>(a.kernel.loads.size());
    a.kernel.loads.insert(a.kernel.loads.end(), b.kernel.loads.begin(), b.kernel.loads.end());
    for (Value v : b.kernel.values) {
      for (int& arg : v.args) arg += value_base;
      if (v.kind == Value::Kind::Load) v.load += load_base;
      a.kernel.values.push_back(std::move(v));
    }
    for (Kernel::Store s : b.kernel.stores) {
      s.value += value_base;
      a.kernel.stores.push_back(s);
    }
    for (Kernel::Reduction r : b.kernel.reductions) {
      r.value += value_base;
      a.kernel.reductions.push_back(r);
    }
    for (NodeId id : b.members) {
      loc(id).kernel = into;
      loc(id).value += value_base;
      a.members.push_back(id);
    }
    for (int buf : b.writes) {
      a.writes.insert(buf);
      auto& w = pending_writers_[buf];
      std::replace(w.begin(), w.end(), from, into);
      w.erase(std::unique(w.begin(), w.end()), w.end());
    }
    b = KernelState{};
    b.open = false;  // empty: never emitted
  }

  // The value of node `id` inside kernel `k` (a load when it is not computed there).
  int value_in(int k, NodeId id) {
    Location& l = loc(id);
    if (l.kernel == k) return l.value;
    if (l.literal)
      return add_value(k, Value{Value::Kind::Literal, Op::Const, node(id).dtype, {}, *l.literal});
    View v = materialize(id);
    use(v, k);
    v = broadcast_view(v, kernels_[static_cast<std::size_t>(k)].kernel.domain);
    Kernel& kern = kernels_[static_cast<std::size_t>(k)].kernel;
    for (std::size_t i = 0; i < kern.values.size(); ++i) {  // the same view loaded once
      const Value& old = kern.values[i];
      if (old.kind != Value::Kind::Load || old.dtype != node(id).dtype) continue;
      if (kern.loads[static_cast<std::size_t>(old.load)] == v) return static_cast<int>(i);
    }
    kern.loads.push_back(v);
    return add_value(k, Value{Value::Kind::Load,
                              Op::Input,
                              node(id).dtype,
                              {},
                              0.0,
                              static_cast<int>(kern.loads.size() - 1)});
  }

  // A buffer view holding node `id`'s value, storing it from its kernel when needed.
  View materialize(NodeId id) {
    Location& l = loc(id);
    if (l.view) return *l.view;
    const Node& n = node(id);
    if (l.literal) {
      Buffer b;
      b.kind = Buffer::Kind::Constant;
      b.shape = {1, 1};
      b.dtype = storage_dtype(n.dtype);
      b.data = {*l.literal};
      View v = full_view(add_buffer(std::move(b)));
      v.shape = n.shape;
      v.row_broadcast = n.shape.rows > 1;
      v.col_broadcast = n.shape.cols > 1;
      l.view = v;
      return v;
    }
    check_internal(l.kernel >= 0, "lowering: node without a location");
    const View v = full_view(new_temp(n.shape, n.dtype));
    add_store(l.kernel, l.value, v);
    loc(id).view = v;  // `l` may be stale after add_store; re-fetch
    return v;
  }

  // ---- nodes ----------------------------------------------------------------------------------
  void lower_node(NodeId id) {
    const Node n = node(id);
    switch (n.op) {
      case Op::Input:
      case Op::Param:
        return leaf(id, n);
      case Op::Const:
        return constant(id, n);
      case Op::Broadcast:
        return broadcast(id, n);
      case Op::SliceCols:
      case Op::SliceRows:
        return slice(id, n);
      case Op::MatMul:
        return gemm(id, n);
      case Op::ConcatCols:
      case Op::ConcatRows:
        return concat(id, n);
      default:
        if (is_reduction(n.op)) return reduction(id, n);
        return elementwise(id, n);
    }
  }

  void leaf(NodeId id, const Node& n) {
    Buffer b;
    b.kind = n.op == Op::Input ? Buffer::Kind::Input : Buffer::Kind::Param;
    b.name = n.attrs.name;
    b.shape = n.shape;
    b.dtype = storage_dtype(n.dtype);
    loc(id).view = full_view(add_buffer(std::move(b)));
  }

  void constant(NodeId id, const Node& n) {
    if (n.shape == Shape{1, 1}) {
      loc(id).literal = (*n.attrs.data)[0];
      return;
    }
    Buffer b;
    b.kind = Buffer::Kind::Constant;
    b.shape = n.shape;
    b.dtype = storage_dtype(n.dtype);
    b.data = *n.attrs.data;
    loc(id).view = full_view(add_buffer(std::move(b)));
  }

  void broadcast(NodeId id, const Node& n) {
    const NodeId a = n.args[0];
    if (loc(a).literal) {
      loc(id).literal = loc(a).literal;
      return;
    }
    loc(id).view = broadcast_view(materialize(a), n.shape);
  }

  void slice(NodeId id, const Node& n) {
    const NodeId a = n.args[0];
    if (loc(a).literal) {
      loc(id).literal = loc(a).literal;
      return;
    }
    View v = materialize(a);
    const std::int64_t begin = n.attrs.ints[0];
    if (n.op == Op::SliceCols && !v.col_broadcast) v.col0 += begin;
    if (n.op == Op::SliceRows && !v.row_broadcast) v.row0 += begin;
    v.shape = n.shape;
    loc(id).view = v;
  }

  // A view a GEMM of type `dtype` can read: no broadcasting, stored in `dtype` (copied into a
  // buffer when not).
  View dense_view(NodeId id, DType dtype) {
    View v = materialize(id);
    const bool same_type =
        p_.buffers[static_cast<std::size_t>(v.buffer)].dtype == storage_dtype(dtype);
    if (!v.row_broadcast && !v.col_broadcast && same_type) {
      use(v, -1);
      return v;
    }
    const View out = full_view(new_temp(v.shape, dtype));
    const int k = new_kernel(v.shape);
    add_store(k, value_in(k, id), out);
    use(out, -1);
    return out;
  }

  // The dtype a GEMM reads operand `arg` in: its own where both operands are 16-bit (the product
  // of 16-bit matrices accumulates in f32), else the product's.
  DType operand_dtype(const Node& n, NodeId arg) const {
    const auto narrow = [&](NodeId a) {
      return node(a).dtype == DType::bf16 || node(a).dtype == DType::f16;
    };
    return narrow(n.args[0]) && narrow(n.args[1]) ? node(arg).dtype : n.dtype;
  }

  void gemm(NodeId id, const Node& n) {
    Gemm g;
    g.a = dense_view(n.args[0], operand_dtype(n, n.args[0]));
    g.b = dense_view(n.args[1], operand_dtype(n, n.args[1]));
    g.transpose_a = n.attrs.ints[0] != 0;
    g.transpose_b = n.attrs.ints[1] != 0;
    g.c = full_view(new_temp(n.shape, n.dtype));
    p_.steps.push_back(Step{g});
    loc(id).view = g.c;
  }

  void concat(NodeId id, const Node& n) {
    const View out = full_view(new_temp(n.shape, n.dtype));
    std::int64_t at = 0;
    for (NodeId part : n.args) {
      const Shape s = node(part).shape;
      View target = out;
      target.shape = s;
      (n.op == Op::ConcatCols ? target.col0 : target.row0) = at;
      at += n.op == Op::ConcatCols ? s.cols : s.rows;
      const Location& l = loc(part);
      // The producer writes its part in place when it is an open kernel of the part's shape;
      // a part not stored anywhere yet then lives in the stacked buffer.
      const bool in_place = l.kernel >= 0 && kernels_[static_cast<std::size_t>(l.kernel)].open &&
                            kernels_[static_cast<std::size_t>(l.kernel)].kernel.domain == s;
      const int k = in_place ? l.kernel : new_kernel(s);
      add_store(k, value_in(k, part), target);
      if (in_place && !loc(part).view) loc(part).view = target;
    }
    loc(id).view = out;
  }

  void reduction(NodeId id, const Node& n) {
    const NodeId a = n.args[0];
    const Shape s = node(a).shape;
    const bool over_rows = n.op == Op::SumRows || n.op == Op::MeanRows;
    const bool mean = n.op == Op::MeanRows || n.op == Op::MeanCols;
    if (loc(a).literal) {
      const double count = static_cast<double>(over_rows ? s.rows : s.cols);
      loc(id).literal = *loc(a).literal * (mean ? 1.0 : count);
      return;
    }
    const Location& l = loc(a);
    const int k = (l.kernel >= 0 && kernels_[static_cast<std::size_t>(l.kernel)].open &&
                   kernels_[static_cast<std::size_t>(l.kernel)].kernel.domain == s)
                      ? l.kernel
                      : new_kernel(s);
    const View out = full_view(new_temp(n.shape, n.dtype));
    const int v = value_in(k, a);
    kernel_of(k).reductions.push_back({v, over_rows, mean, out});
    note_write(k, out.buffer);
    loc(id).view = out;
  }

  void elementwise(NodeId id, const Node& n) {
    const Primitive& prim = primitive(n.op);
    check_internal(prim.elementwise, std::string("lowering: no rule for ") + prim.name);
    // Operands all literals: fold here (simplify and fold leave few of these).
    bool all_literal = true;
    for (NodeId a : n.args) all_literal = all_literal && loc(a).literal.has_value();
    if (all_literal) {
      std::vector<MatrixD> vals;
      for (NodeId a : n.args) vals.push_back(MatrixD::Constant(1, 1, *loc(a).literal));
      std::vector<const MatrixD*> ptrs;
      for (const MatrixD& m : vals) ptrs.push_back(&m);
      Node scalar = n;
      scalar.shape = {1, 1};
      loc(id).literal = prim.eval_f64(scalar, ptrs)(0, 0);
      return;
    }
    const int k = choose_kernel(n);
    Value v{Value::Kind::Compute, n.op, n.dtype, {}, n.attrs.real};
    for (NodeId a : n.args) v.args.push_back(value_in(k, a));
    const int value = add_value(k, std::move(v));
    loc(id).kernel = k;
    loc(id).value = value;
    kernels_[static_cast<std::size_t>(k)].members.push_back(id);
  }

  // The open kernels of n's domain that compute one of its operands merge into one; with none,
  // a new kernel. A kernel that writes a buffer n must load cannot take n (it would read what
  // it writes in the same loop).
  int choose_kernel(const Node& n) {
    std::unordered_set<int> loaded_buffers;
    for (NodeId a : n.args)
      if (const Location& l = loc(a); l.view) loaded_buffers.insert(l.view->buffer);
    std::vector<int> candidates;
    for (NodeId a : n.args) {
      const int k = loc(a).kernel;
      if (k < 0 || !kernels_[static_cast<std::size_t>(k)].open) continue;
      const KernelState& ks = kernels_[static_cast<std::size_t>(k)];
      if (ks.kernel.domain != n.shape) continue;
      if (!writes_any(ks, loaded_buffers) &&
          std::find(candidates.begin(), candidates.end(), k) == candidates.end())
        candidates.push_back(k);
    }
    if (candidates.empty()) {
      // No operand is computed in an open kernel of this domain: join the newest open kernel of
      // the domain anyway (fewer loops; everything it waits for is already scheduled).
      for (auto k = static_cast<int>(kernels_.size()) - 1; k >= 0; --k) {
        const KernelState& ks = kernels_[static_cast<std::size_t>(k)];
        if (!ks.open || ks.kernel.domain != n.shape) continue;
        if (!writes_any(ks, loaded_buffers)) return k;
      }
      return new_kernel(n.shape);
    }
    for (std::size_t i = 1; i < candidates.size(); ++i) merge(candidates[0], candidates[i]);
    return candidates[0];
  }

  const Module& m_;
  const Graph& g_;
  std::vector<Location> loc_;
  std::vector<KernelState> kernels_;
  std::unordered_map<int, std::vector<int>> pending_writers_;  // buffer -> open kernels
  std::unordered_map<int, int> emitted_;                       // kernel -> step
  Program p_;
};

}  // namespace

Program lower(const Module& module) { return Lowering(module).run(); }

}  // namespace jetpde::compiler
