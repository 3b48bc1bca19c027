#include "autodiff/interpreter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include "autodiff/errors.h"

namespace jetpde {

namespace {

// value -> the nearest binary16 (ties to even) -> float. Compilers without _Float16 (clang before
// 15 on x86-64, which builds the fuzzers) round by hand: to a multiple of the binary16 spacing at
// value's binade (2^-24 below the normal range), infinity from 65520 (half-way past 65504) on.
float round_to_f16(float value) {
#if defined(__FLT16_MANT_DIG__)
  return static_cast<float>(static_cast<_Float16>(value));
#else
  if (!std::isfinite(value)) return value;
  const float a = std::fabs(value);
  if (a >= 65520.0f) return std::copysign(INFINITY, value);
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e with m in [0.5, 1)
  const float spacing = std::ldexp(1.0f, std::max(e - 1, -14) - 10);
  return std::copysign(std::nearbyint(a / spacing) * spacing, value);
#endif
}

}  // namespace

float round_to(DType dtype, float value) {
  switch (dtype) {
    case DType::bf16: {
      if (value != value) return value;  // NaN stays NaN
      auto bits = std::bit_cast<std::uint32_t>(value);
      bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
      return std::bit_cast<float>(bits & 0xffff0000u);
    }
    case DType::f16:
      return round_to_f16(value);
    default:
      return value;
  }
}

namespace {

// For each reachable node, the position (in evaluation order) of its last consumer.
struct Schedule {
  std::vector<NodeId> order;     // reachable nodes, ascending (topological) ids
  std::vector<NodeId> last_use;  // by node id; -1 when unreachable
  std::vector<bool> is_output;   // by node id
};

Schedule schedule(const Graph& g, std::span<const Var> outputs) {
  Schedule s;
  std::vector<bool> needed(g.size(), false);
  s.is_output.assign(g.size(), false);
  s.last_use.assign(g.size(), -1);
  for (Var v : outputs) {
    if (v.graph != &g) throw UserError("evaluate: outputs belong to different graphs");
    needed[static_cast<std::size_t>(v.id)] = true;
    s.is_output[static_cast<std::size_t>(v.id)] = true;
  }
  for (auto id = static_cast<NodeId>(g.size()) - 1; id >= 0; --id)
    if (needed[static_cast<std::size_t>(id)])
      for (NodeId a : g.node(id).args) needed[static_cast<std::size_t>(a)] = true;
  for (NodeId id = 0; id < static_cast<NodeId>(g.size()); ++id)
    if (needed[static_cast<std::size_t>(id)]) {
      for (NodeId a : g.node(id).args) s.last_use[static_cast<std::size_t>(a)] = id;
      s.order.push_back(id);
    }
  return s;
}

template <class T>
Matrix<T> leaf_value(const Graph& g, NodeId id, const Bindings& bindings) {
  const Node& n = g.node(id);
  if (n.op == Op::Const) {
    Matrix<double> m = Eigen::Map<const MatrixD>(n.attrs.data->data(), n.shape.rows, n.shape.cols);
    return m.cast<T>();
  }
  auto it = bindings.find(n.attrs.name);
  if (it == bindings.end()) throw UserError("evaluate: no value bound for " + g.describe(id));
  if (it->second.rows() != n.shape.rows || it->second.cols() != n.shape.cols)
    throw UserError("evaluate: " + g.describe(id) + " is bound to a value of shape [" +
                    std::to_string(it->second.rows()) + "," + std::to_string(it->second.cols()) +
                    "]");
  return it->second.cast<T>();
}

template <class T>
const EvalFn<T>& eval_fn(const Primitive& p) {
  if constexpr (std::is_same_v<T, double>)
    return p.eval_f64;
  else
    return p.eval_f32;
}

// Evaluates one node in type T from stored values of type S.
template <class T, class S>
Matrix<S> eval_node(const Graph& g, NodeId id, const std::vector<std::optional<Matrix<S>>>& vals) {
  const Node& n = g.node(id);
  std::vector<Matrix<T>> converted;
  std::vector<const Matrix<T>*> args;
  if constexpr (!std::is_same_v<T, S>) converted.reserve(n.args.size());
  for (NodeId a : n.args) {
    const Matrix<S>& v = *vals[static_cast<std::size_t>(a)];
    if constexpr (std::is_same_v<T, S>) {
      args.push_back(&v);
    } else {
      converted.push_back(v.template cast<T>());
      args.push_back(&converted.back());
    }
  }
  Matrix<T> out = eval_fn<T>(primitive(n.op))(n, args);
  if constexpr (std::is_same_v<T, float>)
    if (n.dtype == DType::bf16 || n.dtype == DType::f16)
      out = out.unaryExpr([dt = n.dtype](float x) { return round_to(dt, x); });
  if constexpr (std::is_same_v<T, S>)
    return out;
  else
    return out.template cast<S>();
}

template <class S>
std::vector<MatrixD> run(const Graph& g, std::span<const Var> outputs, const Bindings& bindings,
                         Precision precision) {
  const Schedule s = schedule(g, outputs);
  std::vector<std::optional<Matrix<S>>> vals(g.size());
  for (NodeId id : s.order) {
    const Node& n = g.node(id);
    if (n.args.empty()) {
      vals[static_cast<std::size_t>(id)] = leaf_value<S>(g, id, bindings);
    } else if (precision == Precision::node && n.dtype != DType::f64) {
      vals[static_cast<std::size_t>(id)] = eval_node<float, S>(g, id, vals);
    } else {
      vals[static_cast<std::size_t>(id)] = eval_node<S, S>(g, id, vals);
    }
    for (NodeId a : n.args)  // release operands whose last consumer this was
      if (s.last_use[static_cast<std::size_t>(a)] == id &&
          !s.is_output[static_cast<std::size_t>(a)])
        vals[static_cast<std::size_t>(a)].reset();
  }
  std::vector<MatrixD> out;
  for (Var v : outputs)
    out.push_back(vals[static_cast<std::size_t>(v.id)]->template cast<double>());
  return out;
}

}  // namespace

std::vector<MatrixD> evaluate(std::span<const Var> outputs, const Bindings& bindings,
                              Precision precision) {
  if (outputs.empty()) return {};
  const Graph& g = *outputs[0].graph;
  if (precision == Precision::f32) return run<float>(g, outputs, bindings, precision);
  return run<double>(g, outputs, bindings, precision);
}

MatrixD evaluate(Var output, const Bindings& bindings, Precision precision) {
  return evaluate(std::span<const Var>(&output, 1), bindings, precision).front();
}

}  // namespace jetpde
