// Data parallelism on real MPI ranks (run at 1, 2 and 4 ranks): the collectives, the global
// points split over the ranks, and training that gives every rank the same parameters, repeats
// bit for bit, and follows the one-rank run over the same points to rounding, with Adam and
// L-BFGS, resampling, RAD, causal weighting, loss weighting and validation all on; and a
// decomposed problem over the ranks reaches its error, with the neighbour exchange following the
// allreduce and resuming bit for bit; time marching follows the one-rank march.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <numeric>
#include <variant>
#include <vector>

#include "geometry/box.h"
#include "geometry/time_product.h"
#include "solvers/exchange.h"
#include "solvers/problem.h"
#include "solvers/solve.h"
#include "tests/mpi/world.h"
#include "tests/support/small_fbpinn.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::world;

TEST(Mpi, CollectivesCombineEveryRank) {
  const Communicator& comm = world();
  const int n = comm.size(), r = comm.rank();
  std::vector<double> sum{r + 1.0, -1.0}, max{static_cast<double>(r)}, bcast{r * 1.0, 7.0};
  comm.allreduce_sum(sum);
  comm.allreduce_max(max);
  comm.broadcast(bcast, n - 1);
  EXPECT_EQ(sum, (std::vector<double>{n * (n + 1) / 2.0, -1.0 * n}));
  EXPECT_EQ(max[0], n - 1);
  EXPECT_EQ(bcast, (std::vector<double>{n - 1.0, 7.0}));
  // Different counts per rank: rank k gives k + 1 copies of k.
  const std::vector<double> mine(static_cast<std::size_t>(r + 1), r);
  std::vector<double> expected;
  for (int k = 0; k < n; ++k) expected.insert(expected.end(), static_cast<std::size_t>(k + 1), k);
  EXPECT_EQ(comm.allgather(mine), expected);
  const std::vector<double> at_root = comm.gather(mine, 0);
  EXPECT_EQ(at_root, r == 0 ? expected : std::vector<double>{});
  comm.barrier();
  if (n > 1) {
    EXPECT_GT(comm.seconds(), 0.0);
  }
}

// The heat equation on [0, 1] x [0, 1] with an initial and a boundary condition: small enough
// that every rank can also run the serial problem beside the parallel one.
ProblemSpec heat(compiler::PrecisionPolicy precision, int chunks) {
  ProblemSpec spec;
  spec.math.domain = geometry::time_product(geometry::interval(0, 1), 0, 1);
  spec.math.context.fields({"u"}).coordinates({"x"}).time("t");
  spec.math.equations = {"u_t - 0.1*u_xx"};
  spec.math.conditions = {{.kind = Condition::Kind::initial_value, .value = "sin(pi*x)"},
                          {.kind = Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
  spec.pinn.interior_points = 120;
  spec.pinn.conditions = {{.points = 30, .weight = 10}, {.points = 18, .weight = 10}};
  spec.pinn.network.hidden = {12, 12};
  spec.pinn.time_chunks = chunks;
  spec.pinn.rank_points = RankPoints::global;
  spec.compile.pipeline.precision = precision;
  spec.compile.cpu.cache_dir = ::testing::TempDir() + "jetpde-mpi-test-cache";
  return spec;
}

// Rank r's rows of a whole set: of each of `chunks` blocks its share (what the problem keeps).
MatrixD expected_share(const MatrixD& all, int chunks, const Communicator& comm) {
  const Eigen::Index block = all.rows() / chunks;
  if (comm.size() == 1 || block < comm.size()) return all;
  const Share s = share_of(block, comm.rank(), comm.size());
  MatrixD out(s.count * chunks, all.cols());
  for (int c = 0; c < chunks; ++c)
    out.middleRows(c * s.count, s.count) = all.middleRows(c * block + s.first, s.count);
  return out;
}

TEST(Mpi, GlobalPointsAreEachRanksShareOfTheSerialPoints) {
  const ProblemSpec spec = heat(compiler::PrecisionPolicy::fp64, 4);
  Problem serial(spec);
  Problem mine(spec, world());
  for (const auto& [name, all] : serial.objective().inputs()) {
    const int chunks = name == "interior" ? 4 : 1;
    const MatrixD& got = mine.objective().inputs().at(name);
    const MatrixD want = expected_share(all, chunks, world());
    EXPECT_EQ(got.rows(), want.rows()) << name;
    EXPECT_TRUE(got.rows() == want.rows() && (got == want).all()) << name;
  }
  // The ranks' rows add up to the whole set.
  std::vector<double> rows{static_cast<double>(mine.objective().inputs().at("interior").rows())};
  world().allreduce_sum(rows);
  EXPECT_EQ(rows[0], 120);
}

SolveOptions options_for_everything() {
  SolveOptions o;
  o.stages = {{.name = "adam", .steps = 40, .options = nn::AdamOptions{.schedule = {.lr = 5e-3}}},
              {.name = "lbfgs", .optimizer = "lbfgs", .steps = 15}};
  o.weighting = {.kind = Weighting::Kind::annealing, .every = 10, .causal_epsilon = 1.0};
  o.resample_every = 10;
  o.adaptive = true;
  o.adaptive_candidates = 480;
  o.reference.expressions = {{"u", "sin(pi*x)*exp(-0.1*pi^2*t)"}};
  o.reference.every = 20;
  o.reference.points = 400;
  o.device = Device::cpu;
  return o;
}

// Every rank's vector equals rank 0's, bit for bit.
bool same_on_every_rank(const Eigen::VectorXd& v, const Communicator& comm) {
  std::vector<double> first(v.data(), v.data() + v.size());
  comm.broadcast(first, 0);
  std::vector<double> differs{Eigen::Map<const Eigen::VectorXd>(first.data(), v.size()) == v ? 0.0
                                                                                             : 1.0};
  comm.allreduce_max(differs);
  return differs[0] == 0.0;
}

TEST(Mpi, TrainingIsTheSameOnEveryRankRepeatsAndFollowsOneRank) {
  const ProblemSpec spec = heat(compiler::PrecisionPolicy::fp64, 4);
  SolveOptions o = options_for_everything();
  o.communicator = &world();
  const Solution a = solve(spec, o);
  const Solution b = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(a.theta(), world())) << "the ranks' parameters differ";
  EXPECT_TRUE(a.theta() == b.theta()) << "two runs on the same ranks differ";
  EXPECT_EQ(a.result().steps, b.result().steps);
  // One rank over the same points: the same steps, the losses to rounding (fp64 here; the sums
  // over the ranks are grouped differently).
  SolveOptions serial_options = options_for_everything();
  const Solution s = solve(spec, serial_options);
  EXPECT_EQ(a.result().steps, s.result().steps) << a.result().message << "\n" << s.result().message;
  const std::size_t n = std::min(a.history().size(), s.history().size());
  double worst = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double x = a.history()[k].loss, y = s.history()[k].loss;
    worst = std::max(worst, std::abs(x - y) / std::abs(y));
    for (std::size_t j = 0; j < a.history()[k].slot_losses.size(); ++j) {
      const double p = a.history()[k].slot_losses[j], q = s.history()[k].slot_losses[j];
      worst = std::max(worst, std::abs(p - q) / std::max(std::abs(q), 1e-300));
    }
  }
  EXPECT_LT(worst, 1e-8) << "largest relative difference of a loss over " << n << " steps";
  EXPECT_NEAR(a.metrics().at("rel_l2"), s.metrics().at("rel_l2"), 1e-8);
  EXPECT_LT((a.theta() - s.theta()).norm(), 1e-7 * s.theta().norm());
}

// fp32: the losses follow the one-rank run to f32 rounding over a short Adam run.
TEST(Mpi, Fp32LossesFollowOneRankToF32Rounding) {
  const ProblemSpec spec = heat(compiler::PrecisionPolicy::fp32, 1);
  SolveOptions o;
  o.stages = {{.name = "adam", .steps = 20, .options = nn::AdamOptions{.schedule = {.lr = 1e-3}}}};
  o.device = Device::cpu;
  const Solution s = solve(spec, o);
  o.communicator = &world();
  const Solution a = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(a.theta(), world()));
  double worst = 0;
  for (std::size_t k = 0; k < s.history().size(); ++k)
    worst = std::max(
        worst, std::abs(a.history()[k].loss - s.history()[k].loss) / std::abs(s.history()[k].loss));
  EXPECT_LT(worst, 1e-5) << "largest relative difference of the loss over 20 steps";
}

// Local points (the default): each rank its own draw; still one set of parameters, and a loss
// of the same size as one rank's (other points, the same problem).
TEST(Mpi, LocalPointsTrainOneModel) {
  ProblemSpec spec = heat(compiler::PrecisionPolicy::fp64, 1);
  spec.pinn.rank_points = RankPoints::local;
  SolveOptions o = options_for_everything();
  o.weighting = {.kind = Weighting::Kind::ntk, .every = 10, .probes = 2};
  o.communicator = &world();
  const Solution a = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(a.theta(), world()));
  // It trains: the loss falls well below its start.
  ASSERT_FALSE(a.history().empty());
  EXPECT_LT(a.history().back().loss, 0.1 * a.history().front().loss);
}

// A decomposed problem (FBPINN, 4 subdomains over the ranks: each keeps the points of its own)
// reaches its stated error on any rank count, with the same parameters everywhere.
// small_fbpinn's problem as `spec` decomposes it, trained on the ranks (Adam, then L-BFGS): the
// same parameters everywhere and its stated error.
void expect_the_ranks_reach_the_error(ProblemSpec spec) {
  spec.compile.cpu.cache_dir = ::testing::TempDir() + "jetpde-mpi-test-cache";
  SolveOptions o;
  o.stages = {{.name = "adam", .steps = 1500, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
              {.name = "lbfgs", .optimizer = "lbfgs", .steps = 300}};
  o.reference.expressions = {{"u", "sin(4*x)/4"}};
  o.device = Device::cpu;
  o.communicator = &world();
  const Solution a = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(a.theta(), world()));
  EXPECT_LT(a.metrics().at("rel_l2"), 1e-2) << a.result().message;
}

TEST(Mpi, AnFbpinnOnTheRanksReachesItsError) {
  expect_the_ranks_reach_the_error(jetpde::testing::small_fbpinn());
}

// The neighbour exchange (parallel.exchange: neighbours, the default for a decomposed model):
// 4 subdomains per rank in a row, each network's gradient summed among the ranks whose points
// reach it. A rank's peers are the ranks of the cells next to its own, and what it sends per
// step is its border networks', however many subdomains there are in all (the allreduce sends
// the whole vector). Adam with validation and resampling (both read the whole parameter vector)
// follows the all-reduced run to rounding, and every rank ends with the same parameters.
TEST(Mpi, TheNeighbourExchangeFollowsTheAllreduce) {
  ProblemSpec spec = jetpde::testing::small_fbpinn();
  spec.compile.cpu.cache_dir = ::testing::TempDir() + "jetpde-mpi-test-cache";
  const int size = world().size(), rank = world().rank();
  spec.pinn.decomposition.subdomains = {4 * size};
  {
    Problem p(spec, world());
    const ParameterExchange* x = p.objective().exchange();
    if (size == 1) {
      EXPECT_EQ(x, nullptr) << "one rank needs no exchange";
    } else {
      ASSERT_NE(x, nullptr);
      // The two blocks next to each border between two ranks' cells are held by both.
      std::vector<int> expected;
      for (int q : {rank - 1, rank + 1})
        if (q >= 0 && q < size) expected.push_back(q);
      if (size == 2) expected.clear();  // both ranks hold them: they go with the allreduce
      EXPECT_EQ(x->peers(), expected);
      const Eigen::Index per_network = p.objective().layout().size() / (4 * size);
      EXPECT_LE(x->values_per_sum(2), 4 * per_network + 2) << "rank " << rank;
    }
  }
  SolveOptions o;
  o.stages = {{.name = "adam", .steps = 120, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}}};
  o.reference.expressions = {{"u", "sin(4*x)/4"}};
  o.reference.every = 40;
  o.resample_every = 50;
  o.device = Device::cpu;
  o.communicator = &world();
  const double before = world().values_sent();
  const Solution a = solve(spec, o);
  const double neighbours = world().values_sent() - before;
  spec.pinn.exchange = GradientExchange::allreduce;
  const Solution b = solve(spec, o);
  const double allreduce = world().values_sent() - before - neighbours;
  EXPECT_TRUE(same_on_every_rank(a.theta(), world())) << "the ranks' parameters differ";
  ASSERT_EQ(a.history().size(), b.history().size());
  double worst = 0;
  for (std::size_t k = 0; k < a.history().size(); ++k)
    worst = std::max(
        worst, std::abs(a.history()[k].loss - b.history()[k].loss) / std::abs(b.history()[k].loss));
  EXPECT_LT(worst, 1e-9) << "largest relative difference of the loss over the steps";
  EXPECT_LT((a.theta() - b.theta()).norm(), 1e-8 * b.theta().norm());
  EXPECT_NEAR(a.metrics().at("rel_l2"), b.metrics().at("rel_l2"), 1e-8);
  if (size > 1) {
    EXPECT_LT(neighbours, 0.5 * allreduce) << "values sent by rank " << rank;
  }
}

struct Saved : CheckpointSink {
  std::vector<TrainerState> states;
  void save(const TrainerState& state) override { states.push_back(state); }
};

// With the neighbour exchange a rank's copies of the blocks it does not hold go stale between
// synchronizations; a checkpoint makes them whole (the parameters and Adam's moments), so that a
// run resumed from rank 0's state (Adam, then L-BFGS, which all-reduces) ends bit for bit where
// the uninterrupted one does.
TEST(Mpi, ANeighbourExchangeRunResumesBitForBit) {
  ProblemSpec spec = jetpde::testing::small_fbpinn();
  spec.compile.cpu.cache_dir = ::testing::TempDir() + "jetpde-mpi-test-cache";
  spec.pinn.decomposition.subdomains = {4 * world().size()};
  SolveOptions o;
  o.stages = {{.name = "adam", .steps = 90, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
              {.name = "lbfgs", .optimizer = "lbfgs", .steps = 10}};
  o.device = Device::cpu;
  o.communicator = &world();
  Saved saved;
  o.checkpoint = &saved;
  o.checkpoint_every = 40;
  const Solution full = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(full.theta(), world()));
  ASSERT_GE(saved.states.size(), 2u);
  TrainerState at40 = saved.states.front();
  ASSERT_EQ(at40.step, 40);
  EXPECT_TRUE(same_on_every_rank(at40.theta, world())) << "a checkpoint holds stale blocks";
  // As `jetpde run --resume` does: every rank from rank 0's parameters and optimizer state (the
  // file rank 0 wrote), with its own points.
  const auto from_rank0 = [](Eigen::VectorXd& v) {
    world().broadcast({v.data(), static_cast<std::size_t>(v.size())}, 0);
  };
  from_rank0(at40.theta);
  for (auto& [name, value] : at40.optimizer.values)
    if (auto* v = std::get_if<Eigen::VectorXd>(&value)) from_rank0(*v);
  SolveOptions again = o;
  again.checkpoint = nullptr;
  again.resume = &at40;
  const Solution resumed = solve(spec, again);
  EXPECT_EQ(resumed.result().steps, full.result().steps);
  EXPECT_TRUE(resumed.theta() == full.theta())
      << "max difference " << (resumed.theta() - full.theta()).cwiseAbs().maxCoeff();
}

// Time marching on the ranks (3 windows, everything of options_for_everything on in each): every
// rank ends with the same combined parameters, and they follow the one-rank march over the same
// points (global points; the handed-over data split as data is) to rounding.
TEST(Mpi, TimeMarchingOnTheRanksFollowsOneRank) {
  const ProblemSpec spec = heat(compiler::PrecisionPolicy::fp64, 2);
  SolveOptions o = options_for_everything();
  o.time_windows = 3;
  o.communicator = &world();
  const Solution a = solve(spec, o);
  EXPECT_TRUE(same_on_every_rank(a.theta(), world())) << "the ranks' parameters differ";
  EXPECT_EQ(a.time_windows().size(), 3u);
  SolveOptions serial_options = options_for_everything();
  serial_options.time_windows = 3;
  const Solution s = solve(spec, serial_options);
  EXPECT_EQ(a.result().steps, s.result().steps) << a.result().message << "\n" << s.result().message;
  EXPECT_NEAR(a.metrics().at("rel_l2"), s.metrics().at("rel_l2"), 1e-8);
  EXPECT_LT((a.theta() - s.theta()).norm(), 1e-7 * s.theta().norm());
  EXPECT_LT(s.metrics().at("rel_l2"), 0.2) << s.result().message;
}

// The same problem on XPINN pieces given as geometries (three uneven intervals, tied at their
// two inner end points): the pieces split over the ranks as cells do; the stated error on any
// rank count.
TEST(Mpi, XpinnPiecesOnTheRanksReachTheirError) {
  ProblemSpec spec = jetpde::testing::small_fbpinn();
  const double pi = std::numbers::pi;
  spec.pinn.decomposition = {.method = DecompositionMethod::xpinn,
                             .pieces = {geometry::interval(-pi, -1), geometry::interval(-1, 0.5),
                                        geometry::interval(0.5, pi)},
                             .output_scale = 0.25};
  spec.pinn.decomposition.interface_points = 1;
  expect_the_ranks_reach_the_error(spec);
}

}  // namespace
}  // namespace jetpde::solvers
