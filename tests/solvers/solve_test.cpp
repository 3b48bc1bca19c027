// solve() from C++ with no files: a Solution that evaluates like its Problem, validation metrics
// in the history and the result, a callback and a time budget that stop it, resuming from a saved
// state bit for bit, the device choice, and a Solution made from a problem and a theta.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "compiler/cpu_gemm.h"
#include "geometry/ball.h"
#include "geometry/box.h"
#include "solvers/solve.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;
constexpr double kPi = std::numbers::pi;

// Poisson on the unit square with u = sin(pi x) sin(pi y), small enough to train in a second.
ProblemSpec poisson_spec() {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"-laplacian(u) = 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.pinn.interior_points = 64;
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 32}};
  spec.pinn.network.hidden = {8, 8};
  return spec;
}

MatrixD exact_u(const MatrixD& p) { return (p.col(0) * kPi).sin() * (p.col(1) * kPi).sin(); }

SolveOptions adam(int steps) {
  SolveOptions o;
  o.stages = {
      {.name = "adam", .steps = steps, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}}};
  o.device = Device::cpu;
  o.seed = 3;
  return o;
}

// Equal shapes and every entry bit for bit.
bool same(const MatrixD& a, const MatrixD& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a == b).all();
}

MatrixD some_points() {
  MatrixD p(5, 2);
  p << 0.1, 0.2, 0.5, 0.5, 0.9, 0.3, 0.25, 0.75, 0.0, 1.0;
  return p;
}

TEST(Solve, ReturnsASolutionThatEvaluatesLikeItsProblemAndValidates) {
  SolveOptions o = adam(20);
  o.reference.function = exact_u;
  o.reference.every = 5;
  int calls = 0;
  o.on_step = [&](const StepInfo&) { return ++calls > 0; };
  const Solution s = solve(poisson_spec(), o);
  EXPECT_EQ(s.result().status, TrainResult::Status::finished);
  EXPECT_EQ(s.result().steps, 20);
  EXPECT_EQ(calls, 20);
  ASSERT_EQ(s.history().size(), 20u);
  EXPECT_EQ(s.resumed_from(), -1);
  EXPECT_EQ(s.precision(), "fp32");
  EXPECT_EQ(s.backend(), compiler::Backend::cpu);
  EXPECT_TRUE(s.parameters().empty());
  EXPECT_EQ(s.field_names(), (std::vector<std::string>{"u"}));
  EXPECT_EQ(s.coordinate_names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(s.has_time());

  // The Solution is the problem at the trained parameters.
  const MatrixD at = some_points();
  const MatrixD values = s.evaluate(at, {"u", "u_x"});
  const MatrixD direct = s.problem().evaluate_expressions(s.theta(), at, {"u", "u_x"});
  ASSERT_EQ(values.rows(), 5);
  ASSERT_EQ(values.cols(), 2);
  EXPECT_TRUE(same(values, direct));
  EXPECT_TRUE(same(values.col(0), s.problem().evaluate(s.theta(), at)));
  EXPECT_TRUE(same(s.fields(at), s.problem().evaluate(s.theta(), at)));

  // Validation every 5 steps, on the 101 x 101 grid, in the history and the result.
  EXPECT_EQ(s.validation_points(), 101 * 101);
  for (const StepInfo& info : s.history())
    EXPECT_EQ(info.metrics.count("rel_l2"), info.step % 5 == 0 ? 1u : 0u) << info.step;
  ASSERT_EQ(s.metrics().count("rel_l2"), 1u);
  EXPECT_EQ(s.metrics(), s.history().back().metrics);
  std::vector<int> dims;
  std::vector<double> times;
  const MatrixD grid = spatial_grid(s.domain(), {.counts = {101}}, false, &dims, &times);
  const Metrics expected = error_metrics(s.fields(grid), exact_u(grid));
  EXPECT_NEAR(s.metrics().at("rel_l2"), expected.at("rel_l2"), 1e-12);
  EXPECT_NEAR(s.metrics().at("max_abs"), expected.at("max_abs"), 1e-12);
  EXPECT_GT(s.metrics().at("rel_l2"), 0.0);

  // The last losses are the objective's, by slot.
  const auto losses = s.losses();
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_EQ(losses[0].first, "pde");
  EXPECT_EQ(losses[1].first, "dirichlet_u");

  // On a grid: the field, the exact solution and its error, a quantity, the residual.
  GridFieldOptions grid_options;
  grid_options.grid.counts = {3};
  grid_options.quantities = {"u_x"};
  grid_options.exact = s.exact();
  const GridFields g = s.fields_on_grid(grid_options);
  ASSERT_EQ(g.levels.size(), 1u);
  std::vector<std::string> names;
  for (const NamedValues& a : g.levels[0]) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"u", "u_exact", "u_error", "u_x", "residual_pde"}));
  EXPECT_EQ(g.dims, (std::vector<int>{3, 3}));
  EXPECT_TRUE(same(g.levels[0][0].values, s.fields(g.space)));
}

TEST(Solve, MetricsOfAnExactSolutionAsExpressionsAndDerivedMetrics) {
  SolveOptions o = adam(4);
  o.reference.expressions = {{"u", "sin(pi*x)*sin(pi*y)"}};
  o.reference.points = 500;
  o.reference.metrics = {{"ux", "u_x"}};
  Solver solver(std::make_unique<Problem>(poisson_spec()), o);
  EXPECT_EQ(solver.metric_names(),
            (std::vector<std::string>{"rel_l2", "max_abs", "ux_rel_l2", "ux_max_abs"}));
  EXPECT_EQ(solver.validation_points(), 500);
  const Solution s = solver.run();
  // At the end only (every = 0), with the derived metric of u_x.
  for (const StepInfo& info : s.history())
    EXPECT_EQ(info.metrics.empty(), info.step != 4) << info.step;
  for (const char* m : {"rel_l2", "max_abs", "ux_rel_l2", "ux_max_abs"})
    EXPECT_EQ(s.metrics().count(m), 1u) << m;
  expect_user_error([&] { solver.run(); }, "Solver::run: called twice (a Solver solves once)");
}

// The grid of an exact-solution validation keeps only the points in a domain that is not a
// box: on the unit disk, the 101 x 101 grid over [-1, 1]^2 has 7845 of its 10201 points within
// radius 1 (the corners are not trained, and would dominate the error).
TEST(Solve, AValidationGridKeepsThePointsInTheDomain) {
  ProblemSpec spec = poisson_spec();
  spec.math.domain = geometry::disk({0, 0}, 1);
  spec.math.equations = {"-laplacian(u) = 4"};
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "1 - x^2 - y^2"}};
  spec.pinn.conditions = {{.points = 32}};
  SolveOptions o = adam(2);
  o.reference.expressions = {{"u", "1 - x^2 - y^2"}};
  Solver solver(std::make_unique<Problem>(spec), o);
  long long inside = 0;  // grid point (i, j) is at (i - 50, j - 50) / 50: counted in integers
  for (int i = 0; i < 101; ++i)
    for (int j = 0; j < 101; ++j) inside += (i - 50) * (i - 50) + (j - 50) * (j - 50) <= 2500;
  EXPECT_EQ(solver.validation_points(), inside);
  EXPECT_LT(inside, 101 * 101);
  // A box keeps its whole grid.
  Solver box(std::make_unique<Problem>(poisson_spec()), [] {
    SolveOptions b = adam(2);
    b.reference.expressions = {{"u", "sin(pi*x)*sin(pi*y)"}};
    return b;
  }());
  EXPECT_EQ(box.validation_points(), 101 * 101);
}

TEST(Solve, ACallbackReturningFalseStopsIt) {
  SolveOptions o = adam(50);
  o.on_step = [](const StepInfo& info) { return info.step < 7; };
  const Solution s = solve(poisson_spec(), o);
  EXPECT_EQ(s.result().status, TrainResult::Status::stopped);
  EXPECT_EQ(s.result().steps, 7);
  EXPECT_EQ(s.history().size(), 7u);
}

TEST(Solve, ATimeBudgetStopsIt) {
  SolveOptions o = adam(1000);
  o.max_time = 1e-9;  // spent before training starts: one step, then the stop
  const Solution s = solve(poisson_spec(), o);
  EXPECT_EQ(s.result().status, TrainResult::Status::time_limit);
  EXPECT_EQ(s.result().steps, 1);
}

// Checkpoints in memory: the interface solve() saves through.
struct Saved : CheckpointSink {
  std::vector<TrainerState> states;
  void save(const TrainerState& state) override { states.push_back(state); }
};

TEST(Solve, ResumesFromASavedStateBitForBit) {
  SolveOptions o = adam(16);
  o.stages.push_back({.name = "lbfgs", .optimizer = "lbfgs", .steps = 6});
  o.resample_every = 4;  // seed + step: the resumed solve draws the same points
  Saved saved;
  o.checkpoint = &saved;
  o.checkpoint_every = 10;
  const Solution full = solve(poisson_spec(), o);
  ASSERT_GE(saved.states.size(), 2u);
  const TrainerState& at10 = saved.states.front();
  ASSERT_EQ(at10.step, 10);

  SolveOptions again = o;
  again.checkpoint = nullptr;
  again.resume = &at10;
  const Solution resumed = solve(poisson_spec(), again);
  EXPECT_EQ(resumed.resumed_from(), 10);
  EXPECT_EQ(resumed.result().steps, full.result().steps);
  EXPECT_EQ(resumed.history().size(), static_cast<std::size_t>(full.result().steps - 10));
  EXPECT_TRUE(resumed.theta() == full.theta())
      << "max difference " << (resumed.theta() - full.theta()).cwiseAbs().maxCoeff();
  EXPECT_EQ(resumed.result().loss, full.result().loss);
}

// PirateNet's initialization: the last layer fitted by least squares to the boundary values
// (here u = sin(pi x) on the whole boundary of the square, 64 points, against 16 features), so
// that the initial network is far closer to them than the drawn one; a resumed run keeps its
// checkpoint's parameters instead. Other architectures are left as drawn.
TEST(Solve, APirateNetStartsFittedToItsBoundaryValues) {
  ProblemSpec spec = poisson_spec();
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "sin(pi*x)"}};
  spec.pinn.conditions = {{.points = 64}};
  spec.pinn.network.architecture = nn::Architecture::pirate;
  spec.pinn.network.hidden = {32, 32};
  spec.pinn.network.fourier.sigma = 0.3;
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec);
  const Eigen::VectorXd drawn = p.initial_theta(0);
  Eigen::VectorXd fitted = drawn;
  EXPECT_EQ(p.fit_output_layer(fitted), 64);
  const MatrixD& xb = p.objective().inputs().at("condition0");
  const MatrixD g = (xb.col(0) * kPi).sin();
  const double before = (p.evaluate(drawn, xb) - g).matrix().norm();
  const double after = (p.evaluate(fitted, xb) - g).matrix().norm();
  EXPECT_LT(after, 0.1 * before) << "drawn " << before << ", fitted " << after;
  // An MLP: nothing to fit.
  spec.pinn.network.architecture = nn::Architecture::mlp;
  Problem q(spec);
  Eigen::VectorXd t = q.initial_theta(0);
  const Eigen::VectorXd t0 = t;
  EXPECT_EQ(q.fit_output_layer(t), 0);
  EXPECT_TRUE(t == t0);
}

TEST(Solve, DeviceChoice) {
  ProblemSpec spec = poisson_spec();
  spec.compile.backend = compiler::Backend::cuda;
  choose_device(Device::cpu, true, spec);
  EXPECT_EQ(spec.compile.backend, compiler::Backend::cpu);
  EXPECT_EQ(device_from_name("auto"), Device::automatic);
  EXPECT_EQ(device_from_name("cuda"), Device::cuda);
  expect_user_error([] { device_from_name("gpu"); },
                    "device: unknown device 'gpu' (known: auto, cpu, cuda)");
  std::string why;
  if (!compiler::backend_can_run(compiler::Backend::cuda, {}, &why)) {
    expect_user_error(
        [&] { choose_device(Device::cuda, true, spec); },
        "device: cuda is required (require_device: true) but cannot run here: " + why);
    std::string warning;
    choose_device(Device::cuda, false, spec, [&](const std::string& w) { warning = w; });
    EXPECT_EQ(spec.compile.backend, compiler::Backend::cpu);
    EXPECT_EQ(warning, "device: cuda cannot run here (" + why + "); running on the CPU");
  }
}

TEST(Solve, ASolutionFromAProblemAndATheta) {
  auto problem = std::make_unique<Problem>(poisson_spec());
  const Eigen::VectorXd theta = problem->initial_theta(1);
  const MatrixD expected = problem->evaluate(theta, some_points());
  const Solution s(std::move(problem), theta);
  EXPECT_TRUE(same(s.fields(some_points()), expected));
  EXPECT_TRUE(s.history().empty());
  EXPECT_EQ(s.validation_points(), 0);
  // The precision that ran: auto resolved for this machine, never "auto".
  ProblemSpec automatic = poisson_spec();
  automatic.compile.pipeline.precision = compiler::PrecisionPolicy::automatic;
  auto p = std::make_unique<Problem>(automatic);
  const Eigen::VectorXd t = p->initial_theta(0);
  EXPECT_EQ(Solution(std::move(p), t).precision(),
            compiler::precision_name(compiler::resolve_auto(compiler::PrecisionPolicy::automatic,
                                                            compiler::Backend::cpu)));
  expect_user_error(
      [] { Solution(std::make_unique<Problem>(poisson_spec()), Eigen::VectorXd::Zero(3)); },
      "Solution: theta has 3 parameters but the problem's network has 105");
  expect_user_error(
      [] { exact_solution({.exact = "burgers_sine"}, *std::make_unique<Problem>(poisson_spec())); },
      "reference.exact: burgers_sine takes nu from the constants: declare nu");
}

}  // namespace
}  // namespace jetpde::solvers
