// The IR of jetpde (docs/design.md section 4): a graph of immutable, interned nodes in SSA form.
//
// Tensors are 2-D: rows are points, columns are channels. A dimension of size 1 broadcasts
// against any size in elementwise operations ([1, c] rows and [n, 1] columns). Shapes are
// concrete: a graph is built for given point counts; building it again for another count is
// cheap, and compiled programs are cached by content.
//
// Nodes are hash-consed: making the same operation on the same operands with the same attributes
// returns the existing node, so common subexpressions are shared by construction and node
// equality is id equality. Node ids are topologically ordered (operands are always older).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jetpde {

enum class DType : std::uint8_t { f64, f32, bf16, f16 };

std::string_view dtype_name(DType dtype);
// The wider of two floating-point types (f64 > f32 > bf16, f16; bf16 with f16 gives f32).
DType promote(DType a, DType b);

struct Shape {
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  friend bool operator==(const Shape&, const Shape&) = default;
  std::int64_t size() const { return rows * cols; }
  std::string str() const;  // "[rows,cols]"
};

// The primitive set of docs/design.md section 4. Everything else is a helper built from these.
enum class Op : std::uint8_t {
  // leaves
  Input,
  Param,
  Const,
  // elementwise
  Neg,
  Add,
  Sub,
  Mul,
  Div,
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Sqrt,
  Atan,
  Sinh,
  Cosh,
  Asin,
  Acos,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Atan2,
  Less,
  LessEqual,
  Equal,
  NotEqual,
  PowC,
  Cast,
  Select,
  // linear algebra and structure
  MatMul,
  Broadcast,
  SliceCols,
  SliceRows,
  ConcatCols,
  ConcatRows,
  SumRows,
  SumCols,
  MeanRows,
  MeanCols,
};
inline constexpr int kNumOps = static_cast<int>(Op::MeanCols) + 1;

using NodeId = std::int32_t;

// Attributes of a node; which ones an op uses is said in its primitive record.
struct Attrs {
  std::vector<std::int64_t> ints;  // slice {begin, count}; broadcast {rows, cols}; matmul {ta, tb}
  double real = 0.0;               // PowC exponent
  std::string name;                // Input and Param names
  std::shared_ptr<const std::vector<double>> data;  // Const values, row-major
  friend bool operator==(const Attrs& a, const Attrs& b);
};

struct Node {
  Op op;
  DType dtype;
  Shape shape;
  std::vector<NodeId> args;
  Attrs attrs;
};

class Graph;

// A handle to a node of a graph: what user code builds expressions with. Not owning.
struct Var {
  Graph* graph = nullptr;  // not owned
  NodeId id = -1;
  const Node& node() const;
  Shape shape() const { return node().shape; }
  DType dtype() const { return node().dtype; }
  Op op() const { return node().op; }
  friend bool operator==(const Var& a, const Var& b) { return a.graph == b.graph && a.id == b.id; }
};

class Graph {
 public:
  // `default_dtype` is the type of leaves created without an explicit one.
  explicit Graph(DType default_dtype = DType::f32) : default_dtype_(default_dtype) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Leaves. Inputs and params are identified by name: asking again for the same name returns the
  // same node, and asking with another shape is a UserError.
  Var input(const std::string& name, Shape shape, DType dtype);
  Var input(const std::string& name, Shape shape) { return input(name, shape, default_dtype_); }
  Var param(const std::string& name, Shape shape, DType dtype);
  Var param(const std::string& name, Shape shape) { return param(name, shape, default_dtype_); }
  Var constant(Shape shape, std::vector<double> values, DType dtype);
  Var constant(Shape shape, std::vector<double> values) {
    return constant(shape, std::move(values), default_dtype_);
  }
  Var scalar(double value) { return constant({1, 1}, {value}); }

  // Makes (or finds) the node `op(args)` with `attrs`; checks it with the primitive's shape rule
  // (UserError on a mismatch). `dtype` is only read for Cast; other ops derive it from operands.
  Var make(Op op, std::span<const NodeId> args, Attrs attrs = {}, DType dtype = DType::f64);

  const Node& node(NodeId id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  Var var(NodeId id) { return Var{this, id}; }
  std::size_t size() const { return nodes_.size(); }
  DType default_dtype() const { return default_dtype_; }
  // Leaves by kind, in creation order.
  std::vector<Var> inputs();
  std::vector<Var> params();
  // Looks up an input or param by name; UserError when there is none.
  Var leaf(const std::string& name);

  // The dtype of `op(args)` for every op but Cast: the promotion of the operands' types (a
  // matmul of 16-bit operands gives f32).
  DType result_dtype(Op op, std::span<const NodeId> args) const;

  // A short human description of a node for error messages: "param 'W1' f32[2,64]", "tanh #12".
  std::string describe(NodeId id) const;

 private:
  struct KeyHash {
    const Graph* graph;
    std::size_t operator()(NodeId id) const;
  };
  struct KeyEq {
    const Graph* graph;
    bool operator()(NodeId a, NodeId b) const;
  };
  Var intern(Node node);
  Var make_leaf(Op op, const std::string& name, Shape shape, DType dtype);
  std::vector<Var> leaves_of(Op op);

  DType default_dtype_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> hashes_;  // hashes_[id] is the interning hash of nodes_[id]
  std::unordered_set<NodeId, KeyHash, KeyEq> table_{16, KeyHash{this}, KeyEq{this}};
  std::unordered_map<std::string, NodeId> leaves_by_name_;
};

}  // namespace jetpde
