// The primitive table shared by the per-primitive tests of every backend: one row per
// primitive with operand shapes, a domain, the expression under test and an independent
// reference written with plain loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "autodiff/functions.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"

namespace jetpde::primtable {

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
inline Reference elementwise(F f) {
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

inline MatrixD transpose_if(const MatrixD& m, bool t) { return t ? MatrixD(m.transpose()) : m; }

inline Reference matmul_reference(bool ta, bool tb) {
  return [ta, tb](std::span<const MatrixD> a) {
    const MatrixD x = transpose_if(a[0], ta), y = transpose_if(a[1], tb);
    MatrixD out = MatrixD::Zero(x.rows(), y.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < y.cols(); ++j)
        for (Eigen::Index k = 0; k < x.cols(); ++k) out(i, j) += x(i, k) * y(k, j);
    return out;
  };
}

inline Reference slice_reference(bool cols, Eigen::Index begin, Eigen::Index count) {
  return [=](std::span<const MatrixD> a) {
    MatrixD out(cols ? a[0].rows() : count, cols ? count : a[0].cols());
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j)
        out(i, j) = a[0](cols ? i : begin + i, cols ? begin + j : j);
    return out;
  };
}

inline Reference concat_reference(bool cols) {
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

inline Reference reduce_reference(bool rows, bool mean) {
  return [=](std::span<const MatrixD> a) {
    const MatrixD& x = a[0];
    MatrixD out = MatrixD::Zero(rows ? 1 : x.rows(), rows ? x.cols() : 1);
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) out(rows ? 0 : i, rows ? j : 0) += x(i, j);
    if (mean) out /= static_cast<double>(rows ? x.rows() : x.cols());
    return out;
  };
}

inline Reference broadcast_reference(Shape s) {
  return [=](std::span<const MatrixD> a) {
    MatrixD out(s.rows, s.cols);
    for (Eigen::Index i = 0; i < s.rows; ++i)
      for (Eigen::Index j = 0; j < s.cols; ++j)
        out(i, j) = a[0](a[0].rows() == 1 ? 0 : i, a[0].cols() == 1 ? 0 : j);
    return out;
  };
}

inline Row unary_row(const char* name, Op op, double lo, double hi, std::function<Var(Var)> f,
                     double (*g)(double)) {
  return {name,
          op,
          {{3, 4}},
          lo,
          hi,
          [f](std::span<const Var> a) { return f(a[0]); },
          elementwise([g](const std::vector<double>& x) { return g(x[0]); })};
}

// A row for a function record of autodiff/functions.h, against an independent reference.
template <class R, class G>
inline Row function_row(std::vector<Shape> shapes, double lo, double hi, G reference) {
  return {R::name,
          R::op,
          std::move(shapes),
          lo,
          hi,
          [](std::span<const Var> a) { return functions::call_span<R>(a); },
          elementwise([reference](const std::vector<double>& x) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) { return reference(x[I]...); }
            (std::make_index_sequence<R::arity>{});
          })};
}

// atan2 by quadrants from atan.
inline double atan2_reference(double y, double x) {
  const double a = std::atan(y / x);
  if (x > 0) return a;
  return y >= 0 ? a + M_PI : a - M_PI;
}

inline std::vector<Row> table() {
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
          "atan", Op::Atan, -2, 2, [](Var a) { return atan(a); },
          [](double x) { return std::atan(x); }),
      function_row<functions::Sinh>({m}, -2, 2,
                                    [](double x) { return (std::exp(x) - std::exp(-x)) / 2; }),
      function_row<functions::Cosh>({m}, -2, 2,
                                    [](double x) { return (std::exp(x) + std::exp(-x)) / 2; }),
      function_row<functions::Asin>({m}, -0.9, 0.9,
                                    [](double x) { return std::atan(x / std::sqrt(1 - x * x)); }),
      function_row<functions::Acos>(
          {m}, -0.9, 0.9, [](double x) { return M_PI / 2 - std::atan(x / std::sqrt(1 - x * x)); }),
      function_row<functions::Asinh>({m}, -2, 2,
                                     [](double x) { return std::log(x + std::sqrt(x * x + 1)); }),
      function_row<functions::Acosh>({m}, 1.2, 3,
                                     [](double x) { return std::log(x + std::sqrt(x * x - 1)); }),
      function_row<functions::Atanh>({m}, -0.8, 0.8,
                                     [](double x) { return 0.5 * std::log((1 + x) / (1 - x)); }),
      function_row<functions::Erf>({m}, -2, 2, [](double x) { return 1 - std::erfc(x); }),
      function_row<functions::Atan2>({m, row}, -2, 2, atan2_reference),
      function_row<functions::Less>({m, row}, -2, 2,
                                    [](double a, double b) { return a < b ? 1.0 : 0.0; }),
      function_row<functions::LessEqual>({column, m}, -2, 2,
                                         [](double a, double b) { return a <= b ? 1.0 : 0.0; }),
      function_row<functions::Equal>({m, m}, -2, 2,
                                     [](double a, double b) { return a == b ? 1.0 : 0.0; }),
      function_row<functions::NotEqual>({m, row}, -2, 2,
                                        [](double a, double b) { return a != b ? 1.0 : 0.0; }),
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
inline MatrixD random_matrix(Shape s, double lo, double hi, std::mt19937_64& rng,
                             bool mask = false) {
  std::uniform_real_distribution<double> u(lo, hi);
  MatrixD x(s.rows, s.cols);
  for (auto& v : x.reshaped()) v = mask ? (u(rng) > 0.5 * (lo + hi) ? 1.0 : 0.0) : u(rng);
  return x;
}

inline Var constant_of(Graph& g, const MatrixD& m) {
  return g.constant({m.rows(), m.cols()}, std::vector<double>(m.data(), m.data() + m.size()));
}

inline void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

}  // namespace jetpde::primtable
