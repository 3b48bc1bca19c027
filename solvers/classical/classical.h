// Classical solvers on PETSc (docs/design.md section 15): the problem's own text (its Mathematics:
// a box, the equations, the conditions) discretized by finite differences on a PETSc DMDA and
// solved by SNES (steady) or TS (a time coordinate: the method of lines).
//
//   classical::Options o{.grid = {65, 65}, .petsc_options = "-snes_monitor"};
//   classical::Result r = classical::solve(spec.math, o);
//   MatrixD u = r.solution->fields(points);              // multilinear interpolation
//   MatrixD ux = r.solution->evaluate(points, {"u_x"});   // stencils on the grid, interpolated
//   std::printf("%s in %d iterations\n", r.report.reason.c_str(), r.report.iterations);
//
// Discretization: every derivative node of the equations' core form (after derivative expansion)
// becomes a 2nd-order central difference (orders 1-4, mixed ones as products), everything else
// is evaluated pointwise with the grid's coordinates. Boundary points of non-periodic axes carry
// the conditions instead of the equations: dirichlet u - g, neumann dot(n, grad(u)) - g, robin and
// residual conditions as written, their derivatives by one-sided 2nd-order differences; a corner
// takes the first condition (in the problem's order, dirichlet ones first) whose piece holds it.
// Periodic conditions make their axis DM_BOUNDARY_PERIODIC. Initial values start the time
// stepping. The Jacobian is finite differences with the DMDA's coloring (-snes_fd_color).
//
// Derivatives of order 3 or 4 along a non-periodic axis take ghost points, fixed by a second
// condition at each boundary point (a clamped plate: u = 0 in the row, du/dn = 0 the ghost). A
// field its own equation does not contain and the others read only through first derivatives
// (the pressure of the velocity-pressure form) is
// stabilized by a 4th difference in that equation's rows, extrapolated to corners and, when its
// level is free, fixed to 0 at the first grid point (discretization.h).
//
// What it does not do yet is a UserError naming why: a domain that is not a box (or a time
// product of one), order 3-4 derivatives along a non-periodic axis without the second
// condition, trainable parameters, data, initial_rate and fixed-point (`at`) conditions, more
// equations than fields.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solvers/classical/stencil.h"
#include "solvers/solution.h"
#include "solvers/solve.h"
#include "solvers/spec.h"

namespace jetpde::classical {

struct Options {
  // Points per spatial axis (one value: every axis). Non-periodic axes include both ends; a
  // periodic axis has n points lo + i (hi - lo) / n.
  std::vector<int> grid{65};
  // PETSc options ("-snes_monitor -ksp_type gmres"), read after the defaults below; PETSC_OPTIONS
  // from the environment is read after them, so it overrides the config, and then
  // command_line_options.
  // Defaults: SNES newtonls, a direct solve (-ksp_type preonly -pc_type lu; MUMPS's on several
  // processes); TS bdf.
  std::string petsc_options;
  // PETSc options from the command line (`jetpde run --petsc-options`), read last: after
  // PETSC_OPTIONS, as PETSc orders its own command line after the environment.
  std::string command_line_options;
  // Time-dependent problems: `time_levels` uniform levels from t0 to t1 (the output's), each the
  // end of a step, stepped with `time_step` (0: the smallest grid spacing; at most the level
  // interval, and shortened to a whole number of steps per level; -ts_dt overrides).
  int time_levels = 11;
  double time_step = 0;
  // Time-dependent: every step's solution is kept (and interpolated between) while they fit in
  // this many bytes; else only the `time_levels` levels.
  double max_stored_bytes = 256.0 * (1 << 20);
  // The DMDA split over PETSc's world (MPI_COMM_WORLD when MPI ran before PETSc; every process
  // must call solve() together), each process computing its part; every process gets the whole
  // solution. false: this process alone solves the whole grid.
  bool parallel = false;
};

struct Report {
  std::string method;  // "SNES newtonls, KSP preonly, PC lu" / "TS bdf" (+ " (mumps)")
  // What the solver added to the equations (a stabilized field, a fixed level), "" when nothing.
  std::string formulation;
  bool converged = false;
  std::string reason;  // PETSc's converged reason (the last one for TS)
  int iterations = 0;  // Newton iterations (TS: nonlinear iterations over all steps)
  int linear_iterations = 0;
  int time_steps = 0;  // TS steps
  long long function_evaluations = 0;
  double initial_residual = 0, final_residual = 0;  // 2-norm of the residual vector (SNES)
  double seconds = 0;                               // the PETSc solve (setup included)
  // Per Newton iteration (SNES; entry 0 the initial guess's) or per time step (TS; step 1 first):
  // the residual's 2-norm (TS: the step's last Newton residual), the seconds since solve()
  // began, and for TS the step's end time and its Newton iterations.
  std::vector<double> history_residual, history_seconds, history_time;
  std::vector<int> history_iterations;
  long long unknowns = 0;                   // grid points x fields
  std::vector<std::string> unused_options;  // options PETSc never read (misspelt?)
};

// The grid solution as a FieldSource (what io's writers read): values by multilinear
// interpolation of the grid values (periodic axes wrap), linear in time between the stored levels
// (every time step's, while they fit in Options::max_stored_bytes);
// expressions (u_x, residuals) by the solver's own stencils at the grid points, then
// interpolated; a time derivative from the stored levels (2nd-order differences).
class GridSolution final : public solvers::FieldSource {
 public:
  GridSolution(const solvers::Mathematics& math, std::vector<Axis> axes, std::vector<double> times,
               std::vector<std::vector<double>> levels);
  const geometry::Geometry& domain() const override { return *math_.domain; }
  const std::vector<std::string>& coordinate_names() const override;
  const std::vector<std::string>& field_names() const override;
  bool has_time() const override { return !times_.empty(); }
  MatrixD fields(const MatrixD& points) const override;
  MatrixD evaluate(const MatrixD& points,
                   const std::vector<std::string>& expressions) const override;
  std::vector<std::pair<std::string, std::string>> residuals() const override;

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<double>& times() const { return times_; }
  // Level l's grid values [point][field], x fastest.
  const std::vector<double>& level(std::size_t l) const { return levels_[l]; }

 private:
  // Values [points of the grid][columns] at level l -> interpolated to `points`.
  MatrixD interpolate(const std::vector<std::vector<double>>& per_level, int columns,
                      const MatrixD& points) const;
  // The stored levels around time t and the weight of the later one (clamped to the stored
  // times; 0, 0, 0 without time).
  void bracket(double t, std::size_t* l0, std::size_t* l1, double* w) const;
  std::vector<double> expressions_on_grid(std::size_t level,
                                          const std::vector<equations::Equation>& eqs) const;

  solvers::Mathematics math_;
  std::vector<Axis> axes_;
  std::vector<double> times_;
  std::vector<std::vector<double>> levels_;
};

struct Result {
  std::shared_ptr<const GridSolution> solution;
  Report report;
};

// Discretizes and solves. UserError for what the solver does not take (above), a grid that does
// not fit the domain (counts, too few points), PETSc options PETSc rejects.
Result solve(const solvers::Mathematics& math, const Options& options);
// What solve() checks before it starts PETSc (the shape, the equations and conditions, the grid),
// without solving.
void check(const solvers::Mathematics& math, const Options& options);

// The mathematics with the conditions a PINN's options build into its network: a hard
// constraint on "initial" is an initial_value condition, on "spatial", a face or a predicate a
// dirichlet one, on "" (the whole boundary) both for a time product; a periodic input
// (network.periodic) whose period is the box's length along its coordinate a periodic condition.
// A constraint whose distance D is a nonzero number (u = g + D N: a known part plus the network)
// constrains nothing and adds no condition. UserError for a constraint with any other distance D
// (no piece to read) or on "final", and for a period other than the box's.
solvers::Mathematics with_pinn_conditions(const solvers::Mathematics& math,
                                          const solvers::PinnOptions& pinn);

// A reference's exact solution without a network problem (solvers::exact_solution needs one):
// the function, the built-in one by name, or the expressions (of the coordinates and constants,
// one per field) evaluated pointwise. Empty when the reference has none. UserError for an
// expression that uses a field, or a field without one.
solvers::ExactSolution exact_solution(const solvers::Reference& reference,
                                      const solvers::Mathematics& math);

}  // namespace jetpde::classical
