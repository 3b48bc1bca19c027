// The optimizer registry: names and the error for an unknown one, options checked when the
// trainer is made, AdamW as Adam with decoupled decay, and kinds registered at run time (a
// heavy-ball gradient descent, a backtracking line search) driven by the trainer's one loop with
// its checkpoints, resuming and the line-search rule (no resampling, fixed weights).
#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/ops.h"
#include "solvers/objective.h"
#include "solvers/optimizer.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;

compiler::CompileOptions options() {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = compiler::PrecisionPolicy::fp64;
  return o;
}

// sin(c) fitted to targets t (an input, so it can be resampled), and c itself kept small.
struct Fit {
  Graph g{DType::f64};
  Var c = g.param("c", {1, 3});
  Var t = g.input("t", {1, 3});
  Objective obj{{{"fit", sin(c) - t}, {"small", c * 0.1}}, {c}, options()};
  Fit() { obj.set_inputs({{"t", targets(0)}}); }
  static MatrixD targets(int step) {
    MatrixD m(1, 3);
    m << 0.5, -0.25 + 0.01 * step, 0.75;
    return m;
  }
  static Eigen::VectorXd theta0() { return Eigen::Vector3d(0.1, 0.2, -0.3); }
};

// Gradient descent with momentum: v <- mu v - lr g, theta <- theta + v.
class HeavyBall final : public Optimizer {
 public:
  explicit HeavyBall(double lr) : lr_(lr) {}
  Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) override {
    Eigen::VectorXd g;
    const double loss = evaluate(theta, g);
    if (!std::isfinite(loss) || !g.allFinite()) return {.kind = Step::Kind::non_finite};
    if (v_.size() == 0) v_ = Eigen::VectorXd::Zero(theta.size());
    v_ = 0.9 * v_ - lr_ * g;
    theta += v_;
    ++steps_;
    return {.kind = Step::Kind::stepped, .loss = loss, .learning_rate = lr_};
  }
  bool loss_before_update() const override { return true; }
  int state_vectors() const override { return 1; }
  OptimizerState state() const override {
    return {.kind = "heavy_ball", .values = {{"v", v_}, {"steps", steps_}}};
  }
  void restore(const OptimizerState& s) override {
    if (s.empty()) return;
    v_ = s.get<Eigen::VectorXd>("v");
    steps_ = s.get<std::int64_t>("steps");
  }

 private:
  double lr_;
  Eigen::VectorXd v_;
  std::int64_t steps_ = 0;
};

// Steepest descent with a halving line search: several evaluations a step, one objective.
class Backtracking final : public Optimizer {
 public:
  Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) override {
    Eigen::VectorXd g, trial_g;
    const double f = evaluate(theta, g);
    if (!std::isfinite(f)) return {.kind = Step::Kind::non_finite};
    for (double t = 1.0; t > 1e-8; t /= 2) {
      const Eigen::VectorXd trial = theta - t * g;
      const double ft = evaluate(trial, trial_g);
      if (ft < f) {
        theta = trial;
        return {.kind = Step::Kind::stepped, .loss = ft};
      }
    }
    return {.kind = Step::Kind::done, .loss = f};
  }
  bool loss_before_update() const override { return false; }
  int state_vectors() const override { return 2; }
  OptimizerState state() const override { return {}; }
  void restore(const OptimizerState&) override {}
};

void register_test_kinds() {
  static const bool once = [] {
    register_optimizer("heavy_ball", {.make = [](const Stage& s, const nn::ParameterLayout&) {
                         return std::make_unique<HeavyBall>(s.options_as<double>());
                       }});
    register_optimizer(
        "backtracking",
        {.make = [](const Stage&, const nn::ParameterLayout&) -> std::unique_ptr<Optimizer> {
           return std::make_unique<Backtracking>();
         },
         .line_search = true});
    return true;
  }();
  (void)once;
}

TEST(Optimizers, TheRegistryNamesTheKnownOnes) {
  const std::vector<std::string> names = optimizer_names();
  for (const char* builtin : {"adam", "adamw", "lbfgs"})
    EXPECT_NE(std::find(names.begin(), names.end(), builtin), names.end()) << builtin;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_TRUE(Stage{.optimizer = "lbfgs"}.line_search());
  EXPECT_FALSE(Stage{.optimizer = "adamw"}.line_search());
  Fit fit;
  // The known names as they are now (other tests of this binary may have registered more).
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  expect_user_error([&] { Trainer(fit.obj, {{.name = "first", .optimizer = "sgd"}}); },
                    "trainer: stage 'first': unknown optimizer 'sgd' (known: " + known + ")");
  expect_user_error([&] { optimizer_kind("sgd"); },
                    "unknown optimizer 'sgd' (known: " + known + ")");
  expect_user_error([&] { register_optimizer("adam", {.make = optimizer_kind("adam").make}); },
                    "register_optimizer: 'adam' is registered already");
  expect_user_error([&] { register_optimizer("nothing", {}); },
                    "register_optimizer: 'nothing' has no factory");
}

TEST(Optimizers, OptionsAreCheckedWhenTheTrainerIsMade) {
  Fit fit;
  expect_user_error(
      [&] {
        Trainer(fit.obj, {{.name = "polish", .optimizer = "lbfgs", .options = nn::AdamOptions{}}});
      },
      "trainer: stage 'polish': its options are not of the type optimizer 'lbfgs' takes");
  expect_user_error(
      [&] {
        Trainer(fit.obj,
                {{.name = "a", .steps = 5},
                 {.name = "b", .optimizer = "lbfgs", .options = nn::LbfgsOptions{.history = 0}}});
      },
      "trainer: lbfgs: history must be at least 1");
  EXPECT_EQ(make_optimizer({.optimizer = "lbfgs", .options = nn::LbfgsOptions{.history = 7}},
                           fit.obj.layout())
                ->state_vectors(),
            16);
}

TEST(Optimizers, AdamwIsAdamWithDecoupledWeightDecay) {
  const auto train = [](const Stage& stage) {
    Fit fit;
    Trainer trainer(fit.obj, {stage});
    Eigen::VectorXd theta = Fit::theta0();
    trainer.train(theta);
    return theta;
  };
  const nn::AdamOptions decay{.schedule = {.lr = 1e-2}, .weight_decay = 0.5};
  nn::AdamOptions decoupled = decay;
  decoupled.decoupled = true;
  const Eigen::VectorXd adamw = train({.optimizer = "adamw", .steps = 20, .options = decay});
  EXPECT_TRUE(adamw == train({.optimizer = "adam", .steps = 20, .options = decoupled}));
  EXPECT_FALSE(adamw == train({.optimizer = "adam", .steps = 20, .options = decay}));
}

// A kind registered at run time is a stage like any other: it trains, its state goes into the
// checkpoints (named values), and resuming from one gives the same parameters bit for bit. In
// the line-search kind's stage there is no resampling and the weights stay as they were.
TEST(Optimizers, ARegisteredKindTrainsCheckpointsAndResumes) {
  register_test_kinds();
  const std::vector<Stage> stages{
      {.name = "ball", .optimizer = "heavy_ball", .steps = 12, .options = 0.05},
      {.name = "search", .optimizer = "backtracking", .steps = 6}};
  const auto run = [&](const TrainerState* resume, std::vector<TrainerState>* saved,
                       std::vector<int>* resampled, std::vector<StepInfo>* history) {
    Fit fit;
    Trainer trainer(fit.obj, stages,
                    {.kind = Weighting::Kind::annealing, .initial = {1.0, 1.0}, .every = 2});
    trainer.resample_every(3, [&](int step, const Eigen::VectorXd&) {
      if (resampled) resampled->push_back(step);
      return Bindings{{"t", Fit::targets(step)}};
    });
    if (saved) trainer.checkpoint_every(4, [&](const TrainerState& s) { saved->push_back(s); });
    Eigen::VectorXd theta = Fit::theta0();
    const TrainResult r = trainer.train(theta, resume);
    EXPECT_EQ(r.status, TrainResult::Status::finished) << r.message;
    if (history) *history = trainer.history();
    return std::pair{theta, r};
  };
  std::vector<TrainerState> saved;
  std::vector<int> resampled;
  std::vector<StepInfo> history;
  const auto [full, full_result] = run(nullptr, &saved, &resampled, &history);
  EXPECT_EQ(full_result.steps, 18);
  EXPECT_EQ(full_result.message.rfind("ball: 12 steps, loss ", 0), 0u) << full_result.message;
  EXPECT_EQ(resampled, (std::vector<int>{3, 6, 9}));  // none in the line-search stage
  for (std::size_t k = 12; k < history.size(); ++k)
    EXPECT_EQ(history[k].weights, history[12].weights) << "step " << k + 1;
  EXPECT_EQ(history[0].learning_rate, 0.05);
  EXPECT_EQ(history[12].learning_rate, 0.0);
  ASSERT_GE(saved.size(), 4u);  // steps 4, 8, 12, 16 and the last
  EXPECT_EQ(saved[1].optimizer.kind, "heavy_ball");
  EXPECT_EQ(saved[1].optimizer.get<std::int64_t>("steps"), 8);
  for (const std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
    const auto [resumed, r] = run(&saved[k], nullptr, nullptr, nullptr);
    EXPECT_EQ(r.message, full_result.message) << "from step " << saved[k].step;
    EXPECT_TRUE(resumed == full) << "from step " << saved[k].step;
  }
  // A state of another kind does not restore into Adam.
  expect_user_error(
      [&] {
        Fit fit;
        Trainer trainer(fit.obj, {{.name = "adam", .steps = 12}});
        Eigen::VectorXd theta = Fit::theta0();
        trainer.train(theta, &saved[0]);
      },
      "adam: cannot restore the state of a 'heavy_ball' optimizer");
}

}  // namespace
}  // namespace jetpde::solvers
