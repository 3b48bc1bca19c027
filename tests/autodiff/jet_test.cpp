// Jets (autodiff/jet.h): every operation against the Taylor transform of the same formula built
// as graph ops (an independent implementation of the same coefficients), atan(z)/z at and near
// z = 0 against its series and against finite differences, and the capacity check.
#include "autodiff/jet.h"

#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"

namespace jetpde {
namespace {

TEST(Jet, KeysAreOrderedByDegree) {
  const JetAlgebra J(3, 4);
  EXPECT_EQ(J.size(), 35);
  EXPECT_EQ(J.indices()[0], (MultiIndex{0, 0, 0}));
  EXPECT_EQ(J.indices()[1], (MultiIndex{1, 0, 0}));
  EXPECT_EQ(J.indices()[3], (MultiIndex{0, 0, 1}));
  EXPECT_EQ(J.key_of({0, 0, 4}), 34);
  EXPECT_EQ(J.key_of({0, 0, 5}), -1);
  EXPECT_EQ(J.key_of({0, 0}), -1);
  EXPECT_EQ(JetAlgebra(2, 6).size(), 28);
  EXPECT_THROW(JetAlgebra(3, 5), UserError);
  EXPECT_THROW(JetAlgebra(0, 2), UserError);
}

// f = atan(x y / (1 + z^2)) sqrt(1 + x^2 + y z) + (x - y)(x - z) / (2 + x) + (x - y)^2 at a few
// points, as a
// jet and as a graph through the Taylor transform: all coefficients to order 4.
TEST(Jet, MatchesTheTaylorTransformOfTheSameFormula) {
  const MatrixD points =
      (MatrixD(3, 3) << 0.3, -0.7, 0.4, -1.1, 0.2, 0.9, 0.05, 0.6, -0.35).finished();
  Graph g(DType::f64);
  const Var X = g.input("x", {points.rows(), 3});
  const Var x = col(X, 0), y = col(X, 1), z = col(X, 2);
  const Var f = atan(x * y / (1.0 + z * z)) * sqrt(1.0 + x * x + y * z) +
                (x - y) * (x - z) / (2.0 + x) + (x - y) * (x - y);
  const JetAlgebra J(3, 4);
  std::vector<MultiIndex> partials(J.indices().begin() + 1, J.indices().end());
  Taylor taylor(TaylorPlan({{X, 0}, {X, 1}, {X, 2}}, partials));
  std::vector<Var> outs;
  for (int k = 1; k < J.size(); ++k) outs.push_back(taylor.stream(f, k));
  const std::vector<MatrixD> got = evaluate(outs, {{"x", points}});
  ASSERT_EQ(taylor.plan().closure(), J.indices());  // the same keys, so streams compare as they are
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    const double p[3] = {points(r, 0), points(r, 1), points(r, 2)};
    const Jet jx = J.variable(0, p[0]), jy = J.variable(1, p[1]), jz = J.variable(2, p[2]);
    const Jet xy = J.sub(jx, jy), xz = J.sub(jx, jz);
    const Jet jf =
        J.add(J.add(J.mul(J.atan(J.div(J.mul(jx, jy), J.add_constant(J.mul(jz, jz), 1.0))),
                          J.sqrt(J.add_constant(J.add(J.mul(jx, jx), J.mul(jy, jz)), 1.0))),
                    J.div(J.mul(xy, xz), J.add_constant(jx, 2.0))),
              J.mul(xy, xy));
    double largest = 0;
    for (int k = 0; k < J.size(); ++k) largest = std::max(largest, std::abs(jf.c[k]));
    for (int k = 1; k < J.size(); ++k) {
      const double want = outs[static_cast<std::size_t>(k - 1)].id < 0
                              ? 0.0
                              : got[static_cast<std::size_t>(k - 1)](
                                    got[static_cast<std::size_t>(k - 1)].rows() == 1 ? 0 : r, 0);
      EXPECT_NEAR(jf.c[k], want, 1e-12 * largest)
          << multi_index_str(J.indices()[static_cast<std::size_t>(k)]) << " row " << r;
    }
  }
}

TEST(Jet, DotOffsetsIsTheProductOfDifferences) {
  // (x - P).(x - Q) at x0 = (0.3, -0.2, 0.5) against the same built from coordinate jets.
  const JetAlgebra J(3, 2);
  const double x0[3] = {0.3, -0.2, 0.5}, P[3] = {1, 2, -1}, Q[3] = {0.5, -0.5, 2};
  double p[3], q[3];
  Jet want = J.constant(0);
  for (int k = 0; k < 3; ++k) {
    p[k] = x0[k] - P[k];
    q[k] = x0[k] - Q[k];
    const Jet xk = J.variable(k, x0[k]);
    want = J.add(want, J.mul(J.add_constant(xk, -P[k]), J.add_constant(xk, -Q[k])));
  }
  const Jet got = J.dot_offsets(p, q);
  for (int k = 0; k < J.size(); ++k) EXPECT_NEAR(got.c[k], want.c[k], 1e-15) << k;
}

TEST(Jet, AtanOverIsSmoothThroughZero) {
  // atan(u)/u of u = 0.9 x + 0.3 y^2 - c at points where u0 is 0, tiny, at either side of the
  // series' threshold (|u0| = 1/4) and large; coefficients of the order-4 jet against central
  // differences of the order-3 one (c_β = ∂_i c_{β-e_i} / β_i).
  const JetAlgebra J(2, 4), J3(2, 3);
  const auto f = [&](const JetAlgebra& A, double x, double y, double c) {
    const Jet jx = A.variable(0, x), jy = A.variable(1, y);
    return A.atan_over(A.add_constant(A.add(A.scale(jx, 0.9), A.scale(A.mul(jy, jy), 0.3)), -c));
  };
  for (const double u0 : {0.0, 1e-9, 0.2499, 0.2501, -0.7, 3.0}) {
    const double x = 0.2, y = 0.4, c = 0.9 * x + 0.3 * y * y - u0;
    const Jet at = f(J, x, y, c);
    EXPECT_NEAR(at.value(), u0 == 0 ? 1.0 : std::atan(u0) / u0, 1e-15) << u0;
    const double h = 1e-5;
    for (int i = 0; i < 2; ++i) {
      const Jet p = f(J3, x + (i == 0) * h, y + (i == 1) * h, c),
                m = f(J3, x - (i == 0) * h, y - (i == 1) * h, c);
      for (int k = 1; k < J.size(); ++k) {
        MultiIndex beta = J.indices()[static_cast<std::size_t>(k)];
        if (beta[static_cast<std::size_t>(i)] == 0) continue;
        const int bi = beta[static_cast<std::size_t>(i)]--;
        const int lower = J3.key_of(beta);
        EXPECT_NEAR(at.c[k], (p.c[lower] - m.c[lower]) / (2 * h) / bi, 1e-7)
            << "u0 " << u0 << " coefficient " << k << " along " << i;
      }
    }
  }
  // At u0 = 0 the series: atan(u)/u = 1 - u^2/3 + u^4/5, with u = 0.9 x + ... : c_{20} = -0.27.
  const Jet zero = f(J, 0.2, 0.4, 0.9 * 0.2 + 0.3 * 0.16);
  EXPECT_NEAR(zero.c[J.key_of({2, 0})], -0.81 / 3, 1e-15);
  EXPECT_NEAR(zero.c[J.key_of({1, 0})], 0.0, 1e-15);
}

}  // namespace
}  // namespace jetpde
