// Self-test of the nested-dual reference (tests/support/nested_dual.h) against
// closed forms, symmetry of mixed partials and quad-precision finite
// differences, so the oracle is trusted before it is used to test jetpde.
#include "nested_dual.h"  // same folder: builds without extra include paths

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace jetpde::testref;

// |got - want| <= tol * |want| (pure relative; when want is exactly 0 the
// scale is 1, i.e. |got| <= tol).
::testing::AssertionResult rel_close(Quad got, Quad want, Quad tol) {
  Quad scale = want == 0 ? Quad(1) : fabsq(want);
  Quad err = fabsq(got - want);
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << to_string(got) << "\n want " << to_string(want) << "\n relative error "
         << to_string(err / scale) << " > " << to_string(tol);
}

// x -> act(x) as a network 1 -> 1 (W=1, b=0, activation) -> 1 (W=1, b=0, identity).
MlpWeights scalar_net() { return {{{1.0}, {1.0}}, {{0.0}, {0.0}}, {1, 1, 1}}; }

// Reproducible random network; weights uniform in +-1.5/sqrt(fan_in), biases in +-0.3.
MlpWeights random_net(const std::vector<int>& sizes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double half_width) {  // exact, library-independent
    return half_width * (2.0 * double(rng() >> 11) * 0x1p-53 - 1.0);
  };
  MlpWeights net;
  net.sizes = sizes;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    std::vector<double> w(std::size_t(sizes[l]) * sizes[l + 1]), b(sizes[l + 1]);
    for (double& v : w) v = uniform(1.5 / std::sqrt(double(sizes[l])));
    for (double& v : b) v = uniform(0.3);
    net.W.push_back(w);
    net.b.push_back(b);
  }
  return net;
}

// Polynomials in t with quad coefficients, lowest degree first.
using Poly = std::vector<Quad>;
Quad eval(const Poly& p, Quad t) {
  Quad r = 0;
  for (std::size_t i = p.size(); i-- > 0;) r = r * t + p[i];
  return r;
}
// p'(t) * (1 - t^2): maps the polynomial of d^k tanh to that of d^{k+1} tanh.
Poly next_tanh_poly(const Poly& p) {
  Poly d(p.size() > 1 ? p.size() - 1 : 1, 0);
  for (std::size_t i = 1; i < p.size(); ++i) d[i - 1] = Quad(int(i)) * p[i];
  Poly r(d.size() + 2, 0);
  for (std::size_t i = 0; i < d.size(); ++i) {
    r[i] += d[i];
    r[i + 2] -= d[i];
  }
  return r;
}

const Quad kTight = 1e-28Q;

// (a) Univariate closed forms -------------------------------------------------

TEST(NestedDual, TanhDerivativesMatchPolynomialsInTanh) {
  const MlpWeights net = scalar_net();
  for (double x : {-2.0, -0.7, 0.0, 0.3, 1.1, 2.5}) {
    const Quad t = tanhq(Quad(x));
    Poly p = {0, 1};  // d^0 tanh = t
    EXPECT_TRUE(rel_close(mlp_derivative(net, Activation::tanh, {x}, {0})[0], eval(p, t), kTight));
    for (int k = 1; k <= 6; ++k) {
      p = next_tanh_poly(p);
      SCOPED_TRACE("x = " + std::to_string(x) + ", order " + std::to_string(k));
      EXPECT_TRUE(
          rel_close(mlp_derivative(net, Activation::tanh, {x}, {k})[0], eval(p, t), kTight));
    }
  }
}

TEST(NestedDual, SinDerivativesCycle) {
  const MlpWeights net = scalar_net();
  for (double x : {-1.3, -0.4, 0.5, 0.9, 2.0, 3.0}) {
    const Quad s = sinq(Quad(x)), c = cosq(Quad(x));
    const Quad cycle[4] = {s, c, -s, -c};
    for (int k = 0; k <= 6; ++k) {
      SCOPED_TRACE("x = " + std::to_string(x) + ", order " + std::to_string(k));
      EXPECT_TRUE(
          rel_close(mlp_derivative(net, Activation::sin, {x}, {k})[0], cycle[k % 4], kTight));
    }
  }
}

// n-th derivative of a univariate function f at x through the Dual types directly.
template <int N, class F>
Quad derivative1d(F f, Quad x) {
  return top_coefficient<N>(f(seed_input<N>(x, 0, std::vector<int>(N, 0))));
}

// Order-N derivatives at x = 0.8 of functions with known closed forms.
template <int N>
void check_closed_forms() {
  SCOPED_TRACE("order " + std::to_string(N));
  const Quad x = 0.8Q;
  Quad fact = 1, two_n = 1;
  for (int i = 1; i <= N; ++i) fact *= i, two_n *= 2;
  // exp(2x + 1) -> 2^N exp(2x + 1)  (exp, scalar * Dual, Dual + scalar)
  EXPECT_TRUE(rel_close(derivative1d<N>([](auto v) { return exp(2.0 * v + 1); }, x),  //
                        two_n * expq(2 * x + 1), kTight));
  // 1 / (x - 0.5) -> (-1)^N N! / (x - 0.5)^(N+1)  (scalar / Dual, Dual - scalar)
  EXPECT_TRUE(rel_close(derivative1d<N>([](auto v) { return 1.0 / (v - 0.5); }, x),
                        (N % 2 ? -1 : 1) * fact / powq(x - 0.5Q, N + 1), kTight));
  // x^3 / x = x^2  (Dual * Dual, Dual / Dual)
  const Quad sq[3] = {x * x, 2 * x, 2};
  EXPECT_TRUE(rel_close(derivative1d<N>([](auto v) { return (v * v * v) / v; }, x),  //
                        N < 3 ? sq[N] : Quad(0), kTight));
  // cos(x) -> cos(x + N pi/2)  (cos, unary minus)
  const Quad cyc[4] = {cosq(x), -sinq(x), -cosq(x), sinq(x)};
  EXPECT_TRUE(rel_close(derivative1d<N>([](auto v) { return -(-cos(v)); }, x), cyc[N % 4], kTight));
}
template <int... N>
void check_closed_forms(std::integer_sequence<int, N...>) {
  (check_closed_forms<N>(), ...);
}

TEST(NestedDual, DualArithmeticClosedForms) {
  check_closed_forms(std::make_integer_sequence<int, 7>{});
}

// The 1e-28 tolerance is meaningful: the exact answer rounded to double fails it.
TEST(NestedDual, TightToleranceRejectsDoublePrecision) {
  const Quad want = mlp_derivative(scalar_net(), Activation::tanh, {0.3}, {6})[0];
  EXPECT_FALSE(rel_close(Quad(to_double(want)), want, kTight));
  EXPECT_FALSE(rel_close(want * (1 + 1e-27Q), want, kTight));
}

// Weight layout y = x W + b with W row-major (input i -> output j at
// i*n_out + j) and exact double -> quad conversion (0.1, 0.3, 0.6 are not
// floats), checked by hand on a 2 -> 3 -> 1 network.
TEST(NestedDual, ForwardPassFollowsRowMajorLayout) {
  const MlpWeights net = {{{0.125, 0.25, 0.375, 0.5, 0.6, 0.75}, {0.1, -2.0, 0.5}},
                          {{0.125, -0.25, 0.375}, {0.3}},
                          {2, 3, 1}};
  const std::vector<double> x = {0.5, -0.75};
  const Quad h0 = tanhq(0.5Q * 0.125Q - 0.75Q * 0.5Q + 0.125Q);
  const Quad h1 = tanhq(0.5Q * 0.25Q - 0.75Q * Quad(0.6) - 0.25Q);
  const Quad h2 = tanhq(0.5Q * 0.375Q - 0.75Q * 0.75Q + 0.375Q);
  const Quad y = Quad(0.1) * h0 - 2 * h1 + 0.5Q * h2 + Quad(0.3);
  EXPECT_TRUE(rel_close(mlp_derivative(net, Activation::tanh, x, {0, 0})[0], y, kTight));
  const Quad dy_dx1 = Quad(0.1) * (1 - h0 * h0) * 0.5Q - 2 * (1 - h1 * h1) * Quad(0.6) +
                      0.5Q * (1 - h2 * h2) * 0.75Q;
  EXPECT_TRUE(rel_close(mlp_derivative(net, Activation::tanh, x, {0, 1})[0], dy_dx1, kTight));
}

// (b) Symmetry of mixed partials ---------------------------------------------

const std::vector<int> kSizes = {3, 16, 16, 16, 2};
const std::vector<double> kPoint = {0.3, -0.2, 0.5};
enum { X = 0, Y = 1, T = 2 };

// Every distinct seeding order of `coords` gives mlp_derivative(alpha).
void expect_order_independent(const MlpWeights& net, Activation act, std::vector<int> coords,
                              const std::vector<int>& alpha) {
  const std::vector<Quad> want = mlp_derivative(net, act, kPoint, alpha);
  for (Quad w : want) EXPECT_GT(fabsq(w), 1e-6Q) << "vacuous check: derivative ~ 0";
  std::sort(coords.begin(), coords.end());
  int count = 0;
  do {
    const std::vector<Quad> got = mlp_derivative_seq(net, act, kPoint, coords);
    for (std::size_t k = 0; k < want.size(); ++k)
      EXPECT_TRUE(rel_close(got[k], want[k], kTight)) << "output " << k;
    ++count;
  } while (std::next_permutation(coords.begin(), coords.end()));
  EXPECT_GT(count, 1);
}

TEST(NestedDual, MixedPartialsAreSymmetric) {
  const MlpWeights net = random_net(kSizes, 20240601);
  for (Activation act : {Activation::tanh, Activation::sin}) {
    SCOPED_TRACE(act == Activation::tanh ? "tanh" : "sin");
    expect_order_independent(net, act, {X, Y}, {1, 1, 0});              // u_xy = u_yx
    expect_order_independent(net, act, {X, X, Y, T}, {2, 1, 1});        // u_xxyt = u_txyx = ...
    expect_order_independent(net, act, {X, Y, Y, T, T}, {1, 2, 2});     // order 5, 30 orders
    expect_order_independent(net, act, {X, X, Y, Y, T, T}, {2, 2, 2});  // order 6, 90 orders
    // Different multi-indices do differ (the comparison is not vacuous).
    EXPECT_FALSE(rel_close(mlp_derivative(net, act, kPoint, {1, 1, 0})[0],
                           mlp_derivative(net, act, kPoint, {2, 0, 0})[0], 1e-6Q));
  }
}

// (c) Central finite differences in quad --------------------------------------

TEST(NestedDual, MatchesQuadFiniteDifferences) {
  const MlpWeights net = random_net(kSizes, 7);
  const Quad h = 1e-8Q, tol = 1e-12Q;
  const std::vector<Quad> x0(kPoint.begin(), kPoint.end());
  // D^coords y at x0 + si h e_i + sj h e_j.
  auto shifted = [&](Activation act, const std::vector<int>& coords, int i, int si, int j = 0,
                     int sj = 0) {
    std::vector<Quad> x = x0;
    x[i] += si * h;
    x[j] += sj * h;
    return mlp_derivative_seq_quad(net, act, x, coords);
  };
  for (Activation act : {Activation::tanh, Activation::sin}) {
    SCOPED_TRACE(act == Activation::tanh ? "tanh" : "sin");
    const std::vector<Quad> y0 = shifted(act, {}, 0, 0);
    for (int i = 0; i < 3; ++i) {
      // First derivatives from values.
      const auto yp = shifted(act, {}, i, +1), ym = shifted(act, {}, i, -1);
      const auto d1 = mlp_derivative_seq(net, act, kPoint, {i});
      for (std::size_t k = 0; k < 2; ++k)
        EXPECT_TRUE(rel_close(d1[k], (yp[k] - ym[k]) / (2 * h), tol));
      // Second derivatives from values.
      for (int j = i; j < 3; ++j) {
        const auto d2 = mlp_derivative_seq(net, act, kPoint, {i, j});
        for (std::size_t k = 0; k < 2; ++k) {
          SCOPED_TRACE("d2 " + std::to_string(i) + std::to_string(j) + " output " +
                       std::to_string(k));
          Quad fd;
          if (i == j) {
            fd = (yp[k] - 2 * y0[k] + ym[k]) / (h * h);
          } else {
            fd = (shifted(act, {}, i, +1, j, +1)[k] - shifted(act, {}, i, +1, j, -1)[k] -
                  shifted(act, {}, i, -1, j, +1)[k] + shifted(act, {}, i, -1, j, -1)[k]) /
                 (4 * h * h);
          }
          EXPECT_TRUE(rel_close(d2[k], fd, tol));
        }
      }
    }
    // Orders 2..6: central difference of the order n-1 dual result.
    const std::vector<int> chain = {T, X, Y, X, T, Y};
    for (std::size_t n = 2; n <= chain.size(); ++n) {
      SCOPED_TRACE("order " + std::to_string(n));
      const std::vector<int> lower(chain.begin(), chain.begin() + n - 1);
      const std::vector<int> full(chain.begin(), chain.begin() + n);
      const int i = chain[n - 1];
      const auto up = shifted(act, lower, i, +1), dn = shifted(act, lower, i, -1);
      const auto dn_dual = mlp_derivative_seq(net, act, kPoint, full);
      for (std::size_t k = 0; k < 2; ++k)
        EXPECT_TRUE(rel_close(dn_dual[k], (up[k] - dn[k]) / (2 * h), tol));
    }
  }
}

TEST(NestedDual, RejectsBadInput) {
  const MlpWeights net = random_net(kSizes, 1);
  EXPECT_THROW(mlp_derivative(net, Activation::tanh, kPoint, {3, 2, 2}),
               std::invalid_argument);  // order 7
  EXPECT_THROW(mlp_derivative(net, Activation::tanh, {0.1, 0.2}, {1, 0}), std::invalid_argument);
  EXPECT_THROW(mlp_derivative_seq(net, Activation::tanh, kPoint, {3}), std::invalid_argument);
  MlpWeights bad = net;
  bad.b[1].pop_back();
  EXPECT_THROW(mlp_derivative(bad, Activation::tanh, kPoint, {1, 0, 0}), std::invalid_argument);
}

}  // namespace
