// Domain decomposition (solvers/model.h): the FBPINN windows form a partition of unity whose
// Taylor-mode derivatives match finite differences; a point's fields use only the networks of
// the boxes covering it (the others' parameters get zero gradient from it); points are grouped
// by region and evaluation gives them back in the caller's order; resampling keeps the graph's
// layout; a small decomposed problem trains to a stated error; the decomposition's errors.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <numbers>
#include <random>
#include <thread>

#include "autodiff/grad.h"
#include "autodiff/ops.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/time_product.h"
#include "solvers/model.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"
#include "tests/support/small_fbpinn.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;

Decomposition fbpinn(std::vector<int> subdomains, double overlap = 0.4) {
  return {.method = DecompositionMethod::fbpinn,
          .subdomains = std::move(subdomains),
          .overlap = overlap};
}

MatrixD uniform_points(int n, const geometry::Bounds& b, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  MatrixD p(n, b.dim());
  for (int a = 0; a < b.dim(); ++a) {
    std::uniform_real_distribution<double> u(b.lo[static_cast<std::size_t>(a)],
                                             b.hi[static_cast<std::size_t>(a)]);
    for (int i = 0; i < n; ++i) p(i, a) = u(rng);
  }
  return p;
}

TEST(Decomposition, BoxesTileTheBoundingBoxWithTheOverlap) {
  const geometry::Bounds b{{0, -1}, {3, 1}};
  const Model m({.inputs = 2, .hidden = {4}, .outputs = 1}, fbpinn({3, 2}, 0.5), b);
  ASSERT_EQ(m.boxes().size(), 6u);
  EXPECT_EQ(m.grid(), (std::vector<int>{3, 2}));
  // Box 4 is x cell 1, y cell 1 (axis 0 fastest): cell [1, 2] x [0, 1], reaching 0.25 of a
  // width past it on each side.
  EXPECT_DOUBLE_EQ(m.cells()[4].lo[0], 1);
  EXPECT_DOUBLE_EQ(m.cells()[4].hi[1], 1);
  EXPECT_DOUBLE_EQ(m.boxes()[4].lo[0], 0.75);
  EXPECT_DOUBLE_EQ(m.boxes()[4].hi[0], 2.25);
  EXPECT_DOUBLE_EQ(m.boxes()[4].lo[1], -0.25);
  EXPECT_DOUBLE_EQ(m.boxes()[4].hi[1], 1.25);
  // The networks are normalized to their boxes and named apart.
  EXPECT_EQ(m.network_specs()[4].normalization->lower, m.boxes()[4].lo);
  EXPECT_EQ(m.network_specs()[4].prefix, "sd4_");
  EXPECT_EQ(m.region_of(std::vector<double>{1.1, 0.1}.data()), (Region{0, 1, 3, 4}));
  EXPECT_EQ(m.region_of(std::vector<double>{1.5, 0.5}.data()), (Region{4}));
}

TEST(Decomposition, WindowsAreAPartitionOfUnityZeroOutsideTheirBoxes) {
  const geometry::Bounds b{{0, -1}, {3, 1}};
  const Model m({.inputs = 2, .hidden = {4}, .outputs = 1}, fbpinn({3, 2}, 0.5), b);
  const MatrixD p = uniform_points(500, b, 1);
  const MatrixD w = m.windows(p);
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    EXPECT_NEAR(w.row(i).sum(), 1.0, 1e-12) << "point " << i;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const geometry::Bounds& box = m.boxes()[static_cast<std::size_t>(j)];
      const bool inside =
          p(i, 0) > box.lo[0] && p(i, 0) < box.hi[0] && p(i, 1) > box.lo[1] && p(i, 1) < box.hi[1];
      EXPECT_GE(w(i, j), 0);
      if (!inside) {
        EXPECT_EQ(w(i, j), 0) << "point " << i << ", box " << j;
      }
    }
  }
  // Where one box alone covers a point, its window is 1.
  const MatrixD centre = (MatrixD(1, 2) << 1.5, 0.5).finished();
  EXPECT_DOUBLE_EQ(m.windows(centre)(0, 4), 1.0);
}

// A decomposed problem on [0, 2] x [0, 1] in f64: 4 x 2 boxes, small networks.
ProblemSpec decomposed_square(int points = 64) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {2, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = points;
  spec.pinn.network.hidden = {6, 6};
  spec.pinn.decomposition = fbpinn({4, 2}, 0.5);
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  return spec;
}

// Taylor mode through the windows and the networks against central differences of the values.
TEST(Decomposition, DerivativesMatchFiniteDifferences) {
  Problem p(decomposed_square());
  const Eigen::VectorXd theta = p.initial_theta(3);
  // Points in one box, in two, in four (0.5 and 0.25 are cell edges).
  const MatrixD at = (MatrixD(4, 2) << 0.3, 0.2, 0.52, 0.3, 0.49, 0.51, 1.37, 0.77).finished();
  const MatrixD d = p.evaluate_expressions(theta, at, {"u", "u_x", "u_y", "u_xx", "u_xy"});
  const double h = 2e-5;  // truncation ~h^2 u''' (the windows are steep), rounding ~1e-16 / h^2
  const auto u = [&](double dx, double dy) {
    MatrixD s = at;
    s.col(0).array() += dx;
    s.col(1).array() += dy;
    return MatrixD(p.evaluate(theta, s));
  };
  const MatrixD u0 = u(0, 0), xp = u(h, 0), xm = u(-h, 0), yp = u(0, h), ym = u(0, -h);
  const MatrixD pp = u(h, h), pm = u(h, -h), mp = u(-h, h), mm = u(-h, -h);
  for (Eigen::Index i = 0; i < at.rows(); ++i) {
    EXPECT_NEAR(d(i, 0), u0(i, 0), 1e-12);
    const auto near = [](double a, double b, double tol) {
      EXPECT_NEAR(a, b, tol * (1 + std::abs(b)));
    };
    SCOPED_TRACE("point " + std::to_string(i));
    near(d(i, 1), (xp(i, 0) - xm(i, 0)) / (2 * h), 1e-6);
    near(d(i, 2), (yp(i, 0) - ym(i, 0)) / (2 * h), 1e-6);
    near(d(i, 3), (xp(i, 0) - 2 * u0(i, 0) + xm(i, 0)) / (h * h), 1e-4);
    near(d(i, 4), (pp(i, 0) - pm(i, 0) - mp(i, 0) + mm(i, 0)) / (4 * h * h), 1e-4);
  }
}

// Every network the constant 1 (zero weights, output bias 1): u = sum_j w_j = 1 everywhere,
// its derivatives 0 (the windows' derivatives cancel exactly when they sum to one).
TEST(Decomposition, ConstantNetworksGiveOneWithZeroDerivatives) {
  Problem p(decomposed_square());
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(p.initial_theta(0).size());
  for (const auto& e : p.objective().layout().entries())
    if (e.name.size() > 3 && e.name.substr(e.name.size() - 3) == "_b2") theta[e.offset] = 1;
  const MatrixD at = uniform_points(200, {{0, 0}, {2, 1}}, 5);
  const MatrixD d = p.evaluate_expressions(theta, at, {"u", "u_x", "u_y", "laplacian(u)"});
  EXPECT_NEAR((d.col(0).array() - 1).abs().maxCoeff(), 0, 1e-12);
  EXPECT_NEAR(d.rightCols(3).abs().maxCoeff(), 0, 1e-10);
}

// A point inside box 0 only: the other networks are not in its graph, so their parameters get
// exactly zero gradient; a point in the overlap of boxes 0 and 1 reaches both.
TEST(Decomposition, OnlyCoveringNetworksGetGradient) {
  const geometry::Bounds b{{0}, {2}};
  const Model m({.inputs = 1, .hidden = {5}, .outputs = 1}, fbpinn({2}, 0.4), b);
  for (const bool overlap : {false, true}) {
    Graph g(DType::f64);
    ModelGraph net = m.build(g);
    const MatrixD points =
        overlap ? (MatrixD(2, 1) << 0.95, 1.05).finished() : (MatrixD(2, 1) << 0.2, 0.5).finished();
    std::vector<Eigen::Index> order;
    net.layouts["at"] = m.arrange(points, order, "test");
    const Var at = g.input("at", {2, 1});
    const Var loss = sum_all(square(net.fields(at)));
    const std::vector<Var> params = net.params();
    const std::vector<Var> grads = grad(loss, params);
    Bindings bind = net.init(1);
    bind["at"] = points;
    const std::vector<MatrixD> values = evaluate(grads, bind);
    double first = 0, second = 0;
    for (std::size_t k = 0; k < params.size(); ++k) {
      const double norm = values[k].matrix().norm();
      (params[k].node().attrs.name.rfind("sd0_", 0) == 0 ? first : second) += norm;
    }
    EXPECT_GT(first, 0);
    if (overlap) {
      EXPECT_GT(second, 0);
    } else {
      EXPECT_EQ(second, 0) << "network 1 from points outside its box";
    }
  }
}

TEST(Decomposition, EvaluationKeepsTheCallersRowOrder) {
  Problem p(decomposed_square());
  const Eigen::VectorXd theta = p.initial_theta(2);
  const MatrixD at = uniform_points(50, {{0, 0}, {2, 1}}, 9);
  const MatrixD u = p.evaluate(theta, at);
  // Row by row: each a single point, one region each.
  for (Eigen::Index i = 0; i < at.rows(); i += 7)
    EXPECT_NEAR(p.evaluate(theta, at.row(i))(0, 0), u(i, 0), 1e-12) << "row " << i;
  const MatrixD r = p.evaluate_expressions(theta, at, {"u", "2*u_x"});
  EXPECT_NEAR((r.col(0) - u.col(0)).abs().maxCoeff(), 0, 1e-12);
}

TEST(Decomposition, ResamplingKeepsTheGraphsLayout) {
  ProblemSpec spec = decomposed_square(200);
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 40}};
  Problem p(spec);
  const Eigen::VectorXd theta = p.initial_theta(0);
  const double before = p.objective().evaluate(theta);
  for (std::uint64_t seed : {11u, 12u}) {
    Bindings b = p.resample(seed);
    EXPECT_EQ(b.at("interior").rows(), 200);
    EXPECT_EQ(b.at("condition0").rows(), 40);
    p.objective().set_inputs(b);
    // Every row is in the region its place in the layout says (the pde residual there is the
    // one of evaluate_expressions at the same points).
    const MatrixD r = p.evaluate_expressions(theta, b.at("interior"), {"laplacian(u)"});
    p.objective().evaluate(theta);
    EXPECT_NEAR(p.objective().slot_losses()[0], r.square().mean(), 1e-10);
  }
  EXPECT_NE(p.objective().evaluate(theta), before);
}

// Under a memory budget a decomposed model's step runs in batches: each subdomain's rows rounded
// down to a multiple of the batches, so that every batch (rows b, b + k, ...) holds the same rows
// of each region, the layout its program is built for. Each term's loss is the mean over the
// rows bound (the residual at them from the whole-model evaluation), the gradient that of the
// loss (central differences), under a budget and with the batches given; too many are refused.
TEST(Decomposition, AMemoryBudgetRunsADecomposedStepInBatches) {
  ProblemSpec spec = decomposed_square(2000);
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 400}};
  const std::int64_t whole = Problem(spec).memory().whole_bytes;
  for (const int given : {0, 4}) {
    SCOPED_TRACE(given == 0 ? "under a budget" : "4 batches given");
    ProblemSpec s = spec;
    if (given == 0) s.pinn.memory.budget = whole / 3;
    s.pinn.memory.batches = given;
    Problem p(s);
    const int batches = p.objective().batches();
    if (given == 0) {
      EXPECT_GE(batches, 3);
      EXPECT_LE(p.memory().planned_bytes, p.memory().budget);
      EXPECT_LE(p.objective().executable().stats().arena_bytes, p.memory().budget);
    } else {
      EXPECT_EQ(batches, 4);
    }
    const MatrixD& interior = p.objective().inputs().at("interior");
    const MatrixD& boundary = p.objective().inputs().at("condition0");
    EXPECT_EQ(interior.rows() % batches, 0);
    EXPECT_LE(interior.rows(), 2000);
    EXPECT_GT(interior.rows(), 1800);
    EXPECT_EQ(p.memory().left_out, 2000 + 400 - interior.rows() - boundary.rows());
    EXPECT_EQ(boundary.rows() % batches, 0);
    const Eigen::VectorXd theta = p.initial_theta(3);
    Eigen::VectorXd g;
    const double loss = p.objective().evaluate(theta, &g);
    const MatrixD r = p.evaluate_expressions(theta, interior, {"laplacian(u)"});
    EXPECT_NEAR(p.objective().slot_losses()[0], r.square().mean(), 1e-10);
    EXPECT_NEAR(p.objective().slot_losses()[1], p.evaluate(theta, boundary).square().mean(), 1e-12);
    std::mt19937_64 rng(9);
    std::normal_distribution<double> normal;
    Eigen::VectorXd d(theta.size());
    for (Eigen::Index i = 0; i < d.size(); ++i) d(i) = normal(rng);
    const double h = 1e-5;
    const double slope =
        (p.objective().evaluate(theta + h * d) - p.objective().evaluate(theta - h * d)) / (2 * h);
    EXPECT_NEAR(slope, g.dot(d), 1e-6 * std::max(1.0, std::abs(g.dot(d)))) << "loss " << loss;
    // Points drawn anew keep the rounded counts.
    const Bindings b = p.resample(7);
    EXPECT_EQ(b.at("interior").rows(), interior.rows());
    p.objective().set_inputs(b);
    p.objective().evaluate(theta);
  }
  spec.pinn.memory.batches = 5000;
  expect_user_error([&] { Problem p(spec); },
                    "memory: 5000 batches of a decomposed model need at least as many rows of "
                    "every subdomain in every point set (the fewest: 9)");
}

// Under a budget that leaves room for fewer rows than an evaluation has, a decomposed model's
// points are evaluated in blocks that each take a share of every region's rows (one layout, so
// one program for all of them): the same values as at once, in the caller's order, also where a
// region has fewer rows than there are blocks (its share made up by repeating a row).
TEST(Decomposition, UnderABudgetPointsAreEvaluatedInBlocksOfOneLayout) {
  ProblemSpec spec = decomposed_square(256);
  spec.pinn.memory.budget = std::int64_t{1} << 40;
  Problem whole(spec);
  spec.pinn.memory.budget = whole.memory().whole_bytes;  // a quarter of it for an evaluation
  Problem blocked(spec);
  const Eigen::VectorXd theta = whole.initial_theta(5);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  MatrixD at(30000, 2);
  // x >= 0.5: none in the corner x, y < 0.375 that box 0 alone covers (the boxes are the grid's
  // cells grown by 0.125), but three points, fewer than the blocks.
  for (Eigen::Index i = 0; i < at.rows(); ++i) at.row(i) << 0.5 + 1.5 * u(rng), u(rng);
  at.row(100) << 0.01, 0.01;
  at.row(200) << 0.3, 0.02;
  at.row(300) << 0.1, 0.3;
  const MatrixD values = MatrixD::Random(at.rows(), 1);
  const std::vector<std::string> expressions{"u", "laplacian(u)", "u_x*u_y"};
  const MatrixD a = whole.evaluate_expressions(theta, at, expressions);
  EXPECT_EQ(whole.cached_programs(), 1u);
  const MatrixD b = blocked.evaluate_expressions(theta, at, expressions);
  EXPECT_EQ(blocked.cached_programs(), 1u) << "every block one layout";
  ASSERT_EQ(b.rows(), at.rows());
  ASSERT_EQ(b.cols(), 3);
  EXPECT_LE((a - b).abs().maxCoeff(), 1e-12 * a.abs().maxCoeff());
  // Blocks, not the whole: the block program took fewer points than the call has.
  EXPECT_LT(blocked.cached_program_rows().front(), at.rows() / 2);
  EXPECT_EQ(whole.cached_program_rows().front(), at.rows());
  // Given values travel with their rows.
  const MatrixD given =
      blocked.evaluate_expressions_given(theta, at, {"u + 2*x"}, {}, {{"u", 0}}, values);
  EXPECT_LE((given.col(0) - values.col(0) - 2 * at.col(0)).abs().maxCoeff(), 1e-15);
}

// u' = cos(4 x) on [-pi, pi], u(0) = 0 built in: 4 subdomains of 2 x 8 reach 1e-2.
TEST(Decomposition, SmallFbpinnReachesItsError) {
  Problem p(jetpde::testing::small_fbpinn());
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(),
            {{.name = "adam", .steps = 1500, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
             {.name = "lbfgs", .optimizer = "lbfgs", .steps = 300}});
  t.train(theta);
  MatrixD at(201, 1);
  for (int i = 0; i < 201; ++i) at(i, 0) = -std::numbers::pi + 2 * std::numbers::pi * i / 200;
  const MatrixD exact = (4 * at.array()).sin() / 4;
  const double err = (p.evaluate(theta, at) - exact).matrix().norm() / exact.matrix().norm();
  std::cout << "  fbpinn cos(4x), 4 subdomains: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

// Two ranks as threads of one process: each collective puts every rank's values side by side
// and combines them in rank order.
class TwoThreadRanks {
 public:
  class Rank final : public Communicator {
   public:
    Rank(TwoThreadRanks& group, int rank) : group_(&group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return 2; }
    void allreduce_sum(std::span<double> v) const override {
      combine(v, [](double a, double b) { return a + b; });
    }
    void allreduce_max(std::span<double> v) const override {
      combine(v, [](double a, double b) { return std::max(a, b); });
    }
    void broadcast(std::span<double> v, int root) const override {
      put(v);
      const std::vector<double> from = group_->slots_[static_cast<std::size_t>(root)];
      group_->sync_.arrive_and_wait();
      std::copy(from.begin(), from.end(), v.begin());
    }
    void barrier() const override { group_->sync_.arrive_and_wait(); }

   private:
    void put(std::span<double> v) const {
      group_->slots_[static_cast<std::size_t>(rank_)].assign(v.begin(), v.end());
      group_->sync_.arrive_and_wait();
    }
    template <class Op>
    void combine(std::span<double> v, Op op) const {
      put(v);
      std::vector<double> out = group_->slots_[0];
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = op(out[i], group_->slots_[1][i]);
      group_->sync_.arrive_and_wait();
      std::copy(out.begin(), out.end(), v.begin());
    }
    TwoThreadRanks* group_;
    int rank_;
  };

 private:
  std::barrier<> sync_{2};
  std::vector<std::vector<double>> slots_{2};
};

// Parameters replicated, each rank keeping the interior points of its own cells, grouped by
// region on its own: the objective's allreduce alone makes two ranks' loss and gradient the
// serial ones (global points: the ranks' draws make up the serial one).
TEST(Decomposition, TwoRanksGiveTheSerialLossAndGradient) {
  ProblemSpec spec = decomposed_square(120);
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 30}};
  spec.pinn.rank_points = RankPoints::global;
  Problem serial(spec);
  const Eigen::VectorXd theta = serial.initial_theta(4);
  Eigen::VectorXd g_serial;
  const double loss = serial.objective().evaluate(theta, &g_serial);
  TwoThreadRanks group;
  double losses[2];
  Eigen::VectorXd g[2];
  Eigen::Index rows[2];
  bool mine[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      const TwoThreadRanks::Rank comm(group, r);
      Problem p(spec, comm);
      const MatrixD& interior = p.objective().inputs().at("interior");
      rows[r] = interior.rows();
      // Each rank keeps the points of its own cells: of 4 x 2, rank 0 the lower row (y < 0.5).
      mine[r] =
          r == 0 ? (interior.col(1).array() <= 0.5).all() : (interior.col(1).array() >= 0.5).all();
      losses[r] = p.objective().evaluate(theta, &g[r]);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rows[0] + rows[1], 120);
  EXPECT_TRUE(mine[0]);
  EXPECT_TRUE(mine[1]);
  EXPECT_NEAR(losses[0], loss, 1e-12 * loss);
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_LT((g[0] - g_serial).norm(), 1e-10 * g_serial.norm());
}

// Pieces are owned as cells are: of an L's three boxes on two ranks, rank 0 the two lower ones
// (y < 0.5), rank 1 the upper arm; the loss and gradient are still the serial ones.
TEST(Decomposition, TwoRanksOwnPiecesAsCells) {
  ProblemSpec spec;
  spec.math.domain =
      geometry::unite(geometry::rectangle({0, 0}, {1, 0.5}), geometry::rectangle({0, 0}, {0.5, 1}));
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u) + 1"};
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 30}};
  spec.pinn.interior_points = 120;
  spec.pinn.network.hidden = {6};
  spec.pinn.rank_points = RankPoints::global;
  spec.pinn.decomposition = {
      .method = DecompositionMethod::fbpinn,
      .pieces = {geometry::rectangle({0, 0}, {0.5, 0.5}), geometry::rectangle({0.5, 0}, {1, 0.5}),
                 geometry::rectangle({0, 0.5}, {0.5, 1})}};
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem serial(spec);
  const Eigen::VectorXd theta = serial.initial_theta(4);
  Eigen::VectorXd g_serial;
  const double loss = serial.objective().evaluate(theta, &g_serial);
  TwoThreadRanks group;
  double losses[2];
  Eigen::VectorXd g[2];
  Eigen::Index rows[2], resampled[2];
  MatrixD drawn[2];
  bool mine[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      const TwoThreadRanks::Rank comm(group, r);
      Problem p(spec, comm);
      const MatrixD& interior = p.objective().inputs().at("interior");
      rows[r] = interior.rows();
      mine[r] =
          r == 0 ? (interior.col(1).array() <= 0.5).all() : (interior.col(1).array() >= 0.5).all();
      losses[r] = p.objective().evaluate(theta, &g[r]);
      // Another draw puts another count in each rank's pieces: the rows stay the first's.
      const Bindings b = p.resample(7);
      resampled[r] = b.at("interior").rows();
      drawn[r] = b.at("interior");
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rows[0] + rows[1], 120);
  EXPECT_GT(rows[1], 0);
  EXPECT_EQ(resampled[0], rows[0]);
  EXPECT_EQ(resampled[1], rows[1]);
  EXPECT_TRUE((drawn[1].col(1).array() >= 0.5).all());
  EXPECT_TRUE(mine[0]);
  EXPECT_TRUE(mine[1]);
  EXPECT_NEAR(losses[0], loss, 1e-12 * loss);
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_LT((g[0] - g_serial).norm(), 1e-10 * g_serial.norm());
}

Decomposition xpinn(std::vector<int> subdomains) {
  return {.method = DecompositionMethod::xpinn, .subdomains = std::move(subdomains)};
}

TEST(Xpinn, CellsWithoutOverlapAndTheirFaces) {
  const Model m({.inputs = 2, .hidden = {4}, .outputs = 1}, xpinn({2, 2}), {{0, 0}, {2, 1}});
  ASSERT_EQ(m.boxes().size(), 4u);
  EXPECT_EQ(m.boxes()[3].lo, (std::vector<double>{1, 0.5}));
  ASSERT_EQ(m.interfaces().size(), 4u);
  // Along x: cells 0|1 and 2|3 at x = 1; along y: 0|2 and 1|3 at y = 0.5.
  EXPECT_EQ(m.interfaces()[0].a, 0);
  EXPECT_EQ(m.interfaces()[0].b, 1);
  EXPECT_EQ(m.interfaces()[0].face.lo, (std::vector<double>{1, 0}));
  EXPECT_EQ(m.interfaces()[0].face.hi, (std::vector<double>{1, 0.5}));
  EXPECT_EQ(m.interfaces()[3].a, 1);
  EXPECT_EQ(m.interfaces()[3].b, 3);
  EXPECT_EQ(m.interfaces()[3].axis, 1);
  // Every point is its cell's alone; a point on a face belongs to the upper cell.
  EXPECT_EQ(m.region_of(std::vector<double>{0.3, 0.7}.data()), (Region{2}));
  EXPECT_EQ(m.region_of(std::vector<double>{1.0, 0.2}.data()), (Region{1}));
  EXPECT_TRUE((m.windows((MatrixD(1, 2) << 1.5, 0.7).finished()) ==
               (MatrixD(1, 4) << 0, 0, 0, 1).finished())
                  .all());
}

ProblemSpec xpinn_square() {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {2, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u) + 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.pinn.interior_points = 64;
  spec.pinn.network.hidden = {6};
  spec.pinn.decomposition = xpinn({2, 2});
  spec.pinn.decomposition.interface_points = 20;
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  return spec;
}

// The fields an exact solution (u = g + 0 N: every network ignored): the solution, flux and
// residual jumps vanish on every face whatever the networks; the pde term too.
TEST(Xpinn, InterfaceTermsVanishForAContinuousExactSolution) {
  ProblemSpec spec = xpinn_square();
  spec.pinn.hard_constraints = {{.field = "u", .value = "sin(pi*x)*sin(pi*y)", .distance = "0"}};
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(),
            (std::vector<std::string>{"pde", "interface_solution", "interface_flux",
                                      "interface_residual"}));
  EXPECT_EQ(p.objective().inputs().at("interface0_a").rows(), 20);
  p.objective().evaluate(p.initial_theta(1));
  for (double loss : p.objective().slot_losses()) EXPECT_LT(loss, 1e-24);
}

// Each network a constant c_j (zero weights, output bias c_j): the solution jump across a face
// is c_a - c_b, the flux and residual jumps 0; equal constants leave no jump.
TEST(Xpinn, InterfaceTermsMeasureTheJump) {
  Problem p(xpinn_square());
  const auto theta_of = [&](std::vector<double> c) {
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(p.initial_theta(0).size());
    for (const auto& e : p.objective().layout().entries())
      if (e.name.size() > 3 && e.name.substr(e.name.size() - 3) == "_b1")
        theta[e.offset] = c[static_cast<std::size_t>(e.name[2] - '0')];
    return theta;
  };
  p.objective().evaluate(theta_of({1, 1, 1, 1}));
  EXPECT_LT(p.objective().slot_losses()[1], 1e-28);
  // Faces 0|1, 2|3 (jumps 1, 2) and 0|2, 1|3 (jumps 3, 0), each with as many points.
  p.objective().evaluate(theta_of({0, 1, 3, 1}));
  EXPECT_NEAR(p.objective().slot_losses()[1], (1.0 + 4 + 9 + 0) / 4, 1e-12);
  EXPECT_LT(p.objective().slot_losses()[2], 1e-28);
  EXPECT_LT(p.objective().slot_losses()[3], 1e-28);
  // Resampled faces keep their counts.
  const Bindings b = p.resample(5);
  EXPECT_EQ(b.at("interface3_b").rows(), 20);
  EXPECT_TRUE((b.at("interface3_b").col(1).array() == 0.5).all());
}

// u' = cos(4 x) on [-pi, pi], u(0) = 0 built in, on 4 XPINN subdomains of 2 x 8.
TEST(Xpinn, SmallXpinnReachesItsError) {
  ProblemSpec spec;
  spec.math.domain = geometry::interval(-std::numbers::pi, std::numbers::pi);
  spec.math.context.fields({"u"}).coordinates({"x"});
  spec.math.equations = {"u_x - cos(4*x)"};
  spec.pinn.hard_constraints = {{.field = "u", .value = "0", .distance = "tanh(4*x)"}};
  spec.pinn.interior_points = 400;
  spec.pinn.network.hidden = {8, 8};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  spec.pinn.decomposition = xpinn({4});
  spec.pinn.decomposition.output_scale = 0.25;
  spec.pinn.decomposition.interface_points = 1;
  Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(),
            {{.name = "adam", .steps = 1500, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
             {.name = "lbfgs", .optimizer = "lbfgs", .steps = 300}});
  t.train(theta);
  MatrixD at(201, 1);
  for (int i = 0; i < 201; ++i) at(i, 0) = -std::numbers::pi + 2 * std::numbers::pi * i / 200;
  const MatrixD exact = (4 * at.array()).sin() / 4;
  const double err = (p.evaluate(theta, at) - exact).matrix().norm() / exact.matrix().norm();
  std::cout << "  xpinn cos(4x), 4 subdomains: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

TEST(Decomposition, ErrorsNameTheKey) {
  const geometry::Bounds b{{0, 0}, {1, 1}};
  const nn::NetworkSpec net{.inputs = 2, .hidden = {4}, .outputs = 1};
  expect_user_error(
      [&] {
        Model(net, fbpinn({2, 2, 2}), b);
      },
      "decomposition.subdomains: give 1 to 2 counts (one per coordinate, in coordinate order), got "
      "3");
  expect_user_error(
      [&] {
        Model(net, fbpinn({2, 0}), b);
      },
      "decomposition.subdomains[1]: must be at least 1, got 0");
  expect_user_error(
      [&] { Model(net, fbpinn({2}, 0), b); },
      "decomposition.overlap: 0 is not in (0, 1): neighbouring boxes must overlap (an "
      "FBPINN's windows need it) by less than a box's width");
  expect_user_error(
      [&] { Model(net, fbpinn({2}, 1), b); },
      "decomposition.overlap: 1 is not in (0, 1): neighbouring boxes must overlap (an "
      "FBPINN's windows need it) by less than a box's width");
  const Model m(net, fbpinn({2}), b);
  std::vector<Eigen::Index> order;
  expect_user_error(
      [&] { m.arrange((MatrixD(1, 2) << 5, 0.5).finished(), order, "points"); },
      "points: point 1 (5, 0.5) is outside every subdomain (the bounding box and its overlap)");
  ProblemSpec spec;
  spec.math.domain = geometry::time_product(geometry::interval(0, 1), 0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"}).time("t");
  spec.pinn.decomposition = fbpinn({2});
  spec.math.equations = {"u_t - u_xx"};
  spec.pinn.time_chunks = 2;
  expect_user_error([&] { Problem{spec}; },
                    "problem: time_chunks and a decomposition do not go together yet");
}

TEST(Decomposition, AutoSplitsTheLongestAxesFirst) {
  EXPECT_EQ(automatic_grid({{0, 0}, {4, 1}}, 1), (std::vector<int>{4, 1}));
  EXPECT_EQ(automatic_grid({{0, 0}, {1, 1}}, 1), (std::vector<int>{2, 2}));
  EXPECT_EQ(automatic_grid({{0, 0}, {1, 1}}, 8), (std::vector<int>{4, 2}));
  EXPECT_EQ(automatic_grid({{0, 0}, {1, 3}}, 6), (std::vector<int>{2, 3}));
  Decomposition d{.method = DecompositionMethod::fbpinn, .automatic = true};
  const Model m({.inputs = 2, .hidden = {4}, .outputs = 1}, d, {{0, 0}, {2, 1}}, 2);
  EXPECT_EQ(m.grid(), (std::vector<int>{4, 1}));
  EXPECT_EQ(m.describe(), "fbpinn 4 x 1 subdomains (overlap 0.3), one network each, hidden 4");
}

}  // namespace
}  // namespace jetpde::solvers
