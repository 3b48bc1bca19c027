// Lowering of the core form to graph nodes (see lower.h).
#include "equations/lower.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "equations/analysis.h"
#include "equations/detail/diagnostics.h"

namespace jetpde::equations {

namespace {

using detail::join;

std::string describe(Var v) { return v.graph ? v.graph->describe(v.id) : std::string("no node"); }

// a^k for an integer k >= 0 by repeated squaring: exact Taylor streams through the Cauchy
// product, where pow's recurrence divides by a.
Var integer_power(Var a, long k) {
  Var result{}, base = a;
  while (k > 0) {
    if (k & 1) result = result.id < 0 ? base : result * base;
    k >>= 1;
    if (k > 0) base = square(base);
  }
  return result;
}

class Lowerer {
 public:
  Lowerer(const Equation& eq, const Context& ctx, const LowerInputs& in, Taylor& taylor)
      : eq_(eq), source_{eq.text, ""}, ctx_(ctx), in_(in), taylor_(taylor) {
    check_inputs();
  }

  Var run() {
    Var r = lower(eq_.core);
    if (r.shape().rows == 1) r = broadcast(r, {rows_, 1});
    check_internal(r.shape() == Shape{rows_, 1}, "lower: a residual of shape " + r.shape().str());
    return r;
  }

 private:
  Graph& g() { return *in_.coordinates.graph; }

  void check_inputs() {
    const Var x = in_.coordinates;
    const auto d = static_cast<std::int64_t>(ctx_.coordinate_names().size());
    if (x.graph == nullptr || x.op() != Op::Input || x.shape().cols != d)
      throw UserError("equations: the coordinates must be an input leaf with " + std::to_string(d) +
                      " columns (" + join(ctx_.coordinate_names()) + "), got " + describe(x));
    rows_ = x.shape().rows;
    const TaylorPlan& plan = taylor_.plan();
    bool same = plan.num_vars() == d;
    for (std::int64_t j = 0; same && j < d; ++j)
      same = plan.vars()[static_cast<std::size_t>(j)].input == x &&
             plan.vars()[static_cast<std::size_t>(j)].column == j;
    if (!same)
      throw UserError("equations: the Taylor plan does not differentiate by the columns of " +
                      describe(x) + " in order (" + join(ctx_.coordinate_names()) +
                      "); build it with plan_for()");
  }

  // Once per node: the core form is a DAG whose shared subexpressions become shared graph nodes.
  Var lower(const Expr& e) {
    if (auto it = lowered_.find(&*e); it != lowered_.end()) return it->second;
    const Var v = lower_node(e);
    lowered_.emplace(&*e, v);
    return v;
  }

  // constant_value(), tried only where the node is made of constants (memoized, so that a DAG's
  // shared subexpressions are looked at once).
  bool constant(const Expr& e, double* value) {
    auto it = constant_.find(&*e);
    if (it == constant_.end()) {
      bool maybe = false;
      switch (e->kind) {
        case ExprKind::number:
        case ExprKind::constant:
          maybe = true;
          break;
        case ExprKind::neg:
        case ExprKind::call:
        case ExprKind::add:
        case ExprKind::sub:
        case ExprKind::mul:
        case ExprKind::div:
        case ExprKind::pow:
          maybe = std::all_of(e->args.begin(), e->args.end(),
                              [&](const Expr& a) { return constant(a, value); });
          break;
        default:
          break;
      }
      it = constant_.emplace(&*e, maybe).first;
    }
    return it->second && constant_value(e, value);
  }

  Var lower_node(const Expr& e) {
    double c = 0.0;
    if (constant(e, &c)) return g().scalar(c);
    switch (e->kind) {
      case ExprKind::param:
        return g().param(in_.param_prefix + e->name, {1, 1});
      case ExprKind::coordinate:
        return col(in_.coordinates, e->index);
      case ExprKind::normal_component:
        return col(normal(e->column), e->index);
      case ExprKind::field:
        return field(e->index, e->column);
      case ExprKind::derivative:
        return derivative(e);
      case ExprKind::laplacian:
        return laplacian(e);
      case ExprKind::neg:
        return neg(lower(e->args[0]));
      case ExprKind::add:
      case ExprKind::sub:
      case ExprKind::mul:
      case ExprKind::div:
        return arithmetic(e);
      case ExprKind::pow:
        return power(e);
      case ExprKind::call:
        return call(e);
      default:
        throw InternalError("lower: a node outside the core form: " + e.str());
    }
  }

  // + - * / with a constant operand as a scale or shift (no [1,1] node).
  Var arithmetic(const Expr& e) {
    double ca = 0.0, cb = 0.0;
    const bool a_const = constant(e->args[0], &ca);
    const bool b_const = constant(e->args[1], &cb);
    const Var a = a_const ? Var{} : lower(e->args[0]);
    const Var b = b_const ? Var{} : lower(e->args[1]);
    switch (e->kind) {
      case ExprKind::add:
        return a_const ? ca + b : b_const ? a + cb : a + b;
      case ExprKind::sub:
        return a_const ? ca - b : b_const ? a - cb : a - b;
      case ExprKind::mul:
        return a_const ? scale(b, ca) : b_const ? scale(a, cb) : a * b;
      default:
        return a_const ? ca / b : b_const ? scale(a, 1.0 / cb) : a / b;
    }
  }

  Var power(const Expr& e) {
    const Var a = lower(e->args[0]);
    double c = 0.0;
    if (!constant(e->args[1], &c)) return exp(lower(e->args[1]) * log(a));
    if (c == std::floor(c) && std::abs(c) <= 64) {
      const auto k = static_cast<long>(c);
      if (k == 0) return broadcast(g().scalar(1.0), a.shape());
      const Var p = integer_power(a, std::abs(k));
      return k > 0 ? p : 1.0 / p;
    }
    return pow(a, c);
  }

  // A record of autodiff/functions.h: its primitive, or its formula for a helper.
  Var call(const Expr& e) {
    std::vector<Var> args;
    for (const Expr& a : e->args) args.push_back(lower(a));
    return functions::visit(static_cast<std::size_t>(e->function),
                            [&]<class F>() { return functions::call_span<F>(args); });
  }

  Var field(int index, int column) {
    const std::string& name = ctx_.field_names().at(static_cast<std::size_t>(index));
    if (auto it = in_.fields.find(name); it != in_.fields.end()) {
      const Var v = it->second;
      if (v.graph != &g() || v.shape() != Shape{rows_, 1})
        detail::fail(source_, column,
                     "the node given for field '" + name + "' must be [" + std::to_string(rows_) +
                         ",1] in the coordinates' graph, got " + describe(v));
      return v;
    }
    const Var out = in_.outputs;
    if (out.graph == nullptr)
      detail::fail(source_, column,
                   "no node for field '" + name +
                       "': give LowerInputs::outputs (one column per field) or fields[\"" + name +
                       "\"]");
    if (out.graph != &g() || out.shape().rows != rows_ || out.shape().cols <= index)
      detail::fail(source_, column,
                   "field '" + name + "' is column " + std::to_string(index) +
                       " of the outputs, which are " + describe(out) + " (" +
                       std::to_string(rows_) + " rows expected)");
    return out.shape().cols == 1 ? out : col(out, index);
  }

  Var normal(int column) {
    const Var n = in_.normal;
    const auto dims = static_cast<std::int64_t>(ctx_.spatial().size());
    if (n.graph == nullptr)
      detail::fail(source_, column,
                   "the equation uses the normal n, but no normal was given "
                   "(LowerInputs::normal, [n, " +
                       std::to_string(dims) + "], on boundary points)");
    if (n.graph != &g() || n.shape() != Shape{rows_, dims})
      detail::fail(source_, column,
                   "the normal must be [" + std::to_string(rows_) + "," + std::to_string(dims) +
                       "] (one column per spatial coordinate: " + join(ctx_.spatial_names()) +
                       "), got " + describe(n));
    return n;
  }

  Var derivative(const Expr& e) {
    const TaylorPlan& plan = taylor_.plan();
    if (plan.key_of(e->alpha) < 0)
      detail::fail(source_, e->column,
                   "the derivative " + e.str() + " (multi-index " + multi_index_str(e->alpha) +
                       " over " + join(ctx_.coordinate_names()) +
                       ") is beyond what was planned: the Taylor plan has " + plan.str() +
                       "; build the plan with plan_for() from every equation lowered with it");
    return taylor_.derivative(field(e->index, e->column), e->alpha);
  }

  // laplacian(u) or the biharmonic: the plan's sum with exactly these terms (collapsed or not),
  // else the explicit derivatives when the plan holds them all.
  Var laplacian(const Expr& e) {
    const DerivativeSum want = e->order == 1 ? spatial_laplacian(ctx_) : spatial_biharmonic(ctx_);
    const std::set<std::pair<MultiIndex, double>> terms(want.terms.begin(), want.terms.end());
    const TaylorPlan& plan = taylor_.plan();
    const Var y = field(e->args[0]->index, e->column);
    for (std::size_t k = 0; k < plan.sums().size(); ++k) {
      const auto& have = plan.sums()[k].terms;
      if (std::set<std::pair<MultiIndex, double>>(have.begin(), have.end()) == terms)
        return taylor_.sum(y, k);
    }
    std::vector<std::string> missing;
    for (const auto& [alpha, coeff] : want.terms)
      if (plan.key_of(alpha) < 0) missing.push_back(multi_index_str(alpha));
    if (!missing.empty())
      detail::fail(source_, e->column,
                   e.str() + " is beyond what was planned: it needs the sum '" + want.name +
                       "' over " + join(ctx_.spatial_names()) + " or the derivatives " +
                       join(missing) + ", and the Taylor plan has " + plan.str() +
                       "; build the plan with plan_for() from every equation lowered with it");
    Var acc{};
    for (const auto& [alpha, coeff] : want.terms) {
      const Var term = scale(taylor_.derivative(y, alpha), coeff);
      acc = acc.id < 0 ? term : acc + term;
    }
    return acc;
  }

  const Equation& eq_;
  detail::Source source_;
  const Context& ctx_;
  const LowerInputs& in_;
  Taylor& taylor_;
  std::int64_t rows_ = 0;
  std::unordered_map<const ExprNode*, Var> lowered_;
  std::unordered_map<const ExprNode*, bool> constant_;  // whether made of constants only
};

}  // namespace

Var lower(const Equation& equation, const Context& ctx, const LowerInputs& inputs, Taylor& taylor) {
  return Lowerer(equation, ctx, inputs, taylor).run();
}

std::vector<Var> lower(const std::vector<Equation>& equations, const Context& ctx,
                       const LowerInputs& inputs, Taylor& taylor) {
  std::vector<Var> out;
  for (const Equation& e : equations) out.push_back(lower(e, ctx, inputs, taylor));
  return out;
}

Bindings initial_params(const Context& ctx, const std::string& param_prefix) {
  Bindings out;
  for (const Symbol* s : ctx.symbols(SymbolKind::param)) {
    MatrixD v(1, 1);
    v(0, 0) = s->value;
    out[param_prefix + s->name] = std::move(v);
  }
  return out;
}

}  // namespace jetpde::equations
