#include "solvers/classical/stencil.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <span>

#include "autodiff/errors.h"
#include "autodiff/functions.h"

namespace jetpde::classical {
namespace {

using equations::Expr;
using equations::ExprKind;

// Weights w_j with sum_j w_j f(o_j h) = f^(k)(0) h^k exactly for polynomials of degree < m (the
// Taylor conditions sum_j w_j o_j^p / p! = [p == k], p = 0..m-1).
std::vector<Tap> weights_for(const std::vector<int>& offsets, int k, double h) {
  const int m = static_cast<int>(offsets.size());
  Eigen::MatrixXd a(m, m);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(m);
  for (int p = 0; p < m; ++p) {
    double factorial = 1;
    for (int q = 2; q <= p; ++q) factorial *= q;
    for (int j = 0; j < m; ++j) a(p, j) = std::pow(static_cast<double>(offsets[j]), p) / factorial;
  }
  b(k) = 1;
  const Eigen::VectorXd w = a.fullPivLu().solve(b);
  std::vector<Tap> out;
  const double scale = std::pow(h, -k);
  for (int j = 0; j < m; ++j)
    if (std::abs(w(j)) > 1e-12) out.push_back({offsets[j], w(j) * scale});
  return out;
}

int central_half(int k) { return (k + 1) / 2; }  // 3 points for k = 1, 2; 5 for k = 3, 4

}  // namespace

std::vector<Tap> difference_taps(const Axis& axis, int k, int i) {
  if (k == 0) return {{0, 1.0}};
  if (k < 0 || k > 4)
    throw UserError("the petsc solver's stencils go to 4th derivatives; asked for order " +
                    std::to_string(k));
  const int p = central_half(k);
  std::vector<int> offsets;
  if (axis.periodic || (i - p >= 0 && i + p <= axis.n - 1)) {
    if (axis.periodic && axis.n < 2 * p + 1)
      throw UserError("a periodic axis of " + std::to_string(axis.n) +
                      " points is too short for a derivative of order " + std::to_string(k));
    for (int o = -p; o <= p; ++o) offsets.push_back(o);
  } else {
    // One-sided: order + 2 points for 2nd-order accuracy, shifted to stay on the grid.
    const int m = k + 2;
    if (axis.n < m)
      throw UserError("an axis of " + std::to_string(axis.n) + " points is too short for a " +
                      "one-sided derivative of order " + std::to_string(k) + " (needs " +
                      std::to_string(m) + ")");
    const int first = std::clamp(i - m / 2, 0, axis.n - m);
    for (int j = first; j < first + m; ++j) offsets.push_back(j - i);
  }
  return weights_for(offsets, k, axis.h);
}

int stencil_reach(const Axis& axis, int k) {
  int reach = 0;
  for (int order = 1; order <= k; ++order) {
    const int n = axis.periodic ? 1 : axis.n;
    for (int i = 0; i < n; ++i)
      for (const Tap& t : difference_taps(axis, order, i))
        reach = std::max(reach, std::abs(t.offset));
  }
  return reach;
}

StencilEvaluator::StencilEvaluator(std::vector<Axis> axes, const equations::Context& ctx)
    : axes_(std::move(axes)), spatial_(ctx.spatial()), time_(ctx.time_index()) {
  if (spatial_.size() != axes_.size())
    throw UserError("the grid has " + std::to_string(axes_.size()) + " axes but the problem " +
                    std::to_string(spatial_.size()) + " spatial coordinates");
  taps_.resize(axes_.size());
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    taps_[a].resize(5);
    const int n = axes_[a].periodic ? 1 : axes_[a].n;
    for (int k = 0; k <= 4; ++k) {
      // Orders the grid cannot hold stay empty; taps() reports them when asked for.
      try {
        for (int i = 0; i < n; ++i) taps_[a][k].push_back(difference_taps(axes_[a], k, i));
      } catch (const UserError&) {
        taps_[a][k].clear();
      }
    }
  }
}

const std::vector<Tap>& StencilEvaluator::taps(int axis, int k, int i) const {
  const auto& table = taps_[axis][k];
  if (table.empty()) difference_taps(axes_[axis], k, i);  // throws the reason
  return table[axes_[axis].periodic ? 0 : i];
}

double StencilEvaluator::derivative(int field, const int* orders, const EvalPoint& p) const {
  // Tensor product of the 1-D stencils of each axis (a mixed derivative is the product of
  // central differences, 2nd-order accurate as each factor is).
  int index[3] = {p.index[0], p.index[1], p.index[2]};
  const int d = static_cast<int>(axes_.size());
  const std::vector<Tap>* t[3] = {nullptr, nullptr, nullptr};
  static const std::vector<Tap> identity{{0, 1.0}};
  for (int a = 0; a < 3; ++a) t[a] = a < d ? &taps(a, orders[a], p.index[a]) : &identity;
  double sum = 0;
  for (const Tap& c : *t[2]) {
    index[2] = p.index[2] + c.offset;
    for (const Tap& b : *t[1]) {
      index[1] = p.index[1] + b.offset;
      for (const Tap& a : *t[0]) {
        index[0] = p.index[0] + a.offset;
        sum += a.weight * b.weight * c.weight * p.u->at(field, index);
      }
    }
  }
  return sum;
}

double StencilEvaluator::operator()(const Expr& e, const EvalPoint& p) const {
  switch (e->kind) {
    case ExprKind::number:
    case ExprKind::constant:
      return e->value;
    case ExprKind::coordinate:
      return p.coordinates[static_cast<std::size_t>(e->index)];
    case ExprKind::field:
      return p.u->at(e->index, p.index);
    case ExprKind::derivative: {
      if (time_ >= 0 && e->alpha[static_cast<std::size_t>(time_)] > 0) {
        if (!p.udot) throw UserError("a time derivative where the solver has none");
        return p.udot->at(e->index, p.index);
      }
      int orders[3] = {0, 0, 0};
      for (std::size_t a = 0; a < spatial_.size(); ++a)
        orders[a] = e->alpha[static_cast<std::size_t>(spatial_[a])];
      return derivative(e->index, orders, p);
    }
    case ExprKind::normal_component:
      if (!p.normal) throw UserError("the normal n is only defined on the boundary");
      return p.normal[e->index];
    case ExprKind::neg:
      return -(*this)(e->args[0], p);
    case ExprKind::add:
      return (*this)(e->args[0], p) + (*this)(e->args[1], p);
    case ExprKind::sub:
      return (*this)(e->args[0], p) - (*this)(e->args[1], p);
    case ExprKind::mul:
      return (*this)(e->args[0], p) * (*this)(e->args[1], p);
    case ExprKind::div:
      return (*this)(e->args[0], p) / (*this)(e->args[1], p);
    case ExprKind::pow: {
      const double a = (*this)(e->args[0], p), b = (*this)(e->args[1], p);
      return std::pow(a, b);
    }
    case ExprKind::call: {
      double args[4] = {0, 0, 0, 0};
      const std::size_t n = e->args.size();
      if (n > 4) throw UserError("a function of more than 4 arguments");
      for (std::size_t k = 0; k < n; ++k) args[k] = (*this)(e->args[k], p);
      return functions::eval(static_cast<std::size_t>(e->function),
                             std::span<const double>(args, n));
    }
    case ExprKind::laplacian: {
      // The collapsed Laplacian (order 1) or biharmonic (order 2) of a field, over the spatial
      // axes.
      const int field = e->args[0]->index;
      const int d = static_cast<int>(axes_.size());
      double sum = 0;
      int orders[3] = {0, 0, 0};
      for (int a = 0; a < d; ++a) {
        std::fill(orders, orders + 3, 0);
        orders[a] = 2 * e->order;
        sum += derivative(field, orders, p);
        if (e->order == 2)
          for (int b = a + 1; b < d; ++b) {
            std::fill(orders, orders + 3, 0);
            orders[a] = orders[b] = 2;
            sum += 2 * derivative(field, orders, p);
          }
      }
      return sum;
    }
    default:
      throw UserError("the petsc solver cannot evaluate '" + e.str() + "' pointwise");
  }
}

ExprNeeds expr_needs(const Expr& core, const equations::Context& ctx, const std::string& where) {
  ExprNeeds needs;
  const std::vector<int> spatial = ctx.spatial();
  needs.max_order.assign(spatial.size(), 0);
  needs.field_use.assign(ctx.field_names().size(), 0);
  needs.field_order.assign(ctx.field_names().size(), 0);
  const auto order = [&](int field, int k) {
    int& o = needs.field_order[static_cast<std::size_t>(field)];
    o = std::max(o, k);
  };
  const auto use = [&](int field, int how) {
    int& u = needs.field_use[static_cast<std::size_t>(field)];
    u = u == 1 ? 1 : how;
  };
  const int time = ctx.time_index();
  auto walk = [&](auto&& self, const Expr& e) -> void {
    switch (e->kind) {
      case ExprKind::param:
        needs.params.push_back(e->name);
        break;
      case ExprKind::normal:
      case ExprKind::normal_component:
        needs.normal = true;
        break;
      case ExprKind::field:
        use(e->index, 1);
        break;
      case ExprKind::derivative: {
        use(e->index, 2);
        {
          int total = 0;
          for (int k : e->alpha) total += k;
          order(e->index, total);
        }
        int space_orders = 0, axes_used = 0;
        for (std::size_t a = 0; a < spatial.size(); ++a) {
          const int k = e->alpha[static_cast<std::size_t>(spatial[a])];
          needs.max_order[a] = std::max(needs.max_order[a], k);
          space_orders += k;
          axes_used += k > 0;
        }
        if (axes_used > 1) needs.mixed = true;
        if (time >= 0) {
          const int kt = e->alpha[static_cast<std::size_t>(time)];
          if (kt > 0 && (kt > 1 || space_orders > 0))
            throw UserError(where +
                            ": the petsc solver takes first time derivatives of a field "
                            "alone (method of lines); '" +
                            e.str() + "' is not one");
          if (kt > 0) needs.time_derivative = true;
        }
        break;
      }
      case ExprKind::laplacian:
        use(e->args[0]->index, 2);
        order(e->args[0]->index, 2 * e->order);
        for (auto& k : needs.max_order) k = std::max(k, 2 * e->order);
        if (e->order == 2 && spatial.size() > 1) needs.mixed = true;
        return;  // its argument is the field, used only differentiated
      default:
        break;
    }
    for (const Expr& a : e->args) self(self, a);
  };
  walk(walk, core);
  return needs;
}

}  // namespace jetpde::classical
