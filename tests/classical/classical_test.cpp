// The classical solver (solvers/classical): 2nd-order convergence on manufactured solutions, the
// grid solution as a FieldSource, and the problems it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>

#include "autodiff/errors.h"
#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/time_product.h"
#include "solvers/classical/classical.h"
#include "solvers/classical/stencil.h"
#include "solvers/exact_solutions.h"

namespace jetpde {
namespace {

using solvers::Condition;
constexpr double pi = std::numbers::pi;

using Exact = std::function<double(const double*)>;

// The largest error of the solution at per_axis points along each axis (the nodes of the coarsest
// grid, which the finer ones share), at time `t` when the problem has time.
double max_error(const classical::GridSolution& s, const Exact& exact, int per_axis = 23,
                 double t = -1) {
  const int d = static_cast<int>(s.axes().size());
  const bool time = s.has_time();
  int total = 1;
  for (int a = 0; a < d; ++a) total *= per_axis;
  MatrixD points(total, d + (time ? 1 : 0));
  for (int k = 0; k < total; ++k) {
    int rest = k;
    for (int a = 0; a < d; ++a) {
      const classical::Axis& axis = s.axes()[static_cast<std::size_t>(a)];
      points(k, a) = axis.lo + (axis.hi - axis.lo) * (rest % per_axis) / (per_axis - 1.0);
      rest /= per_axis;
    }
    if (time) points(k, d) = t;
  }
  const MatrixD u = s.fields(points);
  double worst = 0;
  for (int k = 0; k < total; ++k) {
    Eigen::RowVectorXd row = points.row(k);
    worst = std::max(worst, std::abs(u(k, 0) - exact(row.data())));
  }
  return worst;
}

struct Convergence {
  std::vector<double> errors;
  double order() const { return std::log2(errors[errors.size() - 2] / errors.back()); }
};

// Errors on grids of n, 2n - 1, ... points (spacing halved each time).
// A time-dependent problem: `levels` stored levels, and steps of dt_per_h times the spacing of a
// unit interval (halved with it). Measured at the coarsest grid's nodes (a periodic grid's n
// nodes and the upper end: periodic = true).
Convergence converge(const solvers::Mathematics& math, const Exact& exact,
                     const std::vector<int>& grids, double t = -1, int levels = 11,
                     double dt_per_h = 0, bool periodic = false) {
  Convergence c;
  for (int n : grids) {
    classical::Result r = classical::solve(
        math, {.grid = {n}, .time_levels = levels, .time_step = dt_per_h / (n - 1)});
    EXPECT_TRUE(r.report.converged) << r.report.reason;
    c.errors.push_back(max_error(*r.solution, exact, grids.front() + (periodic ? 1 : 0), t));
    std::printf("  grid %d: max error %.3e (%s, %d iterations, %.3f s)\n", n, c.errors.back(),
                r.report.method.c_str(), r.report.iterations, r.report.seconds);
  }
  return c;
}

solvers::Mathematics poisson(geometry::GeometryPtr domain, std::vector<std::string> coordinates,
                             std::string equation, std::string boundary) {
  solvers::Mathematics m;
  m.domain = std::move(domain);
  m.context.fields({"u"}).coordinates(coordinates);
  m.equations = {std::move(equation)};
  m.conditions = {{.kind = Condition::Kind::dirichlet, .value = std::move(boundary)}};
  return m;
}

TEST(ClassicalStencil, DifferenceWeightsAreTheTextbookOnes) {
  const classical::Axis axis{.lo = 0, .hi = 1, .h = 0.5, .n = 9};
  const auto d2 = classical::difference_taps(axis, 2, 4);
  ASSERT_EQ(d2.size(), 3u);
  EXPECT_NEAR(d2[0].weight, 4.0, 1e-12);  // 1 / h^2
  EXPECT_NEAR(d2[1].weight, -8.0, 1e-12);
  // One-sided first derivative at the lower end: (-3 u0 + 4 u1 - u2) / (2h).
  const auto d1 = classical::difference_taps(axis, 1, 0);
  ASSERT_EQ(d1.size(), 3u);
  EXPECT_NEAR(d1[0].weight, -3.0, 1e-12);
  EXPECT_NEAR(d1[1].weight, 4.0, 1e-12);
  EXPECT_NEAR(d1[2].weight, -1.0, 1e-12);
  const auto d4 = classical::difference_taps(axis, 4, 4);
  ASSERT_EQ(d4.size(), 5u);
  EXPECT_NEAR(d4[2].weight, 6.0 / std::pow(0.5, 4), 1e-9);
}

TEST(ClassicalConvergence, Poisson1dIsSecondOrder) {
  const auto m = poisson(geometry::interval(0, 1), {"x"}, "u_xx + pi^2*sin(pi*x)", "0");
  const Convergence c =
      converge(m, [](const double* p) { return std::sin(pi * p[0]); }, {17, 33, 65});
  EXPECT_LT(c.errors.back(), 1e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, Poisson2dIsSecondOrder) {
  const auto m = poisson(geometry::rectangle({0, 0}, {1, 2}), {"x", "y"},
                         "laplacian(u) - (1 - pi^2/4)*exp(x)*sin(pi*y/2)", "exp(x)*sin(pi*y/2)");
  const Convergence c = converge(
      m, [](const double* p) { return std::exp(p[0]) * std::sin(pi * p[1] / 2); }, {17, 33, 65});
  EXPECT_LT(c.errors.back(), 1e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, Poisson3dIsSecondOrder) {
  const auto m = poisson(geometry::box({0, 0, 0}, {1, 1, 1}), {"x", "y", "z"},
                         "u_xx + u_yy + u_zz - exp(x + y)*sin(z)", "exp(x + y)*sin(z)");
  const Convergence c =
      converge(m, [](const double* p) { return std::exp(p[0] + p[1]) * std::sin(p[2]); }, {9, 17});
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, NeumannAndRobinEndsAreSecondOrder) {
  // u = sin(2x) on [0, 1]: u(0) = 0, u_x(1) = 2 cos 2 (the outward normal is +x there).
  solvers::Mathematics m = poisson(geometry::interval(0, 1), {"x"}, "u_xx + 4*sin(2*x)", "0");
  m.conditions = {{.kind = Condition::Kind::dirichlet, .on = "left", .value = "0"},
                  {.kind = Condition::Kind::neumann, .on = "right", .value = "2*cos(2)"}};
  const Exact exact = [](const double* p) { return std::sin(2 * p[0]); };
  const Convergence neumann = converge(m, exact, {17, 33, 65});
  EXPECT_GT(neumann.order(), 1.8);
  EXPECT_LT(neumann.order(), 2.2);
  // Robin on the left: 2 u + 3 dot(n, grad u) = -3 u_x(0) = -6.
  m.conditions[0] = {
      .kind = Condition::Kind::robin, .on = "left", .value = "-6", .alpha = 2, .beta = 3};
  const Convergence robin = converge(m, exact, {17, 33, 65});
  EXPECT_GT(robin.order(), 1.8);
  EXPECT_LT(robin.order(), 2.2);
}

TEST(ClassicalConvergence, PeriodicAxisIsSecondOrder) {
  solvers::Mathematics m;
  m.domain = geometry::interval(0, 2 * pi);
  m.context.fields({"u"}).coordinates({"x"});
  m.equations = {"u_xx - u + 2*sin(x) + 10*cos(3*x)"};  // u = sin x + cos 3x
  m.conditions = {{.kind = Condition::Kind::periodic, .coordinate = "x"}};
  const Convergence c = converge(
      m, [](const double* p) { return std::sin(p[0]) + std::cos(3 * p[0]); }, {32, 64, 128}, -1, 11,
      0, true);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, Heat1dIsSecondOrder) {
  solvers::Mathematics m;
  m.domain = geometry::time_product(geometry::interval(0, 1), 0, 0.1);
  m.context.fields({"u"}).coordinates({"x"}).time("t");
  m.equations = {"u_t - u_xx"};
  m.conditions = {{.kind = Condition::Kind::initial_value, .value = "sin(pi*x)"},
                  {.kind = Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
  const Exact exact = [](const double* p) {
    return std::exp(-pi * pi * p[1]) * std::sin(pi * p[0]);
  };
  const Convergence c = converge(m, exact, {17, 33, 65}, 0.1, 3, 0.2);
  EXPECT_LT(c.errors.back(), 1e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, BurgersIsSecondOrderAgainstColeHopf) {
  // The viscous Burgers benchmark (u0 = -sin(pi x), u(+-1) = 0) at five times its usual viscosity
  // (a front these grids resolve), against the exact Cole-Hopf solution at t = 1, when the front
  // has steepened.
  const double nu = 0.05 / pi;
  solvers::Mathematics m;
  m.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
  m.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", nu);
  m.equations = {"u_t + u*u_x - nu*u_xx"};
  m.conditions = {{.kind = Condition::Kind::initial_value, .value = "-sin(pi*x)"},
                  {.kind = Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
  const Exact exact = [nu](const double* p) { return solvers::burgers_sine_exact(p[0], p[1], nu); };
  const Convergence c = converge(m, exact, {129, 257, 513}, 1.0, 3, 1.0);
  EXPECT_LT(c.errors.back(), 5e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, BiharmonicOnAPeriodicSquareIsSecondOrder) {
  // laplacian(laplacian(u)) + u = 26 sin(x) cos(2y) on the periodic square: u = sin(x) cos(2y).
  // The collapsed biharmonic is u_xxxx + 2 u_xxyy + u_yyyy, each by 5-point (and 3 x 3) stencils.
  solvers::Mathematics m;
  m.domain = geometry::rectangle({0, 0}, {2 * pi, 2 * pi});
  m.context.fields({"u"}).coordinates({"x", "y"});
  m.equations = {"laplacian(laplacian(u)) + u - 26*sin(x)*cos(2*y)"};
  m.conditions = {{.kind = Condition::Kind::periodic, .coordinate = "x"},
                  {.kind = Condition::Kind::periodic, .coordinate = "y"}};
  const Convergence c = converge(
      m, [](const double* p) { return std::sin(p[0]) * std::cos(2 * p[1]); }, {16, 32, 64}, -1, 11,
      0, true);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalConvergence, SimplySupportedPlateInMixedFormIsSecondOrder) {
  // The plate laplacian(laplacian(u)) = f with u = 0 and laplacian(u) = 0 on the edges, written
  // as two fields (w = laplacian(u)), each a Poisson equation with a Dirichlet condition:
  // u = sin(pi x) sin(pi y) on the unit square, f = 4 pi^4 u.
  solvers::Mathematics m;
  m.domain = geometry::rectangle({0, 0}, {1, 1});
  m.context.fields({"u", "w"}).coordinates({"x", "y"});
  m.equations = {"laplacian(u) - w", "laplacian(w) - 4*pi^4*sin(pi*x)*sin(pi*y)"};
  m.conditions = {{.kind = Condition::Kind::dirichlet, .field = "u", .value = "0"},
                  {.kind = Condition::Kind::dirichlet, .field = "w", .value = "0"}};
  const Convergence c = converge(
      m, [](const double* p) { return std::sin(pi * p[0]) * std::sin(pi * p[1]); }, {17, 33, 65});
  EXPECT_LT(c.errors.back(), 1e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalSolution, OnlyAFieldSeenThroughItsGradientIsStabilized) {
  // The mixed-form plate with its equations in the other order: u's rows hold an equation
  // without u, but u appears through its Laplacian, so it is no pressure: nothing is added.
  solvers::Mathematics m;
  m.domain = geometry::rectangle({0, 0}, {1, 1});
  m.context.fields({"u", "w"}).coordinates({"x", "y"});
  m.equations = {"laplacian(w) - 4*pi^4*sin(pi*x)*sin(pi*y)", "laplacian(u) - w"};
  m.conditions = {{.kind = Condition::Kind::dirichlet, .field = "u", .value = "0"},
                  {.kind = Condition::Kind::dirichlet, .field = "w", .value = "0"}};
  const classical::Result r = classical::solve(m, {.grid = {33}});
  EXPECT_EQ(r.report.formulation, "");
  EXPECT_EQ(r.report.method, "SNES newtonls, KSP preonly, PC lu");
  // Stokes flow in the velocity-pressure form: p is, and its level is fixed.
  solvers::Mathematics s;
  s.domain = geometry::rectangle({0, 0}, {1, 1});
  s.context.fields({"u", "v", "p"}).coordinates({"x", "y"});
  s.equations = {"p_x - laplacian(u)", "p_y - laplacian(v)", "u_x + v_y"};
  s.conditions = {{.kind = Condition::Kind::dirichlet, .field = "u", .on = "y < 1", .value = "0"},
                  {.kind = Condition::Kind::dirichlet, .field = "v", .value = "0"},
                  {.kind = Condition::Kind::dirichlet, .field = "u", .value = "1"}};
  const classical::Result stokes = classical::solve(s, {.grid = {17}});
  EXPECT_TRUE(stokes.report.converged) << stokes.report.reason;
  EXPECT_NE(stokes.report.formulation.find("p: not in its own equation"), std::string::npos)
      << stokes.report.formulation;
  EXPECT_NE(stokes.report.formulation.find("fixed to 0"), std::string::npos);
  MatrixD origin(1, 2);
  origin << 0, 0;
  EXPECT_EQ(stokes.solution->fields(origin)(0, 2), 0.0);
}

TEST(ClassicalConvergence, ClampedPlateWithGhostPointsIsSecondOrder) {
  // laplacian(laplacian(u)) = f with u = 0 and du/dn = 0 on every edge, in one field: the value
  // holds the boundary rows, the normal derivative (central, across the wall) the ghost points,
  // so the 13-point biharmonic stays central next to the walls. u = sin^2(pi x) sin^2(pi y):
  // f = 8 pi^4 (cos(2 pi x) cos(2 pi y) - cos(2 pi x) sin^2(pi y) - sin^2(pi x) cos(2 pi y)).
  solvers::Mathematics m;
  m.domain = geometry::rectangle({0, 0}, {1, 1});
  m.context.fields({"u"}).coordinates({"x", "y"});
  m.equations = {
      "laplacian(laplacian(u)) - 8*pi^4*(cos(2*pi*x)*cos(2*pi*y) - cos(2*pi*x)*sin(pi*y)^2 - "
      "sin(pi*x)^2*cos(2*pi*y))"};
  m.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"},
                  {.kind = Condition::Kind::neumann, .value = "0"}};
  const Convergence c =
      converge(m,
               [](const double* p) {
                 return std::pow(std::sin(pi * p[0]), 2) * std::pow(std::sin(pi * p[1]), 2);
               },
               {17, 33, 65});
  EXPECT_LT(c.errors.back(), 2e-3);
  EXPECT_GT(c.order(), 1.8);
  EXPECT_LT(c.order(), 2.2);
}

TEST(ClassicalErrors, AFourthOrderEquationNeedsTwoConditionsPerBoundaryPoint) {
  solvers::Mathematics m;
  m.domain = geometry::rectangle({0, 0}, {1, 1});
  m.context.fields({"u"}).coordinates({"x", "y"});
  m.equations = {"laplacian(laplacian(u)) - 1"};
  m.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"},
                  {.kind = Condition::Kind::neumann, .on = "x == 0 or x == 1", .value = "0"}};
  try {
    classical::check(m, {.grid = {17}});
    FAIL() << "the plate without du/dn on y = 0, 1 was taken";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("need two conditions at every point of its faces"), std::string::npos)
        << what;
    EXPECT_NE(what.find("field 'u' has one at (x = 0.0625, y = 0)"), std::string::npos) << what;
  }
}

TEST(ClassicalSolution, DerivativesAndResidualsComeFromTheStencils) {
  const auto m = poisson(geometry::rectangle({0, 0}, {1, 1}), {"x", "y"},
                         "laplacian(u) + 2*pi^2*sin(pi*x)*sin(pi*y)", "0");
  const classical::Result r = classical::solve(m, {.grid = {65}});
  MatrixD points(2, 2);
  points << 0.3, 0.4, 0.71, 0.05;
  const MatrixD q = r.solution->evaluate(points, {"u_x", "u_xy", "u"});
  for (int k = 0; k < 2; ++k) {
    const double x = points(k, 0), y = points(k, 1);
    EXPECT_NEAR(q(k, 0), pi * std::cos(pi * x) * std::sin(pi * y), 5e-3);
    EXPECT_NEAR(q(k, 1), pi * pi * std::cos(pi * x) * std::cos(pi * y), 2e-2);
    EXPECT_NEAR(q(k, 2), r.solution->fields(points)(k, 0), 1e-12);
  }
  ASSERT_EQ(r.solution->residuals().size(), 1u);
  EXPECT_EQ(r.solution->residuals()[0].first, "residual_pde");
  // The discrete equations hold at the grid points: the residual there is the solve's tolerance.
  MatrixD node(1, 2);
  node << 0.5, 0.25;
  EXPECT_LT(std::abs(r.solution->evaluate(node, {m.equations[0]})(0, 0)), 1e-6);
  EXPECT_GT(r.report.iterations, 0);
  EXPECT_GT(r.report.seconds, 0);
  EXPECT_LT(r.report.final_residual, 1e-6 * r.report.initial_residual);
}

TEST(ClassicalSolution, TimeDerivativesComeFromTheKeptSteps) {
  // Heat: u = exp(-pi^2 t) sin(pi x). Every step is kept, so u_t at a time between output levels
  // is the quadratic through three steps, and u_t - u_xx (the residual) is small.
  solvers::Mathematics m;
  m.domain = geometry::time_product(geometry::interval(0, 1), 0, 0.1);
  m.context.fields({"u"}).coordinates({"x"}).time("t");
  m.equations = {"u_t - u_xx"};
  m.conditions = {{.kind = Condition::Kind::initial_value, .value = "sin(pi*x)"},
                  {.kind = Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
  const classical::Result r = classical::solve(m, {.grid = {129}, .time_levels = 3});
  EXPECT_GT(r.solution->times().size(), 3u);  // the steps, not just the 3 output levels
  MatrixD points(1, 2);
  points << 0.3, 0.0437;
  const MatrixD q = r.solution->evaluate(points, {"u", "u_t", "u_xx", "u_t - u_xx"});
  const double u = std::exp(-pi * pi * 0.0437) * std::sin(pi * 0.3);
  EXPECT_NEAR(q(0, 0), u, 1e-3 * u);
  EXPECT_NEAR(q(0, 1), -pi * pi * u, 1e-2 * pi * pi * u);
  EXPECT_NEAR(q(0, 2), -pi * pi * u, 1e-2 * pi * pi * u);
  EXPECT_LT(std::abs(q(0, 3)), 2e-2 * pi * pi * u);
}

TEST(ClassicalSolution, PeriodicAxesWrap) {
  solvers::Mathematics m;
  m.domain = geometry::interval(0, 2 * pi);
  m.context.fields({"u"}).coordinates({"x"});
  m.equations = {"u_xx - u + 2*sin(x)"};
  m.conditions = {{.kind = Condition::Kind::periodic, .coordinate = "x"}};
  const classical::Result r = classical::solve(m, {.grid = {64}});
  MatrixD points(3, 1);
  points << 0.0, 2 * pi, 2 * pi - 1e-3;  // the upper end is the lower; just below it, between
  const MatrixD u = r.solution->fields(points);
  EXPECT_NEAR(u(0, 0), u(1, 0), 1e-12);
  EXPECT_NEAR(u(2, 0), -1e-3, 1e-3);  // sin(2 pi - 1e-3), to the grid's accuracy
  const MatrixD ux = r.solution->evaluate(points, {"u_x"});
  EXPECT_NEAR(ux(0, 0), 1.0, 2e-3);  // cos(0)
  EXPECT_NEAR(ux(1, 0), 1.0, 2e-3);
}

TEST(ClassicalErrors, ShapesOtherThanBoxesAreRefusedByName) {
  const auto m = poisson(geometry::disk({0, 0}, 1), {"x", "y"}, "laplacian(u) + 1", "0");
  try {
    classical::solve(m, {.grid = {17}});
    FAIL() << "a disk was discretized";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("boxes only"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("disk"), std::string::npos) << e.what();
  }
}

TEST(ClassicalErrors, WhatItCannotPlaceIsAUserError) {
  auto m = poisson(geometry::interval(0, 1), {"x"}, "u_xxxx - 1", "0");
  EXPECT_THROW(classical::solve(m, {.grid = {17}}), UserError);  // 4th order, non-periodic
  m = poisson(geometry::rectangle({0, 0}, {1, 1}), {"x", "y"}, "laplacian(u) + 1", "0");
  EXPECT_THROW(classical::solve(m, {.grid = {17, 17, 17}}), UserError);  // grid counts
  m.equations.push_back("u");                                            // two equations, one field
  EXPECT_THROW(classical::solve(m, {.grid = {17}}), UserError);
  m.equations.pop_back();
  try {
    classical::solve(m, {.grid = {17}, .petsc_options = "-ksp_type no_such_ksp"});
    FAIL() << "an unknown KSP type was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_ksp: not a KSP type (known: "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("gmres"), std::string::npos) << e.what();
  }
  // After a failed solve the next one runs (the options and error handler were restored).
  EXPECT_TRUE(classical::solve(m, {.grid = {17}}).report.converged);
}

}  // namespace
}  // namespace jetpde
