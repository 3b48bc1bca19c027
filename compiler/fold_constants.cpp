// Constant folding: an operation whose operands are all constants becomes a constant, computed
// by the primitive's reference evaluation (the interpreter's), then rounded to the node's dtype.
// Results larger than kMaxFoldedElements stay computed: a broadcast constant is cheaper to read
// than a large table. Broadcasts themselves are never folded.
#include "autodiff/primitive.h"
#include "compiler/passes.h"

namespace jetpde::compiler {
namespace {

constexpr std::int64_t kMaxFoldedElements = 4096;

double round_to_dtype(double x, DType dtype) {
  return dtype == DType::f64 ? x : static_cast<double>(static_cast<float>(x));
}

}  // namespace

Module fold_constants(const Module& in) {
  return rewrite(in, [](Graph& g, const Node& n, std::span<const Var> a) -> std::optional<Var> {
    if (n.args.empty() || n.op == Op::Broadcast || n.shape.size() > kMaxFoldedElements)
      return std::nullopt;
    std::vector<MatrixD> values;
    for (Var v : a) {
      if (v.op() != Op::Const) return std::nullopt;
      values.push_back(
          Eigen::Map<const MatrixD>(v.node().attrs.data->data(), v.shape().rows, v.shape().cols));
    }
    std::vector<const MatrixD*> ptrs;
    for (const MatrixD& m : values) ptrs.push_back(&m);
    const MatrixD r = primitive(n.op).eval_f64(n, ptrs);
    std::vector<double> data(r.data(), r.data() + r.size());
    for (double& x : data) x = round_to_dtype(x, n.dtype);
    return g.constant(n.shape, std::move(data), n.dtype);
  });
}

}  // namespace jetpde::compiler
