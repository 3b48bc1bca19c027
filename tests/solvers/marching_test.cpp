// Time marching (solvers/marching.h): continuity at the windows' edges that comes from the
// hand-over and improves with training, the combined solution equal to each window's own
// problem, the error a short marched heat run reaches, the hand-over of initial_rate conditions,
// the time budget's shares, and the key's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "geometry/box.h"
#include "geometry/time_product.h"
#include "solvers/marching.h"
#include "solvers/solve.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;
constexpr double kPi = std::numbers::pi;
constexpr int kWindows = 3;

// u_t = 0.2 u_xx on [0, 1] x [0, 1], u(x, 0) = sin(pi x), u = 0 at x = 0, 1:
// u = sin(pi x) exp(-0.2 pi^2 t), which falls to about 0.14 of its start by t = 1.
ProblemSpec heat_spec(bool hard_initial = false) {
  ProblemSpec spec;
  spec.math.domain = geometry::time_product(geometry::interval(0, 1), 0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"}).time("t");
  spec.math.equations = {"u_t - 0.2*u_xx"};
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
  spec.pinn.conditions = {{.points = 64, .weight = 10}};
  if (hard_initial) {
    spec.pinn.hard_constraints = {{.field = "u", .value = "sin(pi*x)", .on = "initial"}};
  } else {
    spec.math.conditions.push_back({.kind = Condition::Kind::initial_value, .value = "sin(pi*x)"});
    spec.pinn.conditions.push_back({.points = 64, .weight = 10});
  }
  spec.pinn.interior_points = 256;
  spec.pinn.network.hidden = {16, 16};
  return spec;
}

SolveOptions marched(int steps, std::uint64_t seed = 1) {
  SolveOptions o;
  o.stages = {
      {.name = "adam", .steps = steps, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}}};
  o.device = Device::cpu;
  o.seed = seed;
  o.time_windows = kWindows;
  o.reference.expressions = {{"u", "sin(pi*x)*exp(-0.2*pi^2*t)"}};
  return o;
}

// Points of the line t = `t` at 33 x in [0, 1].
MatrixD at_time(double t) {
  MatrixD p(33, 2);
  for (Eigen::Index i = 0; i < p.rows(); ++i) p.row(i) << static_cast<double>(i) / 32.0, t;
  return p;
}

// The largest jump |u(x, t_k) - u(x, t_k - 0)| over the inner edges, relative to max |u| there:
// the combined solution at t_k is window k's (a face's point belongs to the upper cell), just
// below it window k-1's.
double edge_jump(const Solution& s) {
  double worst = 0;
  for (std::size_t k = 1; k < s.time_windows().size(); ++k) {
    const double t = s.time_windows()[k].t0;
    EXPECT_EQ(t, s.time_windows()[k - 1].t1);
    const MatrixD above = s.fields(at_time(t));
    const MatrixD below = s.fields(at_time(std::nextafter(t, 0.0)));
    worst = std::max(worst, (above - below).cwiseAbs().maxCoeff() / above.cwiseAbs().maxCoeff());
  }
  return worst;
}

TEST(Marching, WindowEdgesAreContinuousAndGetMoreSoWithTraining) {
  const Solution early = solve(heat_spec(), marched(5));
  const Solution trained = solve(heat_spec(), marched(400));
  ASSERT_EQ(trained.time_windows().size(), 3u);
  EXPECT_DOUBLE_EQ(trained.time_windows()[0].t0, 0.0);
  EXPECT_DOUBLE_EQ(trained.time_windows()[2].t1, 1.0);
  EXPECT_EQ(trained.result().steps, 3 * 400);
  ASSERT_EQ(trained.history().size(), 3u * 400u);
  EXPECT_EQ(trained.history()[400].step, 401);
  EXPECT_EQ(trained.history()[400].stage, "w2/adam");
  const double before = edge_jump(early), after = edge_jump(trained);
  // A window that started from anything but the previous one's end (a lost hand-over) would
  // leave jumps of the order of u itself.
  EXPECT_LT(after, 0.03) << "jump " << after << " (5 steps per window: " << before << ")";
  EXPECT_LT(after, 0.25 * before) << "jump " << after << " (5 steps per window: " << before << ")";
}

TEST(Marching, CombinedSolutionIsEachWindowsOwnProblem) {
  // A hard initial constraint: its distance must be the whole run's in every window for the two
  // to agree, and the later windows get the field handed over as data.
  const ProblemSpec spec = heat_spec(/*hard_initial=*/true);
  const Solution s = solve(spec, marched(20));
  ASSERT_EQ(s.model(), &s.problem().model());
  ASSERT_EQ(s.model()->network_specs().size(), 3u);
  const WindowHandover previous = [&](const MatrixD& p, const std::vector<std::string>& e) {
    return s.evaluate(p, e);
  };
  for (int k = 0; k < kWindows; ++k) {
    const ProblemSpec ws = window_spec(spec, kWindows, k, previous);
    EXPECT_EQ(ws.math.conditions.size(), k == 0 ? 1u : 2u);
    Problem window(ws);
    const std::string prefix = s.model()->network_specs()[static_cast<std::size_t>(k)].prefix;
    Eigen::VectorXd theta = window.initial_theta(99);
    copy_parameters(s.problem(), s.theta(), prefix, window, theta, prefix);
    const auto [t0, t1] = window_interval(spec, kWindows, k);
    MatrixD points(40, 2);
    for (Eigen::Index i = 0; i < points.rows(); ++i)
      points.row(i) << (static_cast<double>(i) + 0.5) / 40.0,
          t0 + (t1 - t0) * (static_cast<double>(i % 7) + 0.5) / 7.0;
    const MatrixD combined = s.fields(points), own = window.evaluate(theta, points);
    // The same network and constraint on the same rows: bit for bit.
    EXPECT_TRUE((combined.array() == own.array()).all())
        << "window " << k + 1 << ": largest difference " << (combined - own).cwiseAbs().maxCoeff();
  }
}

TEST(Marching, ShortHeatRunReachesItsError) {
  for (const std::uint64_t seed : {1u, 2u}) {
    const Solution s = solve(heat_spec(), marched(400, seed));
    EXPECT_EQ(s.result().status, TrainResult::Status::finished);
    // The combined solution over the whole domain, and every window on its own slab.
    EXPECT_LT(s.metrics().at("rel_l2"), 0.02) << "seed " << seed;
    for (const WindowRecord& w : s.time_windows())
      EXPECT_LT(w.metrics.at("rel_l2"), 0.03) << "seed " << seed << ", window at " << w.t0;
  }
}

TEST(Marching, InitialRateIsHandedOverAsDataOnUt) {
  ProblemSpec spec = heat_spec();
  spec.math.equations = {"u_tt - u_xx"};
  spec.math.conditions.push_back({.kind = Condition::Kind::initial_rate, .value = "0"});
  spec.pinn.conditions.push_back({.points = 16});
  std::vector<std::string> asked;
  const WindowHandover previous = [&](const MatrixD& p, const std::vector<std::string>& e) {
    asked.insert(asked.end(), e.begin(), e.end());
    MatrixD v(p.rows(), 1);
    v.col(0) = p.col(0) + p.col(1);  // anything that shows where it was asked
    return v;
  };
  const ProblemSpec w = window_spec(spec, 4, 2, previous);
  ASSERT_EQ(w.math.conditions.size(), 3u);
  const Condition& rate = w.math.conditions[2];
  EXPECT_EQ(rate.kind, Condition::Kind::data);
  EXPECT_EQ(rate.name, "initial_rate_u");
  EXPECT_EQ(rate.expression, "d(u, t, 1)");
  ASSERT_EQ(rate.data_points.rows(), 16);
  EXPECT_TRUE((rate.data_points.col(1).array() == 0.5).all());
  EXPECT_TRUE(rate.data_values.isApprox(rate.data_points.col(0) + rate.data_points.col(1)));
  EXPECT_EQ(w.math.conditions[1].name, "initial_value_u");
  EXPECT_EQ(w.math.conditions[1].data_points.rows(), 64);
  EXPECT_EQ(asked, (std::vector<std::string>{"u", "d(u, t, 1)"}));
  const auto* domain = dynamic_cast<const geometry::TimeProduct*>(w.math.domain.get());
  ASSERT_NE(domain, nullptr);
  EXPECT_DOUBLE_EQ(domain->t0(), 0.5);
  EXPECT_DOUBLE_EQ(domain->t1(), 0.75);
  // Its loss is the mean square of u_t - values at its points.
  Problem problem(w);
  const Eigen::VectorXd theta = problem.initial_theta(5);
  problem.objective().evaluate(theta);
  const auto& slots = problem.objective().slot_names();
  const auto slot = std::find(slots.begin(), slots.end(), "initial_rate_u") - slots.begin();
  ASSERT_LT(slot, static_cast<long>(slots.size()));
  const MatrixD ut = problem.evaluate_expressions(theta, rate.data_points, {"u_t"});
  const double expected = (ut - rate.data_values).array().square().mean();
  EXPECT_NEAR(problem.objective().slot_losses()[static_cast<std::size_t>(slot)], expected,
              1e-5 * expected);
}

// A time budget far shorter than the stages is shared among the windows: every window trains
// (a deadline for the whole run would leave the later windows untrained) and stops on its share;
// the run says time_limit.
TEST(Marching, TheTimeBudgetIsSharedAmongTheWindows) {
  SolveOptions o = marched(1000000);
  o.max_time = 4;
  const double started = clock_seconds();
  const Solution s = solve(heat_spec(), o);
  const double wall = clock_seconds() - started;
  EXPECT_EQ(s.result().status, TrainResult::Status::time_limit);
  ASSERT_EQ(s.time_windows().size(), static_cast<std::size_t>(kWindows));
  for (const WindowRecord& w : s.time_windows()) {
    EXPECT_EQ(w.status, TrainResult::Status::time_limit) << "window from t = " << w.t0;
    EXPECT_GT(w.steps, 0) << "window from t = " << w.t0;
  }
  // The budget counts from the start of solve(); what comes after the last step (the combined
  // validation) is not in it.
  EXPECT_LT(wall, 4 + 8.0);
}

// window_shares: the part of the time left each window may spend; when each spends all of its
// own, equal gives every window a quarter of the budget, growing 1 : 2 : 3 : 4; the last window
// always takes what is left.
TEST(Marching, WindowSharesEqualOrGrowing) {
  const auto spent = [](WindowShares shares) {
    std::vector<double> parts;
    double left = 1;
    for (int k = 0; k < 4; ++k) {
      parts.push_back(left * window_share(shares, 4, k));
      left -= parts.back();
    }
    EXPECT_NEAR(left, 0, 1e-15);
    return parts;
  };
  const std::vector<double> equal = spent(WindowShares::equal);
  const std::vector<double> growing = spent(WindowShares::growing);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(equal[static_cast<std::size_t>(k)], 0.25, 1e-15);
    EXPECT_NEAR(growing[static_cast<std::size_t>(k)], (k + 1) / 10.0, 1e-15);
  }
  EXPECT_DOUBLE_EQ(window_share(WindowShares::growing, 4, 1), 2.0 / 9);
  EXPECT_DOUBLE_EQ(window_share(WindowShares::growing, 1, 0), 1.0);
  EXPECT_EQ(window_shares_names().from_name("growing"), WindowShares::growing);
}

TEST(Marching, BadTimeWindowsAreUserErrorsNamingTheKey) {
  SolveOptions o = marched(1);
  o.time_windows = 0;
  expect_user_error([&] { solve(heat_spec(), o); },
                    "training.time_windows: 0; give 1 (no time marching) or more windows");
  ProblemSpec steady;
  steady.math.domain = geometry::interval(0, 1);
  steady.math.context.fields({"u"}).coordinates({"x"});
  steady.math.equations = {"u_xx + 1"};
  steady.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  steady.pinn.network.hidden = {4};
  o = marched(1);
  o.reference = {};
  expect_user_error([&] { solve(steady, o); },
                    "training.time_windows: time marching needs a time coordinate (a domain with "
                    "`time`); this problem has none");
  ProblemSpec decomposed = heat_spec();
  decomposed.pinn.decomposition = {.method = DecompositionMethod::fbpinn, .subdomains = {2, 1}};
  expect_user_error([&] { solve(decomposed, o); },
                    "training.time_windows: time marching with a decomposition is not supported "
                    "yet (the windows are the combined model's subdomains); drop one of the two");
  ProblemSpec inverse = heat_spec();
  inverse.math.context.param("kappa", 0.1);
  inverse.math.equations = {"u_t - kappa*u_xx"};
  expect_user_error([&] { solve(inverse, o); },
                    "training.time_windows: time marching with trainable constants (an inverse "
                    "problem) is not supported yet (each window would fit its own values)");
  ProblemSpec final_face = heat_spec();
  final_face.math.conditions.push_back(
      {.kind = Condition::Kind::dirichlet, .name = "end", .on = "final", .value = "0"});
  final_face.pinn.conditions.push_back({});
  expect_user_error([&] { solve(final_face, o); },
                    "training.time_windows: conditions[2] is on 'final', which each window "
                    "would take as its own; time marching with conditions on a time face is not "
                    "supported yet (initial_value and initial_rate are)");
  // A resumed state is refused rather than misread.
  TrainerState state;
  o.resume = &state;
  expect_user_error([&] { solve(heat_spec(), o); },
                    "training.time_windows: resuming a time-marched run is not supported yet "
                    "(its checkpoint holds the combined parameters, not the window's optimizer "
                    "state); run it again without --resume");
}

}  // namespace
}  // namespace jetpde::solvers
