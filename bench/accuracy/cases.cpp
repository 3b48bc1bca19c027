#include "bench/accuracy/cases.h"

#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>

#include "autodiff/errors.h"
#include "geometry/box.h"
#include "geometry/time_product.h"
#include "io/hdf5_read.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"

namespace jetpde::bench {
namespace {

using solvers::Condition;
using Kind = solvers::Condition::Kind;
constexpr double kPi = std::numbers::pi;

int scaled(int steps, double scale) {
  return std::max(1, static_cast<int>(std::lround(steps * scale)));
}

std::vector<solvers::Stage> adam_then_lbfgs(int adam, int lbfgs, double scale, double lr = 1e-3) {
  return {{.name = "adam",
           .steps = scaled(adam, scale),
           .adam = {.schedule = {.kind = nn::Schedule::Kind::exponential,
                                 .lr = lr,
                                 .gamma = 0.9,
                                 .decay_steps = std::max(1, scaled(adam, scale) / 10)}}},
          {.name = "lbfgs",
           .optimizer = solvers::Stage::Optimizer::lbfgs,
           .steps = scaled(lbfgs, scale),
           .lbfgs = {.gradient_tolerance = 1e-9, .function_tolerance = 0}}};
}

double rel_l2(const MatrixD& a, const MatrixD& b) {
  return (a - b).matrix().norm() / b.matrix().norm();
}

// The Burgers reference: points (x_i, t_j) and u[i, j].
struct Reference {
  MatrixD points, u;
};

Reference burgers_reference(const std::string& dir) {
  const std::string file = dir + "/burgers.h5";
  const std::vector<double> x = io::read_dataset(file, "x").values;
  const std::vector<double> t = io::read_dataset(file, "t").values;
  const MatrixD u = io::read_dataset(file, "u").matrix();
  Reference r{MatrixD(u.size(), 2), MatrixD(u.size(), 1)};
  Eigen::Index k = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < t.size(); ++j, ++k) {
      r.points(k, 0) = x[i];
      r.points(k, 1) = t[j];
      r.u(k, 0) = u(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
    }
  return r;
}

solvers::ProblemSpec burgers_spec(std::uint64_t seed) {
  solvers::ProblemSpec spec;
  spec.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
  spec.context.fields({"u"}).coordinates({"x"}).time("t");
  spec.equations = {};
  spec.interior_points = 10000;
  spec.network.hidden = std::vector<int>(8, 20);  // Raissi et al.: 8 hidden layers of 20
  spec.sampling = {.method = geometry::SampleMethod::latin_hypercube, .seed = seed};
  return spec;
}

AccuracyResult burgers(const AccuracyOptions& o) {
  AccuracyResult result;
  result.target = "rel_l2 <= 1e-3 (aim 5e-4; Raissi et al. 6.7e-4)";
  if (!std::filesystem::exists(o.data_dir + "/burgers.h5")) {
    result.skipped = true;
    result.message = "skipped: no " + o.data_dir + "/burgers.h5";
    return result;
  }
  const Reference ref = burgers_reference(o.data_dir);
  solvers::ProblemSpec spec = burgers_spec(o.seed);
  spec.context.constant("nu", 0.01 / kPi);
  spec.equations = {"u_t + u*u_x - nu*u_xx"};
  spec.conditions = {{.kind = Kind::initial_value, .value = "-sin(pi*x)", .points = 200},
                     {.kind = Kind::dirichlet, .on = "spatial", .value = "0", .points = 200}};
  solvers::Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(o.seed);
  solvers::Trainer trainer(p.objective(), adam_then_lbfgs(5000, 20000, o.scale));
  const solvers::TrainResult r = trainer.train(theta);
  const MatrixD u = p.evaluate(theta, ref.points);
  result.metrics = {{"rel_l2", rel_l2(u, ref.u)}, {"max_abs", (u - ref.u).abs().maxCoeff()}};
  result.met = result.metrics["rel_l2"] <= 1e-3;
  result.message = r.message;
  return result;
}

AccuracyResult burgers_inverse(const AccuracyOptions& o) {
  AccuracyResult result;
  const double nu_true = 0.01 / kPi;
  result.target = "|nu - 0.01/pi| <= 1% of 0.01/pi";
  if (!std::filesystem::exists(o.data_dir + "/burgers.h5")) {
    result.skipped = true;
    result.message = "skipped: no " + o.data_dir + "/burgers.h5";
    return result;
  }
  const Reference ref = burgers_reference(o.data_dir);
  // 2000 samples of the reference with 1% Gaussian noise (of the samples' standard deviation).
  std::mt19937_64 rng(o.seed + 17);
  std::vector<Eigen::Index> all(static_cast<std::size_t>(ref.u.rows()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<Eigen::Index>(i);
  std::shuffle(all.begin(), all.end(), rng);
  Condition data{.kind = Kind::data, .name = "data"};
  data.data_points = MatrixD(2000, 2);
  data.data_values = MatrixD(2000, 1);
  for (Eigen::Index k = 0; k < 2000; ++k) {
    data.data_points.row(k) = ref.points.row(all[static_cast<std::size_t>(k)]);
    data.data_values(k, 0) = ref.u(all[static_cast<std::size_t>(k)], 0);
  }
  const double std_dev = std::sqrt((data.data_values - data.data_values.mean()).square().mean());
  std::normal_distribution<double> noise(0.0, 0.01 * std_dev);
  for (auto& v : data.data_values.reshaped()) v += noise(rng);
  solvers::ProblemSpec spec = burgers_spec(o.seed);
  // nu = exp(log_nu): positive, and the optimizer moves its logarithm (as Raissi et al. do).
  spec.context.param("log_nu", std::log(0.01));
  spec.equations = {"u_t + u*u_x - exp(log_nu)*u_xx"};
  spec.interior_points = 5000;
  spec.conditions = {data};
  solvers::Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(o.seed);
  solvers::Trainer trainer(p.objective(), adam_then_lbfgs(5000, 20000, o.scale));
  const solvers::TrainResult r = trainer.train(theta);
  const double nu = std::exp(p.param(theta, "log_nu"));
  const MatrixD u = p.evaluate(theta, ref.points);
  result.metrics = {
      {"nu", nu}, {"nu_rel_error", std::abs(nu - nu_true) / nu_true}, {"rel_l2", rel_l2(u, ref.u)}};
  result.met = result.metrics["nu_rel_error"] <= 0.01;
  result.message = r.message;
  return result;
}

// Clamped plate: laplacian^2 u = f on the unit square, u = du/dn = 0 on the boundary, with
// u = sin^2(pi x) sin^2(pi y), so f = 4 pi^4 (4 cos(2 pi x) cos(2 pi y) - cos(2 pi x) -
// cos(2 pi y)). Divided by pi^4 for a residual of order one.
AccuracyResult plate4(const AccuracyOptions& o) {
  AccuracyResult result;
  result.target = "rel_l2 <= 1e-2";
  solvers::ProblemSpec spec;
  spec.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {
      "laplacian(laplacian(u))/pi^4 - 4*(4*cos(2*pi*x)*cos(2*pi*y) - cos(2*pi*x) - cos(2*pi*y))"};
  spec.interior_points = 2000;
  spec.conditions = {{.kind = Kind::dirichlet, .value = "0", .points = 400, .weight = 10},
                     {.kind = Kind::neumann, .value = "0", .points = 400}};
  spec.network.hidden = {32, 32, 32};
  spec.sampling = {.method = geometry::SampleMethod::sobol, .seed = o.seed};
  solvers::Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(o.seed);
  solvers::Trainer trainer(p.objective(), adam_then_lbfgs(3000, 5000, o.scale));
  const solvers::TrainResult r = trainer.train(theta);
  MatrixD at(51 * 51, 2);
  for (int i = 0; i < 51; ++i)
    for (int j = 0; j < 51; ++j) at.row(i * 51 + j) << i / 50.0, j / 50.0;
  const MatrixD exact = (at.col(0) * kPi).sin().square() * (at.col(1) * kPi).sin().square();
  const MatrixD u = p.evaluate(theta, at);
  result.metrics = {{"rel_l2", rel_l2(u, exact)}, {"max_abs", (u - exact).abs().maxCoeff()}};
  result.met = result.metrics["rel_l2"] <= 1e-2;
  result.message = r.message;
  return result;
}

// A 6th-order boundary-value problem: u^(6) = -pi^6 sin(pi x) on (0, 1) with u, u'' and u''''
// zero at both ends: u = sin(pi x). Divided by pi^6.
AccuracyResult bvp6(const AccuracyOptions& o) {
  AccuracyResult result;
  result.target = "rel_l2 <= 1e-3";
  solvers::ProblemSpec spec;
  spec.domain = geometry::interval(0, 1);
  spec.context.fields({"u"}).coordinates({"x"});
  spec.equations = {"d(u, x, 6)/pi^6 + sin(pi*x)"};
  spec.interior_points = 200;
  for (const char* end : {"x == 0", "x == 1"})
    for (const char* expr : {"u", "u_xx/pi^2", "d(u, x, 4)/pi^4"})
      spec.conditions.push_back(
          {.kind = Kind::residual, .on = end, .expression = expr, .points = 1, .weight = 10});
  spec.network.hidden = {20, 20, 20};
  spec.sampling = {.method = geometry::SampleMethod::grid, .seed = o.seed};
  solvers::Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(o.seed);
  solvers::Trainer trainer(p.objective(), adam_then_lbfgs(2000, 5000, o.scale));
  const solvers::TrainResult r = trainer.train(theta);
  MatrixD at(201, 1);
  for (int i = 0; i <= 200; ++i) at(i, 0) = i / 200.0;
  const MatrixD exact = (at * kPi).sin();
  const MatrixD u = p.evaluate(theta, at);
  result.metrics = {{"rel_l2", rel_l2(u, exact)}, {"max_abs", (u - exact).abs().maxCoeff()}};
  result.met = result.metrics["rel_l2"] <= 1e-3;
  result.message = r.message;
  return result;
}

}  // namespace

const std::vector<AccuracyCase>& accuracy_cases() {
  static const std::vector<AccuracyCase> cases{
      {"burgers", "Burgers 1-D against burgers.h5", burgers},
      {"burgers_inverse", "Burgers' nu from 2000 noisy samples", burgers_inverse},
      {"plate4", "clamped plate (biharmonic), exact solution", plate4},
      {"bvp6", "6th-order boundary-value problem, exact solution", bvp6},
  };
  return cases;
}

const AccuracyCase& accuracy_case(const std::string& name) {
  std::string known;
  for (const AccuracyCase& c : accuracy_cases()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw UserError("unknown accuracy case '" + name + "' (known: " + known + ")");
}

}  // namespace jetpde::bench
