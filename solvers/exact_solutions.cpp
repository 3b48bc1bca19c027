// Exact solutions of benchmark PDEs (exact_solutions.h).
//
// Burgers by Cole–Hopf. With a = 1/(2 pi nu) and heat = 4 nu t, both integrals have the weight
// w(eta) = exp(E(eta)), E(eta) = -eta^2/heat - a cos(pi (x - eta)), times 1 or sin(pi (x - eta)).
// For nu = 0.01/pi (a = 50) w spans e^+-50 and sits in one or two narrow peaks (two near the
// shock). Gauss–Hermite in z = eta/sqrt(heat) would need about 100 nodes for that nu at t <= 1
// (50 nodes leave 2e-7 near the shock), and it fails for smaller nu, where the peak moves out to
// z ~ sqrt(t/nu)/2 and the node weights underflow, and for large nu t, where the cosine oscillates
// faster than the nodes are spaced. A composite Gauss–Legendre rule sized to the integrand works
// for every nu and t:
//  - window: E(eta) <= -eta^2/heat + a and max E >= E(0) = -a cos(pi x), so beyond
//    |eta| = sqrt(heat (a (1 + cos(pi x)) + kTail)) w is below e^-kTail of its largest value;
//  - panels: width kPanelWidth / sqrt(C) where C = 2/heat + pi^2 max(a, 1) bounds |E''| (the
//    narrowest peak is 1/sqrt(C) wide) and the sine's own scale 1/pi; kNodesPerPanel nodes each;
//  - a panel whose bound E(c) + |E'(c)| h/2 + C h^2/8 (c its centre, h its width) lies more than
//    kTail below the largest E(c) is skipped: only the peaks cost exponentials;
//  - the sums carry a running largest exponent (log-sum-exp), so nothing overflows.
// The panels and nodes are placed symmetrically about eta = 0 in exact arithmetic, so the
// nodes for -x are exactly the reflected nodes for x.
#include "solvers/exact_solutions.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>

#include "autodiff/errors.h"
#include "autodiff/text.h"

namespace jetpde::solvers {

namespace {
constexpr std::array<options::EnumName<BuiltinExact>, 2> kBuiltinExact{{
    {BuiltinExact::none, "none", "no built-in exact solution"},
    {BuiltinExact::burgers_sine, "burgers_sine",
     "viscous Burgers with u0 = -sin(pi x) on [-1, 1] (Cole-Hopf, by quadrature; nu from "
     "`constants`)"},
}};
}  // namespace

const options::EnumTable<BuiltinExact>& builtin_exact_names() {
  static constexpr options::EnumTable<BuiltinExact> table("exact solution", kBuiltinExact);
  return table;
}
namespace {

constexpr double pi = std::numbers::pi;
constexpr int kNodesPerPanel = 16;
constexpr double kPanelWidth = 2.0;  // in units of the narrowest peak width 1/sqrt(C)
constexpr double kTail = 40;         // e^-40 = 4e-18: terms this far below the largest are dropped
constexpr double kMaxPanels = 1e7;   // about half a second for one point
// |u| <= e^(-nu pi^2 t) (the Fourier series of the heat solution phi), which underflows past this.
constexpr double kUnderflowExponent = 800;

struct LegendreRule {
  std::array<double, kNodesPerPanel> nodes, weights;
};

// Golub–Welsch: the nodes on [-1, 1] are the eigenvalues of the Jacobi matrix of the Legendre
// recurrence, the weights 2 v_0^2 from the unit eigenvectors v. Each node is averaged with its
// mirror image so that the rule is exactly symmetric.
LegendreRule make_legendre_rule() {
  constexpr int n = kNodesPerPanel;
  Eigen::MatrixXd jacobi = Eigen::MatrixXd::Zero(n, n);
  for (int k = 1; k < n; ++k) jacobi(k, k - 1) = jacobi(k - 1, k) = k / std::sqrt(4.0 * k * k - 1);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(jacobi);
  const Eigen::VectorXd& values = solver.eigenvalues();  // ascending
  const Eigen::MatrixXd& vectors = solver.eigenvectors();
  LegendreRule rule;
  for (int i = 0; i < n; ++i) {
    const int mirror = n - 1 - i;
    rule.nodes[i] = (values(i) - values(mirror)) / 2;
    rule.weights[i] = vectors(0, i) * vectors(0, i) + vectors(0, mirror) * vectors(0, mirror);
  }
  return rule;
}

const LegendreRule& legendre_rule() {
  static const LegendreRule rule = make_legendre_rule();
  return rule;
}

// The exponent E of the Cole–Hopf weight at one (x, t), with its slope and the angle's sine and
// cosine.
struct ColeHopfExponent {
  double x, heat, a;
  struct Value {
    double exponent, slope, sine, cosine;
  };
  Value at(double eta) const {
    const double angle = pi * (x - eta);
    const double sine = std::sin(angle), cosine = std::cos(angle);
    return {-eta * eta / heat - a * cosine, -2 * eta / heat - a * pi * sine, sine, cosine};
  }
  // E at eta = centre + offset, from the centre's sine and cosine and those of pi * offset (the
  // angle difference formulas: no sin or cos per node). The slope, not needed there, is left 0.
  Value near(double centre, const Value& at_centre, double offset, double sine_offset,
             double cosine_offset) const {
    const double eta = centre + offset;
    const double sine = at_centre.sine * cosine_offset - at_centre.cosine * sine_offset;
    const double cosine = at_centre.cosine * cosine_offset + at_centre.sine * sine_offset;
    return {-eta * eta / heat - a * cosine, 0, sine, cosine};
  }
};

// sum_i w_i e^(E_i) (1, s_i), held as e^top (den, num) with top the largest E_i so far.
struct LogSumExp {
  double top = -std::numeric_limits<double>::infinity(), den = 0, num = 0;
  void add(double exponent, double weight, double sine) {
    if (exponent > top) {
      const double rescale = std::exp(top - exponent);
      den *= rescale;
      num *= rescale;
      top = exponent;
    }
    const double w = weight * std::exp(exponent - top);
    den += w;
    num += w * sine;
  }
};

// The panels covering the window of one (x, t): `count` panels of width `width`, centred on 0,
// and the offsets of the Gauss–Legendre nodes from a panel's centre.
struct Panels {
  std::int64_t count;
  double width, curvature;
  std::array<double, kNodesPerPanel> offsets, sine_offsets, cosine_offsets;

  // Half-integers times the width: panel count - 1 - k is exactly the mirror image of panel k.
  double centre(std::int64_t k) const { return (k + 0.5 - 0.5 * count) * width; }
  // An upper bound of E on a panel, from E and E' at its centre and |E''| <= curvature.
  double bound(const ColeHopfExponent::Value& at_centre) const {
    return at_centre.exponent + std::abs(at_centre.slope) * width / 2 +
           curvature * width * width / 8;
  }
};

Panels panels_for(const ColeHopfExponent& exponent, double t, double nu) {
  const double half_window =
      std::sqrt(exponent.heat * (exponent.a * (1 + std::cos(pi * exponent.x)) + kTail));
  const double curvature = 2 / exponent.heat + pi * pi * std::max(exponent.a, 1.0);
  const double count = std::ceil(2 * half_window * std::sqrt(curvature) / kPanelWidth);
  if (count > kMaxPanels)
    throw UserError("burgers_sine_exact: nu = " + exact_text(nu) + " and t = " + exact_text(t) +
                    " need more than " + exact_text(kMaxPanels) +
                    " quadrature panels (t / nu too large)");
  Panels panels{static_cast<std::int64_t>(count), 2 * half_window / count, curvature, {}, {}, {}};
  const LegendreRule& rule = legendre_rule();
  for (int i = 0; i < kNodesPerPanel; ++i) {
    panels.offsets[i] = panels.width / 2 * rule.nodes[i];
    panels.sine_offsets[i] = std::sin(pi * panels.offsets[i]);
    panels.cosine_offsets[i] = std::cos(pi * panels.offsets[i]);
  }
  return panels;
}

double cole_hopf(double x, double t, double nu) {
  const ColeHopfExponent exponent{x, 4 * nu * t, 1 / (2 * pi * nu)};
  const Panels panels = panels_for(exponent, t, nu);
  // The centres are evaluated twice rather than stored: a few percent of the time, no memory.
  double floor = -std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < panels.count; ++k)
    floor = std::max(floor, exponent.at(panels.centre(k)).exponent);
  floor -= kTail;
  const LegendreRule& rule = legendre_rule();
  LogSumExp sum;
  for (std::int64_t k = 0; k < panels.count; ++k) {
    const double centre = panels.centre(k);
    const auto at_centre = exponent.at(centre);
    if (panels.bound(at_centre) < floor) continue;
    for (int i = 0; i < kNodesPerPanel; ++i) {
      const auto value = exponent.near(centre, at_centre, panels.offsets[i], panels.sine_offsets[i],
                                       panels.cosine_offsets[i]);
      sum.add(value.exponent, rule.weights[i], value.sine);
    }
  }
  return -sum.num / sum.den;
}

double evaluate(double x, double t, double nu) {
  if (t == 0) return -std::sin(pi * x);
  if (nu * pi * pi * t > kUnderflowExponent) return 0.0;
  // 4 nu t underflows only for t below 1e-308/nu, far too short to move u by a rounding unit.
  if (4 * nu * t < std::numeric_limits<double>::min()) return -std::sin(pi * x);
  return cole_hopf(x, t, nu);
}

void check_nu(double nu) {
  if (!(nu > 0) || !std::isfinite(nu))
    throw UserError("burgers_sine_exact: nu must be positive and finite, got " + exact_text(nu));
}

// `row` < 0: a single point.
void check_point(double x, double t, Eigen::Index row) {
  const auto where = [&] { return row < 0 ? std::string() : " (row " + std::to_string(row) + ")"; };
  if (!std::isfinite(x))
    throw UserError("burgers_sine_exact: x must be finite, got " + exact_text(x) + where());
  if (!(t >= 0) || !std::isfinite(t))
    throw UserError("burgers_sine_exact: t must be finite and >= 0, got " + exact_text(t) +
                    where());
}

}  // namespace

double burgers_sine_exact(double x, double t, double nu) {
  check_nu(nu);
  check_point(x, t, -1);
  return evaluate(x, t, nu);
}

MatrixD burgers_sine_exact(const MatrixD& points, double nu) {
  check_nu(nu);
  if (points.cols() != 2)
    throw UserError("burgers_sine_exact: points must have 2 columns (x, t), got " +
                    std::to_string(points.cols()));
  MatrixD u(points.rows(), 1);
  for (Eigen::Index row = 0; row < points.rows(); ++row) {
    check_point(points(row, 0), points(row, 1), row);
    u(row, 0) = evaluate(points(row, 0), points(row, 1), nu);
  }
  return u;
}

}  // namespace jetpde::solvers
