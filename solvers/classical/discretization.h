// The discretization of a problem's Mathematics on a grid (classical.h): the axes, the parsed
// equations and boundary residuals, and which residual each grid row holds. PETSc-free, so that
// the grid solution and the solver share it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "equations/parser.h"
#include "geometry/geometry.h"
#include "solvers/classical/stencil.h"
#include "solvers/spec.h"

namespace jetpde::classical {

struct Discretization {
  // UserError for what the solver does not take (classical.h).
  Discretization(const solvers::Mathematics& math, const std::vector<int>& grid);

  const solvers::Mathematics& math;
  const equations::Context& ctx;
  std::vector<Axis> axes;  // the spatial axes, in the Context's spatial order
  int dim = 0, dof = 0;
  int time = -1;                                // the Context's time coordinate, or -1
  double t0 = 0, t1 = 0;                        // its interval
  std::vector<equations::Equation> equations;   // one per field (row f of interior points)
  std::vector<equations::Equation> conditions;  // boundary residuals
  std::vector<std::size_t> condition_source;    // their index in math.conditions
  std::vector<equations::Equation> initial;     // per field: g of its initial_value condition
  std::vector<bool> has_initial;
  std::vector<bool> has_time_derivative;  // per field: its equation has one
  // A field its own equation does not contain and the others read only through first
  // derivatives (the pressure of the velocity-pressure form, whose equation is the continuity):
  // a constraint's multiplier, whose checkerboard modes central differences on the collocated
  // grid do not see. Its equation's rows add the stabilization tau h^2/4 d4(field)/dx^4 per axis
  // (tau = h/4; `stabilization_term`), and when no condition holds the field its level is free:
  // it is fixed to 0 at the grid's first point (row kind `pinned`).
  std::vector<bool> stabilized;
  std::vector<bool> pinned_field;
  static constexpr std::int16_t pinned = -2;
  // Its rows at corners (its equation there would only repeat the walls' conditions): the value
  // extrapolated linearly from the two points inward along the first face's normal (a zero
  // second difference), row kind `extrapolated`.
  static constexpr std::int16_t extrapolated = -3;
  bool saddle_point() const {
    for (bool s : stabilized)
      if (s) return true;
    return false;
  }
  // What the two above did, for the solver's report ("" when nothing).
  std::string formulation;
  // Per grid point and field (point * dof + field): -1 the field's equation, `pinned` the value 0,
  // else an index into `conditions`; and the face whose outward normal the row uses (2 axis +
  // (0 lo, 1 hi)), or -1.
  std::vector<std::int16_t> row;
  std::vector<std::int8_t> row_face;
  // Axes along which an equation has derivatives of order 3 or 4 and which are not periodic:
  // they get a ghost point beyond each end, whose value the second condition of the boundary
  // point next to it fixes (the standard ghost-point treatment: a clamped plate's u = 0 holds the
  // row, du/dn = 0 by central differences the ghost), so the equations keep central stencils
  // next to the walls. Per (point * dof + field) * dim + axis: the index into `conditions` of
  // the condition that fixes the ghost beyond that boundary point, or -1. The condition must be
  // affine in the ghost's value (neumann, robin, a residual linear in the normal derivative):
  // the value is the root of the line through the residuals at ghost values 0 and 1.
  std::vector<bool> ghost_axis;
  std::vector<std::int16_t> ghost_condition;
  std::unique_ptr<StencilEvaluator> ghost_evaluator;  // over the axes with their ghosts
  bool has_ghosts() const;
  int stencil_width = 1;
  bool box_stencil = false;  // a mixed derivative: the DMDA's box stencil
  std::unique_ptr<StencilEvaluator> evaluator;

  long long points() const;
  int count(int axis) const { return axis < dim ? axes[static_cast<std::size_t>(axis)].n : 1; }
  long long natural(const int* index) const {
    return (static_cast<long long>(index[2]) * count(1) + index[1]) * count(0) + index[0];
  }
  // The residuals of the rows of the points lo..hi-1 (per axis) into f [points][dof], x fastest,
  // from the fields u (and their time derivatives udot, or null) at time t.
  void residual(const GridArray& u, const GridArray* udot, double t, const int* lo, const int* hi,
                double* f) const;
  struct Face {
    int face;
    std::function<bool(geometry::Point, geometry::Point)> keep;
  };
  std::vector<std::vector<Face>> condition_faces;  // per entry of `conditions`: the faces held
  bool condition_holds(std::size_t c, int face, const std::vector<double>& point,
                       const std::vector<double>& normal) const;
  void place_ghost_conditions(const std::string& where, int order);
  // u's block with the ghost slots (zero) in the extended grid's indices; shift per axis.
  void extend(const GridArray& u, GridArray* out, std::vector<double>* data, int* shift) const;
  // The ghost values from the second conditions at time t.
  void fill_ghosts(GridArray* ue, std::vector<double>* data, const int* shift, double t) const;
  // The stabilization of field f's equation at a grid point (0 where no fourth difference fits).
  double stabilization_term(const GridArray& u, int field, const int* index) const;
  // The initial values at every grid point [points][dof] (fields without one: 0).
  std::vector<double> initial_values() const;
  // The coordinates of a grid point (by the Context's coordinate index) at time t.
  std::vector<double> coordinates(const int* index, double t) const;
};

}  // namespace jetpde::classical
