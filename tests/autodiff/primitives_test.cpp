// One table row per primitive (docs/design.md section 12): reference evaluation against an
// independent loop; the Taylor rule against nested first-order derivatives at every order up to
// 6; the transpose rule by the dot-product test <J t, c> = <t, J^T c>; and the gradient against
// central finite differences in f64.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <tuple>

#include "autodiff/functions.h"
#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"
#include "autodiff/taylor.h"
#include "autodiff/verify.h"
#include "tests/support/primitive_table.h"

namespace jetpde {
namespace {

using primtable::constant_of;
using primtable::random_matrix;
using primtable::Row;
using primtable::table;

double dot(const MatrixD& a, const MatrixD& b) { return (a * b).sum(); }

bool contains_op(Graph& g, Var y, Op op) {
  std::vector<NodeId> stack{y.id};
  std::vector<bool> seen(g.size(), false);
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(id)]) continue;
    seen[static_cast<std::size_t>(id)] = true;
    if (g.node(id).op == op) return true;
    for (NodeId a : g.node(id).args) stack.push_back(a);
  }
  return false;
}

class PrimitiveTable : public ::testing::TestWithParam<Row> {};

TEST_P(PrimitiveTable, ReferenceEvaluation) {
  const Row& r = GetParam();
  std::mt19937_64 rng(1);
  Graph g(DType::f64);
  std::vector<Var> leaves;
  std::vector<MatrixD> values;
  Bindings b;
  for (std::size_t i = 0; i < r.shapes.size(); ++i) {
    const std::string name = "a" + std::to_string(i);
    leaves.push_back(g.input(name, r.shapes[i]));
    values.push_back(random_matrix(r.shapes[i], r.lo, r.hi, rng, r.first_is_data && i == 0));
    b[name] = values.back();
  }
  const Var y = r.apply(leaves);
  ASSERT_TRUE(contains_op(g, y, r.op)) << r.name << " does not build " << op_name(r.op);
  const MatrixD want = r.reference(values);
  for (Precision p : {Precision::f64, Precision::f32}) {
    const MatrixD got = evaluate(y, b, p);
    ASSERT_EQ(got.rows(), want.rows());
    ASSERT_EQ(got.cols(), want.cols());
    const double tol = p == Precision::f64 ? 1e-15 : 1e-6;
    EXPECT_LE((got - want).abs().maxCoeff(), tol * (1.0 + want.abs().maxCoeff()))
        << "precision " << static_cast<int>(p);
  }
}

// Operands as smooth functions of one scalar coordinate s: a_i(s) = mid + half sin(s C_i + D_i),
// inside the row's domain. Derivatives of every order in s are then nonzero.
struct Curve {
  Graph g{DType::f64};
  Var s;
  Var y;
  Bindings bindings;
};

void make_curve(const Row& r, Curve& c, std::mt19937_64& rng) {
  c.s = c.g.input("s", {1, 1});
  const double mid = 0.5 * (r.lo + r.hi), half = 0.45 * (r.hi - r.lo);
  std::vector<Var> operands;
  for (std::size_t i = 0; i < r.shapes.size(); ++i) {
    if (r.first_is_data && i == 0) {
      operands.push_back(constant_of(c.g, random_matrix(r.shapes[i], 0, 1, rng, true)));
      continue;
    }
    const Var ci = constant_of(c.g, random_matrix(r.shapes[i], -1.5, 1.5, rng));
    const Var di = constant_of(c.g, random_matrix(r.shapes[i], -1.0, 1.0, rng));
    operands.push_back(mid + half * sin(c.s * ci + di));
  }
  c.y = r.apply(operands);
  c.bindings["s"] = MatrixD::Constant(1, 1, 0.3);
}

TEST_P(PrimitiveTable, TaylorRuleMatchesNestedFirstOrder) {
  const Row& r = GetParam();
  std::mt19937_64 rng(2);
  Curve c;
  make_curve(r, c, rng);
  constexpr int kMaxOrder = 6;
  Taylor taylor(TaylorPlan({{c.s, 0}}, {{kMaxOrder}}));
  std::vector<Var> direct, nested;
  Var inner = c.y;
  for (int k = 1; k <= kMaxOrder; ++k) {
    direct.push_back(taylor.derivative(c.y, {k}));
    Taylor first(TaylorPlan({{c.s, 0}}, {{1}}));  // a fresh first-order sweep on the last result
    inner = first.derivative(inner, {1});
    nested.push_back(inner);
  }
  verify(c.g);
  const std::vector<MatrixD> d = evaluate(direct, c.bindings), n = evaluate(nested, c.bindings);
  for (int k = 0; k < kMaxOrder; ++k) {
    const double scale = std::max(1.0, n[k].abs().maxCoeff());
    EXPECT_LE((d[k] - n[k]).abs().maxCoeff(), 1e-11 * scale) << "order " << k + 1;
  }
}

// Operands a_i = P_i + s T_i with P_i params and T_i fixed directions: J t is the first-order
// Taylor stream in s at s = 0, J^T c is grad of sum(y c) with respect to the P_i.
struct Linearization {
  Graph g{DType::f64};
  std::vector<Var> params;
  std::vector<MatrixD> directions;
  Var y, loss, c;
  Var s;
  Bindings bindings;
};

void make_linearization(const Row& r, Linearization& l, std::mt19937_64& rng) {
  l.s = l.g.input("s", {1, 1});
  std::vector<Var> operands;
  for (std::size_t i = 0; i < r.shapes.size(); ++i) {
    const std::string name = "p" + std::to_string(i);
    if (r.first_is_data && i == 0) {
      operands.push_back(l.g.input(name, r.shapes[i]));
      l.bindings[name] = random_matrix(r.shapes[i], 0, 1, rng, true);
      continue;
    }
    const Var p = l.g.param(name, r.shapes[i]);
    l.bindings[name] = random_matrix(r.shapes[i], r.lo, r.hi, rng);
    l.directions.push_back(random_matrix(r.shapes[i], -1, 1, rng));
    l.params.push_back(p);
    operands.push_back(p + l.s * constant_of(l.g, l.directions.back()));
  }
  l.y = r.apply(operands);
  const MatrixD c = random_matrix(l.y.shape(), -1, 1, rng);
  l.c = constant_of(l.g, c);
  l.loss = sum_all(l.y * l.c);
  l.bindings["s"] = MatrixD::Zero(1, 1);
}

TEST_P(PrimitiveTable, TransposeRulePassesDotProductTest) {
  const Row& r = GetParam();
  std::mt19937_64 rng(3);
  Linearization l;
  make_linearization(r, l, rng);
  Taylor taylor(TaylorPlan({{l.s, 0}}, {{1}}));
  std::vector<Var> outs{taylor.derivative(l.y, {1}), l.c};
  const std::vector<Var> grads = grad(l.loss, l.params);
  outs.insert(outs.end(), grads.begin(), grads.end());
  verify(l.g);
  const std::vector<MatrixD> v = evaluate(outs, l.bindings);
  const double jt_c = dot(v[0], v[1]);
  double t_jtc = 0.0;
  for (std::size_t i = 0; i < l.params.size(); ++i) t_jtc += dot(l.directions[i], v[2 + i]);
  EXPECT_NEAR(jt_c, t_jtc, 1e-12 * (1.0 + std::abs(jt_c)));
}

TEST_P(PrimitiveTable, GradientMatchesCentralDifferences) {
  const Row& r = GetParam();
  std::mt19937_64 rng(4);
  Linearization l;
  make_linearization(r, l, rng);
  const std::vector<Var> grads = grad(l.loss, l.params);
  const std::vector<MatrixD> g = evaluate(grads, l.bindings);
  constexpr double h = 1e-6;
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const std::string name = l.params[i].node().attrs.name;
    MatrixD& p = l.bindings[name];
    for (Eigen::Index k = 0; k < p.size(); ++k) {
      const double keep = p.reshaped()(k);
      p.reshaped()(k) = keep + h;
      const double up = evaluate(l.loss, l.bindings)(0, 0);
      p.reshaped()(k) = keep - h;
      const double down = evaluate(l.loss, l.bindings)(0, 0);
      p.reshaped()(k) = keep;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(g[i].reshaped()(k), fd, 1e-7 * (1.0 + std::abs(fd))) << name << " entry " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Primitives, PrimitiveTable, ::testing::ValuesIn(table()),
                         [](const auto& info) { return std::string(info.param.name); });

// Every primitive except the leaves has a row.
TEST(PrimitiveTableCoverage, EveryPrimitiveHasARow) {
  std::vector<bool> covered(kNumOps, false);
  for (const Row& r : table()) covered[static_cast<std::size_t>(r.op)] = true;
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (primitive(op).taylor == TaylorFamily::Leaf) continue;
    EXPECT_TRUE(covered[static_cast<std::size_t>(i)]) << op_name(op) << " has no table row";
  }
}

// Known identities at every order up to 6, in one Taylor sweep.
TEST(TaylorIdentities, ClosedFormsUpToOrderSix) {
  Graph g(DType::f64);
  const Var x = g.input("x", {5, 1});
  Taylor t(TaylorPlan({{x, 0}}, {{6}}));
  MatrixD xs(5, 1);
  xs << 0.3, 0.7, 1.1, 1.6, 2.0;
  const Bindings b{{"x", xs}};
  auto check = [&](Var y, const std::function<double(double, int)>& want, const char* what) {
    for (int k = 1; k <= 6; ++k) {
      const MatrixD got = evaluate(t.derivative(y, {k}), b);
      for (int i = 0; i < 5; ++i)
        EXPECT_NEAR(got(i, 0), want(xs(i, 0), k), 1e-12 * (1 + std::abs(want(xs(i, 0), k))))
            << what << " order " << k << " at x = " << xs(i, 0);
    }
  };
  auto falling = [](double p, int k) {
    double f = 1;
    for (int j = 0; j < k; ++j) f *= p - j;
    return f;
  };
  check(
      exp(x), [](double v, int) { return std::exp(v); }, "exp");
  check(
      sin(x), [](double v, int k) { return std::sin(v + k * M_PI / 2); }, "sin");
  check(
      cos(x), [](double v, int k) { return std::cos(v + k * M_PI / 2); }, "cos");
  check(
      log(x),
      [](double v, int k) { return (k % 2 ? 1.0 : -1.0) * std::tgamma(k) / std::pow(v, k); },
      "log");
  check(
      pow(x, 2.5), [&](double v, int k) { return falling(2.5, k) * std::pow(v, 2.5 - k); }, "pow");
  check(
      sqrt(x), [&](double v, int k) { return falling(0.5, k) * std::pow(v, 0.5 - k); }, "sqrt");
  check(
      1.0 / x, [&](double v, int k) { return falling(-1, k) * std::pow(v, -1 - k); }, "div");
  check(
      x * exp(x), [](double v, int k) { return (v + k) * std::exp(v); }, "mul");
  // tanh' = 1 - tanh^2 and sigmoid' = sigmoid (1 - sigmoid): compare with exp forms.
  check(
      tanh(x) - (1.0 - 2.0 / (exp(2.0 * x) + 1.0)), [](double, int) { return 0.0; }, "tanh");
  check(
      sigmoid(x) - 1.0 / (1.0 + exp(-x)), [](double, int) { return 0.0; }, "sigmoid");
}

// The records of autodiff/functions.h at every order up to 6: sinh and cosh by parity, erf by
// Hermite polynomials, the inverse functions and atan2 through f(g(x)) = x, and where() by
// branches.
TEST(TaylorIdentities, FunctionRecordsUpToOrderSix) {
  using namespace functions;
  Graph g(DType::f64);
  const Var x = g.input("x", {5, 1});
  Taylor t(TaylorPlan({{x, 0}}, {{6}}));
  MatrixD xs(5, 1);
  xs << 0.3, 0.7, 1.1, 1.6, 2.0;
  const Bindings b{{"x", xs}};
  auto check = [&](Var y, const std::function<double(double, int)>& want, const char* what) {
    for (int k = 1; k <= 6; ++k) {
      const MatrixD got = evaluate(t.derivative(y, {k}), b);
      for (int i = 0; i < 5; ++i)
        EXPECT_NEAR(got(i, 0), want(xs(i, 0), k), 1e-11 * (1 + std::abs(want(xs(i, 0), k))))
            << what << " order " << k << " at x = " << xs(i, 0);
    }
  };
  const auto zero = [](double, int) { return 0.0; };
  check(
      call<Sinh>(x), [](double v, int k) { return k % 2 ? std::cosh(v) : std::sinh(v); }, "sinh");
  check(
      call<Cosh>(x), [](double v, int k) { return k % 2 ? std::sinh(v) : std::cosh(v); }, "cosh");
  // erf^(k) = 2/sqrt(pi) (-1)^(k-1) H_(k-1)(x) exp(-x^2), H_(n+1) = 2x H_n - 2n H_(n-1).
  check(
      call<Erf>(x),
      [](double v, int k) {
        double h0 = 1, h1 = 2 * v;
        for (int n = 1; n < k - 1; ++n) std::tie(h0, h1) = std::pair(h1, 2 * v * h1 - 2 * n * h0);
        const double h = k == 1 ? 1.0 : h1;
        return 2 / std::sqrt(M_PI) * ((k - 1) % 2 ? -1.0 : 1.0) * h * std::exp(-v * v);
      },
      "erf");
  const Var half = scale(x, 0.5);
  check(call<Asin>(call<Sin>(half)) - half, zero, "asin(sin)");
  // Away from 0, where 1 - cos and cosh - 1 cancel and the composition itself is ill-conditioned.
  const Var shifted = half + 0.5;
  check(call<Acos>(call<Cos>(shifted)) - shifted, zero, "acos(cos)");
  check(call<Asinh>(call<Sinh>(x)) - x, zero, "asinh(sinh)");
  check(call<Acosh>(call<Cosh>(shifted)) - shifted, zero, "acosh(cosh)");
  check(call<Atanh>(call<Tanh>(half)) - half, zero, "atanh(tanh)");
  check(call<Atan2>(call<Sin>(x), call<Cos>(x)) - x, zero, "atan2(sin, cos)");
  check(call<Atan2>(scale(call<Sin>(x), 3.0), scale(call<Cos>(x), 3.0)) - x, zero,
        "atan2(3 sin, 3 cos)");
  // where(x < 1, x^3, exp(x)): each point's branch; min and max pick theirs.
  const Var one = g.scalar(1.0);
  check(
      call<Where>(call<Less>(x, one), x * x * x, exp(x)),
      [](double v, int k) {
        if (v >= 1) return std::exp(v);
        return k == 1 ? 3 * v * v : k == 2 ? 6 * v : k == 3 ? 6.0 : 0.0;
      },
      "where");
  check(
      call<Min>(exp(x), scale(x, 3.0)),
      [](double v, int k) { return std::exp(v) <= 3 * v ? std::exp(v)
                                   : k == 1             ? 3.0
                                                        : 0.0; },
      "min");
  check(
      call<Max>(exp(x), scale(x, 3.0)),
      [](double v, int k) { return std::exp(v) >= 3 * v ? std::exp(v)
                                   : k == 1             ? 3.0
                                                        : 0.0; },
      "max");
  check(scale(call<Less>(x, one), 5.0) + call<Not>(call<Greater>(x, one)), zero, "conditions");
}

}  // namespace
}  // namespace jetpde
