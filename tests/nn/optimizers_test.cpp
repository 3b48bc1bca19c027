// Schedules, Adam/AdamW and L-BFGS on problems with known minimizers; the strong-Wolfe conditions
// at every accepted L-BFGS step; every stopping rule; resuming from a saved state bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "nn/adam.h"
#include "nn/lbfgs.h"
#include "nn/schedule.h"
#include "tests/support/user_error.h"

namespace jetpde::nn {
namespace {

using Eigen::VectorXd;
using jetpde::testing::expect_user_error;

// The extended Rosenbrock function: minimum 0 at (1, ..., 1).
double rosenbrock(const VectorXd& x, VectorXd& g) {
  double f = 0;
  g.setZero(x.size());
  for (Eigen::Index i = 0; i + 1 < x.size(); i += 2) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    f += 100 * a * a + b * b;
    g[i] += -400 * x[i] * a - 2 * b;
    g[i + 1] += 200 * a;
  }
  return f;
}

VectorXd rosenbrock_start(int n) {
  VectorXd x(n);
  for (int i = 0; i < n; i += 2) x[i] = -1.2, x[i + 1] = 1.0;
  return x;
}

TEST(Schedule, ValuesAtChosenSteps) {
  Schedule c{.kind = Schedule::Kind::constant, .lr = 0.1};
  EXPECT_DOUBLE_EQ(c(0), 0.1);
  EXPECT_DOUBLE_EQ(c(12345), 0.1);
  Schedule e{.kind = Schedule::Kind::exponential, .lr = 1e-3, .gamma = 0.9, .decay_steps = 1000};
  EXPECT_DOUBLE_EQ(e(0), 1e-3);
  EXPECT_NEAR(e(500), 1e-3 * std::sqrt(0.9), 1e-15);
  EXPECT_NEAR(e(2000), 1e-3 * 0.81, 1e-15);
  Schedule s{.kind = Schedule::Kind::step, .lr = 1.0, .gamma = 0.5, .decay_steps = 10};
  EXPECT_DOUBLE_EQ(s(9), 1.0);
  EXPECT_DOUBLE_EQ(s(10), 0.5);
  EXPECT_DOUBLE_EQ(s(25), 0.25);
  Schedule cos{.kind = Schedule::Kind::cosine, .lr = 1.0, .total_steps = 100, .min_lr = 0.1};
  EXPECT_DOUBLE_EQ(cos(0), 1.0);
  EXPECT_NEAR(cos(50), 0.55, 1e-15);
  EXPECT_NEAR(cos(100), 0.1, 1e-15);
  EXPECT_NEAR(cos(1000), 0.1, 1e-15);
  Schedule w = cos;
  w.warmup_steps = 4;
  EXPECT_NEAR(w(0), 0.25 * cos(0), 1e-15);
  EXPECT_NEAR(w(3), cos(3), 1e-15);
  EXPECT_DOUBLE_EQ(w(4), cos(4));
}

TEST(Schedule, BadValuesAndNames) {
  expect_user_error([] { Schedule{.lr = 0}.validate(); }, "schedule: lr must be positive");
  expect_user_error([] { Schedule{.kind = Schedule::Kind::step, .gamma = 1.5}.validate(); },
                    "schedule: gamma must be in (0, 1]");
  expect_user_error(
      [] { Schedule{.kind = Schedule::Kind::cosine, .lr = 1, .min_lr = 2}.validate(); },
      "schedule: min_lr must be in [0, lr]");
  expect_user_error([] { schedule_kind_from_name("linear"); },
                    "unknown schedule 'linear' (known: constant, exponential, step, cosine)");
  EXPECT_EQ(schedule_kind_from_name("cosine"), Schedule::Kind::cosine);
}

TEST(Adam, FirstStepMovesEachCoordinateByTheRate) {
  // With bias correction, Adam's first step is lr * g / (|g| + eps) per coordinate.
  Adam adam({.schedule = {.lr = 0.01}});
  VectorXd x(3), g(3);
  x << 1, 2, 3;
  g << 4, -0.5, 0;
  adam.step(x, g);
  EXPECT_NEAR(x[0], 1 - 0.01, 1e-9);  // eps = 1e-8 in |g| + eps
  EXPECT_NEAR(x[1], 2 + 0.01, 1e-9);
  EXPECT_DOUBLE_EQ(x[2], 3);
  EXPECT_EQ(adam.steps(), 1);
}

TEST(Adam, MinimizesAnIllConditionedQuadratic) {
  // f = sum_i c_i (x_i - i)^2 with c from 1 to 1e3.
  const int n = 10;
  VectorXd c(n), x = VectorXd::Zero(n), g(n);
  for (int i = 0; i < n; ++i) c[i] = std::pow(10.0, 3.0 * i / (n - 1));
  Adam adam(
      {.schedule = {
           .kind = Schedule::Kind::exponential, .lr = 0.1, .gamma = 0.1, .decay_steps = 2000}});
  for (int k = 0; k < 4000; ++k) {
    for (int i = 0; i < n; ++i) g[i] = 2 * c[i] * (x[i] - i);
    adam.step(x, g);
  }
  for (int i = 0; i < n; ++i) EXPECT_NEAR(x[i], i, 1e-3) << i;
}

TEST(Adam, AdamWDecaysWeightsOutsideTheMoments) {
  // A zero gradient: Adam with L2 moves by the decay gradient through the moments (a full lr
  // step on the first update), AdamW shrinks by lr * wd exactly.
  VectorXd a(1), b(1), zero = VectorXd::Zero(1);
  a << 2.0;
  b << 2.0;
  Adam l2({.schedule = {.lr = 0.1}, .weight_decay = 0.5});
  Adam decoupled({.schedule = {.lr = 0.1}, .weight_decay = 0.5, .decoupled = true});
  l2.step(a, zero);
  decoupled.step(b, zero);
  EXPECT_NEAR(a[0], 2.0 - 0.1, 1e-8);
  EXPECT_DOUBLE_EQ(b[0], 2.0 * (1 - 0.1 * 0.5));
}

TEST(Adam, StateRestoresBitForBit) {
  VectorXd x = rosenbrock_start(4), g(4);
  Adam a({.schedule = {.lr = 1e-3}});
  for (int k = 0; k < 10; ++k) rosenbrock(x, g), a.step(x, g);
  VectorXd y = x;
  Adam b({.schedule = {.lr = 1e-3}});
  b.restore(a.state());
  for (int k = 0; k < 10; ++k) {
    rosenbrock(x, g), a.step(x, g);
    rosenbrock(y, g), b.step(y, g);
  }
  EXPECT_EQ(x, y);
  expect_user_error([] { Adam({.beta1 = 1.0}); }, "adam: beta1 and beta2 must be in [0, 1)");
}

TEST(Lbfgs, SolvesRosenbrockToTheGradientTolerance) {
  for (const int n : {2, 20}) {
    VectorXd x = rosenbrock_start(n);
    Lbfgs lbfgs({.history = 10,
                 .max_iterations = 500,
                 .gradient_tolerance = 1e-9,
                 .function_tolerance = 0});
    EXPECT_EQ(lbfgs.run(rosenbrock, x), LbfgsStop::gradient_tolerance) << lbfgs.stop_message();
    EXPECT_LT((x - VectorXd::Ones(n)).lpNorm<Eigen::Infinity>(), 1e-8) << n;
    // About 40 iterations from this start (m = 10); a broken two-loop
    // recursion (still a descent method) takes over 60.
    EXPECT_LT(lbfgs.iterations(), 50) << lbfgs.stop_message();
    EXPECT_NE(lbfgs.stop_message().find("gradient tolerance: max |g| = "), std::string::npos);
  }
}

TEST(Lbfgs, EveryAcceptedStepSatisfiesTheStrongWolfeConditions) {
  VectorXd x = rosenbrock_start(6);
  const LbfgsOptions o{
      .history = 5, .max_iterations = 200, .gradient_tolerance = 1e-10, .function_tolerance = 0};
  Lbfgs lbfgs(o);
  int checked = 0;
  for (int k = 0; k < 200 && lbfgs.stop() == LbfgsStop::running; ++k) {
    const VectorXd xp = x;
    VectorXd gp(x.size());
    const double fp = rosenbrock(xp, gp);
    lbfgs.run(rosenbrock, x, 1);
    if (lbfgs.stop() != LbfgsStop::running && lbfgs.stop() != LbfgsStop::gradient_tolerance &&
        lbfgs.stop() != LbfgsStop::function_tolerance)
      break;
    const VectorXd s = x - xp;
    VectorXd g(x.size());
    const double f = rosenbrock(x, g);
    EXPECT_LE(f, fp + o.c1 * gp.dot(s) + 1e-15) << "sufficient decrease, iteration " << k;
    EXPECT_LE(std::abs(g.dot(s)), o.c2 * std::abs(gp.dot(s)) + 1e-15)
        << "curvature, iteration " << k;
    ++checked;
  }
  EXPECT_EQ(lbfgs.stop(), LbfgsStop::gradient_tolerance) << lbfgs.stop_message();
  EXPECT_GT(checked, 10);
}

TEST(Lbfgs, StopsOnTheIterationAndEvaluationLimitsAndSaysSo) {
  VectorXd x = rosenbrock_start(2);
  Lbfgs few({.max_iterations = 5});
  EXPECT_EQ(few.run(rosenbrock, x), LbfgsStop::iteration_limit);
  EXPECT_EQ(few.iterations(), 5);
  EXPECT_EQ(few.stop_message().rfind("iteration limit (5) reached: 5 iterations, ", 0), 0u)
      << few.stop_message();
  x = rosenbrock_start(2);
  Lbfgs cheap({.max_evaluations = 7});
  EXPECT_EQ(cheap.run(rosenbrock, x), LbfgsStop::evaluation_limit);
  EXPECT_GE(cheap.evaluations(), 7);
}

TEST(Lbfgs, StopsOnTheFunctionTolerance) {
  VectorXd x = rosenbrock_start(2);
  Lbfgs loose({.gradient_tolerance = 0, .function_tolerance = 1e-3});
  EXPECT_EQ(loose.run(rosenbrock, x), LbfgsStop::function_tolerance) << loose.stop_message();
  EXPECT_GT(loose.gradient().lpNorm<Eigen::Infinity>(), 0.0);
}

TEST(Lbfgs, ANonFiniteStartStopsAndANonFiniteTrialShortensTheStep) {
  VectorXd x = VectorXd::Ones(2);
  Lbfgs lbfgs({});
  const Objective nan = [](const VectorXd&, VectorXd& g) {
    g.setZero(2);
    return std::nan("");
  };
  EXPECT_EQ(lbfgs.run(nan, x), LbfgsStop::non_finite);
  EXPECT_EQ(lbfgs.stop_message(), "non-finite objective at the starting point (f = nan)");
  // f = x^2 for x < 3, NaN beyond: the first trial step overshoots into the NaN region.
  const Objective walled = [](const VectorXd& y, VectorXd& g) {
    g.resize(1);
    g[0] = 2 * y[0];
    return y[0] < 3 ? y[0] * y[0] : std::nan("");
  };
  VectorXd y(1);
  y << -2.9;
  Lbfgs ok({.gradient_tolerance = 1e-8});
  EXPECT_EQ(ok.run(walled, y), LbfgsStop::gradient_tolerance) << ok.stop_message();
  EXPECT_NEAR(y[0], 0, 1e-8);
}

// A history that no longer fits the objective (as after noisy f32 gradients) can point where a
// short line search finds no decrease; the iteration then forgets it and goes down -g instead of
// stopping.
TEST(Lbfgs, AFailedSearchForgetsTheHistoryAndTriesTheGradient) {
  // f = log cosh x0 + 100 log cosh x1 (|x| far out, so that the search's cubic cannot land on the
  // minimum) with one pair claiming a curvature of 1e-6 along x1: the direction is 1e6 times too
  // long, further than two trials of the search can bring back.
  const Objective f = [](const VectorXd& x, VectorXd& g) {
    g.resize(2);
    g << std::tanh(x[0]), 100 * std::tanh(x[1]);
    return std::log(std::cosh(x[0])) + 100 * std::log(std::cosh(x[1]));
  };
  const auto poisoned = [&](VectorXd& x) {
    Lbfgs::State s;
    s.g.resize(2);
    s.f = f(x, s.g);
    s.started = true;
    s.s = {(VectorXd(2) << 0, 1).finished()};
    s.y = {(VectorXd(2) << 0, 1e-6).finished()};
    return s;
  };
  VectorXd x(2);
  x << 1, 1;
  Lbfgs lbfgs(
      {.history = 5, .max_iterations = 200, .gradient_tolerance = 1e-8, .max_line_search = 2});
  lbfgs.restore(poisoned(x));
  EXPECT_EQ(lbfgs.run(f, x), LbfgsStop::gradient_tolerance) << lbfgs.stop_message();
  EXPECT_LT(x.norm(), 1e-8);
  // The same state one search at a time: the first iteration counts once and decreases f.
  VectorXd y(2);
  y << 1, 1;
  Lbfgs step({.history = 5, .max_line_search = 2});
  step.restore(poisoned(y));
  EXPECT_EQ(step.run(f, y, 1), LbfgsStop::running) << step.stop_message();
  EXPECT_EQ(step.iterations(), 1);
  EXPECT_LT(step.value(), 101 * std::log(std::cosh(1.0)));
}

TEST(Lbfgs, ResumingFromASavedStateGivesTheSameIterates) {
  const LbfgsOptions o{.history = 4, .max_iterations = 1000, .gradient_tolerance = 0};
  VectorXd straight = rosenbrock_start(8), resumed = straight;
  Lbfgs a(o);
  a.run(rosenbrock, straight, 30);
  Lbfgs first(o);
  first.run(rosenbrock, resumed, 12);
  Lbfgs second(o);
  second.restore(first.state());
  second.run(rosenbrock, resumed, 18);
  EXPECT_EQ(straight, resumed);
  EXPECT_EQ(a.state().s.size(), second.state().s.size());
  EXPECT_EQ(a.evaluations(), second.evaluations());
}

TEST(Lbfgs, BadOptions) {
  expect_user_error([] { Lbfgs({.history = 0}); }, "lbfgs: history must be at least 1");
  expect_user_error([] { Lbfgs({.c1 = 0.5, .c2 = 0.4}); },
                    "lbfgs: the Wolfe constants need 0 < c1 < c2 < 1");
}

}  // namespace
}  // namespace jetpde::nn
