#include "autodiff/ir.h"

#include <cstring>
#include <functional>

#include "autodiff/errors.h"
#include "autodiff/primitive.h"

namespace jetpde {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return "f64";
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
  }
  return "?";
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  return DType::f32;  // f32 with a 16-bit type, or bf16 with f16
}

std::string Shape::str() const {
  return "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
}

bool operator==(const Attrs& a, const Attrs& b) {
  if (a.ints != b.ints || a.real != b.real || a.name != b.name) return false;
  if (a.data == b.data) return true;
  return a.data && b.data && *a.data == *b.data;
}

const Node& Var::node() const { return graph->node(id); }

namespace {

void hash_mix(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

std::size_t hash_node(const Node& n) {
  std::size_t h = static_cast<std::size_t>(n.op);
  hash_mix(h, static_cast<std::size_t>(n.dtype));
  hash_mix(h, std::hash<std::int64_t>{}(n.shape.rows));
  hash_mix(h, std::hash<std::int64_t>{}(n.shape.cols));
  for (NodeId a : n.args) hash_mix(h, std::hash<NodeId>{}(a));
  for (std::int64_t i : n.attrs.ints) hash_mix(h, std::hash<std::int64_t>{}(i));
  hash_mix(h, std::hash<double>{}(n.attrs.real));
  hash_mix(h, std::hash<std::string>{}(n.attrs.name));
  if (n.attrs.data)
    for (double v : *n.attrs.data) hash_mix(h, std::hash<double>{}(v));
  return h;
}

}  // namespace

std::size_t Graph::KeyHash::operator()(NodeId id) const {
  return graph->hashes_[static_cast<std::size_t>(id)];
}

bool Graph::KeyEq::operator()(NodeId a, NodeId b) const {
  const Node& x = graph->node(a);
  const Node& y = graph->node(b);
  return x.op == y.op && x.dtype == y.dtype && x.shape == y.shape && x.args == y.args &&
         x.attrs == y.attrs;
}

Var Graph::intern(Node node) {
  hashes_.push_back(hash_node(node));
  nodes_.push_back(std::move(node));
  const auto id = static_cast<NodeId>(nodes_.size() - 1);
  auto [it, inserted] = table_.insert(id);
  if (!inserted) {
    nodes_.pop_back();
    hashes_.pop_back();
    return Var{this, *it};
  }
  return Var{this, id};
}

Var Graph::make(Op op, std::span<const NodeId> args, Attrs attrs, DType dtype) {
  const Primitive& prim = primitive(op);
  if (prim.taylor == TaylorFamily::Leaf)
    throw InternalError("Graph::make cannot build a leaf; use input, param or constant");
  if (prim.arity >= 0 && static_cast<int>(args.size()) != prim.arity)
    throw InternalError(std::string(prim.name) + " takes " + std::to_string(prim.arity) +
                        " operands, got " + std::to_string(args.size()));
  if (args.empty()) throw InternalError(std::string(prim.name) + " needs operands");
  Node node{op, dtype, {}, {args.begin(), args.end()}, std::move(attrs)};
  for (NodeId a : args)
    check_internal(a >= 0 && static_cast<std::size_t>(a) < nodes_.size(),
                   std::string(prim.name) + ": operand id out of range");
  if (op != Op::Cast) node.dtype = result_dtype(op, args);
  node.shape = prim.shape(*this, node);
  return intern(std::move(node));
}

DType Graph::result_dtype(Op op, std::span<const NodeId> args) const {
  // Select's condition (operand 0) is data: it does not decide the result type.
  const std::size_t first = op == Op::Select ? 1 : 0;
  DType dtype = node(args[first]).dtype;
  for (std::size_t i = first + 1; i < args.size(); ++i) dtype = promote(dtype, node(args[i]).dtype);
  // A product of 16-bit matrices accumulates and returns in f32, as bf16/f16 GEMMs do.
  if (op == Op::MatMul && (dtype == DType::bf16 || dtype == DType::f16)) return DType::f32;
  return dtype;
}

Var Graph::input(const std::string& name, Shape shape, DType dtype) {
  return make_leaf(Op::Input, name, shape, dtype);
}

Var Graph::param(const std::string& name, Shape shape, DType dtype) {
  return make_leaf(Op::Param, name, shape, dtype);
}

Var Graph::make_leaf(Op op, const std::string& name, Shape shape, DType dtype) {
  const char* kind = op == Op::Input ? "input" : "param";
  if (name.empty()) throw UserError(std::string("an ") + kind + " needs a name");
  if (shape.rows <= 0 || shape.cols <= 0)
    throw UserError(std::string(kind) + " '" + name + "': shape " + shape.str() +
                    " must be positive");
  if (auto it = leaves_by_name_.find(name); it != leaves_by_name_.end()) {
    const Node& old = node(it->second);
    if (old.op != op || old.shape != shape || old.dtype != dtype)
      throw UserError(std::string(kind) + " '" + name + "' " + std::string(dtype_name(dtype)) +
                      shape.str() + " clashes with the existing " + describe(it->second));
    return Var{this, it->second};
  }
  Attrs attrs;
  attrs.name = name;
  Var v = intern(Node{op, dtype, shape, {}, std::move(attrs)});
  leaves_by_name_.emplace(name, v.id);
  return v;
}

Var Graph::constant(Shape shape, std::vector<double> values, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != shape.size() || shape.size() <= 0)
    throw UserError("constant of shape " + shape.str() + " given " + std::to_string(values.size()) +
                    " values");
  Attrs attrs;
  attrs.data = std::make_shared<const std::vector<double>>(std::move(values));
  return intern(Node{Op::Const, dtype, shape, {}, std::move(attrs)});
}

std::vector<Var> Graph::inputs() { return leaves_of(Op::Input); }
std::vector<Var> Graph::params() { return leaves_of(Op::Param); }

std::vector<Var> Graph::leaves_of(Op op) {
  std::vector<Var> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].op == op) out.push_back(Var{this, static_cast<NodeId>(i)});
  return out;
}

Var Graph::leaf(const std::string& name) {
  auto it = leaves_by_name_.find(name);
  if (it == leaves_by_name_.end()) throw UserError("no input or param named '" + name + "'");
  return Var{this, it->second};
}

std::string Graph::describe(NodeId id) const {
  const Node& n = node(id);
  std::string type = std::string(dtype_name(n.dtype)) + n.shape.str();
  switch (n.op) {
    case Op::Input:
      return "input '" + n.attrs.name + "' " + type;
    case Op::Param:
      return "param '" + n.attrs.name + "' " + type;
    default:
      return std::string(op_name(n.op)) + " #" + std::to_string(id) + " " + type;
  }
}

}  // namespace jetpde
