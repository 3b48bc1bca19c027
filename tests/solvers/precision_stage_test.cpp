// Stages in a precision of their own (Stage::precision, Objective::use_precision): the objective
// compiled again for fp64 gives what an fp64 objective gives, with everything bound before the
// switch; an fp64 L-BFGS stage after an f32 one that stalled lowers the loss far below where f32
// stopped; a run resumed inside the fp64 stage ends bit for bit where the unbroken run ends.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "compiler/passes.h"
#include "nn/network.h"
#include "solvers/objective.h"
#include "solvers/trainer.h"

namespace jetpde::solvers {
namespace {

using compiler::PrecisionPolicy;
constexpr double kPi = std::numbers::pi;

compiler::CompileOptions options(PrecisionPolicy precision,
                                 std::optional<PrecisionPolicy> auto_as = std::nullopt) {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = precision;
  o.pipeline.auto_as = auto_as;
  return o;
}

MatrixD grid(int n, double a, double b) {
  MatrixD x(n, 1);
  for (int i = 0; i < n; ++i) x(i, 0) = a + (b - a) * i / (n - 1);
  return x;
}

// -u'' = pi^2 sin(pi x) on (0, 1), u(0) = u(1) = 0 (as in trainer_test.cpp), hidden layers
// `width` wide.
struct Poisson1d {
  explicit Poisson1d(int hidden_width = 16) : width(hidden_width) { build(); }
  int width;
  Graph g{DType::f64};
  nn::Network net{g, {.inputs = 1, .hidden = {width, width}, .outputs = 1}};
  Var x = g.input("x", {32, 1});
  Var xb = g.input("xb", {2, 1});
  Var residual, boundary;
  void build() {
    Taylor t(TaylorPlan({{x, 0}}, {{2}}));
    residual = t.derivative(net(x), {2}) + (kPi * kPi) * sin(x * kPi);
    boundary = net(xb);
  }
  Bindings inputs(double shift = 0) const {
    MatrixD b(2, 1);
    b << 0.0, 1.0;
    return {{"x", (grid(34, 0, 1).middleRows(1, 32).array() + shift).matrix()}, {"xb", b}};
  }
  Objective objective(PrecisionPolicy precision,
                      std::optional<PrecisionPolicy> auto_as = std::nullopt) {
    return Objective({{"pde", residual}, {"bc", boundary}}, net.params(),
                     options(precision, auto_as));
  }
};

// The dtype of the step's parameters: what the compiled program computes in.
std::optional<DType> parameter_dtype(const Objective& obj) {
  for (const compiler::Buffer& b : obj.executable().program().buffers)
    if (b.kind == compiler::Buffer::Kind::Param) return b.dtype;
  return std::nullopt;  // no parameter buffer (the interpreter): fails every comparison below
}

TEST(PrecisionStage, AnObjectiveSwitchedToFp64IsAnFp64Objective) {
  Poisson1d p;
  Objective obj = p.objective(PrecisionPolicy::fp32);
  Objective oracle = p.objective(PrecisionPolicy::fp64);
  obj.set_inputs(p.inputs());
  obj.set_weights({1.0, 10.0});
  oracle.set_inputs(p.inputs());
  oracle.set_weights({1.0, 10.0});
  const Eigen::VectorXd theta = obj.layout().flatten(p.net.init(3));
  Eigen::VectorXd g32, g64, want;
  const double f32 = obj.evaluate(theta, &g32);
  EXPECT_EQ(obj.precision(), PrecisionPolicy::fp32);
  EXPECT_EQ(parameter_dtype(obj), DType::f32);

  // Inputs and weights bound before the switch are in the new step.
  obj.use_precision(PrecisionPolicy::fp64);
  EXPECT_EQ(obj.precision(), PrecisionPolicy::fp64);
  EXPECT_EQ(obj.run_precision(), PrecisionPolicy::fp32);
  EXPECT_EQ(parameter_dtype(obj), DType::f64);
  const double f64 = obj.evaluate(theta, &g64);
  const double reference = oracle.evaluate(theta, &want);
  EXPECT_EQ(f64, reference);
  EXPECT_TRUE(g64 == want);
  EXPECT_EQ(obj.slot_losses(), oracle.slot_losses());
  EXPECT_NE(f32, f64);  // f32 rounds: the two steps differ
  EXPECT_NEAR(f32, f64, 1e-5 * f64);
  const auto term_gradients = obj.term_gradients(theta);
  const auto oracle_gradients = oracle.term_gradients(theta);
  for (std::size_t t = 0; t < term_gradients.size(); ++t)
    EXPECT_TRUE(term_gradients[t] == oracle_gradients[t]) << "term " << t;
  EXPECT_EQ(obj.ntk_traces(theta, 2, 7), oracle.ntk_traces(theta, 2, 7));

  // Bound while in fp64, then back in fp32 (compiled already): the f32 step gets them too.
  obj.set_inputs(p.inputs(0.01));
  obj.set_weights({2.0, 5.0});
  obj.use_precision(PrecisionPolicy::fp32);
  EXPECT_EQ(parameter_dtype(obj), DType::f32);
  Objective fresh = p.objective(PrecisionPolicy::fp32);
  fresh.set_inputs(p.inputs(0.01));
  fresh.set_weights({2.0, 5.0});
  EXPECT_EQ(obj.evaluate(theta), fresh.evaluate(theta));
  // And into fp64 again: what was bound in fp32 meanwhile follows.
  obj.set_inputs(p.inputs(0.02));
  obj.use_precision(PrecisionPolicy::fp64);
  oracle.set_inputs(p.inputs(0.02));
  oracle.set_weights({2.0, 5.0});
  EXPECT_EQ(obj.evaluate(theta), oracle.evaluate(theta));
}

// The CUDA backend renders f64 kernels and runs DGEMMs: an objective on the GPU switched to fp64
// agrees with the CPU's fp64 objective to f64 rounding (skipped, saying why, without a GPU).
TEST(PrecisionStage, OnCudaTheFp64StepIsF64) {
  compiler::CompileOptions cuda = options(PrecisionPolicy::fp32);
  cuda.backend = compiler::Backend::cuda;
  cuda.strict = true;
  std::string why;
  if (!compiler::backend_can_run(compiler::Backend::cuda, cuda, &why)) GTEST_SKIP() << why;
  Poisson1d p;
  Objective obj({{"pde", p.residual}, {"bc", p.boundary}}, p.net.params(), cuda);
  Objective cpu = p.objective(PrecisionPolicy::fp64);
  obj.set_inputs(p.inputs());
  cpu.set_inputs(p.inputs());
  const Eigen::VectorXd theta = obj.layout().flatten(p.net.init(3));
  Eigen::VectorXd g32, g64, want;
  const double f32 = obj.evaluate(theta, &g32);
  obj.use_precision(PrecisionPolicy::fp64);
  EXPECT_EQ(obj.executable().backend(), compiler::Backend::cuda);
  EXPECT_EQ(parameter_dtype(obj), DType::f64);
  const double f64 = obj.evaluate(theta, &g64);
  const double reference = cpu.evaluate(theta, &want);
  EXPECT_NEAR(f64, reference, 1e-12 * reference);
  EXPECT_LE((g64 - want).norm(), 1e-10 * want.norm());
  EXPECT_GT((g32 - want).norm(), (g64 - want).norm());  // f32 rounds more
  EXPECT_NEAR(f32, reference, 1e-4 * reference);
}

// L-BFGS in f32 with no tolerances stops where f32 can no longer change the loss (its line search
// finds no decrease); the same stage once more in fp64 from there goes much further, and once more
// in f32 (a fresh history) does not. The callback sees each stage's step compiled in its own
// precision, and after training the objective is back in the run's.
struct PolishRun {
  double f32_loss = 0;  // where the first L-BFGS stage ended
  int f32_steps = 0;
  TrainResult result;
};

PolishRun polish(std::optional<PrecisionPolicy> precision) {
  Poisson1d p;
  Objective obj = p.objective(PrecisionPolicy::fp32);
  obj.set_inputs(p.inputs());
  const nn::LbfgsOptions no_tolerances{.gradient_tolerance = 0, .function_tolerance = 0};
  Trainer trainer(
      obj,
      {{.name = "adam", .steps = 300, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
       {.name = "f32", .optimizer = "lbfgs", .steps = 3000, .options = no_tolerances},
       {.name = "polish",
        .optimizer = "lbfgs",
        .steps = 1000,
        .options = no_tolerances,
        .precision = precision}},
      {.initial = {1.0, 10.0}});
  const DType polish_dtype = precision == PrecisionPolicy::fp64 ? DType::f64 : DType::f32;
  std::vector<std::string> wrong;
  PolishRun out;
  trainer.on_step([&](const StepInfo& info) {
    const DType want = info.stage == "polish" ? polish_dtype : DType::f32;
    if (parameter_dtype(obj) != want) wrong.push_back(info.stage + " " + std::to_string(info.step));
    if (info.stage == "f32") {
      out.f32_loss = info.loss;
      ++out.f32_steps;
    }
    return true;
  });
  Eigen::VectorXd theta = obj.layout().flatten(p.net.init(1));
  out.result = trainer.train(theta);
  EXPECT_EQ(out.result.status, TrainResult::Status::finished) << out.result.message;
  EXPECT_TRUE(wrong.empty()) << "steps in the wrong precision, the first: " << wrong.front();
  EXPECT_EQ(obj.precision(), PrecisionPolicy::fp32);
  EXPECT_EQ(parameter_dtype(obj), DType::f32);
  std::printf("  polish in %s: f32 L-BFGS %d steps, loss %.3e; then loss %.3e\n  %s\n",
              precision ? compiler::precision_name(*precision).c_str() : "the run's precision",
              out.f32_steps, out.f32_loss, out.result.loss, out.result.message.c_str());
  return out;
}

TEST(PrecisionStage, AnFp64LbfgsStagePolishesWhereF32Stalled) {
  const PolishRun fp64 = polish(PrecisionPolicy::fp64);
  // The f32 stage ended before its steps: its line search had nothing more to give.
  EXPECT_LT(fp64.f32_steps, 3000) << fp64.result.message;
  EXPECT_NE(fp64.result.message.find("; polish (fp64): "), std::string::npos)
      << fp64.result.message;
  EXPECT_LT(fp64.result.loss, 1e-2 * fp64.f32_loss) << fp64.result.message;
  // The same stage in f32: the same start (the runs agree up to there), little further.
  const PolishRun f32 = polish(std::nullopt);
  EXPECT_EQ(f32.f32_loss, fp64.f32_loss);
  EXPECT_NE(f32.result.message.find("; polish: "), std::string::npos) << f32.result.message;
  EXPECT_GT(f32.result.loss, 0.1 * f32.f32_loss) << f32.result.message;
}

// Stopped at a checkpoint inside the fp64 stage (or in the f32 stage before it) and resumed in a
// fresh objective and trainer: the same parameters, bit for bit, as the unbroken run. The
// precision is the stage's config; nothing of it is in the state.
TEST(PrecisionStage, ResumingInsideAnFp64StageGivesTheSameParameters) {
  const std::vector<Stage> stages{
      {.name = "adam", .steps = 20, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
      {.name = "f32", .optimizer = "lbfgs", .steps = 10},
      {.name = "polish",
       .optimizer = "lbfgs",
       .steps = 20,
       .options = nn::LbfgsOptions{.gradient_tolerance = 0, .function_tolerance = 0},
       .precision = PrecisionPolicy::fp64}};
  const auto run = [&](const TrainerState* resume, std::vector<TrainerState>* saved) {
    Poisson1d p;
    Objective obj = p.objective(PrecisionPolicy::fp32);
    obj.set_inputs(p.inputs());
    Trainer trainer(obj, stages, {.initial = {1.0, 10.0}});
    if (saved) trainer.checkpoint_every(5, [&](const TrainerState& s) { saved->push_back(s); });
    Eigen::VectorXd theta = obj.layout().flatten(p.net.init(5));
    const TrainResult r = trainer.train(theta, resume);
    EXPECT_EQ(r.status, TrainResult::Status::finished) << r.message;
    return std::pair{theta, r};
  };
  std::vector<TrainerState> saved;
  const auto [full, full_result] = run(nullptr, &saved);
  ASSERT_EQ(full_result.steps, 50) << full_result.message;
  for (const int at : {25, 35, 45}) {
    const TrainerState* state = nullptr;
    for (const TrainerState& s : saved)
      if (s.step == at) state = &s;
    ASSERT_NE(state, nullptr) << "no checkpoint at step " << at;
    EXPECT_EQ(state->stage, at < 30 ? 1 : 2);
    const auto [resumed, r] = run(state, nullptr);
    EXPECT_EQ(r.message, full_result.message);
    EXPECT_TRUE(resumed == full) << "from step " << at << ": max difference "
                                 << (resumed - full).cwiseAbs().maxCoeff();
  }
}

// precision: auto standing for 16-bit operands (what it resolves to on a CPU with AMX, set here
// by auto_as so that the check runs on every machine; layers 32 wide, so that bf16_wgrad rounds
// their weight gradients): the trainer compares the loss and gradient
// with fp32's every `every` steps of an Adam stage and goes on in fp32 for good once they drift
// past the tolerance; an L-BFGS stage runs in fp32; a resumed run keeps the switch.
class AutoStandingFor : public ::testing::TestWithParam<PrecisionPolicy> {};

TEST_P(AutoStandingFor, IsCheckedAgainstFp32AndGoesToFp32WhenItDrifts) {
  const PrecisionPolicy auto_as = GetParam();
  const std::vector<Stage> stages{
      {.name = "adam", .steps = 30, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
      {.name = "lbfgs", .optimizer = "lbfgs", .steps = 5}};
  struct Run {
    TrainResult result;
    std::vector<PrecisionPolicy> precisions;  // of each step
    std::vector<std::string> notes;
    std::vector<TrainerState> saved;
  };
  const auto run = [&](double tolerance, const TrainerState* resume) {
    Poisson1d p(32);
    Objective obj = p.objective(PrecisionPolicy::automatic, auto_as);
    EXPECT_EQ(obj.resolved(PrecisionPolicy::automatic), auto_as);
    obj.set_inputs(p.inputs());
    Trainer trainer(obj, stages);
    Run r;
    trainer.check_precision({.every = 10, .tolerance = tolerance},
                            [&r](const std::string& line) { r.notes.push_back(line); });
    trainer.on_step([&](const StepInfo&) {
      r.precisions.push_back(obj.precision());
      return true;
    });
    trainer.checkpoint_every(20, [&r](const TrainerState& s) { r.saved.push_back(s); });
    Eigen::VectorXd theta = obj.layout().flatten(p.net.init(3));
    r.result = trainer.train(theta, resume);
    return r;
  };
  using P = PrecisionPolicy;
  // A tolerance nothing reaches: checks at steps 10 and 20, 16-bit a little off fp32, no switch;
  // the Adam steps in auto, the L-BFGS ones in fp32.
  const Run kept = run(1e9, nullptr);
  ASSERT_EQ(kept.result.precision_checks.size(), 2u);
  EXPECT_EQ(kept.result.precision_checks[0].first, 10);
  EXPECT_EQ(kept.result.precision_checks[1].first, 20);
  for (const auto& [step, drift] : kept.result.precision_checks) {
    EXPECT_GT(drift, 1e-6) << "step " << step;  // 16-bit operands: not fp32's numbers
    EXPECT_LT(drift, 0.5) << "step " << step;
  }
  EXPECT_EQ(kept.result.precision_switched_at, -1);
  EXPECT_TRUE(kept.notes.empty());
  ASSERT_EQ(kept.precisions.size(), 35u);
  EXPECT_EQ(kept.precisions[29], P::automatic);
  EXPECT_EQ(kept.precisions[30], P::fp32);  // L-BFGS
  // Tolerance 0: the first check switches; every later step is fp32, and the log says so.
  const Run switched = run(0.0, nullptr);
  EXPECT_EQ(switched.result.precision_switched_at, 10);
  ASSERT_EQ(switched.result.precision_checks.size(), 1u);
  ASSERT_EQ(switched.notes.size(), 1u);
  EXPECT_EQ(
      switched.notes[0].rfind(
          "precision auto: " + compiler::precision_name(auto_as) + " differs from fp32 by ", 0),
      0u)
      << switched.notes[0];
  EXPECT_NE(switched.notes[0].find(" at step 10 (tolerance 0); the run goes on in fp32"),
            std::string::npos)
      << switched.notes[0];
  ASSERT_EQ(switched.precisions.size(), 35u);
  EXPECT_EQ(switched.precisions[9], P::automatic);
  for (std::size_t k = 10; k < 30; ++k) EXPECT_EQ(switched.precisions[k], P::fp32) << k;
  // Resumed from step 20, after the switch: fp32 from its first step, no check left to make.
  ASSERT_FALSE(switched.saved.empty());
  EXPECT_EQ(switched.saved[0].step, 20);
  EXPECT_EQ(switched.saved[0].precision_switched_at, 10);
  const Run resumed = run(0.0, &switched.saved[0]);
  EXPECT_EQ(resumed.result.precision_switched_at, 10);
  EXPECT_TRUE(resumed.result.precision_checks.empty());
  ASSERT_FALSE(resumed.precisions.empty());
  EXPECT_EQ(resumed.precisions[0], P::fp32);
}

INSTANTIATE_TEST_SUITE_P(Precisions, AutoStandingFor,
                         ::testing::Values(PrecisionPolicy::bf16_wgrad, PrecisionPolicy::bf16),
                         [](const auto& info) { return compiler::precision_name(info.param); });

}  // namespace
}  // namespace jetpde::solvers
