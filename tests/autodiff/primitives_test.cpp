// One table row per primitive (DESIGN.md section 12): reference evaluation against an
// independent loop; the Taylor rule against nested first-order derivatives at every order up to
// 6; the transpose rule by the dot-product test <J t, c> = <t, J^T c>; and the gradient against
// central finite differences in f64.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"
#include "autodiff/taylor.h"
#include "autodiff/verify.h"

namespace jetpde {
namespace {

using Apply = std::function<Var(std::span<const Var>)>;
using Reference = std::function<MatrixD(std::span<const MatrixD>)>;

struct Row {
  const char* name;
  Op op;                      // the primitive under test (checked to appear in the graph)
  std::vector<Shape> shapes;  // operand shapes
  double lo, hi;              // operand domain
  Apply apply;
  Reference reference;
  bool first_is_data = false;  // select's condition carries no derivative
};

// Elementwise references with broadcasting of size-1 dimensions, by plain loops.
template <class F>
Reference elementwise(F f) {
  return [f](std::span<const MatrixD> a) {
    Eigen::Index rows = 1, cols = 1;
    for (const MatrixD& m : a) rows = std::max(rows, m.rows()), cols = std::max(cols, m.cols());
    MatrixD out(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
      for (Eigen::Index j = 0; j < cols; ++j) {
        std::vector<double> x;
        for (const MatrixD& m : a) x.push_back(m(m.rows() == 1 ? 0 : i, m.cols() == 1 ? 0 : j));
        out(i, j) = f(x);
      }
    return out;
  };
}

MatrixD transpose_if(const MatrixD& m, bool t) { return t ? MatrixD(m.transpose()) : m; }

Reference matmul_reference(bool ta, bool tb) {
  return [ta, tb](std::span<const MatrixD> a) {
    const MatrixD x = transpose_if(a[0], ta), y = transpose_if(a[1], tb);
    MatrixD out = MatrixD::Zero(x.rows(), y.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < y.cols(); ++j)
        for (Eigen::Index k = 0; k < x.cols(); ++k) out(i, j) += x(i, k) * y(k, j);
    return out;
  };
}

Reference slice_reference(bool cols, Eigen::Index begin, Eigen::Index count) {
  return [=](std::span<const MatrixD> a) {
    MatrixD out(cols ? a[0].rows() : count, cols ? count : a[0].cols());
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j)
        out(i, j) = a[0](cols ? i : begin + i, cols ? begin + j : j);
    return out;
  };
}

Reference concat_reference(bool cols) {
  return [=](std::span<const MatrixD> a) {
    MatrixD out(cols ? a[0].rows() : a[0].rows() + a[1].rows(),
                cols ? a[0].cols() + a[1].cols() : a[0].cols());
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j) {
        const bool first = cols ? j < a[0].cols() : i < a[0].rows();
        out(i, j) =
            first ? a[0](i, j) : a[1](cols ? i : i - a[0].rows(), cols ? j - a[0].cols() : j);
      }
    return out;
  };
}

Reference reduce_reference(bool rows, bool mean) {
  return [=](std::span<const MatrixD> a) {
    const MatrixD& x = a[0];
    MatrixD out = MatrixD::Zero(rows ? 1 : x.rows(), rows ? x.cols() : 1);
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) out(rows ? 0 : i, rows ? j : 0) += x(i, j);
    if (mean) out /= static_cast<double>(rows ? x.rows() : x.cols());
    return out;
  };
}

Reference broadcast_reference(Shape s) {
  return [=](std::span<const MatrixD> a) {
    MatrixD out(s.rows, s.cols);
    for (Eigen::Index i = 0; i < s.rows; ++i)
      for (Eigen::Index j = 0; j < s.cols; ++j)
        out(i, j) = a[0](a[0].rows() == 1 ? 0 : i, a[0].cols() == 1 ? 0 : j);
    return out;
  };
}

Row unary_row(const char* name, Op op, double lo, double hi, std::function<Var(Var)> f,
              double (*g)(double)) {
  return {name,
          op,
          {{3, 4}},
          lo,
          hi,
          [f](std::span<const Var> a) { return f(a[0]); },
          elementwise([g](const std::vector<double>& x) { return g(x[0]); })};
}

std::vector<Row> table() {
  const Shape m{3, 4}, row{1, 4}, column{3, 1};
  auto sigmoid_ref = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  return {
      unary_row(
          "neg", Op::Neg, -2, 2, [](Var a) { return neg(a); }, [](double x) { return -x; }),
      {"add",
       Op::Add,
       {m, row},
       -2,
       2,
       [](auto a) { return add(a[0], a[1]); },
       elementwise([](const auto& x) { return x[0] + x[1]; })},
      {"sub",
       Op::Sub,
       {column, m},
       -2,
       2,
       [](auto a) { return sub(a[0], a[1]); },
       elementwise([](const auto& x) { return x[0] - x[1]; })},
      {"mul",
       Op::Mul,
       {m, column},
       -2,
       2,
       [](auto a) { return mul(a[0], a[1]); },
       elementwise([](const auto& x) { return x[0] * x[1]; })},
      {"div",
       Op::Div,
       {m, row},
       0.5,
       2,
       [](auto a) { return div(a[0], a[1]); },
       elementwise([](const auto& x) { return x[0] / x[1]; })},
      unary_row(
          "exp", Op::Exp, -1, 1, [](Var a) { return exp(a); },
          [](double x) { return std::exp(x); }),
      unary_row(
          "log", Op::Log, 0.5, 2, [](Var a) { return log(a); },
          [](double x) { return std::log(x); }),
      unary_row(
          "sin", Op::Sin, -2, 2, [](Var a) { return sin(a); },
          [](double x) { return std::sin(x); }),
      unary_row(
          "cos", Op::Cos, -2, 2, [](Var a) { return cos(a); },
          [](double x) { return std::cos(x); }),
      unary_row(
          "tanh", Op::Tanh, -2, 2, [](Var a) { return tanh(a); },
          [](double x) { return std::tanh(x); }),
      unary_row(
          "sigmoid", Op::Sigmoid, -2, 2, [](Var a) { return sigmoid(a); }, sigmoid_ref),
      unary_row(
          "sqrt", Op::Sqrt, 0.5, 2, [](Var a) { return sqrt(a); },
          [](double x) { return std::sqrt(x); }),
      unary_row(
          "pow", Op::PowC, 0.5, 2, [](Var a) { return pow(a, 2.5); },
          [](double x) { return std::pow(x, 2.5); }),
      unary_row(
          "pow_negative", Op::PowC, 0.5, 2, [](Var a) { return pow(a, -1.5); },
          [](double x) { return std::pow(x, -1.5); }),
      unary_row(
          "cast", Op::Cast, -2, 2, [](Var a) { return cast(a, DType::f32); },
          [](double x) { return x; }),
      {"select",
       Op::Select,
       {m, m, row},
       -2,
       2,
       [](auto a) { return select(a[0], a[1], a[2]); },
       elementwise([](const auto& x) { return x[0] != 0 ? x[1] : x[2]; }),
       true},
      {"matmul",
       Op::MatMul,
       {{3, 4}, {4, 2}},
       -1,
       1,
       [](auto a) { return matmul(a[0], a[1]); },
       matmul_reference(false, false)},
      {"matmul_ta",
       Op::MatMul,
       {{4, 3}, {4, 2}},
       -1,
       1,
       [](auto a) { return matmul(a[0], a[1], true, false); },
       matmul_reference(true, false)},
      {"matmul_tb",
       Op::MatMul,
       {{3, 4}, {2, 4}},
       -1,
       1,
       [](auto a) { return matmul(a[0], a[1], false, true); },
       matmul_reference(false, true)},
      {"matmul_tab",
       Op::MatMul,
       {{4, 3}, {2, 4}},
       -1,
       1,
       [](auto a) { return matmul(a[0], a[1], true, true); },
       matmul_reference(true, true)},
      {"broadcast_row",
       Op::Broadcast,
       {row},
       -2,
       2,
       [=](auto a) { return broadcast(a[0], m); },
       broadcast_reference(m)},
      {"broadcast_col",
       Op::Broadcast,
       {column},
       -2,
       2,
       [=](auto a) { return broadcast(a[0], m); },
       broadcast_reference(m)},
      {"slice_cols",
       Op::SliceCols,
       {m},
       -2,
       2,
       [](auto a) { return slice_cols(a[0], 1, 2); },
       slice_reference(true, 1, 2)},
      {"slice_rows",
       Op::SliceRows,
       {m},
       -2,
       2,
       [](auto a) { return slice_rows(a[0], 1, 2); },
       slice_reference(false, 1, 2)},
      {"concat_cols",
       Op::ConcatCols,
       {m, {3, 2}},
       -2,
       2,
       [](auto a) {
         return concat_cols({a[0], a[1]});
       },
       concat_reference(true)},
      {"concat_rows",
       Op::ConcatRows,
       {m, {2, 4}},
       -2,
       2,
       [](auto a) {
         return concat_rows({a[0], a[1]});
       },
       concat_reference(false)},
      {"sum_rows",
       Op::SumRows,
       {m},
       -2,
       2,
       [](auto a) { return sum_rows(a[0]); },
       reduce_reference(true, false)},
      {"sum_cols",
       Op::SumCols,
       {m},
       -2,
       2,
       [](auto a) { return sum_cols(a[0]); },
       reduce_reference(false, false)},
      {"mean_rows",
       Op::MeanRows,
       {m},
       -2,
       2,
       [](auto a) { return mean_rows(a[0]); },
       reduce_reference(true, true)},
      {"mean_cols",
       Op::MeanCols,
       {m},
       -2,
       2,
       [](auto a) { return mean_cols(a[0]); },
       reduce_reference(false, true)},
  };
}

// Random values in [lo, hi]; a data operand (select's condition) gets zeros and ones.
MatrixD random_matrix(Shape s, double lo, double hi, std::mt19937_64& rng, bool mask = false) {
  std::uniform_real_distribution<double> u(lo, hi);
  MatrixD x(s.rows, s.cols);
  for (auto& v : x.reshaped()) v = mask ? (u(rng) > 0.5 * (lo + hi) ? 1.0 : 0.0) : u(rng);
  return x;
}

Var constant_of(Graph& g, const MatrixD& m) {
  return g.constant({m.rows(), m.cols()}, std::vector<double>(m.data(), m.data() + m.size()));
}

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

void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

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

}  // namespace
}  // namespace jetpde
