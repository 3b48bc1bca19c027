// derivatives_demo: the autodiff core at work (`make run`).
//
// A random tanh MLP u(x, y, t) with 3 -> 16, 16, 16 -> 1 and one Taylor plan, in f64, giving every
// derivative in x up to the 6th order and every mixed partial up to total order 4 in (x, y, t), in
// one forward sweep. Each derivative is checked at every point against an independent
// quad-precision reference (nested dual numbers, tests/support/nested_dual.h). Exits 1 when any
// relative error exceeds 1e-12.
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "nn/mlp.h"
#include "tests/support/reference_mlp.h"

namespace jetpde {
namespace {

constexpr int kPoints = 5;
constexpr int kMaxOrderX = 6;      // u_x ... u_xxxxxx
constexpr int kMaxOrderMixed = 4;  // every partial in (x, y, t) up to this total order
constexpr double kTolerance = 1e-12;
constexpr std::uint64_t kSeed = 2026;
constexpr double kBiasStd = 0.1;

// The derivatives shown: by total order, x before y before t within an order.
std::vector<MultiIndex> wanted_partials() {
  std::vector<MultiIndex> out;
  for (int order = 1; order <= kMaxOrderX; ++order) {
    if (order > kMaxOrderMixed) {
      out.push_back({order, 0, 0});
      continue;
    }
    for (int ax = order; ax >= 0; --ax)
      for (int ay = order - ax; ay >= 0; --ay) out.push_back({ax, ay, order - ax - ay});
  }
  return out;
}

// u_xxyt for {2, 1, 1}.
std::string derivative_name(const MultiIndex& alpha) {
  constexpr char kCoords[] = "xyt";
  std::string name = "u_";
  for (std::size_t i = 0; i < alpha.size(); ++i) name.append(alpha[i], kCoords[i]);
  return name;
}

MatrixD random_points(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  MatrixD x(kPoints, 3);
  for (auto& v : x.reshaped()) v = uniform(rng);
  return x;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Row {
  std::string name;
  int order = 0;
  double value = 0;  // at the first point
  double error = 0;  // largest relative error over the points
};

// Relative error of each derivative against the quad reference, over all points.
std::vector<Row> check(const nn::Mlp& mlp, const Bindings& b,
                       const std::vector<MultiIndex>& partials, const std::vector<MatrixD>& got) {
  const testref::MlpWeights net = testref::reference_weights(mlp, b);
  const MatrixD& x = b.at("x");
  std::vector<Row> rows;
  for (std::size_t k = 0; k < partials.size(); ++k) {
    std::vector<double> ours;
    std::vector<testref::Quad> ref;
    for (int p = 0; p < kPoints; ++p) {
      const std::vector<double> point(x.row(p).data(), x.row(p).data() + 3);
      ref.push_back(testref::mlp_derivative(net, testref::Activation::tanh, point, partials[k])[0]);
      ours.push_back(got[k](p, 0));
    }
    rows.push_back({derivative_name(partials[k]), degree(partials[k]), ours[0],
                    testref::relative_error(ours, ref)});
  }
  return rows;
}

void print_table(const std::vector<Row>& rows) {
  const std::size_t half = (rows.size() + 1) / 2;
  std::printf("%-10s %14s %9s    %-10s %14s %9s\n", "derivative", "at point 1", "rel err",
              "derivative", "at point 1", "rel err");
  for (std::size_t i = 0; i < half; ++i) {
    const Row& a = rows[i];
    std::printf("%-10s %14.6e %9.1e", a.name.c_str(), a.value, a.error);
    if (i + half < rows.size()) {
      const Row& b = rows[i + half];
      std::printf("    %-10s %14.6e %9.1e", b.name.c_str(), b.value, b.error);
    }
    std::printf("\n");
  }
}

int run() {
  const auto start = std::chrono::steady_clock::now();
  Graph g(DType::f64);
  const nn::Mlp mlp(g, {3, {16, 16, 16}, 1, nn::Activation::tanh, ""});
  const Var x = g.input("x", {kPoints, 3});
  const Var u = mlp(x);
  const std::vector<MultiIndex> partials = wanted_partials();
  Taylor taylor(TaylorPlan({{x, 0}, {x, 1}, {x, 2}}, partials));
  std::vector<Var> outputs;
  for (const MultiIndex& alpha : partials) outputs.push_back(taylor.derivative(u, alpha));
  Bindings b = mlp.init_glorot_normal(kSeed, kBiasStd);
  b["x"] = random_points(kSeed + 1);
  const std::vector<MatrixD> got = evaluate(outputs, b, Precision::f64);
  const double jetpde_seconds = seconds_since(start);

  const auto ref_start = std::chrono::steady_clock::now();
  const std::vector<Row> rows = check(mlp, b, partials, got);
  const double ref_seconds = seconds_since(ref_start);

  std::printf("jetpde derivatives demo\n");
  std::printf(
      "u(x, y, t): tanh MLP 3 -> 16, 16, 16 -> 1, Glorot-normal weights, biases N(0, %.1f^2), "
      "seed %llu\n",
      kBiasStd, static_cast<unsigned long long>(kSeed));
  std::printf("%d points in [-1, 1]^3; point 1 = (%.6f, %.6f, %.6f)\n", kPoints, b["x"](0, 0),
              b["x"](0, 1), b["x"](0, 2));
  std::printf(
      "one Taylor plan, f64: %zu derivatives; rel err = max over points of |ours - ref| / "
      "max |ref|,\nref = nested dual numbers in quad precision\n\n",
      partials.size());
  print_table(rows);

  std::map<int, std::pair<int, double>> by_order;  // order -> (count, largest error)
  double worst = 0;
  for (const Row& r : rows) {
    auto& [count, err] = by_order[r.order];
    ++count;
    err = std::max(err, r.error);
    worst = std::max(worst, r.error);
  }
  std::printf("\norder  derivatives  largest rel err\n");
  for (const auto& [order, entry] : by_order)
    std::printf("%5d  %11d  %15.1e\n", order, entry.first, entry.second);
  std::printf("\nstreams: %d (the plan's downward closure)\n", taylor.plan().stream_count());
  std::printf(
      "time: %.1f ms jetpde (network, plan, Taylor transform, interpreter), "
      "%.1f ms quad reference\n",
      1e3 * jetpde_seconds, 1e3 * ref_seconds);
  const bool ok = worst <= kTolerance;
  std::printf("%s: largest relative error %.1e %s %.0e\n", ok ? "PASS" : "FAIL", worst,
              ok ? "<=" : ">", kTolerance);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace jetpde

int main() {
  try {
    return jetpde::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "derivatives_demo: %s\n", e.what());
    return 2;
  }
}
