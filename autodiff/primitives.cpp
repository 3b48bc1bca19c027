// The primitive table: one record per primitive (see primitive.h). Reference evaluations double
// as the constant folder and the interpreter; Taylor rules are named by family and implemented in
// taylor_rules.cpp; transpose rules are written here with the graph-building functions.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "autodiff/errors.h"
#include "autodiff/functions.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"

namespace jetpde {
namespace {

// ---- shape rules ----------------------------------------------------------------------------

std::string operands_text(const Graph& g, const Node& n) {
  std::string s;
  for (std::size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + g.describe(n.args[i]);
  return s;
}

[[noreturn]] void shape_error(const Graph& g, const Node& n, const std::string& what) {
  throw UserError(std::string(op_name(n.op)) + ": " + what + " (operands: " + operands_text(g, n) +
                  ")");
}

Shape arg_shape(const Graph& g, const Node& n, std::size_t i) { return g.node(n.args[i]).shape; }

// Elementwise operands broadcast: in each dimension, all sizes are equal or 1.
Shape elementwise_shape(const Graph& g, const Node& n) {
  Shape out = arg_shape(g, n, 0);
  for (std::size_t i = 1; i < n.args.size(); ++i) {
    const Shape s = arg_shape(g, n, i);
    auto join = [&](std::int64_t a, std::int64_t b) {
      if (a != b && a != 1 && b != 1)
        shape_error(g, n, "shapes " + out.str() + " and " + s.str() + " do not broadcast");
      return a == 1 ? b : a;
    };
    out = {join(out.rows, s.rows), join(out.cols, s.cols)};
  }
  return out;
}

Shape matmul_shape(const Graph& g, const Node& n) {
  Shape a = arg_shape(g, n, 0), b = arg_shape(g, n, 1);
  if (n.attrs.ints.size() != 2) throw InternalError("matmul needs {transpose_a, transpose_b}");
  if (n.attrs.ints[0]) std::swap(a.rows, a.cols);
  if (n.attrs.ints[1]) std::swap(b.rows, b.cols);
  if (a.cols != b.rows) shape_error(g, n, "inner dimensions differ: " + a.str() + " @ " + b.str());
  return {a.rows, b.cols};
}

Shape broadcast_shape(const Graph& g, const Node& n) {
  const Shape s = arg_shape(g, n, 0);
  const Shape t{n.attrs.ints.at(0), n.attrs.ints.at(1)};
  if ((s.rows != t.rows && s.rows != 1) || (s.cols != t.cols && s.cols != 1))
    shape_error(g, n, "cannot broadcast " + s.str() + " to " + t.str());
  return t;
}

template <bool Cols>
Shape slice_shape(const Graph& g, const Node& n) {
  const Shape s = arg_shape(g, n, 0);
  const std::int64_t begin = n.attrs.ints.at(0), count = n.attrs.ints.at(1);
  const std::int64_t extent = Cols ? s.cols : s.rows;
  if (begin < 0 || count <= 0 || begin + count > extent)
    shape_error(g, n,
                std::string(Cols ? "columns" : "rows") + " [" + std::to_string(begin) + ", " +
                    std::to_string(begin + count) + ") out of range 0.." + std::to_string(extent));
  return Cols ? Shape{s.rows, count} : Shape{count, s.cols};
}

template <bool Cols>
Shape concat_shape(const Graph& g, const Node& n) {
  Shape out = arg_shape(g, n, 0);
  for (std::size_t i = 1; i < n.args.size(); ++i) {
    const Shape s = arg_shape(g, n, i);
    if (Cols ? s.rows != out.rows : s.cols != out.cols)
      shape_error(g, n,
                  std::string(Cols ? "row" : "column") + " counts differ: " + out.str() + " and " +
                      s.str());
    (Cols ? out.cols : out.rows) += Cols ? s.cols : s.rows;
  }
  return out;
}

Shape reduce_rows_shape(const Graph& g, const Node& n) { return {1, arg_shape(g, n, 0).cols}; }
Shape reduce_cols_shape(const Graph& g, const Node& n) { return {arg_shape(g, n, 0).rows, 1}; }
Shape same_shape(const Graph& g, const Node& n) { return arg_shape(g, n, 0); }
Shape leaf_shape(const Graph&, const Node& n) { return n.shape; }

// ---- reference evaluation -------------------------------------------------------------------

// Applies f elementwise with broadcasting of size-1 dimensions.
template <class T, class F, std::size_t... I>
Matrix<T> map_elementwise(const Node& n, std::span<const Matrix<T>* const> a, F f,
                          std::index_sequence<I...>) {
  Matrix<T> out(n.shape.rows, n.shape.cols);
  for (Eigen::Index i = 0; i < out.rows(); ++i)
    for (Eigen::Index j = 0; j < out.cols(); ++j)
      out(i, j) = f((*a[I])(a[I]->rows() == 1 ? 0 : i, a[I]->cols() == 1 ? 0 : j)...);
  return out;
}

// Both reference evaluations (f64 and f32) of an elementwise op from one generic scalar function.
template <std::size_t Arity, class F>
void set_elementwise_eval(Primitive& p, F f) {
  p.eval_f64 = [f](const Node& n, std::span<const MatrixD* const> a) {
    return map_elementwise<double>(n, a, f, std::make_index_sequence<Arity>{});
  };
  p.eval_f32 = [f](const Node& n, std::span<const Matrix<float>* const> a) {
    return map_elementwise<float>(n, a, f, std::make_index_sequence<Arity>{});
  };
}

template <class F>
void set_eval(Primitive& p, F f) {
  p.eval_f64 = [f](const Node& n, std::span<const MatrixD* const> a) { return f(n, a); };
  p.eval_f32 = [f](const Node& n, std::span<const Matrix<float>* const> a) { return f(n, a); };
}

template <class T>
using Args = std::span<const Matrix<T>* const>;

struct EvalLeaf {  // leaves are bound by the interpreter, never evaluated
  template <class T>
  Matrix<T> operator()(const Node&, Args<T>) const {
    throw InternalError("a leaf has no evaluation rule");
  }
};

struct EvalMatMul {
  template <class T>
  Matrix<T> operator()(const Node& n, Args<T> a) const {
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    M x = a[0]->matrix(), y = a[1]->matrix();
    if (n.attrs.ints[0]) x.transposeInPlace();
    if (n.attrs.ints[1]) y.transposeInPlace();
    return (x * y).array();
  }
};

struct EvalBroadcast {
  template <class T>
  Matrix<T> operator()(const Node& n, Args<T> a) const {
    return a[0]->replicate(a[0]->rows() == 1 ? n.shape.rows : 1,
                           a[0]->cols() == 1 ? n.shape.cols : 1);
  }
};

template <bool Cols>
struct EvalSlice {
  template <class T>
  Matrix<T> operator()(const Node& n, Args<T> a) const {
    const auto b = n.attrs.ints[0], c = n.attrs.ints[1];
    return Cols ? Matrix<T>(a[0]->middleCols(b, c)) : Matrix<T>(a[0]->middleRows(b, c));
  }
};

template <bool Cols>
struct EvalConcat {
  template <class T>
  Matrix<T> operator()(const Node& n, Args<T> a) const {
    Matrix<T> out(n.shape.rows, n.shape.cols);
    Eigen::Index at = 0;
    for (const Matrix<T>* part : a) {
      if (Cols)
        out.middleCols(at, part->cols()) = *part;
      else
        out.middleRows(at, part->rows()) = *part;
      at += Cols ? part->cols() : part->rows();
    }
    return out;
  }
};

template <bool Rows, bool Mean>
struct EvalReduce {
  template <class T>
  Matrix<T> operator()(const Node&, Args<T> a) const {
    // Sums accumulate in double and round once, as the compiled kernels do (CPU and CUDA): in
    // float, Eigen's few running accumulators lose ~4e-5 over 2e5 rows, and the oracle would be
    // the less accurate side.
    const Matrix<double> x = a[0]->template cast<double>();
    Matrix<double> out =
        Rows ? Matrix<double>(x.colwise().sum()) : Matrix<double>(x.rowwise().sum());
    if (Mean) out /= static_cast<double>(Rows ? x.rows() : x.cols());
    return out.template cast<T>();
  }
};

struct EvalCast {  // the interpreter decides the storage type; the value passes unchanged
  template <class T>
  Matrix<T> operator()(const Node&, Args<T> a) const {
    return *a[0];
  }
};

// ---- transpose rules ------------------------------------------------------------------------

Var arg(Var out, std::size_t i) { return out.graph->var(out.node().args[i]); }
const Var kZero{};

std::vector<Var> t_neg(Var, Var ct) { return {neg(ct)}; }
std::vector<Var> t_add(Var, Var ct) { return {ct, ct}; }
std::vector<Var> t_sub(Var, Var ct) { return {ct, neg(ct)}; }
std::vector<Var> t_mul(Var o, Var ct) { return {ct * arg(o, 1), ct * arg(o, 0)}; }
std::vector<Var> t_div(Var o, Var ct) {
  const Var q = ct / arg(o, 1);
  return {q, neg(q * o)};
}
std::vector<Var> t_sigmoid(Var o, Var ct) { return {ct * (o - square(o))}; }
// A record of autodiff/functions.h: ct times each partial (for one operand, the record's
// derivative along ct); comparisons have none.
template <class R>
std::vector<Var> t_record(Var o, Var ct) {
  if constexpr (R::family == TaylorFamily::Step) {
    return std::vector<Var>(R::arity, kZero);
  } else {
    std::array<Var, R::arity> a{};
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = arg(o, i);
    if constexpr (R::arity == 1) {
      return {functions::jvp<R, Var>(a, {ct})};
    } else {
      std::vector<Var> out;
      for (int j = 0; j < R::arity; ++j) out.push_back(ct * R::template partial<Var>(j, a));
      return out;
    }
  }
}

template <class R>
std::vector<Var> partials_of(std::span<const Var> operands) {
  std::array<Var, R::arity> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = operands[i];
  std::vector<Var> out;
  for (int j = 0; j < R::arity; ++j) out.push_back(R::template partial<Var>(j, a));
  return out;
}

std::vector<Var> t_pow(Var o, Var ct) {
  const double p = o.node().attrs.real;
  return {scale(ct * pow(arg(o, 0), p - 1.0), p)};
}
std::vector<Var> t_cast(Var o, Var ct) { return {cast(ct, arg(o, 0).dtype())}; }
std::vector<Var> t_select(Var o, Var ct) {
  const Var c = arg(o, 0), zero = o.graph->scalar(0.0);
  return {kZero, select(c, ct, zero), select(c, zero, ct)};
}
std::vector<Var> t_matmul(Var o, Var ct) {
  const bool ta = o.node().attrs.ints[0] != 0, tb = o.node().attrs.ints[1] != 0;
  const Var a = arg(o, 0), b = arg(o, 1);
  return {ta ? matmul(b, ct, tb, true) : matmul(ct, b, false, !tb),
          tb ? matmul(ct, a, true, ta) : matmul(a, ct, !ta, false)};
}
std::vector<Var> t_identity(Var, Var ct) { return {ct}; }  // the caller reduces or broadcasts

template <bool Cols>
std::vector<Var> t_slice(Var o, Var ct) {
  const Shape s = arg(o, 0).shape();
  const std::int64_t begin = o.node().attrs.ints[0], count = o.node().attrs.ints[1];
  const std::int64_t extent = Cols ? s.cols : s.rows;
  std::vector<Var> parts;
  auto pad = [&](std::int64_t k) {
    if (k > 0)
      parts.push_back(zeros(*o.graph, Cols ? Shape{s.rows, k} : Shape{k, s.cols}, ct.dtype()));
  };
  pad(begin);
  parts.push_back(ct);
  pad(extent - begin - count);
  return {Cols ? concat_cols(parts) : concat_rows(parts)};
}

template <bool Cols>
std::vector<Var> t_concat(Var o, Var ct) {
  std::vector<Var> out;
  std::int64_t at = 0;
  for (NodeId a : o.node().args) {
    const Shape s = o.graph->node(a).shape;
    const std::int64_t k = Cols ? s.cols : s.rows;
    out.push_back(Cols ? slice_cols(ct, at, k) : slice_rows(ct, at, k));
    at += k;
  }
  return out;
}

template <bool Rows>
std::vector<Var> t_mean(Var o, Var ct) {
  const Shape s = arg(o, 0).shape();
  return {scale(ct, 1.0 / static_cast<double>(Rows ? s.rows : s.cols))};
}

std::vector<Var> t_none(Var, Var) { throw InternalError("a leaf has no transpose rule"); }

// ---- the table ------------------------------------------------------------------------------

std::array<Primitive, kNumOps> make_table() {
  std::array<Primitive, kNumOps> t{};
  auto def = [&](Op op, const char* name, int arity, ShapeFn shape, TaylorFamily family,
                 TransposeFn transpose) -> Primitive& {
    Primitive& p = t[static_cast<std::size_t>(op)];
    p.op = op;
    p.name = name;
    p.arity = arity;
    p.shape = shape;
    p.taylor = family;
    p.transpose = transpose;
    return p;
  };
  using F = TaylorFamily;
  auto unary = [&](Op op, const char* name, F family, TransposeFn tr, const char* c, auto f) {
    Primitive& p = def(op, name, 1, elementwise_shape, family, tr);
    p.elementwise = true;
    p.c_expr = c;
    set_elementwise_eval<1>(p, f);
    return &p;
  };
  auto binary = [&](Op op, const char* name, F family, TransposeFn tr, const char* c, auto f) {
    Primitive& p = def(op, name, 2, elementwise_shape, family, tr);
    p.elementwise = true;
    p.c_expr = c;
    set_elementwise_eval<2>(p, f);
  };

  for (Op leaf : {Op::Input, Op::Param, Op::Const})
    set_eval(def(leaf,
                 leaf == Op::Input   ? "input"
                 : leaf == Op::Param ? "param"
                                     : "const",
                 0, leaf_shape, F::Leaf, t_none),
             EvalLeaf{});

  unary(Op::Neg, "neg", F::Linear, t_neg, "(-{0})", [](auto x) { return -x; });
  binary(Op::Add, "add", F::Linear, t_add, "({0} + {1})", [](auto x, auto y) { return x + y; });
  binary(Op::Sub, "sub", F::Linear, t_sub, "({0} - {1})", [](auto x, auto y) { return x - y; });
  binary(Op::Mul, "mul", F::Mul, t_mul, "({0} * {1})", [](auto x, auto y) { return x * y; });
  binary(Op::Div, "div", F::Div, t_div, "({0} / {1})", [](auto x, auto y) { return x / y; });
  unary(Op::Sigmoid, "sigmoid", F::UnaryPoly, t_sigmoid, "(1 / (1 + exp(-{0})))", [](auto x) {
    return decltype(x)(1) / (decltype(x)(1) + std::exp(-x));
  })->taylor_poly = {0, 1, -1};  // sigmoid' = sigmoid - sigmoid^2
  // The scalar functions of the language that are primitives: from their records.
  functions::for_each([&]<class R>() {
    if constexpr (functions::IsPrimitive<R>) {
      Primitive& p = def(R::op, R::name, R::arity, elementwise_shape, R::family, t_record<R>);
      p.elementwise = true;
      p.c_expr = R::c;
      set_elementwise_eval<R::arity>(p, [](auto... x) { return R::eval(x...); });
      if constexpr (R::family == F::Chain) p.partials = partials_of<R>;
      if constexpr (R::family == F::UnaryPoly) p.taylor_poly = {R::poly[0], R::poly[1], R::poly[2]};
      if constexpr (R::family == F::Pair) {
        p.partner = R::partner;
        p.pair_signs = {R::signs[0], R::signs[1]};
      }
    }
  });
  {
    Primitive& p = def(Op::PowC, "pow", 1, elementwise_shape, F::Pow, t_pow);
    p.elementwise = true;
    p.c_expr = "pow({0}, {p})";
    set_eval(p, [](const Node& n, auto a) {
      using T = typename std::remove_pointer_t<std::remove_cvref_t<decltype(a[0])>>::Scalar;
      const T e = static_cast<T>(n.attrs.real);
      return Matrix<T>(a[0]->unaryExpr([e](T x) { return std::pow(x, e); }));
    });
  }
  {
    Primitive& p = def(Op::Cast, "cast", 1, same_shape, F::Linear, t_cast);
    p.elementwise = true;
    p.c_expr = "(({T}){0})";
    set_eval(p, EvalCast{});
  }
  {
    Primitive& p = def(Op::Select, "select", 3, elementwise_shape, F::Select, t_select);
    p.elementwise = true;
    p.c_expr = "({0} != 0 ? {1} : {2})";
    set_elementwise_eval<3>(p, [](auto c, auto x, auto y) { return c != 0 ? x : y; });
  }
  set_eval(def(Op::MatMul, "matmul", 2, matmul_shape, F::MatMul, t_matmul), EvalMatMul{});
  set_eval(def(Op::Broadcast, "broadcast", 1, broadcast_shape, F::Linear, t_identity),
           EvalBroadcast{});
  set_eval(def(Op::SliceCols, "slice_cols", 1, slice_shape<true>, F::Linear, t_slice<true>),
           EvalSlice<true>{});
  set_eval(def(Op::SliceRows, "slice_rows", 1, slice_shape<false>, F::Linear, t_slice<false>),
           EvalSlice<false>{});
  set_eval(def(Op::ConcatCols, "concat_cols", -1, concat_shape<true>, F::Linear, t_concat<true>),
           EvalConcat<true>{});
  set_eval(def(Op::ConcatRows, "concat_rows", -1, concat_shape<false>, F::Linear, t_concat<false>),
           EvalConcat<false>{});
  set_eval(def(Op::SumRows, "sum_rows", 1, reduce_rows_shape, F::Linear, t_identity),
           EvalReduce<true, false>{});
  set_eval(def(Op::SumCols, "sum_cols", 1, reduce_cols_shape, F::Linear, t_identity),
           EvalReduce<false, false>{});
  set_eval(def(Op::MeanRows, "mean_rows", 1, reduce_rows_shape, F::Linear, t_mean<true>),
           EvalReduce<true, true>{});
  set_eval(def(Op::MeanCols, "mean_cols", 1, reduce_cols_shape, F::Linear, t_mean<false>),
           EvalReduce<false, true>{});
  return t;
}

}  // namespace

const Primitive& primitive(Op op) {
  static const std::array<Primitive, kNumOps> table = make_table();
  return table.at(static_cast<std::size_t>(op));
}

const std::vector<std::string>& c_math_functions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int i = 0; i < kNumOps; ++i) {
      const char* c = primitive(static_cast<Op>(i)).c_expr;
      if (!c) continue;
      // Every identifier followed by '(' in a C expression is a <cmath> function.
      const std::string e = c;
      for (std::size_t k = 0; k < e.size();) {
        if (!std::isalpha(static_cast<unsigned char>(e[k]))) {
          ++k;
          continue;
        }
        std::size_t end = k;
        while (end < e.size() && std::isalnum(static_cast<unsigned char>(e[end]))) ++end;
        const std::string name = e.substr(k, end - k);
        if (end < e.size() && e[end] == '(' && std::find(out.begin(), out.end(), name) == out.end())
          out.push_back(name);
        k = end;
      }
    }
    return out;
  }();
  return names;
}

}  // namespace jetpde
