// The Cole–Hopf solution of viscous Burgers (solvers/exact_solutions.h): high-precision values,
// the PDE residual, an independent Fourier series, the initial and boundary values, the symmetry,
// and the errors. The whole reference grid of ../shared/data/burgers.h5 is compared in
// tests/io/burgers_exact_test.cpp (solvers tests do not read HDF5).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "solvers/exact_solutions.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;
constexpr double pi = std::numbers::pi;
constexpr double kNu = 0.01 / pi;  // the benchmark's viscosity

struct ReferenceValue {
  double x, t, u;
};

// mpmath at 40 digits, composite Gauss–Legendre on 96 and 192 panels of the window
// |eta| <= sqrt(4 nu t (2 / (2 pi nu) + 120)) (the two agree to 1e-18), at these double x and t.
// The rows near x = 0 at late t are at the shock.
constexpr ReferenceValue kReference[] = {
    {0.5, 0.5, -0.5927695344020510818645},   {-0.3, 0.25, 0.9827241174291002920803},
    {0.01, 0.99, -0.6002029104067548933516}, {0.001, 1.0, -0.08359154999133088589197},
    {0.02, 0.75, -0.8523589011446916025358}, {0.9, 0.1, -0.2368798850392218738276},
    {-0.7, 0.6, 0.3238137202779263688419},   {0.1, 1.0, -0.6654815676639961844493},
    {-0.05, 0.4, 0.9620078080913312375584},  {0.25, 0.001, -0.7086569545396700741227},
};

TEST(BurgersSineExact, MatchesHighPrecisionQuadrature) {
  // Measured within 6e-16; near the shock u changes by 1e-14 when x moves by 5 rounding units.
  for (const ReferenceValue& row : kReference)
    EXPECT_NEAR(burgers_sine_exact(row.x, row.t, kNu), row.u, 1e-14) << row.x << ", " << row.t;
}

// u_t + u u_x - nu u_xx by fourth-order central differences, at points away from the shock.
double burgers_residual(double x, double t, double nu) {
  const double h = 1e-3;
  const auto u = [&](double dx, double dt) { return burgers_sine_exact(x + dx, t + dt, nu); };
  const auto first = [&](auto at) { return (at(-2) - 8 * at(-1) + 8 * at(1) - at(2)) / (12 * h); };
  const double u_t = first([&](int k) { return u(0, k * h); });
  const double u_x = first([&](int k) { return u(k * h, 0); });
  const double u_xx =
      (-u(-2 * h, 0) + 16 * u(-h, 0) - 30 * u(0, 0) + 16 * u(h, 0) - u(2 * h, 0)) / (12 * h * h);
  return u_t + u(0, 0) * u_x - nu * u_xx;
}

TEST(BurgersSineExact, SatisfiesTheEquation) {
  struct Point {
    double x, t, nu;
  };
  // The terms are of size 1 to 10; the differences' truncation leaves at most 2e-8 (measured).
  for (const Point& p : {Point{0.5, 0.3, kNu}, Point{-0.4, 0.7, kNu}, Point{0.8, 0.9, kNu},
                         Point{-0.2, 0.1, kNu}, Point{0.3, 0.5, 0.1}, Point{-0.6, 0.05, 1.0}})
    EXPECT_NEAR(burgers_residual(p.x, p.t, p.nu), 0, 2e-7) << p.x << ", " << p.t << ", " << p.nu;
}

// The heat solution phi = I_0(a) + 2 sum_k (-1)^k I_k(a) e^(-nu pi^2 k^2 t) cos(k pi x),
// a = 1/(2 pi nu), gives u = -2 nu phi_x / phi; it converges fast (no cancellation) for nu >~ 0.1.
double burgers_by_fourier_series(double x, double t, double nu) {
  const double a = 1 / (2 * pi * nu);
  double phi = std::cyl_bessel_i(0.0, a), phi_x = 0;
  for (int k = 1; k <= 40; ++k) {
    const double term =
        (k % 2 ? -2 : 2) * std::cyl_bessel_i(double(k), a) * std::exp(-nu * pi * pi * k * k * t);
    phi += term * std::cos(k * pi * x);
    phi_x -= term * k * pi * std::sin(k * pi * x);
  }
  return -2 * nu * phi_x / phi;
}

TEST(BurgersSineExact, MatchesTheFourierSeriesForLargerNu) {
  for (double nu : {0.1, 1.0})
    for (double t : {0.01, 0.1, 0.5, 2.0})
      for (double x : {-0.9, -0.35, 0.0, 0.2, 0.75})
        EXPECT_NEAR(burgers_sine_exact(x, t, nu), burgers_by_fourier_series(x, t, nu), 1e-14)
            << x << ", " << t << ", " << nu;
}

TEST(BurgersSineExact, InitialValueIsExact) {
  for (double x : {-1.0, -0.7, -0.123, 0.0, 0.31, 0.5, 1.0})
    EXPECT_EQ(burgers_sine_exact(x, 0.0, kNu), -std::sin(pi * x)) << x;
}

TEST(BurgersSineExact, ZeroOnTheBoundary) {
  for (double nu : {kNu, 0.1})
    for (double t : {1e-3, 0.1, 0.5, 0.99, 1.0, 5.0}) {
      EXPECT_NEAR(burgers_sine_exact(-1.0, t, nu), 0, 1e-15) << t << ", " << nu;
      EXPECT_NEAR(burgers_sine_exact(1.0, t, nu), 0, 1e-15) << t << ", " << nu;
    }
}

TEST(BurgersSineExact, IsOddInX) {
  // The quadrature nodes for -x are exactly the mirrored nodes for x; only the order of the
  // sums differs. Near the shock |u_x| ~ 1/nu magnifies rounding (measured 2.3e-15).
  for (double t : {0.05, 0.3, 0.6, 1.0})
    for (double x = 0; x <= 1; x += 0.0371)
      EXPECT_NEAR(burgers_sine_exact(-x, t, kNu), -burgers_sine_exact(x, t, kNu), 3e-14)
          << x << ", " << t;
}

TEST(BurgersSineExact, ShockFormsAtTheOrigin) {
  // By t = 1 / pi the front is steep: u drops from about +0.8 to -0.8 within |x| < 0.01.
  EXPECT_GT(burgers_sine_exact(-0.01, 0.5, kNu), 0.8);
  EXPECT_LT(burgers_sine_exact(0.01, 0.5, kNu), -0.8);
  EXPECT_NEAR(burgers_sine_exact(0.0, 0.5, kNu), 0, 1e-14);
}

TEST(BurgersSineExact, DecaysToZero) {
  // |u| <= e^(-nu pi^2 t): below the quadrature's absolute accuracy (1e-16) at t = 20, and
  // exactly 0 past e^-800.
  EXPECT_LT(std::abs(burgers_sine_exact(0.5, 20.0, 1.0)), 1e-15);
  EXPECT_EQ(burgers_sine_exact(0.5, 100.0, 1.0), 0.0);
}

TEST(BurgersSineExact, PointsMatrixMatchesPointwise) {
  MatrixD points(4, 2);
  points << 0.5, 0.5, -0.3, 0.25, 0.0, 0.0, 1.0, 0.7;
  const MatrixD u = burgers_sine_exact(points, kNu);
  ASSERT_EQ(u.rows(), 4);
  ASSERT_EQ(u.cols(), 1);
  for (int row = 0; row < 4; ++row)
    EXPECT_EQ(u(row, 0), burgers_sine_exact(points(row, 0), points(row, 1), kNu)) << row;
  EXPECT_EQ(burgers_sine_exact(MatrixD(0, 2), kNu).rows(), 0);
}

TEST(BurgersSineExact, Errors) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string name = "burgers_sine_exact: ";
  expect_user_error([] { burgers_sine_exact(0.5, 0.5, 0.0); },
                    name + "nu must be positive and finite, got 0");
  expect_user_error([] { burgers_sine_exact(0.5, 0.5, -0.01); },
                    name + "nu must be positive and finite, got -0.01");
  expect_user_error([&] { burgers_sine_exact(0.5, 0.5, inf); },
                    name + "nu must be positive and finite, got inf");
  expect_user_error([&] { burgers_sine_exact(0.5, 0.5, nan); },
                    name + "nu must be positive and finite, got nan");
  expect_user_error([] { burgers_sine_exact(0.5, -0.25, kNu); },
                    name + "t must be finite and >= 0, got -0.25");
  expect_user_error([&] { burgers_sine_exact(0.5, inf, kNu); },
                    name + "t must be finite and >= 0, got inf");
  expect_user_error([&] { burgers_sine_exact(nan, 0.5, kNu); }, name + "x must be finite, got nan");
  expect_user_error([&] { burgers_sine_exact(-inf, 0.5, kNu); },
                    name + "x must be finite, got -inf");
  expect_user_error([] { burgers_sine_exact(0.0, 1e5, 1e-12); },
                    name + "nu = 1e-12 and t = 1e+05 need more than 1e+07 quadrature panels " +
                        "(t / nu too large)");
}

TEST(BurgersSineExact, MatrixErrorsNameTheRow) {
  const std::string name = "burgers_sine_exact: ";
  expect_user_error([] { burgers_sine_exact(MatrixD::Zero(3, 3), kNu); },
                    name + "points must have 2 columns (x, t), got 3");
  expect_user_error([] { burgers_sine_exact(MatrixD::Zero(3, 2), -1.0); },
                    name + "nu must be positive and finite, got -1");
  MatrixD points = MatrixD::Zero(3, 2);
  points(2, 1) = -1;
  expect_user_error([&] { burgers_sine_exact(points, kNu); },
                    name + "t must be finite and >= 0, got -1 (row 2)");
  points(2, 1) = 0;
  points(1, 0) = std::numeric_limits<double>::quiet_NaN();
  expect_user_error([&] { burgers_sine_exact(points, kNu); },
                    name + "x must be finite, got nan (row 1)");
}

}  // namespace
}  // namespace jetpde::solvers
