// Analysis: the derivatives an equation's core form reads, and the TaylorPlan for them.
#include "equations/analysis.h"

#include <algorithm>
#include <unordered_set>

#include "autodiff/errors.h"
#include "equations/detail/diagnostics.h"
#include "equations/limits.h"

namespace jetpde::equations {

void Needs::merge(const Needs& other) {
  for (const auto& [name, f] : other.fields) {
    FieldNeeds& mine = fields[name];
    mine.partials.insert(f.partials.begin(), f.partials.end());
    mine.laplacian = mine.laplacian || f.laplacian;
    mine.biharmonic = mine.biharmonic || f.biharmonic;
  }
  max_order = std::max(max_order, other.max_order);
  normal = normal || other.normal;
  params.insert(other.params.begin(), other.params.end());
}

namespace {

// `seen`: the nodes visited (the core form is a DAG whose shared subexpressions are visited once).
void collect(const Expr& e, std::size_t num_coords, Needs& needs,
             std::unordered_set<const ExprNode*>& seen) {
  if (!e->args.empty() && !seen.insert(&*e).second) return;
  switch (e->kind) {
    case ExprKind::field:
      needs.fields[e->name].partials.insert(MultiIndex(num_coords, 0));
      return;
    case ExprKind::derivative:
      needs.fields[e->name].partials.insert(e->alpha);
      needs.max_order = std::max(needs.max_order, degree(e->alpha));
      return;
    case ExprKind::laplacian: {
      check_internal(e->args[0]->kind == ExprKind::field && e->order <= 2,
                     "analyze: a laplacian node outside the core form");
      FieldNeeds& f = needs.fields[e->args[0]->name];
      (e->order == 1 ? f.laplacian : f.biharmonic) = true;
      needs.max_order = std::max(needs.max_order, 2 * e->order);
      return;
    }
    case ExprKind::normal_component:
      needs.normal = true;
      return;
    case ExprKind::param:
      needs.params.insert(e->name);
      return;
    default:
      for (const Expr& a : e->args) collect(a, num_coords, needs, seen);
  }
}

// The work of a Taylor plan: Σ over its downward closure C of Π_i (α_i + 1), the coefficient
// pairs (β, α - β) a product's stream α sums, counted up to `cap` + 1 (each α adds at least 1,
// so no more than `cap` + 1 elements are visited).
std::int64_t closure_work(const std::vector<MultiIndex>& seeds, std::int64_t cap) {
  std::set<MultiIndex> closed;
  std::vector<MultiIndex> stack(seeds.begin(), seeds.end());
  std::int64_t work = 0;
  while (!stack.empty() && work <= cap) {
    MultiIndex beta = std::move(stack.back());
    stack.pop_back();
    if (closed.contains(beta)) continue;
    std::int64_t pairs = 1;
    for (int b : beta) pairs = std::min(pairs * (b + 1), cap + 1);
    work += pairs;
    for (std::size_t i = 0; i < beta.size(); ++i)
      if (beta[i] > 0) {
        MultiIndex lower = beta;
        --lower[i];
        if (!closed.contains(lower)) stack.push_back(std::move(lower));
      }
    closed.insert(std::move(beta));
  }
  return work;
}

// A plan beyond limits::kMaxTaylorWork is a UserError naming the derivative that needs the most
// (a mixed derivative ∂^α brings all Π(α_i + 1) below it).
void check_taylor_work(const Needs& needs, const std::vector<MultiIndex>& seeds,
                       const Context& ctx) {
  const std::int64_t cap = limits::kMaxTaylorWork;
  if (closure_work(seeds, cap) <= cap) return;
  std::string worst;
  double most = 0;
  for (const auto& [name, f] : needs.fields)
    for (const MultiIndex& alpha : f.partials) {
      double box = 1;
      for (int a : alpha) box *= a + 1;
      if (box > most) {
        most = box;
        worst = Expr::derivative(name, 0, alpha, ctx.coordinate_names()).str();
      }
    }
  throw UserError(
      "equations: the derivatives asked for make too large a Taylor plan: each derivative brings "
      "every lower one it contains (" +
      worst + " alone needs " + std::to_string(static_cast<long long>(std::min(most, 1e18))) +
      " streams), and the plan's products would sum more than " + std::to_string(cap) +
      " coefficient pairs per node; the limit is " + std::to_string(cap));
}

}  // namespace

Needs analyze(const Equation& equation, const Context& ctx) {
  Needs needs;
  std::unordered_set<const ExprNode*> seen;
  collect(equation.core, ctx.coordinate_names().size(), needs, seen);
  return needs;
}

Needs analyze(const std::vector<Equation>& equations, const Context& ctx) {
  Needs needs;
  for (const Equation& e : equations) needs.merge(analyze(e, ctx));
  return needs;
}

DerivativeSum spatial_laplacian(const Context& ctx) {
  return laplacian_sum(static_cast<int>(ctx.coordinate_names().size()), ctx.spatial());
}

DerivativeSum spatial_biharmonic(const Context& ctx) {
  return biharmonic_sum(static_cast<int>(ctx.coordinate_names().size()), ctx.spatial());
}

TaylorPlan plan_for(const Needs& needs, const Context& ctx, Var coordinates) {
  const std::size_t d = ctx.coordinate_names().size();
  if (coordinates.graph == nullptr || coordinates.op() != Op::Input ||
      coordinates.shape().cols != static_cast<std::int64_t>(d))
    throw UserError(
        "equations: the coordinates must be an input leaf with " + std::to_string(d) +
        " columns (" + detail::join(ctx.coordinate_names()) + "), got " +
        (coordinates.graph ? coordinates.graph->describe(coordinates.id) : std::string("no node")));
  std::vector<TaylorVar> vars;
  for (std::size_t j = 0; j < d; ++j) vars.push_back({coordinates, static_cast<std::int64_t>(j)});
  std::set<MultiIndex> partials;
  bool laplacian = false, biharmonic = false;
  for (const auto& [name, f] : needs.fields) {
    for (const MultiIndex& alpha : f.partials)
      if (degree(alpha) > 0) partials.insert(alpha);
    laplacian = laplacian || f.laplacian;
    biharmonic = biharmonic || f.biharmonic;
  }
  std::vector<DerivativeSum> sums;
  if (laplacian) sums.push_back(spatial_laplacian(ctx));
  if (biharmonic) sums.push_back(spatial_biharmonic(ctx));
  std::vector<MultiIndex> seeds(partials.begin(), partials.end());
  seeds.push_back(MultiIndex(d, 0));
  for (const DerivativeSum& s : sums)  // a collapsed sum needs the strictly lower coefficients
    for (const auto& [alpha, coeff] : s.terms)
      for (std::size_t i = 0; i < alpha.size(); ++i)
        if (alpha[i] > 0) {
          MultiIndex lower = alpha;
          --lower[i];
          seeds.push_back(std::move(lower));
        }
  check_taylor_work(needs, seeds, ctx);
  return TaylorPlan(std::move(vars), {partials.begin(), partials.end()}, std::move(sums));
}

TaylorPlan plan_for(const std::vector<Equation>& equations, const Context& ctx, Var coordinates) {
  return plan_for(analyze(equations, ctx), ctx, coordinates);
}

}  // namespace jetpde::equations
