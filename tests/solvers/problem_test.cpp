// Problems declared as mathematics, assembled and trained with small budgets: Poisson 2-D with
// Dirichlet conditions, a periodic problem with matched derivatives, Neumann and Robin conditions
// against an exact solution, an inverse problem with data and a trainable constant, Burgers'
// initial condition; adaptive sampling; and every assembly error with its message.
#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <numbers>
#include <set>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/time_product.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;
using Kind = Condition::Kind;
constexpr double kPi = std::numbers::pi;

std::vector<Stage> stages(int adam, int lbfgs, double lr = 1e-2) {
  return {{.name = "adam", .steps = adam, .options = nn::AdamOptions{.schedule = {.lr = lr}}},
          {.name = "lbfgs",
           .optimizer = "lbfgs",
           .steps = lbfgs,
           .options = nn::LbfgsOptions{.gradient_tolerance = 1e-10, .function_tolerance = 0}}};
}

MatrixD grid2d(int n, double a, double b) {
  MatrixD p(n * n, 2);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      p.row(i * n + j) << a + (b - a) * i / (n - 1), a + (b - a) * j / (n - 1);
  return p;
}

// Laplace's equation on the unit square, 16 points, a 4-wide network: for assembly checks.
ProblemSpec tiny_square_spec() {
  ProblemSpec base;
  base.math.domain = geometry::rectangle({0, 0}, {1, 1});
  base.math.context.fields({"u"}).coordinates({"x", "y"});
  base.math.equations = {"laplacian(u)"};
  base.pinn.interior_points = 16;
  base.pinn.network.hidden = {4};
  return base;
}

double rel_l2(const MatrixD& a, const MatrixD& b) {
  return (a - b).matrix().norm() / b.matrix().norm();
}

TEST(Problem, PoissonOnTheUnitSquareWithDirichletConditions) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"-laplacian(u) = 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.pinn.interior_points = 256;
  spec.math.conditions = {{.kind = Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 128, .weight = 10}};
  spec.pinn.network.hidden = {20, 20};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(), (std::vector<std::string>{"pde", "dirichlet_u"}));
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(), stages(500, 1500));
  EXPECT_EQ(p.objective().weights(), (std::vector<double>{1.0, 10.0}));  // the condition's weight
  const TrainResult r = t.train(theta);
  EXPECT_EQ(t.history().front().weights, (std::vector<double>{1.0, 10.0})) << "kept by the trainer";
  const MatrixD at = grid2d(21, 0, 1);
  const MatrixD exact = (at.col(0) * kPi).sin() * (at.col(1) * kPi).sin();
  const double err = rel_l2(p.evaluate(theta, at), exact);
  std::cout << "  poisson2d: rel_l2 " << err << "; " << r.message << "\n";
  EXPECT_LT(err, 1e-2);
}

// Expressions of an untrained network at points: a field is evaluate()'s column, a derivative
// matches central differences of evaluate(), the residual is its expression, a constant broadcasts.
TEST(Problem, EvaluateExpressionsMatchesFieldsAndDifferences) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"-laplacian(u) - 1"};
  spec.pinn.interior_points = 16;
  spec.pinn.network.hidden = {8, 8};
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec);
  const Eigen::VectorXd theta = p.initial_theta(4);
  const MatrixD at = grid2d(3, 0.2, 0.8);
  const MatrixD e = p.evaluate_expressions(theta, at, {"u", "u_x", "-laplacian(u) - 1", "2*pi"});
  ASSERT_EQ(e.cols(), 4);
  EXPECT_LT((e.col(0) - p.evaluate(theta, at).col(0)).abs().maxCoeff(), 1e-14);
  const double h = 1e-5;
  MatrixD plus = at, minus = at;
  plus.col(0) += h;
  minus.col(0) -= h;
  const MatrixD fd = (p.evaluate(theta, plus) - p.evaluate(theta, minus)) / (2 * h);
  EXPECT_LT((e.col(1) - fd.col(0)).abs().maxCoeff(), 1e-8);
  const MatrixD again = p.evaluate_expressions(theta, at, {"u_xx + u_yy"});
  EXPECT_LT((e.col(2) + again.col(0) + 1.0).abs().maxCoeff(), 1e-12);
  EXPECT_TRUE((e.col(3) == 2 * kPi).all());
  expect_user_error([&] { p.evaluate_expressions(theta, MatrixD(2, 3), {"u"}); },
                    "problem: evaluate wants points with 2 columns (x, y), got 3");
}

// Evaluation builds its programs on graphs of their own, kept in one bounded cache: validating
// at many point counts leaves the training graph as it was and the cache at its bound, and a
// program built again after it was dropped gives the same values.
TEST(Problem, EvaluatorsKeepTheTrainingGraphAndABoundedCache) {
  ProblemSpec spec = tiny_square_spec();
  spec.math.context.param("a", 0.5);
  spec.math.equations = {"laplacian(u) - a"};
  spec.math.conditions = {{.kind = Kind::neumann, .value = "1"}};
  spec.pinn.conditions = {{.points = 8}};
  spec.pinn.hard_constraints = {{.field = "u", .on = "left"}};
  Problem p(spec);
  const std::size_t nodes = p.graph().size();
  const Eigen::VectorXd theta = p.initial_theta(1);
  const MatrixD first = grid2d(3, 0.1, 0.9);
  const MatrixD u = p.evaluate(theta, first);
  const MatrixD e = p.evaluate_expressions(theta, first, {"u_x", "laplacian(u) - a"});
  for (int n = 2; n < 42; ++n) {
    const MatrixD at = MatrixD::Constant(n, 2, 0.5);
    EXPECT_EQ(p.evaluate(theta, at).rows(), n);
    EXPECT_EQ(p.evaluate_expressions(theta, at, {"u_y"}).rows(), n);
    EXPECT_LE(p.cached_programs(), Problem::kCachedPrograms);
  }
  EXPECT_EQ(p.cached_programs(), Problem::kCachedPrograms);
  p.adaptive_interior(theta, 40, 1);
  p.adaptive_interior(theta, 50, 2);  // another candidate count: another program
  EXPECT_EQ(p.graph().size(), nodes) << "evaluation added nodes to the training graph";
  EXPECT_TRUE((p.evaluate(theta, first) == u).all());
  EXPECT_TRUE((p.evaluate_expressions(theta, first, {"u_x", "laplacian(u) - a"}) == e).all());
  // The hard constraint holds on the evaluators' graphs too: u = 0 on the left face.
  MatrixD left(2, 2);
  left << 0, 0.3, 0, 0.8;
  EXPECT_TRUE((p.evaluate(theta, left) == 0.0).all());
}

TEST(Problem, PeriodicConditionsMatchTheFieldAndItsDerivative) {
  // -u_xx = 4 pi^2 sin(2 pi x) on (0, 1), u and u_x periodic, u(1/4) = 1: u = sin(2 pi x).
  ProblemSpec spec;
  spec.math.domain = geometry::interval(0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"});
  spec.math.equations = {"-u_xx - 4*pi^2*sin(2*pi*x)"};
  spec.pinn.interior_points = 64;
  MatrixD quarter(1, 1), one(1, 1);
  quarter << 0.25;
  one << 1.0;
  spec.math.conditions = {{.kind = Kind::periodic, .coordinate = "x", .derivatives = 1},
                          {.kind = Kind::data, .data_points = quarter, .data_values = one}};
  spec.pinn.conditions = {{.points = 1}, {}};
  spec.pinn.network.hidden = {16, 16};
  Problem p(spec);
  EXPECT_EQ(p.objective().terms()[1].residual.shape(), (Shape{1, 2}));  // u and u_x
  Eigen::VectorXd theta = p.initial_theta(1);
  Trainer(p.objective(), stages(300, 300)).train(theta);
  MatrixD x(101, 1);
  for (int i = 0; i <= 100; ++i) x(i, 0) = i / 100.0;
  const double err = rel_l2(p.evaluate(theta, x), (x * (2 * kPi)).sin());
  std::cout << "  periodic: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

// A periodic condition on a coordinate the network is exactly periodic in holds by construction:
// its loss does not depend on the parameters, so the term is off (weight 0). It stays on where the
// network is not periodic in that coordinate, where the period does not fit the domain, and for a
// field under a hard constraint whose distance is not one of time alone.
TEST(Problem, APeriodicConditionThePeriodicNetworkHoldsIsOff) {
  const auto spec = [](double period, std::vector<HardConstraint> hard) {
    ProblemSpec s;
    s.math.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
    s.math.context.fields({"u"}).coordinates({"x"}).time("t");
    s.math.equations = {"u_t - 0.01*u_xx"};
    s.math.conditions = {{.kind = Kind::periodic, .coordinate = "x", .derivatives = 1},
                         {.kind = Kind::initial_value, .value = "x^2*cos(pi*x)"}};
    s.pinn.interior_points = 32;
    s.pinn.conditions = {{.points = 8}, {.points = 8}};
    s.pinn.network.hidden = {8};
    if (period > 0) s.pinn.network.periodic = {{.column = 0, .period = period}};
    s.pinn.hard_constraints = std::move(hard);
    return s;
  };
  const auto weights = [](const ProblemSpec& s) {
    Problem p(s);
    EXPECT_EQ(p.by_construction(0), p.objective().weights()[1] == 0.0);
    return p.objective().weights();
  };
  EXPECT_EQ(weights(spec(2, {})), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(weights(spec(1, {})), (std::vector<double>{1, 0, 1})) << "two periods fit [-1, 1]";
  EXPECT_EQ(weights(spec(0, {})), (std::vector<double>{1, 1, 1})) << "not a periodic network";
  EXPECT_EQ(weights(spec(3, {})), (std::vector<double>{1, 1, 1})) << "the period does not fit";
  EXPECT_EQ(weights(spec(2, {{.value = "x^2*cos(pi*x)", .on = "initial"}})),
            (std::vector<double>{1, 0, 1}))
      << "u = g + t N: what g breaks, no parameter mends";
  // An input periodic in value only (slope_jump) holds the values, not the slope.
  ProblemSpec jump = spec(2, {{.value = "x^2*cos(pi*x)", .on = "initial"}});
  jump.pinn.network.periodic[0].slope_jump = true;
  jump.pinn.network.periodic[0].seam = -1;
  EXPECT_EQ(weights(jump), (std::vector<double>{1, 1, 1})) << "derivatives: 1";
  jump.math.conditions[0].derivatives = 0;
  EXPECT_EQ(weights(jump), (std::vector<double>{1, 0, 1})) << "derivatives: 0";
  EXPECT_EQ(weights(spec(2, {{.value = "0", .distance = "1 - x^2"}})),
            (std::vector<double>{1, 1, 1}))
      << "u = g + (1 - x^2) N: the parameters move its derivative's jump";
  // The claim itself: on the periodic network the term's loss is rounding at any parameters,
  // where a plain network's is not.
  const auto periodic_loss = [&](double period, std::uint64_t seed) {
    Problem p(spec(period, {}));
    p.objective().evaluate(p.initial_theta(seed));
    return p.objective().slot_losses()[1];
  };
  EXPECT_LT(periodic_loss(2, 0), 1e-10);
  EXPECT_LT(periodic_loss(2, 7), 1e-10);
  EXPECT_GT(periodic_loss(0, 0), 1e-6);
}

TEST(Problem, NeumannAndRobinConditionsOnADisk) {
  // u = x^2 + y^2 on the unit disk: laplacian u = 4; on the circle du/dn = 2r = 2, and
  // u + du/dn = 3. One half of the circle takes Neumann, the other Robin, with u(0,0) = 0 as data.
  ProblemSpec spec;
  spec.math.domain = geometry::disk({0, 0}, 1);
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u) - 4"};
  spec.pinn.interior_points = 256;
  MatrixD origin = MatrixD::Zero(1, 2), zero = MatrixD::Zero(1, 1);
  spec.math.conditions = {
      {.kind = Kind::neumann, .on = "x < 0", .value = "2"},
      {.kind = Kind::robin, .on = "x >= 0", .value = "3", .alpha = 1, .beta = 1},
      {.kind = Kind::data, .data_points = origin, .data_values = zero}};
  spec.pinn.conditions = {{.points = 64}, {.points = 64}, {}};
  spec.pinn.network.hidden = {20, 20};
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(),
            (std::vector<std::string>{"pde", "neumann_u", "robin_u", "data_u"}));
  Eigen::VectorXd theta = p.initial_theta(2);
  Trainer(p.objective(), stages(300, 400)).train(theta);
  MatrixD at = grid2d(15, -0.7, 0.7);
  const double err = rel_l2(p.evaluate(theta, at), at.col(0).square() + at.col(1).square());
  std::cout << "  neumann/robin: rel_l2 " << err << "\n";
  EXPECT_LT(err, 2e-2);
}

TEST(Problem, AnInverseProblemRecoversATrainableConstant) {
  // u_x = a u with data from u = exp(0.7 x): a -> 0.7.
  ProblemSpec spec;
  spec.math.domain = geometry::interval(0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"}).param("a", 0.2);
  spec.math.equations = {"u_x - a*u"};
  spec.pinn.interior_points = 64;
  Condition data{.kind = Kind::data};
  data.data_points = MatrixD(40, 1);
  for (int i = 0; i < 40; ++i) data.data_points(i, 0) = (i + 0.5) / 40;
  data.data_values = (data.data_points * 0.7).exp();
  spec.math.conditions = {data};
  spec.pinn.network.hidden = {16, 16};
  Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(3);
  EXPECT_DOUBLE_EQ(p.param(theta, "a"), 0.2);
  Trainer(p.objective(), stages(500, 300)).train(theta);
  std::cout << "  inverse: a = " << p.param(theta, "a") << "\n";
  EXPECT_NEAR(p.param(theta, "a"), 0.7, 0.007);  // 1%
  expect_user_error([&] { p.param(theta, "b"); },
                    "problem: no trainable constant 'b' (trainable: a)");
}

// Burgers with u0 = -sin(pi x), u = 0 on x = +-1, in 4 causal chunks.
ProblemSpec burgers_spec(int interior, int initial, int boundary, std::vector<int> hidden) {
  ProblemSpec spec;
  spec.math.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / kPi);
  spec.math.equations = {"u_t + u*u_x - nu*u_xx"};
  spec.pinn.interior_points = interior;
  spec.pinn.time_chunks = 4;
  spec.math.conditions = {{.kind = Kind::initial_value, .value = "-sin(pi*x)"},
                          {.kind = Kind::dirichlet, .on = "spatial", .value = "0"}};
  spec.pinn.conditions = {{.points = initial}, {.points = boundary}};
  spec.pinn.network.hidden = std::move(hidden);
  return spec;
}

TEST(Problem, BurgersAssemblesItsInitialConditionAndTimeChunks) {
  const ProblemSpec spec = burgers_spec(400, 100, 100, {16, 16});
  Problem p(spec);
  EXPECT_EQ(p.objective().slots(), 4 + 2);
  Eigen::VectorXd theta = p.initial_theta(4);
  const double before = p.objective().evaluate(theta);
  Trainer(p.objective(), stages(200, 1), {.causal_epsilon = 1.0}).train(theta);
  EXPECT_LT(p.objective().evaluate(theta), 0.5 * before);
  // Initial points lie on t = 0; interior points are ordered by time.
  const Bindings fresh = p.resample(9);
  EXPECT_EQ(fresh.at("condition0").col(1).abs().maxCoeff(), 0.0);
  const MatrixD& interior = fresh.at("interior");
  for (Eigen::Index i = 1; i < interior.rows(); ++i) ASSERT_LE(interior(i - 1, 1), interior(i, 1));
  // Adaptive sampling picks points where the residual is larger.
  const Bindings rad = p.adaptive_interior(theta, 4000, 5, 2.0, 0.0);
  EXPECT_EQ(rad.at("interior").rows(), 400);
  const MatrixD& picked = rad.at("interior");
  for (Eigen::Index i = 1; i < picked.rows(); ++i) ASSERT_LE(picked(i - 1, 1), picked(i, 1));
}

// memory_budget: Burgers' training programs (the step, and the per-term gradients grad-norm
// uses) planned over all the points; under a third of that the step runs in the fewest batches
// that fit, its arena as compiled within the budget, with the loss, the gradient and a few
// trained steps of the problem in one batch. A budget no batching reaches, and batches that do
// not divide the points, are refused with the numbers.
// Under a memory budget, points are evaluated in blocks whose programs fit what the budget leaves
// beside the training programs: the same values as at once, from a program per block size (here
// 20,000 points: four blocks of 4096 and one of 3616), and adaptive sampling's candidates too.
TEST(Problem, UnderABudgetPointsAreEvaluatedInBlocks) {
  ProblemSpec spec = burgers_spec(512, 128, 64, {32, 32});
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  spec.pinn.memory.budget = std::int64_t{1} << 40;
  Problem whole(spec);
  // Just the training programs' plan: a quarter of it is left for an evaluation, far less than
  // 20,000 points take.
  spec.pinn.memory.budget = whole.memory().whole_bytes;
  Problem blocked(spec);
  ASSERT_EQ(blocked.memory().batches, 1);
  const Eigen::VectorXd theta = whole.initial_theta(4);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  MatrixD points(20000, 2);
  for (Eigen::Index i = 0; i < points.rows(); ++i) points.row(i) << 2 * u(rng) - 1, u(rng);
  const auto close = [](const MatrixD& a, const MatrixD& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a - b).abs().maxCoeff() <= 1e-12 * b.abs().maxCoeff();
  };
  EXPECT_TRUE(close(blocked.evaluate(theta, points), whole.evaluate(theta, points)));
  EXPECT_EQ(whole.cached_programs(), 1u);
  EXPECT_EQ(blocked.cached_programs(), 2u) << "4096 rows and 3616";
  const std::vector<std::string> expressions{"u_t + u*u_x - nu*u_xx", "u_x", "2"};
  const MatrixD r = blocked.evaluate_expressions(theta, points, expressions);
  EXPECT_TRUE(close(r, whole.evaluate_expressions(theta, points, expressions)));
  EXPECT_EQ(r.cols(), 3);
  EXPECT_EQ(r(19999, 2), 2.0);
  // Fewer points than a block: one program of their count.
  EXPECT_TRUE(close(blocked.evaluate(theta, points.topRows(100)),
                    whole.evaluate(theta, points.topRows(100))));
  // RAD's candidates: the same residuals, so the same draw.
  const Bindings a = whole.adaptive_interior(theta, 20000, 8);
  const Bindings b = blocked.adaptive_interior(theta, 20000, 8);
  EXPECT_TRUE(close(b.at("interior"), a.at("interior")));
}

TEST(Problem, AMemoryBudgetRunsTheStepInBatches) {
  ProblemSpec spec = burgers_spec(512, 128, 64, {32, 32});
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  spec.pinn.memory.term_gradients = true;
  // No tiles: a plan under a budget runs whole, and tiles would move the last bits of row sums.
  spec.compile.cpu.tile_rows = -1;
  Problem whole(spec);  // the default budget: half the memory free
  const Problem::MemoryReport& all = whole.memory();
  EXPECT_EQ(all.batches, 1);
  EXPECT_GT(all.budget, 0);
  EXPECT_GT(all.whole_bytes, whole.objective().executable().stats().arena_bytes);  // + gradients
  EXPECT_EQ(all.planned_bytes, all.whole_bytes);
  // Just under the plan: values of the backward pass computed again, one batch, the same numbers
  // bit for bit.
  spec.pinn.memory.budget = all.whole_bytes * 97 / 100;
  Problem recomputing(spec);
  EXPECT_LT(recomputing.memory().fraction, 1.0);
  EXPECT_EQ(recomputing.memory().batches, 1);
  EXPECT_LE(recomputing.memory().planned_bytes, spec.pinn.memory.budget);
  EXPECT_GT(recomputing.objective().executable().stats().recomputed, 0);
  {
    const Eigen::VectorXd theta = whole.initial_theta(4);
    Eigen::VectorXd g1, gr;
    EXPECT_EQ(recomputing.objective().evaluate(theta, &gr), whole.objective().evaluate(theta, &g1));
    EXPECT_EQ(gr, g1);
  }
  // A third: batches.
  spec.pinn.memory.budget = all.whole_bytes / 3;
  Problem batched(spec);
  const Problem::MemoryReport& m = batched.memory();
  EXPECT_GE(m.batches, 4);
  EXPECT_LE(m.planned_bytes, m.budget);
  EXPECT_EQ(m.whole_bytes, all.whole_bytes);
  EXPECT_EQ(batched.objective().batches(), m.batches);
  EXPECT_LE(batched.objective().executable().stats().arena_bytes, m.budget);
  EXPECT_EQ(batched.objective().rows(0), 512);
  Eigen::VectorXd theta = whole.initial_theta(4);
  Eigen::VectorXd g1, gb;
  const double l1 = whole.objective().evaluate(theta, &g1);
  EXPECT_NEAR(batched.objective().evaluate(theta, &gb), l1, 1e-12 * l1);
  EXPECT_LT((gb - g1).norm(), 1e-12 * g1.norm());
  Eigen::VectorXd t1 = theta, tb = theta;
  const Weighting gradnorm{.kind = Weighting::Kind::gradnorm, .every = 2};
  const std::vector<Stage> adam{
      {.name = "adam", .steps = 4, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}}};
  Trainer(whole.objective(), adam, gradnorm).train(t1);
  Trainer(batched.objective(), adam, gradnorm).train(tb);
  EXPECT_LT((tb - t1).norm(), 1e-9 * t1.norm());
  // Points drawn anew are bound in batches too.
  whole.objective().set_inputs(whole.resample(3));
  batched.objective().set_inputs(batched.resample(3));
  EXPECT_NEAR(batched.objective().evaluate(t1), whole.objective().evaluate(t1), 1e-9 * l1);
  spec.pinn.memory.budget = 1000;
  std::string error;
  try {
    Problem p(spec);
  } catch (const UserError& e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("memory_budget: the training programs need ", 0), 0u) << error;
  EXPECT_NE(error.find(" at 512 interior points, more than the budget of "), std::string::npos)
      << error;
  EXPECT_NE(error.find("; in 64 batches of 8 interior points (the most that divide every point "
                       "set) still "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(" with values of the backward pass computed again): give fewer points"),
            std::string::npos)
      << error;
  spec.pinn.memory.batches = 3;
  expect_user_error([&] { Problem p(spec); },
                    "memory: 3 batches do not divide every point set (512 interior points; the "
                    "counts have 64 as their greatest common divisor, a causal chunk's included)");
}

// A budget below what the most batches need: each batch computes values of its backward pass
// again (recomputation and batches together), within the budget, with the loss and gradient of
// the whole step.
TEST(Problem, BelowTheMostBatchesEachBatchRecomputes) {
  ProblemSpec spec = burgers_spec(2048, 8, 8, {32, 32, 32, 32});
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  // No tiles: a tiled step keeps most of its values in the tile scratch, not the arena, so that
  // recomputing (whole steps, every value in the arena) would not get below its arena.
  spec.compile.cpu.tile_rows = -1;
  Problem whole(spec);
  spec.pinn.memory.batches = 8;  // the most that divide every point set
  const std::int64_t most = Problem(spec).objective().executable().stats().arena_bytes;
  spec.pinn.memory.batches = 0;
  spec.pinn.memory.budget = most * 9 / 10;
  Problem both(spec);
  const Problem::MemoryReport& m = both.memory();
  EXPECT_EQ(m.batches, 8);
  EXPECT_LT(m.fraction, 1.0);
  EXPECT_LE(m.planned_bytes, m.budget);
  EXPECT_LE(both.objective().executable().stats().arena_bytes, m.budget);
  EXPECT_GT(both.objective().executable().stats().recomputed, 0);
  const Eigen::VectorXd theta = whole.initial_theta(4);
  Eigen::VectorXd g1, gb;
  const double l1 = whole.objective().evaluate(theta, &g1);
  EXPECT_NEAR(both.objective().evaluate(theta, &gb), l1, 1e-12 * l1);
  EXPECT_LT((gb - g1).norm(), 1e-12 * g1.norm());
}

TEST(Problem, HardConstraintsHoldExactlyAndTrain) {
  // Burgers-like setup: u = -sin(pi x) + t (x + 1)(1 - x) N, exact on the initial and spatial
  // boundary before any training; and Poisson 2-D with the whole boundary built in.
  {
    ProblemSpec spec;
    spec.math.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
    spec.math.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / kPi);
    spec.math.equations = {"u_t + u*u_x - nu*u_xx"};
    spec.pinn.interior_points = 64;
    spec.pinn.hard_constraints = {{.field = "u", .value = "-sin(pi*x)", .on = "initial, spatial"}};
    spec.pinn.network.hidden = {8};
    Problem p(spec);
    const Eigen::VectorXd theta = p.initial_theta(5);
    MatrixD edge(6, 2);
    edge << -0.3, 0.0, 0.7, 0.0, -1.0, 0.4, 1.0, 0.9, -1.0, 0.0, 0.2, 0.0;
    const MatrixD u = p.evaluate(theta, edge);
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(u(i, 0), -std::sin(kPi * edge(i, 0)), 1e-6) << i;  // f32 evaluation
  }
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"-laplacian(u) = 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.pinn.interior_points = 256;
  spec.pinn.hard_constraints = {{.field = "u"}};
  spec.pinn.network.hidden = {20, 20};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(), (std::vector<std::string>{"pde"}));
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer(p.objective(), stages(300, 700)).train(theta);
  const MatrixD at = grid2d(21, 0, 1);
  const MatrixD exact = (at.col(0) * kPi).sin() * (at.col(1) * kPi).sin();
  const double err = rel_l2(p.evaluate(theta, at), exact);
  std::cout << "  poisson2d, hard boundary: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
  {
    ProblemSpec bad = spec;
    bad.math.domain =
        geometry::subtract(geometry::rectangle({0, 0}, {1, 1}), geometry::disk({0.5, 0.5}, 0.2));
    expect_user_error(
        [&] { Problem{bad}; },
        "hard constraint 1 on 'u': no automatic distance on " + bad.math.domain->describe() +
            " (boxes, time products of boxes, disks, spheres and STL parts have one): give "
            "`distance`");
    bad = spec;
    bad.pinn.hard_constraints = {{.field = "u", .value = "u_x"}};
    EXPECT_THROW(Problem{bad}, UserError);
  }
}

TEST(Problem, AssemblyErrorsNameTheCondition) {
  const ProblemSpec base = tiny_square_spec();
  {
    ProblemSpec s = base;
    s.math.context = equations::Context();
    s.math.context.fields({"u"}).coordinates({"x", "z"});
    expect_user_error([&] { Problem{s}; },
                      "problem: the equations' coordinates (x, z) differ from the domain's (x, y, "
                      "rectangle [0, 1] x [0, 1])");
  }
  {
    ProblemSpec s = base;
    s.math.conditions = {{.kind = Kind::dirichlet, .field = "v"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (dirichlet): unknown field 'v' (fields: u)");
  }
  {
    ProblemSpec s = base;
    s.math.conditions = {{.kind = Kind::initial_value, .name = "ic"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (initial_value 'ic'): an initial condition needs a time "
                      "coordinate");
  }
  {
    ProblemSpec s = base;
    s.math.domain = geometry::disk({0, 0}, 1);
    s.math.conditions = {{.kind = Kind::periodic, .coordinate = "x"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (periodic): periodic conditions need an axis-aligned box "
                      "domain, not disk (center (0, 0), radius 1)");
  }
  {
    ProblemSpec s = base;
    s.math.conditions = {{.kind = Kind::dirichlet, .on = "x == 5"}};
    try {
      Problem{s};
      ADD_FAILURE() << "no error for an empty piece";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 (dirichlet): ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("x == 5"), std::string::npos) << e.what();
    }
  }
  {
    ProblemSpec s = base;
    s.math.conditions = {{.kind = Kind::neumann, .value = "w"}};
    try {
      Problem{s};
      ADD_FAILURE() << "no error for an unknown name in a value";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 ('neumann_u'): in '", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
    }
  }
}

// The kinds' table: one record per kind, found by its name; the kinds whose points come from a
// piece are those that take fixed points.
TEST(Problem, ConditionKindsAreOneTable) {
  std::set<std::string> names;
  for (const ConditionKind& k : condition_kinds()) {
    EXPECT_EQ(condition_kind_from_name(k.name), k.kind);
    EXPECT_EQ(&condition_kind(k.kind), &k);
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_NE(k.residual, nullptr) << k.name;
  }
  EXPECT_EQ(names.size(), 8u);
  expect_user_error([] { condition_kind_from_name("dirichlett"); },
                    "unknown condition 'dirichlett' (known: dirichlet, neumann, robin, periodic, "
                    "initial_value, initial_rate, data, residual)");
  ProblemSpec s = tiny_square_spec();
  s.math.conditions = {{.kind = Kind::dirichlet}};
  s.pinn.conditions = {{}, {}};
  expect_user_error([&] { Problem{s}; },
                    "problem: 2 condition options (points, weight) for 1 conditions");
}

// Pure Neumann data fix u only up to a constant; one fixed point (a corner) pins it. Exact:
// u = x + y on the unit square, so du/dn = n_x + n_y, and u(0, 0) = 0.
TEST(Problem, APointConditionPinsTheConstantOfANeumannProblem) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = 128;
  MatrixD corner(1, 2);
  corner << 0, 0;
  MatrixD sides(2, 2);
  sides << 1, 0.5, 0.5, 1;  // on the faces x = 1 and y = 1: du/dn = 1 there
  spec.math.conditions = {{.kind = Kind::neumann, .name = "upper", .value = "1"},
                          {.kind = Kind::dirichlet, .name = "pin", .value = "0", .at = corner},
                          {.kind = Kind::neumann, .name = "two", .value = "1", .at = sides}};
  spec.math.conditions[0].on = "x == 1 or y == 1";
  spec.math.conditions.push_back({.kind = Kind::neumann, .on = "x == 0 or y == 0", .value = "-1"});
  spec.pinn.conditions = {{.points = 128}, {}, {}, {.points = 128}};
  spec.pinn.network.hidden = {16};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  // The fixed points are bound as given, with the domain's outward normals, and kept when the
  // other point sets are drawn again.
  EXPECT_EQ(p.objective().inputs().at("condition1").rows(), 1);
  const Bindings again = p.resample(5);
  EXPECT_TRUE((again.at("condition1") == corner).all());
  EXPECT_TRUE((again.at("condition2") == sides).all());
  MatrixD normals(2, 2);
  normals << 1, 0, 0, 1;
  EXPECT_TRUE((again.at("condition2_normals") == normals).all());
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(), stages(300, 500));
  t.train(theta);
  MatrixD probe(3, 2);
  probe << 0, 0, 1, 1, 0.3, 0.6;
  const MatrixD u = p.evaluate(theta, probe);
  EXPECT_NEAR(u(0, 0), 0.0, 1e-2);
  EXPECT_NEAR(u(1, 0), 2.0, 1e-2);
  EXPECT_NEAR(u(2, 0), 0.9, 1e-2);
}

TEST(Problem, PointConditionErrors) {
  const ProblemSpec base = tiny_square_spec();
  const auto points = [](std::initializer_list<std::initializer_list<double>> rows) {
    MatrixD m(static_cast<Eigen::Index>(rows.size()),
              static_cast<Eigen::Index>(rows.begin()->size()));
    Eigen::Index i = 0;
    for (const auto& r : rows) {
      Eigen::Index j = 0;
      for (double v : r) m(i, j++) = v;
      ++i;
    }
    return m;
  };
  const auto with = [&](Condition c) {
    ProblemSpec s = base;
    s.math.conditions = {std::move(c)};
    return s;
  };
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .at = points({{0, 0, 0}})})};
      },
      "condition 1 (dirichlet): the points `at` have 3 coordinates, the domain has 2 (x, y)");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .on = "left", .at = points({{0, 0}})})};
      },
      "condition 1 (dirichlet): give either `on` (a boundary piece) or `at` (points), not both");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .at = points({{0, 0}, {0.5, 1.5}})})};
      },
      "condition 1 (dirichlet): point 2 (0.5, 1.5) lies outside the domain's bounds: y must be in "
      "[0, 1]");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::periodic, .at = points({{0, 0}})})};
      },
      "condition 1 (periodic): `at` (fixed points) is for dirichlet, neumann, robin "
      "and residual conditions, not periodic");
  {
    ProblemSpec s = with({.kind = Kind::dirichlet, .at = points({{0.05, 0.05}})});
    s.math.domain =
        geometry::subtract(geometry::rectangle({0, 0}, {1, 1}), geometry::disk({0, 0}, 0.2));
    try {
      Problem{s};
      ADD_FAILURE() << "no error for a point in the hole";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 (dirichlet): point 1 (0.05, 0.05) lies "
                                            "outside difference(",
                                            0),
                0u)
          << e.what();
    }
  }
  // A corner asked for as a piece has measure zero: the message points at `at`.
  try {
    Problem{with({.kind = Kind::dirichlet, .on = "x == 0 and y == 0"})};
    ADD_FAILURE() << "no error for a corner piece";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("condition 1 (dirichlet): boundary piece 'x == 0 and y == 0' of rectangle"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("is empty"), std::string::npos) << what;
    EXPECT_NE(what.find("give the points as `at: [[x, y], ...]` instead of `on`"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace jetpde::solvers
