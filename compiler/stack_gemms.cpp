// GEMM stacking (docs/design.md section 7, step 3): matmuls that share a weight become one GEMM
// over stacked rows, forward and backward.
//
// Taylor mode multiplies every stream of a layer by the same weight: z_α = h_α W for all α, and
// reverse mode mirrors it: ∂h_α = ∂z_α Wᵀ, and ∂W = Σ_α h_αᵀ ∂z_α. One GEMM over S·n rows runs
// far closer to the machine's peak than S GEMMs over n rows (PINN layers are skinny), so
//   { a_i B }_i            ->  slice_rows(concat_rows(a_i) B, offset_i, rows_i)
//   Σ_i a_iᵀ b_i (+ rest)  ->  concat_rows(a_i)ᵀ concat_rows(b_i) (+ rest)
// Operands are ordered by node id in both, so the forward and backward stacks of the same
// streams are one node (interning) and one buffer. Lowering writes each part straight into its
// slice of the stacked buffer. A matmul whose left operand depends on another member of its
// group (a weight reused by a later layer) stays as it is.
//
// Parts of as many rows (the streams of one point set) stack together; parts of different
// point sets only where each has fewer rows than a tiled region needs (2 x kMeasuredRegionTile):
// a GEMM over blocks of several sizes could join no tiled region, and the kernels of the
// larger set would run whole (the Allen–Cahn step stacked its 4096 interior points with its 256
// initial points, and its interior's kernels took 45% of the step; bench/README.md).
//   Σ_i a_iᵀ b_i then becomes one stacked GEMM per point set, added up.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "autodiff/ops.h"
#include "compiler/passes.h"
#include "compiler/program.h"

namespace jetpde::compiler {
namespace {

// The stacking class of a part of `rows` rows: its rows where a tiled region could run over
// them, else 0 (every smaller part).
std::int64_t rows_class(std::int64_t rows) { return rows >= 2 * kMeasuredRegionTile ? rows : 0; }

struct Key {  // matmuls that can share one GEMM: same right operand and flags, same inner width
  NodeId rhs;
  bool transpose_b;
  std::int64_t cols;
  DType dtype;
  std::int64_t rows;  // rows_class of the left operand
  auto operator<=>(const Key&) const = default;
};

class Stacker {
 public:
  explicit Stacker(const Module& in) : in_(in), g_(*in.graph) {
    count_uses();
    find_groups();
  }

  Module run() {
    Module m{std::make_unique<Graph>(g_.default_dtype()), {}};
    target_ = m.graph.get();
    mapped_.assign(g_.size(), Var{});
    for (NodeId id : in_.outputs) m.outputs.push_back(build(id).id);
    return m;
  }

 private:
  const Node& node(NodeId id) const { return g_.node(id); }
  bool plain_matmul(const Node& n) const { return n.op == Op::MatMul && n.attrs.ints[0] == 0; }

  void count_uses() {
    uses_.assign(g_.size(), 0);
    std::vector<bool> live(g_.size(), false);
    for (NodeId id : in_.outputs)
      live[static_cast<std::size_t>(id)] = true, ++uses_[static_cast<std::size_t>(id)];
    for (auto id = static_cast<NodeId>(g_.size()) - 1; id >= 0; --id)
      if (live[static_cast<std::size_t>(id)])
        for (NodeId a : node(id).args) {
          live[static_cast<std::size_t>(a)] = true;
          ++uses_[static_cast<std::size_t>(a)];
        }
    live_ = std::move(live);
  }

  // Groups of live plain matmuls by key; members whose left operand depends on an earlier
  // member are dropped.
  void find_groups() {
    std::map<Key, std::vector<NodeId>> groups;
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id) {
      const Node& n = node(id);
      if (!live_[static_cast<std::size_t>(id)] || !plain_matmul(n)) continue;
      const Shape& lhs = node(n.args[0]).shape;
      groups[{n.args[1], n.attrs.ints[1] != 0, lhs.cols, n.dtype, rows_class(lhs.rows)}].push_back(
          id);
    }
    // The left operand's partner: for the cotangent b of a weight gradient aᵀ b, the stream a.
    // Backward groups (∂z_α Wᵀ) are ordered by their partners' ids, so that their stack is the
    // same node as the right operand of the weight gradient's stack, and no part is copied.
    for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id) {
      const Node& n = node(id);
      if (live_[static_cast<std::size_t>(id)] && n.op == Op::MatMul && n.attrs.ints[0] != 0 &&
          n.attrs.ints[1] == 0)
        partner_.emplace(n.args[1], n.args[0]);
    }
    group_of_.assign(g_.size(), -1);
    for (auto& [key, members] : groups) {
      if (members.size() < 2) continue;
      std::vector<bool> depends(g_.size(), false);  // depends on a member of this group
      std::vector<NodeId> kept;
      for (NodeId m : members) depends[static_cast<std::size_t>(m)] = true;
      for (NodeId id = 0; id < static_cast<NodeId>(g_.size()); ++id)
        for (NodeId a : node(id).args)
          depends[static_cast<std::size_t>(id)] =
              depends[static_cast<std::size_t>(id)] || depends[static_cast<std::size_t>(a)];
      for (NodeId m : members)
        if (!depends[static_cast<std::size_t>(node(m).args[0])]) kept.push_back(m);
      if (kept.size() < 2) continue;
      for (NodeId m : kept)
        group_of_[static_cast<std::size_t>(m)] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(kept));
    }
  }

  bool built(NodeId id) const { return mapped_[static_cast<std::size_t>(id)].id >= 0; }

  // A node being built: the nodes it needs first, in order, then (for a gradient sum) the terms
  // added one by one after its stacked GEMM.
  struct Frame {
    enum class Kind { plain, member, gradient } kind = Kind::plain;
    NodeId id = -1;
    std::vector<NodeId> needs;
    std::size_t next = 0;
    std::vector<std::vector<NodeId>> products;  // gradient: a stack for each point set
    std::vector<NodeId> rest;
    Var sum;
    bool stacked = false;
    std::size_t next_rest = 0;
  };

  Frame start(NodeId id) {
    Frame f;
    f.id = id;
    const Node& n = node(id);
    if (group_of_[static_cast<std::size_t>(id)] >= 0) {
      f.kind = Frame::Kind::member;
      const int group = group_of_[static_cast<std::size_t>(id)];
      if (!stacked_.contains(group)) {
        const std::vector<NodeId> members = sorted_members(group);
        for (NodeId m : members) f.needs.push_back(node(m).args[0]);
        f.needs.push_back(node(members[0]).args[1]);
      }
    } else if (n.op == Op::Add && gradient_terms(id, &f.products, &f.rest)) {
      f.kind = Frame::Kind::gradient;
      for (const std::vector<NodeId>& stack : f.products)
        for (NodeId p : stack) {
          f.needs.push_back(node(p).args[0]);
          f.needs.push_back(node(p).args[1]);
        }
    } else {
      f.needs = n.args;
    }
    return f;
  }

  // Advances `f`: true when its node is built, else false with the node it needs next.
  bool step(Frame& f, NodeId* need) {
    for (; f.next < f.needs.size(); ++f.next)
      if (!built(f.needs[f.next])) {
        *need = f.needs[f.next];
        return false;
      }
    Var result;
    switch (f.kind) {
      case Frame::Kind::plain: {
        const Node n = node(f.id);
        std::vector<Var> args;
        for (NodeId a : n.args) args.push_back(build(a));
        result = copy_node(*target_, n, args);
        break;
      }
      case Frame::Kind::member:
        result = build_member(f.id);
        break;
      case Frame::Kind::gradient:
        if (!f.stacked) {
          for (const std::vector<NodeId>& stack : f.products)
            f.sum = f.sum.id < 0 ? stacked_gradient(stack) : add(f.sum, stacked_gradient(stack));
          f.stacked = true;
        }
        for (; f.next_rest < f.rest.size(); ++f.next_rest) {
          if (!built(f.rest[f.next_rest])) {
            *need = f.rest[f.next_rest];
            return false;
          }
          f.sum = add(f.sum, build(f.rest[f.next_rest]));
        }
        result = f.sum;
        break;
    }
    mapped_[static_cast<std::size_t>(f.id)] = result;
    return true;
  }

  // The node's replacement. Not recursive (a Taylor graph of order 100 is thousands of nodes
  // deep): a stack of frames builds each node's operands first, in the order a depth-first
  // recursion would, so the graph built is the same node for node.
  Var build(NodeId root) {
    if (built(root)) return mapped_[static_cast<std::size_t>(root)];
    std::vector<Frame> stack;
    stack.push_back(start(root));
    while (!stack.empty()) {
      NodeId need = -1;
      if (step(stack.back(), &need)) {
        stack.pop_back();
      } else {
        stack.push_back(start(need));
      }
    }
    return mapped_[static_cast<std::size_t>(root)];
  }

  std::vector<NodeId> sorted_members(int group) const {
    std::vector<NodeId> members = groups_[static_cast<std::size_t>(group)];
    std::sort(members.begin(), members.end(), [&](NodeId a, NodeId b) {
      return order_key(node(a).args[0]) < order_key(node(b).args[0]);
    });
    return members;
  }

  // A member of a forward group: the slice of the group's stacked GEMM.
  Var build_member(NodeId id) {
    const int group = group_of_[static_cast<std::size_t>(id)];
    auto it = stacked_.find(group);
    if (it == stacked_.end()) {
      const std::vector<NodeId> members = sorted_members(group);
      std::vector<Var> lhs;
      for (NodeId m : members) lhs.push_back(build(node(m).args[0]));
      const Node& first = node(members[0]);
      const Var product =
          matmul(concat_rows(lhs), build(first.args[1]), false, first.attrs.ints[1] != 0);
      std::unordered_map<NodeId, Var> slices;
      std::int64_t at = 0;
      for (std::size_t i = 0; i < members.size(); ++i) {
        slices[members[i]] = slice_rows(product, at, lhs[i].shape().rows);
        at += lhs[i].shape().rows;
      }
      it = stacked_.emplace(group, std::move(slices)).first;
    }
    return it->second.at(id);
  }

  // Stacking order of a left operand: its partner's id when it has one, else its own.
  std::pair<NodeId, NodeId> order_key(NodeId lhs) const {
    auto it = partner_.find(lhs);
    return {it == partner_.end() ? lhs : it->second, lhs};
  }

  // Σ_i a_iᵀ b_i inside a sum of single-use additions: one GEMM over stacked rows for each
  // stacking class of the rows. False when no two products stack; else their matmuls by class
  // (`products`) and the other terms (`rest`), each in the order they are built.
  bool gradient_terms(NodeId root, std::vector<std::vector<NodeId>>* products_out,
                      std::vector<NodeId>* rest_out) const {
    std::vector<NodeId> terms, stack{root};
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      const Node& n = node(id);
      if (n.op == Op::Add && (id == root || uses_[static_cast<std::size_t>(id)] == 1) &&
          node(n.args[0]).shape == n.shape && node(n.args[1]).shape == n.shape) {
        stack.push_back(n.args[0]);
        stack.push_back(n.args[1]);
      } else {
        terms.push_back(id);
      }
    }
    std::vector<NodeId> products, rest;
    for (NodeId t : terms) {
      const Node& n = node(t);
      const bool stackable = n.op == Op::MatMul && n.attrs.ints[0] != 0 && n.attrs.ints[1] == 0 &&
                             uses_[static_cast<std::size_t>(t)] == 1 &&
                             group_of_[static_cast<std::size_t>(t)] < 0;
      (stackable ? products : rest).push_back(t);
    }
    std::map<std::int64_t, std::vector<NodeId>> by_class;
    for (NodeId p : products) by_class[rows_class(node(node(p).args[0]).shape.rows)].push_back(p);
    std::vector<std::vector<NodeId>> stacks;
    for (auto& [rows, members] : by_class) {
      if (members.size() < 2) {
        rest.insert(rest.end(), members.begin(), members.end());
        continue;
      }
      std::sort(members.begin(), members.end(),
                [&](NodeId a, NodeId b) { return node(a).args[0] < node(b).args[0]; });
      stacks.push_back(std::move(members));
    }
    if (stacks.empty()) return false;
    std::sort(rest.begin(), rest.end());
    *products_out = std::move(stacks);
    *rest_out = std::move(rest);
    return true;
  }

  // concat_rows(a_i)ᵀ concat_rows(b_i) of the products, whose operands are built.
  Var stacked_gradient(const std::vector<NodeId>& products) {
    std::vector<Var> lhs, rhs;
    for (NodeId p : products) {
      lhs.push_back(build(node(p).args[0]));
      rhs.push_back(build(node(p).args[1]));
    }
    return matmul(concat_rows(lhs), concat_rows(rhs), true, false);
  }

  const Module& in_;
  const Graph& g_;
  Graph* target_ = nullptr;
  std::vector<int> uses_;
  std::vector<bool> live_;
  std::vector<int> group_of_;
  std::unordered_map<NodeId, NodeId> partner_;
  std::vector<std::vector<NodeId>> groups_;
  std::unordered_map<int, std::unordered_map<NodeId, Var>> stacked_;
  std::vector<Var> mapped_;
};

}  // namespace

Module stack_gemms(const Module& in) { return Stacker(in).run(); }

}  // namespace jetpde::compiler
