// The discretization of a problem's Mathematics on a grid (classical.h): the axes, the parsed
// equations and boundary residuals, and which residual each grid row holds. PETSc-free, so that
// the grid solution and the solver share it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "equations/parser.h"
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
  // Per grid point and field (point * dof + field): -1 the field's equation, else an index into
  // `conditions`; and the face whose outward normal the row uses (2 axis + (0 lo, 1 hi)), or -1.
  std::vector<std::int16_t> row;
  std::vector<std::int8_t> row_face;
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
  // The initial values at every grid point [points][dof] (fields without one: 0).
  std::vector<double> initial_values() const;
  // The coordinates of a grid point (by the Context's coordinate index) at time t.
  std::vector<double> coordinates(const int* index, double t) const;
};

}  // namespace jetpde::classical
