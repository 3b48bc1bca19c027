#include "solvers/classical/discretization.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autodiff/errors.h"
#include "geometry/boundary.h"
#include "geometry/box.h"
#include "geometry/time_product.h"

namespace jetpde::classical {
namespace {

using solvers::Condition;

// Boundary points on at least this many faces have their stabilized fields extrapolated.
constexpr int kExtrapolateFaces = 2;

std::string number_text(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return std::string("(") + buffer + ")";
}

// The residual a boundary condition imposes, as text of the equation language (solvers/spec.h).
std::string condition_text(const Condition& c) {
  const std::string u = c.field, g = "(" + c.value + ")";
  switch (c.kind) {
    case Condition::Kind::dirichlet:
      return u + " - " + g;
    case Condition::Kind::neumann:
      return "dot(n, grad(" + u + ")) - " + g;
    case Condition::Kind::robin:
      return number_text(c.alpha) + "*" + u + " + " + number_text(c.beta) + "*dot(n, grad(" + u +
             ")) - " + g;
    case Condition::Kind::residual:
      return c.expression;
    default:
      return "";
  }
}

// A face of the box: the spatial axis and side (0: lower, 1: upper) of an axis-aligned normal.
int face_of(const double* normal, int spatial_dim) {
  for (int a = 0; a < spatial_dim; ++a)
    if (std::abs(normal[a]) > 0.5) return 2 * a + (normal[a] > 0 ? 1 : 0);
  return -1;  // a time face
}

}  // namespace

Discretization::Discretization(const solvers::Mathematics& m, const std::vector<int>& grid)
    : math(m), ctx(m.context) {
  solvers::check_mathematics(math);
  // The shape: a box, or a box times a time interval.
  const geometry::Geometry& domain = *math.domain;
  const geometry::AxisBox* box = dynamic_cast<const geometry::AxisBox*>(&domain);
  if (const auto* product = dynamic_cast<const geometry::TimeProduct*>(&domain)) {
    box = dynamic_cast<const geometry::AxisBox*>(product->space().get());
    if (!box)
      throw UserError(
          "the petsc solver discretizes boxes only (finite differences on a DMDA), "
          "and this domain's space is " +
          product->space()->describe() + ": use the PINN solver for it, or a box");
  }
  if (!box)
    throw UserError(
        "the petsc solver discretizes boxes only (finite differences on a DMDA), "
        "and the domain is " +
        domain.describe() + ": use the PINN solver for it, or a box");
  time = ctx.time_index();
  const geometry::Bounds bounds = domain.bounds();
  if (time >= 0) {
    t0 = bounds.lo.back();
    t1 = bounds.hi.back();
  }
  dim = static_cast<int>(ctx.spatial().size());
  dof = static_cast<int>(ctx.field_names().size());
  if (dim < 1 || dim > 3)
    throw UserError("the petsc solver's grids have 1, 2 or 3 spatial axes; this problem has " +
                    std::to_string(dim));
  if (grid.size() != 1 && static_cast<int>(grid.size()) != dim)
    throw UserError("solver.grid: " + std::to_string(grid.size()) + " counts for a problem of " +
                    std::to_string(dim) +
                    " spatial axes (give one for every axis, or one per axis)");

  // Periodic axes, from the periodic conditions.
  std::vector<bool> periodic(static_cast<std::size_t>(dim), false);
  const std::vector<int> spatial = ctx.spatial();
  for (std::size_t k = 0; k < math.conditions.size(); ++k) {
    const Condition& c = math.conditions[k];
    if (c.kind != Condition::Kind::periodic) continue;
    const int ci = ctx.coordinate_index(c.coordinate);
    const auto it = std::find(spatial.begin(), spatial.end(), ci);
    if (it == spatial.end())
      throw UserError(solvers::condition_label(c, k) +
                      ": the petsc solver makes spatial axes "
                      "periodic; '" +
                      c.coordinate + "' is not one");
    periodic[static_cast<std::size_t>(it - spatial.begin())] = true;
  }
  for (int a = 0; a < dim; ++a) {
    Axis axis;
    axis.lo = bounds.lo[static_cast<std::size_t>(a)];
    axis.hi = bounds.hi[static_cast<std::size_t>(a)];
    axis.n = grid.size() == 1 ? grid[0] : grid[static_cast<std::size_t>(a)];
    axis.periodic = periodic[static_cast<std::size_t>(a)];
    if (axis.n < 3)
      throw UserError("solver.grid: " + std::to_string(axis.n) + " points on the " +
                      ctx.spatial_names()[static_cast<std::size_t>(a)] + " axis; at least 3");
    axis.h = (axis.hi - axis.lo) / (axis.periodic ? axis.n : axis.n - 1);
    axes.push_back(axis);
  }

  // The equations: one per field, each giving the rows of its field.
  if (math.equations.size() != static_cast<std::size_t>(dof))
    throw UserError(
        "the petsc solver needs one equation per field: " + std::to_string(math.equations.size()) +
        " equations for " + std::to_string(dof) + " fields");
  std::vector<int> max_order(static_cast<std::size_t>(dim), 0), eq_order = max_order;
  ghost_axis.assign(static_cast<std::size_t>(dim), false);
  std::string high_order_where;  // an equation with derivatives of order 3 or 4 on a ghost axis
  int high_order = 0;
  has_time_derivative.assign(static_cast<std::size_t>(dof), false);
  for (std::size_t e = 0; e < math.equations.size(); ++e) {
    const std::string name = math.equation_names.empty() ? "" : math.equation_names[e];
    equations.push_back(equations::parse(math.equations[e], ctx, name));
    const std::string where = "equation " + std::to_string(e + 1) + " '" + math.equations[e] + "'";
    const ExprNeeds needs = expr_needs(equations.back().core, ctx, where);
    if (!needs.params.empty())
      throw UserError(where + ": trainable parameter '" + needs.params.front() +
                      "' has no value in a classical solve (make it a constant)");
    if (needs.normal) throw UserError(where + ": the normal n is only defined on the boundary");
    has_time_derivative[e] = needs.time_derivative;
    box_stencil = box_stencil || needs.mixed;
    for (int a = 0; a < dim; ++a) {
      const int k = needs.max_order[static_cast<std::size_t>(a)];
      if (k > 2 && !axes[static_cast<std::size_t>(a)].periodic) {
        ghost_axis[static_cast<std::size_t>(a)] = true;
        high_order_where = where;
        high_order = std::max(high_order, k);
      }
      eq_order[static_cast<std::size_t>(a)] = std::max(eq_order[static_cast<std::size_t>(a)], k);
    }
  }

  // Fields their own equation does not contain (classical.h: the pressure-like multipliers).
  // Such a field enters the other equations through first derivatives only (grad p): a field
  // whose value or second derivatives appear somewhere (the u of a mixed form whose equations
  // are listed in another order) is not one.
  std::vector<ExprNeeds> eq_needs;
  for (std::size_t e = 0; e < equations.size(); ++e)
    eq_needs.push_back(expr_needs(equations[e].core, ctx, ""));
  stabilized.assign(static_cast<std::size_t>(dof), false);
  pinned_field.assign(static_cast<std::size_t>(dof), false);
  for (std::size_t f = 0; f < static_cast<std::size_t>(dof); ++f) {
    if (eq_needs[f].field_use[f] != 0 || has_time_derivative[f]) continue;
    bool gradient_only = false;
    for (std::size_t e = 0; e < equations.size(); ++e) {
      const int use = eq_needs[e].field_use[f], order = eq_needs[e].field_order[f];
      if (use == 1 || order > 1) {
        gradient_only = false;
        break;
      }
      if (use == 2) gradient_only = true;
    }
    if (!gradient_only) continue;
    stabilized[f] = true;
    bool level_free = true;
    for (const Condition& c : math.conditions)
      if (c.field == ctx.field_names()[f] && c.kind != Condition::Kind::periodic)
        level_free = false;
    pinned_field[f] = level_free;
    formulation += (formulation.empty() ? "" : "; ") + ctx.field_names()[f] +
                   ": not in its own equation, which is stabilized by a 4th difference" +
                   (level_free ? ", fixed to 0 at the first grid point" : "");
  }

  // The conditions on the boundary, and the initial values.
  initial.resize(static_cast<std::size_t>(dof));
  has_initial.assign(static_cast<std::size_t>(dof), false);
  std::vector<std::vector<Face>>& faces = condition_faces;
  for (std::size_t k = 0; k < math.conditions.size(); ++k) {
    const Condition& c = math.conditions[k];
    const std::string label = solvers::condition_label(c, k);
    if (c.at.rows() > 0)
      throw UserError(label +
                      ": conditions at fixed points (`at`) are not placed on the petsc "
                      "solver's grid yet");
    switch (c.kind) {
      case Condition::Kind::periodic:
        continue;
      case Condition::Kind::initial_value: {
        const int f = ctx.field_index(c.field);
        initial[static_cast<std::size_t>(f)] = equations::parse(c.value, ctx, label);
        has_initial[static_cast<std::size_t>(f)] = true;
        continue;
      }
      case Condition::Kind::initial_rate:
      case Condition::Kind::data:
        throw UserError(label + ": the petsc solver does not take " +
                        solvers::condition_kind_name(c.kind) + " conditions");
      default:
        break;
    }
    if (ctx.field_index(c.field) < 0)
      throw UserError(label + ": the petsc solver puts a condition on the rows of its field; '" +
                      c.field + "' is not a field");
    conditions.push_back(equations::parse(condition_text(c), ctx, label));
    condition_source.push_back(k);
    const ExprNeeds needs = expr_needs(conditions.back().core, ctx, label);
    if (!needs.params.empty())
      throw UserError(label + ": trainable parameter '" + needs.params.front() +
                      "' has no value in a classical solve (make it a constant)");
    box_stencil = box_stencil || needs.mixed;
    for (int a = 0; a < dim; ++a)
      max_order[static_cast<std::size_t>(a)] = std::max(
          max_order[static_cast<std::size_t>(a)], needs.max_order[static_cast<std::size_t>(a)]);
    // The box faces the condition's piece holds (predicates checked point by point below).
    const geometry::ResolvedPiece piece = geometry::resolve_piece(
        domain, c.on.empty() ? geometry::BoundaryPiece::whole()
                             : geometry::BoundaryPiece::parse(domain, c.on));
    std::vector<Face> held;
    for (const geometry::BoundaryPatch& patch : piece.patches) {
      std::vector<double> u(static_cast<std::size_t>(std::max(patch.param_dim, 1)), 0.5),
          point(static_cast<std::size_t>(patch.dim)), normal(static_cast<std::size_t>(patch.dim));
      patch.map(u.data(), point.data(), normal.data());
      const int face = face_of(normal.data(), dim);
      if (face >= 0 && !axes[static_cast<std::size_t>(face / 2)].periodic)
        held.push_back({face, patch.keep});
    }
    faces.push_back(std::move(held));
  }
  for (std::size_t f = 0; f < static_cast<std::size_t>(dof); ++f)
    if (has_time_derivative[f] && !has_initial[f])
      throw UserError("field '" + ctx.field_names()[f] +
                      "' has a time derivative but no "
                      "initial_value condition: the time stepping has nowhere to start");

  // Which residual each row holds. Dirichlet conditions first, then the others, each group in the
  // problem's order; a point on several faces (a corner) takes the first that holds it.
  std::vector<std::size_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t c = 0; c < conditions.size(); ++c)
      if ((math.conditions[condition_source[c]].kind == Condition::Kind::dirichlet) == (pass == 0))
        order.push_back(c);
  const long long n = points();
  row.assign(static_cast<std::size_t>(n * dof), -1);
  row_face.assign(static_cast<std::size_t>(n * dof), -1);
  std::vector<std::size_t> used(conditions.size(), 0);
  const double t_mid = 0.5 * (t0 + t1);
  int index[3] = {0, 0, 0};
  for (index[2] = 0; index[2] < count(2); ++index[2])
    for (index[1] = 0; index[1] < count(1); ++index[1])
      for (index[0] = 0; index[0] < count(0); ++index[0]) {
        std::vector<int> on;  // the faces this point lies on
        for (int a = 0; a < dim; ++a) {
          const Axis& axis = axes[static_cast<std::size_t>(a)];
          if (axis.periodic) continue;
          if (index[a] == 0) on.push_back(2 * a);
          if (index[a] == axis.n - 1) on.push_back(2 * a + 1);
        }
        if (on.empty()) continue;
        // The point in the domain's coordinates (a time product: at mid-time, for predicates).
        std::vector<double> point(static_cast<std::size_t>(domain.dim()), t_mid);
        for (int a = 0; a < dim; ++a)
          point[static_cast<std::size_t>(a)] =
              axes[static_cast<std::size_t>(a)].coordinate(index[a]);
        const long long p = natural(index);
        for (std::size_t c : order) {
          const int f = ctx.field_index(math.conditions[condition_source[c]].field);
          const std::size_t r = static_cast<std::size_t>(p * dof + f);
          if (row[r] >= 0) continue;
          for (int face : on) {
            std::vector<double> normal(static_cast<std::size_t>(domain.dim()), 0.0);
            normal[static_cast<std::size_t>(face / 2)] = face % 2 ? 1.0 : -1.0;
            if (!condition_holds(c, face, point, normal)) continue;
            row[r] = static_cast<std::int16_t>(c);
            row_face[r] = static_cast<std::int8_t>(face);
            ++used[c];
            break;
          }
        }
      }
  // The stabilized fields' rows at corners that no condition took, and at the first point.
  for (index[2] = 0; index[2] < count(2); ++index[2])
    for (index[1] = 0; index[1] < count(1); ++index[1])
      for (index[0] = 0; index[0] < count(0); ++index[0]) {
        int faces_on = 0, first = -1;
        for (int a = 0; a < dim; ++a) {
          const Axis& axis = axes[static_cast<std::size_t>(a)];
          if (axis.periodic) continue;
          for (int side = 0; side < 2; ++side)
            if (index[a] == (side ? axis.n - 1 : 0)) {
              ++faces_on;
              if (first < 0) first = 2 * a + side;
            }
        }
        if (faces_on < kExtrapolateFaces) continue;
        const long long p = natural(index);
        for (std::size_t f = 0; f < static_cast<std::size_t>(dof); ++f) {
          const std::size_t r = static_cast<std::size_t>(p) * static_cast<std::size_t>(dof) + f;
          if (!stabilized[f] || row[r] != -1) continue;
          if (axes[static_cast<std::size_t>(first / 2)].n < 5)
            throw UserError("field '" + ctx.field_names()[f] +
                            "' is stabilized by a fourth difference, which needs 5 points per "
                            "axis; the grid has fewer");
          row[r] = extrapolated;
          row_face[r] = static_cast<std::int8_t>(first);
        }
      }
  for (std::size_t f = 0; f < static_cast<std::size_t>(dof); ++f)
    if (pinned_field[f]) row[f] = pinned;  // point 0's row of the field
  place_ghost_conditions(high_order_where, high_order);
  for (std::int16_t c : ghost_condition)
    if (c >= 0) ++used[static_cast<std::size_t>(c)];
  for (std::size_t c = 0; c < conditions.size(); ++c)
    if (used[c] == 0)
      throw UserError(
          solvers::condition_label(math.conditions[condition_source[c]], condition_source[c]) +
          ": holds at no boundary point of the petsc solver's grid (a time face, a "
          "periodic axis, or every point taken by an earlier condition)");
  bool equation_on_boundary = false;
  for (long long p = 0; p < n && !equation_on_boundary; ++p) {
    int i[3] = {static_cast<int>(p % count(0)), static_cast<int>((p / count(0)) % count(1)),
                static_cast<int>(p / (static_cast<long long>(count(0)) * count(1)))};
    bool boundary = false;
    for (int a = 0; a < dim; ++a)
      boundary = boundary || (!axes[static_cast<std::size_t>(a)].periodic &&
                              (i[a] == 0 || i[a] == axes[static_cast<std::size_t>(a)].n - 1));
    if (!boundary) continue;
    for (int f = 0; f < dof; ++f)
      if (row[static_cast<std::size_t>(p * dof + f)] == -1) equation_on_boundary = true;
  }

  // The DMDA's stencil width: the farthest any row reaches. Interior equation rows are central;
  // boundary rows (conditions, and equations where no condition holds) one-sided.
  stencil_width = 1;
  for (int a = 0; a < dim; ++a) {
    const Axis& axis = axes[static_cast<std::size_t>(a)];
    const int ke = eq_order[static_cast<std::size_t>(a)];
    int reach = (ke + 1) / 2;
    if (equation_on_boundary || axis.periodic) reach = std::max(reach, stencil_reach(axis, ke));
    reach = std::max(reach, stencil_reach(axis, max_order[static_cast<std::size_t>(a)]));
    stencil_width = std::max(stencil_width, reach);
  }
  // The fourth differences of the stabilization and the extrapolation reach 2 points.
  if (saddle_point()) stencil_width = std::max(stencil_width, 2);
  evaluator = std::make_unique<StencilEvaluator>(axes, ctx);
  if (has_ghosts()) {
    // The grid with one more point beyond each end of the ghost axes, for the equations' central
    // stencils next to the walls and the second conditions' central differences at them.
    std::vector<Axis> extended = axes;
    for (int a = 0; a < dim; ++a)
      if (ghost_axis[static_cast<std::size_t>(a)]) {
        Axis& e = extended[static_cast<std::size_t>(a)];
        e.lo -= e.h;
        e.hi += e.h;
        e.n += 2;
      }
    ghost_evaluator = std::make_unique<StencilEvaluator>(extended, ctx);
  }
}

bool Discretization::condition_holds(std::size_t c, int face, const std::vector<double>& point,
                                     const std::vector<double>& normal) const {
  for (const Face& h : condition_faces[c])
    if (h.face == face && (!h.keep || h.keep(point, normal))) return true;
  return false;
}

bool Discretization::has_ghosts() const {
  for (bool g : ghost_axis)
    if (g) return true;
  return false;
}

void Discretization::place_ghost_conditions(const std::string& where, int order) {
  if (!has_ghosts()) return;
  // Every boundary point of a ghost axis' faces, for every field whose equation reaches the
  // ghost, holds a condition in its row and needs a second one on that face, which involves the
  // derivative along the axis: it fixes the value one spacing outside (the ghost point).
  const long long n = points();
  ghost_condition.assign(static_cast<std::size_t>(n * dof * dim), -1);
  std::vector<bool> reaches(static_cast<std::size_t>(dof * dim), false);
  for (std::size_t e = 0; e < equations.size(); ++e) {
    const ExprNeeds needs = expr_needs(equations[e].core, ctx, "");
    for (int a = 0; a < dim; ++a)
      if (ghost_axis[static_cast<std::size_t>(a)] &&
          needs.max_order[static_cast<std::size_t>(a)] > 2)
        for (int f = 0; f < dof; ++f)
          if (needs.field_use[static_cast<std::size_t>(f)] != 0)
            reaches[static_cast<std::size_t>(f * dim + a)] = true;
  }
  // The conditions' faces (as the rows were placed), and whether they reach along each axis.
  const geometry::Geometry& domain = *math.domain;
  int index[3] = {0, 0, 0};
  for (index[2] = 0; index[2] < count(2); ++index[2])
    for (index[1] = 0; index[1] < count(1); ++index[1])
      for (index[0] = 0; index[0] < count(0); ++index[0]) {
        const long long p = natural(index);
        std::vector<double> point(static_cast<std::size_t>(domain.dim()), 0.5 * (t0 + t1));
        for (int a = 0; a < dim; ++a)
          point[static_cast<std::size_t>(a)] =
              axes[static_cast<std::size_t>(a)].coordinate(index[a]);
        for (int a = 0; a < dim; ++a) {
          const Axis& axis = axes[static_cast<std::size_t>(a)];
          if (!ghost_axis[static_cast<std::size_t>(a)]) continue;
          if (index[a] != 0 && index[a] != axis.n - 1) continue;
          const int face = 2 * a + (index[a] == 0 ? 0 : 1);
          std::vector<double> normal(static_cast<std::size_t>(domain.dim()), 0.0);
          normal[static_cast<std::size_t>(a)] = face % 2 ? 1.0 : -1.0;
          // A point of the face's rim (on another face too) is no equation's neighbour along
          // this axis unless the other face is periodic: its ghost is not needed.
          bool rim = false;
          for (int b = 0; b < dim; ++b)
            if (b != a && !axes[static_cast<std::size_t>(b)].periodic &&
                (index[b] == 0 || index[b] == axes[static_cast<std::size_t>(b)].n - 1))
              rim = true;
          for (int f = 0; f < dof; ++f) {
            if (!reaches[static_cast<std::size_t>(f * dim + a)]) continue;
            const std::size_t r = static_cast<std::size_t>(p * dof + f);
            int found = -1;
            for (std::size_t c = 0; c < conditions.size() && found < 0; ++c) {
              const Condition& cond = math.conditions[condition_source[c]];
              if (static_cast<int>(c) == row[r] || ctx.field_index(cond.field) != f) continue;
              if (expr_needs(conditions[c].core, ctx, "").max_order[static_cast<std::size_t>(a)] <
                  1)
                continue;
              if (condition_holds(c, face, point, normal)) found = static_cast<int>(c);
            }
            if (found < 0 && !rim) {
              std::string at;
              for (int b = 0; b < dim; ++b)
                at += (at.empty() ? "" : ", ") + ctx.spatial_names()[static_cast<std::size_t>(b)] +
                      " = " + geometry::format_number(point[static_cast<std::size_t>(b)]);
              throw UserError(
                  where + ": derivatives of order " + std::to_string(order) + " along the " +
                  "non-periodic " + ctx.spatial_names()[static_cast<std::size_t>(a)] +
                  " axis need two conditions at every point of its faces (a value and a normal " +
                  "derivative, e.g. dirichlet and neumann for a clamped plate), and field '" +
                  ctx.field_names()[static_cast<std::size_t>(f)] + "' has " +
                  (row[r] >= 0 ? "one" : "none") + " at (" + at +
                  "): add a condition there whose expression has a derivative along " +
                  ctx.spatial_names()[static_cast<std::size_t>(a)]);
            }
            ghost_condition[static_cast<std::size_t>((p * dof + f) * dim + a)] =
                static_cast<std::int16_t>(found);
            if (row[r] < 0)
              throw UserError(where + ": field '" + ctx.field_names()[static_cast<std::size_t>(f)] +
                              "' needs a condition in its own rows on the " +
                              ctx.spatial_names()[static_cast<std::size_t>(a)] +
                              " faces too (two per point)");
          }
        }
      }
}

long long Discretization::points() const {
  long long n = 1;
  for (const Axis& a : axes) n *= a.n;
  return n;
}

std::vector<double> Discretization::coordinates(const int* index, double t) const {
  std::vector<double> x(ctx.coordinate_names().size(), 0.0);
  const std::vector<int> spatial = ctx.spatial();
  for (int a = 0; a < dim; ++a)
    x[static_cast<std::size_t>(spatial[static_cast<std::size_t>(a)])] =
        axes[static_cast<std::size_t>(a)].coordinate(index[a]);
  if (time >= 0) x[static_cast<std::size_t>(time)] = t;
  return x;
}

void Discretization::residual(const GridArray& u, const GridArray* udot, double t, const int* lo,
                              const int* hi, double* f) const {
  EvalPoint p;
  p.u = &u;
  p.udot = udot;
  double normal[3];
  long long out = 0;
  // With ghost axes: the equations read copies of u (and udot) with the ghost points, in the
  // extended grid's indices (shift 1 along the ghost axes).
  GridArray ue, udote;
  std::vector<double> ue_data, udote_data;
  int shift[3] = {0, 0, 0};
  if (has_ghosts()) {
    extend(u, &ue, &ue_data, shift);
    if (udot) extend(*udot, &udote, &udote_data, shift);
    fill_ghosts(&ue, &ue_data, shift, t);
  }
  // The coordinates in place (no allocation per point): time once, the spatial ones per point.
  p.coordinates.assign(ctx.coordinate_names().size(), 0.0);
  if (time >= 0) p.coordinates[static_cast<std::size_t>(time)] = t;
  const std::vector<int> spatial = ctx.spatial();
  for (p.index[2] = lo[2]; p.index[2] < hi[2]; ++p.index[2])
    for (p.index[1] = lo[1]; p.index[1] < hi[1]; ++p.index[1])
      for (p.index[0] = lo[0]; p.index[0] < hi[0]; ++p.index[0]) {
        for (int a = 0; a < dim; ++a)
          p.coordinates[static_cast<std::size_t>(spatial[static_cast<std::size_t>(a)])] =
              axes[static_cast<std::size_t>(a)].coordinate(p.index[a]);
        const long long n = natural(p.index);
        for (int c = 0; c < dof; ++c, ++out) {
          const std::size_t r = static_cast<std::size_t>(n * dof + c);
          if (row[r] == pinned) {
            f[out] = u.at(c, p.index);
          } else if (row[r] == extrapolated) {
            const int face = row_face[r], a = face / 2, step = face % 2 ? -1 : 1;
            int at[3] = {p.index[0], p.index[1], p.index[2]};
            static constexpr double w[3] = {1, -2, 1};
            f[out] = 0;
            for (int k = 0; k < 3; ++k, at[a] += step) f[out] += w[k] * u.at(c, at);
          } else if (row[r] < 0 && ghost_evaluator) {
            EvalPoint q;
            for (int a = 0; a < 3; ++a) q.index[a] = p.index[a] + shift[a];
            q.coordinates = p.coordinates;
            q.u = &ue;
            q.udot = udot ? &udote : nullptr;
            f[out] = (*ghost_evaluator)(equations[static_cast<std::size_t>(c)].core, q);
            if (stabilized[static_cast<std::size_t>(c)])
              f[out] += stabilization_term(u, c, p.index);
          } else if (row[r] < 0) {
            p.normal = nullptr;
            f[out] = (*evaluator)(equations[static_cast<std::size_t>(c)].core, p);
            if (stabilized[static_cast<std::size_t>(c)])
              f[out] += stabilization_term(u, c, p.index);
          } else {
            const int face = row_face[r];
            for (int a = 0; a < 3; ++a) normal[a] = 0;
            normal[face / 2] = face % 2 ? 1.0 : -1.0;
            p.normal = normal;
            f[out] = (*evaluator)(conditions[static_cast<std::size_t>(row[r])].core, p);
          }
        }
      }
}

void Discretization::extend(const GridArray& u, GridArray* out, std::vector<double>* data,
                            int* shift) const {
  // One more slot beyond each end of a ghost axis where u's block reaches that end.
  int low[3] = {0, 0, 0};
  out->dof = u.dof;
  long long total = u.dof;
  for (int a = 0; a < 3; ++a) {
    const bool g = a < dim && ghost_axis[static_cast<std::size_t>(a)];
    shift[a] = g ? 1 : 0;
    low[a] = g && u.start[a] == 0 ? 1 : 0;
    const int high = g && u.start[a] + u.size[a] == count(a) ? 1 : 0;
    out->start[a] = u.start[a] + shift[a] - low[a];
    out->size[a] = u.size[a] + low[a] + high;
    out->period[a] = u.period[a];
    total *= out->size[a];
  }
  data->assign(static_cast<std::size_t>(total), 0.0);
  for (int k = 0; k < u.size[2]; ++k)
    for (int j = 0; j < u.size[1]; ++j)
      for (int i = 0; i < u.size[0]; ++i) {
        const long long from =
            ((static_cast<long long>(k) * u.size[1] + j) * u.size[0] + i) * u.dof;
        const long long to =
            ((static_cast<long long>(k + low[2]) * out->size[1] + j + low[1]) * out->size[0] + i +
             low[0]) *
            u.dof;
        std::copy(u.data + from, u.data + from + u.dof, data->begin() + to);
      }
  out->data = data->data();
}

void Discretization::fill_ghosts(GridArray* ue, std::vector<double>* data, const int* shift,
                                 double t) const {
  const std::vector<int> spatial = ctx.spatial();
  EvalPoint q;
  q.u = ue;
  q.coordinates.assign(ctx.coordinate_names().size(), 0.0);
  if (time >= 0) q.coordinates[static_cast<std::size_t>(time)] = t;
  double normal[3];
  q.normal = normal;
  const auto slot = [&](const int* ext, int field) -> double& {
    long long offset = 0;
    for (int a = 2; a >= 0; --a) offset = offset * ue->size[a] + (ext[a] - ue->start[a]);
    return (*data)[static_cast<std::size_t>(offset * ue->dof + field)];
  };
  for (int a = 0; a < dim; ++a) {
    if (!ghost_axis[static_cast<std::size_t>(a)]) continue;
    const int n = count(a);
    for (int side = 0; side < 2; ++side) {
      const int wall = side ? n - 1 : 0;  // physical index of the boundary point
      const int ext_wall = wall + 1, ext_ghost = side ? n + 1 : 0;
      if (ext_ghost < ue->start[a] || ext_ghost >= ue->start[a] + ue->size[a]) continue;
      for (int b = 0; b < 3; ++b) normal[b] = 0;
      normal[a] = side ? 1.0 : -1.0;
      // Over the boundary points of this face in the block (the other axes' physical points).
      int lo[3], hi[3];
      for (int b = 0; b < 3; ++b) {
        lo[b] = std::max(ue->start[b], shift[b]);
        hi[b] = std::min(ue->start[b] + ue->size[b], count(b) + shift[b]);
      }
      lo[a] = ext_wall;
      hi[a] = ext_wall + 1;
      for (q.index[2] = lo[2]; q.index[2] < hi[2]; ++q.index[2])
        for (q.index[1] = lo[1]; q.index[1] < hi[1]; ++q.index[1])
          for (q.index[0] = lo[0]; q.index[0] < hi[0]; ++q.index[0]) {
            int phys[3];
            for (int b = 0; b < 3; ++b) {
              phys[b] = q.index[b] - shift[b];
              if (b < dim && axes[static_cast<std::size_t>(b)].periodic)
                phys[b] = ((phys[b] % count(b)) + count(b)) % count(b);
            }
            for (int b = 0; b < dim; ++b)
              q.coordinates[static_cast<std::size_t>(spatial[static_cast<std::size_t>(b)])] =
                  axes[static_cast<std::size_t>(b)].coordinate(q.index[b] - shift[b]);
            const long long p = natural(phys);
            int ghost[3] = {q.index[0], q.index[1], q.index[2]};
            ghost[a] = ext_ghost;
            for (int f = 0; f < dof; ++f) {
              const int c = ghost_condition[static_cast<std::size_t>((p * dof + f) * dim + a)];
              if (c < 0) continue;
              const equations::Expr& core = conditions[static_cast<std::size_t>(c)].core;
              double& g = slot(ghost, f);
              g = 0;
              const double r0 = (*ghost_evaluator)(core, q);
              g = 1;
              const double r1 = (*ghost_evaluator)(core, q);
              if (!(std::abs(r1 - r0) > 0))
                throw UserError(solvers::condition_label(math.conditions[condition_source[c]],
                                                         condition_source[c]) +
                                ": does not depend on the value beyond the boundary, so it cannot "
                                "be the second condition of a 4th-order equation there");
              g = -r0 / (r1 - r0);
            }
          }
    }
  }
}

double Discretization::stabilization_term(const GridArray& u, int field, const int* index) const {
  // Per axis tau (compact - wide) Laplacian difference with the sign of -tau laplacian, i.e.
  // tau h^2/4 d4/dx^4: (tau / (4 h^2)) (u[-2] - 4 u[-1] + 6 u[0] - 4 u[1] + u[2]) with tau = h/4.
  // It vanishes on smooth fields to O(h^3), so the scheme stays 2nd order, and is largest on
  // the checkerboard modes the central differences miss (the Rhie-Chow idea on a collocated
  // grid); where the five points do not fit (next to a wall, along the wall's normal) it is left
  // out, the rows further in holding those modes.
  double sum = 0;
  int at[3] = {index[0], index[1], index[2]};
  static constexpr double w[5] = {1, -4, 6, -4, 1};
  for (int a = 0; a < dim; ++a) {
    const Axis& axis = axes[static_cast<std::size_t>(a)];
    if (!axis.periodic && (index[a] < 2 || index[a] > axis.n - 3)) continue;
    double d4 = 0;
    for (int o = -2; o <= 2; ++o) {
      at[a] = index[a] + o;
      d4 += w[o + 2] * u.at(field, at);
    }
    at[a] = index[a];
    sum += d4 / (16 * axis.h);
  }
  return sum;
}

std::vector<double> Discretization::initial_values() const {
  std::vector<double> values(static_cast<std::size_t>(points() * dof), 0.0);
  std::vector<double> zeros(values.size(), 0.0);
  GridArray u;
  u.data = zeros.data();
  u.dof = dof;
  for (int a = 0; a < dim; ++a) u.size[a] = axes[static_cast<std::size_t>(a)].n;
  EvalPoint p;
  p.u = &u;
  for (p.index[2] = 0; p.index[2] < count(2); ++p.index[2])
    for (p.index[1] = 0; p.index[1] < count(1); ++p.index[1])
      for (p.index[0] = 0; p.index[0] < count(0); ++p.index[0]) {
        p.coordinates = coordinates(p.index, t0);
        const long long n = natural(p.index);
        for (int c = 0; c < dof; ++c)
          if (has_initial[static_cast<std::size_t>(c)])
            values[static_cast<std::size_t>(n * dof + c)] =
                (*evaluator)(initial[static_cast<std::size_t>(c)].core, p);
      }
  return values;
}

}  // namespace jetpde::classical
