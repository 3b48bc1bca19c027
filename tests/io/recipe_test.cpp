// The default recipe (io/recipe.h): when it applies, what it chooses from the problem, what of the
// config it keeps, and that the run folder's config.yaml runs the same run again.
#include <gtest/gtest.h>

#include <algorithm>

#include "io/config.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;

// Burgers on a periodic interval: time, order 2, one periodic coordinate, three loss terms.
const std::string kPeriodic = R"(name: p
geometry: {type: interval, min: [0], max: [6.5], time: [0, 2]}
constants: {nu: 0.01}
equations:
  - expression: u_t + u*u_x - nu*u_xx
conditions:
  - {kind: initial_value, value: sin(x)}
  - {kind: periodic, coordinate: x}
)";

// A steady problem in two dimensions with one condition.
const std::string kSteady = R"(name: s
geometry: {type: rectangle, min: [0, 0], max: [1, 1]}
equations:
  - expression: u_xx + u_yy + 1
conditions:
  - {kind: dirichlet}
)";

RunConfig from(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return run_config_from_text(text, "test.yaml", "", overrides);
}

bool chose(const Recipe& r, const std::string& key) {
  return std::any_of(r.chosen.begin(), r.chosen.end(),
                     [&](const auto& c) { return c.first == key; });
}

TEST(Recipe, ATimeDependentPeriodicProblemGetsCausalTrainingAndAPeriodicNetwork) {
  const RunConfig c = from(kPeriodic);
  ASSERT_TRUE(c.recipe.applied);
  EXPECT_EQ(c.recipe.facts,
            "time-dependent (t in [0, 2]), 1 spatial dimension, derivatives to order 2 (1 in "
            "time), periodic in x, 3 loss terms");
  const nn::NetworkSpec& net = c.spec.pinn.network;
  EXPECT_EQ(net.architecture, nn::Architecture::modified_mlp);
  EXPECT_EQ(net.hidden, (std::vector<int>{64, 64, 64, 64}));
  ASSERT_EQ(net.periodic.size(), 1u);
  EXPECT_EQ(net.periodic[0].column, 0);
  EXPECT_DOUBLE_EQ(net.periodic[0].period, 6.5);  // the box's extent, not 2 pi
  EXPECT_EQ(c.spec.pinn.time_chunks, 32);
  // 2048 x 2 for two coordinates, halved in a marched window (which covers a part of the
  // interval).
  EXPECT_EQ(c.spec.pinn.interior_points, 2048);
  EXPECT_EQ(c.resample_every, 500);
  EXPECT_DOUBLE_EQ(c.weighting.causal_epsilon, 1.0);
  EXPECT_EQ(c.weighting.causal_scale, solvers::Weighting::CausalScale::initial);
  // Three terms, of which the periodic one holds exactly: two to balance.
  EXPECT_EQ(c.weighting.kind, solvers::Weighting::Kind::gradnorm);
  // A periodic domain in time: four windows, each with fewer steps.
  EXPECT_EQ(c.time_windows, 4);
  // Equal shares of the budget: growing ones (1 : 2 : 3 : 4) left the early windows worse, and
  // their error is what the later ones start from (bench/README.md).
  EXPECT_EQ(c.window_shares, solvers::WindowShares::equal);
  ASSERT_EQ(c.stages.size(), 4u);
  EXPECT_EQ(c.stages[0].optimizer, "adam");
  EXPECT_EQ(c.stages[0].steps, 5000);
  EXPECT_EQ(c.stages[1].optimizer, "lbfgs");
  EXPECT_FALSE(c.stages[1].precision.has_value());  // the run's
  // What the f32 stage leaves goes on in fp64 on the same points; its own single iteration is
  // all it does when f32 runs its 5000.
  EXPECT_EQ(c.stages[2].name, "fp64_continue");
  EXPECT_EQ(c.stages[2].optimizer, "lbfgs");
  EXPECT_EQ(c.stages[2].steps, 1);
  EXPECT_EQ(c.stages[2].precision, compiler::PrecisionPolicy::fp64);
  EXPECT_EQ(c.stages[3].steps, 2000) << "the polish as long as a single run's (a budget ends it)";
  EXPECT_EQ(c.stages[3].name, "polish");
  EXPECT_EQ(c.stages[3].precision, compiler::PrecisionPolicy::fp64);
  // Under a time budget the polish keeps a share of it.
  EXPECT_DOUBLE_EQ(c.stages[0].time_share, 0.7);
  EXPECT_DOUBLE_EQ(c.stages[1].time_share, 0.5);
  EXPECT_DOUBLE_EQ(c.stages[2].time_share, 0.5);
  EXPECT_DOUBLE_EQ(c.stages[3].time_share, 0.0);
  // Adam draws new points every 500 steps (sampling), the fp64 polish every 250 of its
  // iterations; the L-BFGS stages before it keep one draw.
  EXPECT_EQ(c.stages[0].resample_every, 0);
  EXPECT_EQ(c.stages[1].resample_every, 0);
  EXPECT_EQ(c.stages[2].resample_every, 0);
  EXPECT_EQ(c.stages[3].resample_every, 250);
  EXPECT_FALSE(c.stages[1].average);
  EXPECT_FALSE(c.stages[2].average);
  EXPECT_TRUE(c.stages[3].average) << "the polish ends at the mean of its runs";
  // Unused iterations go on down the L-BFGS stages; the polish averages only as many of its last
  // runs as its own 2000 iterations make.
  EXPECT_TRUE(c.stages[1].hand_on);
  EXPECT_TRUE(c.stages[2].hand_on);
  EXPECT_FALSE(c.stages[3].hand_on);
  EXPECT_EQ(c.stages[3].average_last, 2000 / 250);
  EXPECT_TRUE(c.adaptive);
  EXPECT_EQ(c.resolved["training"]["recipe"].as<std::string>(), "auto");
  const std::string text = c.recipe.describe();
  EXPECT_NE(text.find("chose sampling.time_chunks: 32"), std::string::npos) << text;
  EXPECT_EQ(text.find("kept from the config"), std::string::npos) << text;
}

TEST(Recipe, TimeWindowsOnlyForAPeriodicDomainThatCanBeMarched) {
  // Not periodic: one window, the longer stages.
  const RunConfig heat = from(R"(geometry: {type: interval, min: [0], max: [1], time: [0, 1]}
equations: [{expression: u_t - 0.1*u_xx}]
conditions: [{kind: initial_value, value: sin(pi*x)}, {kind: dirichlet}]
)");
  EXPECT_EQ(heat.time_windows, 1);
  EXPECT_EQ(heat.spec.pinn.interior_points, 4096);
  EXPECT_EQ(heat.stages.at(0).steps, 10000);
  EXPECT_EQ(heat.stages.at(3).steps, 2000);
  // Periodic, but with a trainable constant (which marching refuses): one window.
  const RunConfig inverse = from(kPeriodic + "parameters: {k: 1}\n");
  EXPECT_EQ(inverse.time_windows, 1);
  // The config's own count wins.
  const RunConfig two = from(kPeriodic + "training: {time_windows: 2}\n");
  EXPECT_EQ(two.time_windows, 2);
  EXPECT_EQ(two.spec.pinn.interior_points, 2048);
  EXPECT_EQ(two.stages.at(0).steps, 5000);
  // Counted as the run counts them: a constant expression is its value.
  EXPECT_EQ(from(kPeriodic + "training: {time_windows: 2^1}\n").spec.pinn.interior_points, 2048);
  // One window given: the points of one run.
  const RunConfig one = from(kPeriodic + "training: {time_windows: 1}\n");
  EXPECT_EQ(one.time_windows, 1);
  EXPECT_EQ(one.spec.pinn.interior_points, 4096);
  // The config's own count of points wins over the halving.
  const RunConfig own = from(kPeriodic + "sampling: {interior_points: 3000}\n");
  EXPECT_EQ(own.time_windows, 4);
  EXPECT_EQ(own.spec.pinn.interior_points, 3000);
}

// The period written into the config is the domain's extent to the last bit (2 pi, not 6.28319),
// so that the network is periodic over the box and the condition is left out.
TEST(Recipe, ThePeriodIsTheExtentToTheLastBit) {
  const RunConfig c =
      from(R"(geometry: {type: interval, min: [0], max: [6.283185307179586], time: [0, 1]}
equations: [{expression: u_t + 30*u_x}]
conditions: [{kind: periodic, coordinate: x}]
hard_constraints: [{field: u, value: sin(x), on: initial}]
)");
  ASSERT_EQ(c.spec.pinn.network.periodic.size(), 1u);
  EXPECT_EQ(c.spec.pinn.network.periodic[0].period, 6.283185307179586);
  EXPECT_EQ(c.resolved["network"]["periodic"][0]["period"].as<std::string>(), "6.283185307179586");
}

// network.periodic[].slope_jump needs the period to be the domain's length (the input is periodic
// over the domain, from its lower bound).
TEST(Recipe, ASlopeJumpInputNeedsThePeriodToBeTheDomain) {
  const std::string text = R"(geometry: {type: interval, min: [-1], max: [1], time: [0, 1]}
equations: [{expression: u_t - 0.01*u_xx}]
conditions: [{kind: periodic, coordinate: x}, {kind: initial_value, value: cos(pi*x)}]
network:
  periodic: [{coordinate: x, period: 1, slope_jump: true}]
)";
  expect_user_error([&] { from(text); },
                    "test.yaml:5:53: network.periodic[0].slope_jump: needs the period to be the "
                    "domain's length along x (2), not 1");
}

TEST(Recipe, ASteadyProblemGetsSobolPointsAndNoTimeChunks) {
  const RunConfig c = from(kSteady);
  ASSERT_TRUE(c.recipe.applied);
  EXPECT_EQ(c.recipe.facts, "steady, 2 spatial dimensions, derivatives to order 2, 2 loss terms");
  EXPECT_EQ(c.spec.pinn.network.architecture, nn::Architecture::mlp);
  EXPECT_TRUE(c.spec.pinn.network.periodic.empty());
  EXPECT_EQ(c.spec.pinn.time_chunks, 1);
  EXPECT_EQ(c.spec.pinn.interior_points, 4096);  // 2048 x 2 for two coordinates
  EXPECT_EQ(c.stages.at(0).steps, 5000);
  EXPECT_FALSE(chose(c.recipe, "training.weighting.causal_epsilon"));
  EXPECT_DOUBLE_EQ(c.weighting.causal_epsilon, 0.0);
  // One loss term (the condition built in) has nothing to balance.
  const RunConfig one = from(R"(geometry: {type: rectangle, min: [0, 0], max: [1, 1]}
equations: [{expression: u_xx + u_yy + 1}]
hard_constraints: [{field: u, value: 0}]
)");
  ASSERT_TRUE(one.recipe.applied);
  EXPECT_FALSE(chose(one.recipe, "training.weighting.kind"));
  EXPECT_EQ(one.weighting.kind, solvers::Weighting::Kind::fixed);
}

TEST(Recipe, AnExactlyPeriodicNetworkLeavesNothingToBalanceInOneWindow) {
  // The equation and a periodic condition the chosen network satisfies exactly: in one time
  // window, nothing to balance.
  const std::string problem = R"(geometry: {type: interval, min: [-1], max: [1], time: [0, 1]}
equations: [{expression: u_t - 0.001*u_xx + 5*u^3 - 5*u}]
conditions: [{kind: periodic, coordinate: x, derivatives: 1}]
hard_constraints: [{field: u, value: x^2*cos(pi*x), on: initial}]
)";
  const RunConfig c = from(problem + "training: {time_windows: 1}\n");
  ASSERT_TRUE(c.recipe.applied);
  EXPECT_FALSE(chose(c.recipe, "training.weighting.kind"));
  EXPECT_EQ(c.weighting.kind, solvers::Weighting::Kind::fixed);
  EXPECT_EQ(c.spec.pinn.network.periodic.size(), 1u);
  // Marched (the recipe's choice here), every window after the first balances its residual
  // against the initial condition handed over as data.
  const RunConfig marched = from(problem);
  EXPECT_EQ(marched.time_windows, 4);
  EXPECT_EQ(marched.weighting.kind, solvers::Weighting::Kind::gradnorm);
  EXPECT_EQ(marched.weighting.every, 1000);
  // With the config's own network the periodic condition is a term like any other.
  const RunConfig own = from(R"(geometry: {type: interval, min: [-1], max: [1], time: [0, 1]}
equations: [{expression: u_t - 0.001*u_xx + 5*u^3 - 5*u}]
conditions: [{kind: periodic, coordinate: x, derivatives: 1}]
network: {hidden: [8]}
)");
  EXPECT_EQ(own.weighting.kind, solvers::Weighting::Kind::gradnorm);
}

TEST(Recipe, WhatTheConfigGivesIsKept) {
  // A network section is kept whole; sampling and weighting keys one by one (adaptive alone
  // needs the resample_every the recipe adds); max_time alone does not turn the recipe off.
  const RunConfig c = from(kPeriodic + R"(network: {hidden: [8, 8]}
sampling: {interior_points: 640, adaptive: true}
training: {max_time: 60, weighting: {kind: annealing}}
)");
  ASSERT_TRUE(c.recipe.applied);
  EXPECT_EQ(c.spec.pinn.network.hidden, (std::vector<int>{8, 8}));
  EXPECT_EQ(c.spec.pinn.network.architecture, nn::Architecture::mlp);
  EXPECT_TRUE(c.spec.pinn.network.periodic.empty());
  EXPECT_EQ(c.spec.pinn.interior_points, 640);
  EXPECT_TRUE(c.adaptive);
  EXPECT_EQ(c.resample_every, 500);
  EXPECT_EQ(c.spec.pinn.time_chunks, 32);
  EXPECT_EQ(c.weighting.kind, solvers::Weighting::Kind::annealing);
  EXPECT_EQ(c.weighting.every, 1000);
  EXPECT_DOUBLE_EQ(c.max_time, 60);
  EXPECT_EQ(c.recipe.kept,
            (std::vector<std::string>{"network", "sampling.interior_points", "sampling.adaptive",
                                      "training.weighting.kind"}));
  EXPECT_NE(c.recipe.describe().find("kept from the config: network, sampling.interior_points, "
                                     "sampling.adaptive, training.weighting.kind"),
            std::string::npos);
  // recipe: auto with stages: the stages are the config's, the rest is chosen.
  const RunConfig staged = from(kPeriodic + R"(training:
  recipe: auto
  stages: [{optimizer: adam, steps: 7}]
)");
  ASSERT_TRUE(staged.recipe.applied);
  ASSERT_EQ(staged.stages.size(), 1u);
  EXPECT_EQ(staged.stages[0].steps, 7);
  EXPECT_EQ(staged.spec.pinn.time_chunks, 32);
}

TEST(Recipe, StagesOrRecipeNoneOrAClassicalSolverTurnItOff) {
  const RunConfig staged = from(kPeriodic + "training: {stages: [{optimizer: adam, steps: 7}]}\n");
  EXPECT_FALSE(staged.recipe.applied);
  EXPECT_EQ(staged.spec.pinn.time_chunks, 1);
  EXPECT_EQ(staged.resolved["training"]["recipe"].as<std::string>(), "none");
  const RunConfig none = from(kPeriodic + "training: {recipe: none}\n");
  EXPECT_FALSE(none.recipe.applied);
  ASSERT_EQ(none.stages.size(), 1u);  // the schema's default stage
  EXPECT_EQ(none.spec.pinn.network.architecture, nn::Architecture::mlp);
  const RunConfig classical = from(kSteady + "solver: {type: petsc}\n");
  EXPECT_FALSE(classical.recipe.applied);
  expect_user_error([] { from(kPeriodic + "training: {recipe: automatic}\n"); },
                    "test.yaml:9:20: training.recipe: 'automatic' is not one of none, auto");
}

TEST(Recipe, TheResolvedConfigRunsTheSameRunAgain) {
  // config.yaml (the resolved config) holds every choice as a plain key: read again, the recipe
  // finds nothing left to choose and the resolved config is the same.
  const RunConfig first = from(kPeriodic);
  const RunConfig again = from(YAML::Dump(first.resolved));
  EXPECT_TRUE(again.recipe.applied);
  EXPECT_TRUE(again.recipe.chosen.empty());
  EXPECT_EQ(YAML::Dump(again.resolved), YAML::Dump(first.resolved));
  EXPECT_EQ(again.spec.pinn.network.periodic.size(), 1u);
  EXPECT_EQ(again.stages.size(), first.stages.size());
}

TEST(Recipe, AProblemErrorIsReportedOnceWithItsPlace) {
  // The first reading (for the facts) reports the config's errors with their lines.
  expect_user_error([] { from(kPeriodic + "definitions: {f: sin(}\n"); },
                    "test.yaml:9:15: definitions.f: in the definition of 'f' = 'sin(': column 5: "
                    "expected an expression, found the end\n  sin(\n      ^");
}

TEST(Recipe, ASectionThatIsNotAMappingIsReportedNotFilled) {
  // The recipe fills sampling, training and training.weighting key by key; one given as a scalar
  // or a list is the config's error, named by the schema (the fuzzer found `sampling: 5` thrown
  // out of the loader as yaml-cpp's BadSubscript).
  expect_user_error([] { from(kPeriodic + "sampling: 5\n"); },
                    "test.yaml:9:11: sampling: expected a mapping, got '5'");
  expect_user_error([] { from(kPeriodic + "sampling: [1, 2]\n"); },
                    "test.yaml:9:11: sampling: expected a mapping, got a list");
  expect_user_error([] { from(kPeriodic + "training: {max_time: 5, weighting: 3}\n"); },
                    "test.yaml:9:36: training.weighting: expected a mapping, got '3'");
  expect_user_error([] { from(kPeriodic + "training: {max_time: 5, weighting: [ntk]}\n"); },
                    "test.yaml:9:36: training.weighting: expected a mapping, got a list");
}

}  // namespace
}  // namespace jetpde::io
