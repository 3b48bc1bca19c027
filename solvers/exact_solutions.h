// Exact solutions of benchmark PDEs, so that a run can report its error without a data file.
//
//   MatrixD points(n, 2);                                   // rows (x, t)
//   MatrixD u = solvers::burgers_sine_exact(points, 0.01 / std::numbers::pi);   // [n, 1]
//
// Viscous Burgers, u_t + u u_x = nu u_xx on x in [-1, 1], u(x, 0) = -sin(pi x), u(+-1, t) = 0
// (the benchmark of Raissi et al. 2019, ../shared/data/burgers.h5, with nu = 0.01/pi). The
// Cole–Hopf transform u = -2 nu phi_x / phi turns it into the heat equation for phi, whose
// solution is a Gaussian convolution of phi(y, 0) = f(y) = exp(-cos(pi y) / (2 pi nu)):
//
//   u(x, t) = - int sin(pi (x - eta)) f(x - eta) G(eta) deta / int f(x - eta) G(eta) deta,
//   G(eta) = exp(-eta^2 / (4 nu t)),  both integrals over the real line.
//
// The odd, 2-periodic extension of the initial value gives the zeros at x = +-1. Outside
// [-1, 1] the functions return that extension.
//
// Accuracy: the integrals are evaluated by a composite Gauss–Legendre rule sized to the
// integrand (exact_solutions.cpp says how and why). For nu = 0.01/pi the values agree with
// 40-digit quadrature to 1e-15, shock included, at any t. In general the error is absolute, about
// 1e-16 / nu at the shock (where |u_x| ~ 1/nu magnifies the rounding of x itself) and a few
// 1e-15 elsewhere; once |u| <= e^(-nu pi^2 t) underflows the result is exactly 0.
// Cost: about 4 microseconds a point for nu = 0.01/pi (the 256 x 100 reference grid in about
// 0.1 s); it grows like sqrt(t / nu) for small nu, and t / nu beyond about 5e13 is refused.
#pragma once

#include "autodiff/options.h"
#include "autodiff/primitive.h"

namespace jetpde::solvers {

// The built-in exact solutions a config names (reference.exact).
enum class BuiltinExact { none, burgers_sine };
const options::EnumTable<BuiltinExact>& builtin_exact_names();

// u(x, t) of viscous Burgers with u(x,0) = -sin(pi x) on [-1,1], zero at x = ±1, for any nu > 0.
// At t = 0 it returns -sin(pi x) exactly. UserError, naming the value, when nu <= 0, t < 0 or an
// input is not finite.
double burgers_sine_exact(double x, double t, double nu);

// Rows of `points` are (x, t) (columns in that order); returns [rows, 1]. UserError when
// `points` does not have 2 columns, and as above (naming the row) for a bad value.
MatrixD burgers_sine_exact(const MatrixD& points, double nu);

}  // namespace jetpde::solvers
