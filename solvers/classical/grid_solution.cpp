#include <algorithm>
#include <cmath>
#include <map>

#include "autodiff/errors.h"
#include "solvers/classical/classical.h"

namespace jetpde::classical {
namespace {

// Weights of the derivative at ts[at] of the quadratic through (ts[k], .), k = 0..2.
std::array<double, 3> lagrange_derivative(const double* ts, int at) {
  std::array<double, 3> w{};
  for (int k = 0; k < 3; ++k) {
    // d/dt of prod_{j != k} (t - t_j) / (t_k - t_j) at t = ts[at].
    double denominator = 1, sum = 0;
    for (int j = 0; j < 3; ++j)
      if (j != k) denominator *= ts[k] - ts[j];
    for (int j = 0; j < 3; ++j) {
      if (j == k) continue;
      double product = 1;
      for (int m = 0; m < 3; ++m)
        if (m != k && m != j) product *= ts[at] - ts[m];
      sum += product;
    }
    w[static_cast<std::size_t>(k)] = sum / denominator;
  }
  return w;
}

}  // namespace

GridSolution::GridSolution(const solvers::Mathematics& math, std::vector<Axis> axes,
                           std::vector<double> times, std::vector<std::vector<double>> levels)
    : math_(math), axes_(std::move(axes)), times_(std::move(times)), levels_(std::move(levels)) {
  if (levels_.empty() || (!times_.empty() && times_.size() != levels_.size()))
    throw UserError("GridSolution: one grid per time level");
}

const std::vector<std::string>& GridSolution::coordinate_names() const {
  return math_.domain->coordinate_names();
}

const std::vector<std::string>& GridSolution::field_names() const {
  return math_.context.field_names();
}

void GridSolution::bracket(double t, std::size_t* l0, std::size_t* l1, double* w) const {
  *l0 = *l1 = 0;
  *w = 0;
  if (times_.size() < 2) return;
  const auto it = std::upper_bound(times_.begin(), times_.end(), t);
  *l1 =
      std::clamp<std::size_t>(static_cast<std::size_t>(it - times_.begin()), 1, times_.size() - 1);
  *l0 = *l1 - 1;
  *w = std::clamp((t - times_[*l0]) / (times_[*l1] - times_[*l0]), 0.0, 1.0);
}

MatrixD GridSolution::interpolate(const std::vector<std::vector<double>>& per_level, int columns,
                                  const MatrixD& points) const {
  const int d = static_cast<int>(axes_.size());
  const std::vector<int> spatial = math_.context.spatial();
  const int time = math_.context.time_index();
  if (points.cols() != static_cast<Eigen::Index>(math_.context.coordinate_names().size()))
    throw UserError("points with " + std::to_string(points.cols()) + " columns for a problem of " +
                    std::to_string(math_.context.coordinate_names().size()) + " coordinates");
  MatrixD out(points.rows(), columns);
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    // Time: the two levels around t (clamped to the stored ones), linearly.
    std::size_t l0 = 0, l1 = 0;
    double wt = 0;
    if (time >= 0) bracket(points(r, time), &l0, &l1, &wt);
    // Space: the cell around the point and its multilinear weights.
    int i0[3] = {0, 0, 0}, i1[3] = {0, 0, 0};
    double w[3] = {0, 0, 0};
    int stride[3] = {1, 1, 1};
    for (int a = 0; a < d; ++a) {
      const Axis& axis = axes_[static_cast<std::size_t>(a)];
      double s = (points(r, spatial[static_cast<std::size_t>(a)]) - axis.lo) / axis.h;
      if (axis.periodic) {
        s -= axis.n * std::floor(s / axis.n);
        i0[a] = std::min(static_cast<int>(std::floor(s)), axis.n - 1);
        i1[a] = (i0[a] + 1) % axis.n;
      } else {
        s = std::clamp(s, 0.0, static_cast<double>(axis.n - 1));
        i0[a] = std::min(static_cast<int>(std::floor(s)), axis.n - 2);
        i1[a] = i0[a] + 1;
      }
      w[a] = s - i0[a];
      if (a > 0) stride[a] = stride[a - 1] * axes_[static_cast<std::size_t>(a - 1)].n;
    }
    for (int c = 0; c < columns; ++c) {
      double value[2] = {0, 0};
      for (int lv = 0; lv < (wt > 0 ? 2 : 1); ++lv) {
        const std::vector<double>& g = per_level[lv == 0 ? l0 : l1];
        double sum = 0;
        for (int corner = 0; corner < (1 << d); ++corner) {
          double weight = 1;
          long long offset = 0;
          for (int a = 0; a < d; ++a) {
            const bool upper = (corner >> a) & 1;
            weight *= upper ? w[a] : 1 - w[a];
            offset += static_cast<long long>(upper ? i1[a] : i0[a]) * stride[a];
          }
          if (weight != 0) sum += weight * g[static_cast<std::size_t>(offset * columns + c)];
        }
        value[lv] = sum;
      }
      out(r, c) = wt > 0 ? (1 - wt) * value[0] + wt * value[1] : value[0];
    }
  }
  return out;
}

MatrixD GridSolution::fields(const MatrixD& points) const {
  return interpolate(levels_, static_cast<int>(field_names().size()), points);
}

std::vector<double> GridSolution::expressions_on_grid(
    std::size_t level, const std::vector<equations::Equation>& eqs) const {
  const int d = static_cast<int>(axes_.size());
  const int dof = static_cast<int>(field_names().size());
  GridArray u, udot;
  u.dof = udot.dof = dof;
  for (int a = 0; a < d; ++a) {
    const Axis& axis = axes_[static_cast<std::size_t>(a)];
    u.size[a] = udot.size[a] = axis.n;
    u.period[a] = udot.period[a] = axis.periodic ? axis.n : 0;
  }
  u.data = levels_[level].data();
  // The time derivative at this level from the stored levels (a quadratic through three of them;
  // a straight line through two).
  std::vector<double> rate(levels_[level].size(), 0.0);
  if (times_.size() >= 3) {
    const std::size_t first = std::clamp<std::size_t>(level, 1, times_.size() - 2) - 1;
    const auto w = lagrange_derivative(&times_[first], static_cast<int>(level - first));
    for (std::size_t k = 0; k < rate.size(); ++k)
      rate[k] =
          w[0] * levels_[first][k] + w[1] * levels_[first + 1][k] + w[2] * levels_[first + 2][k];
  } else if (times_.size() == 2) {
    for (std::size_t k = 0; k < rate.size(); ++k)
      rate[k] = (levels_[1][k] - levels_[0][k]) / (times_[1] - times_[0]);
  }
  udot.data = rate.data();
  StencilEvaluator evaluator(axes_, math_.context);
  const std::size_t columns = eqs.size();
  long long n = 1;
  for (const Axis& a : axes_) n *= a.n;
  std::vector<double> out(static_cast<std::size_t>(n) * columns);
  EvalPoint p;
  p.u = &u;
  p.udot = &udot;
  p.coordinates.assign(math_.context.coordinate_names().size(), 0.0);
  const std::vector<int> spatial = math_.context.spatial();
  if (math_.context.time_index() >= 0)
    p.coordinates[static_cast<std::size_t>(math_.context.time_index())] = times_[level];
  const int nx = d > 0 ? axes_[0].n : 1, ny = d > 1 ? axes_[1].n : 1, nz = d > 2 ? axes_[2].n : 1;
  std::size_t o = 0;
  for (p.index[2] = 0; p.index[2] < nz; ++p.index[2])
    for (p.index[1] = 0; p.index[1] < ny; ++p.index[1])
      for (p.index[0] = 0; p.index[0] < nx; ++p.index[0]) {
        for (int a = 0; a < d; ++a)
          p.coordinates[static_cast<std::size_t>(spatial[static_cast<std::size_t>(a)])] =
              axes_[static_cast<std::size_t>(a)].coordinate(p.index[a]);
        for (const equations::Equation& e : eqs) out[o++] = evaluator(e.core, p);
      }
  return out;
}

MatrixD GridSolution::evaluate(const MatrixD& points,
                               const std::vector<std::string>& expressions) const {
  std::vector<equations::Equation> eqs = equations::parse_all(expressions, math_.context);
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    const ExprNeeds needs = expr_needs(eqs[k].core, math_.context, "'" + expressions[k] + "'");
    if (needs.normal || !needs.params.empty())
      throw UserError("'" + expressions[k] +
                      "': the grid solution evaluates expressions of the "
                      "fields and coordinates (no normal n, no trainable parameters)");
  }
  // The expressions on the grid at the levels the points' times fall between, then interpolated
  // like the fields.
  std::vector<std::vector<double>> per_level(levels_.size());
  const int time = math_.context.time_index();
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    std::size_t l[2] = {0, 0};
    double w = 0;
    if (time >= 0) bracket(points(r, time), &l[0], &l[1], &w);
    for (std::size_t k : l)
      if (per_level[k].empty()) per_level[k] = expressions_on_grid(k, eqs);
  }
  return interpolate(per_level, static_cast<int>(eqs.size()), points);
}

std::vector<std::pair<std::string, std::string>> GridSolution::residuals() const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& eqs = math_.equations;
  for (std::size_t e = 0; e < eqs.size(); ++e)
    out.emplace_back(
        "residual_" + (math_.equation_names.empty()
                           ? (eqs.size() == 1 ? std::string("pde") : "pde" + std::to_string(e + 1))
                           : math_.equation_names[e]),
        eqs[e]);
  return out;
}

}  // namespace jetpde::classical
