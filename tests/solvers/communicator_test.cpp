// The communicator seam: serial is rank 0 of 1 and changes nothing; with several ranks (threads
// here, each with its own problem or objective) every count is a total and each rank holds its
// share of the points (drawn with its own seed, or its rows of the whole draw), the loss and
// gradient are summed in Objective::evaluate weighted by each rank's share of the rows (the mean
// over all points), every rank takes the same steps, and a stop on one rank stops all after the
// same step. Real MPI ranks: tests/mpi.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <numbers>
#include <set>
#include <thread>

#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "geometry/box.h"
#include "nn/network.h"
#include "solvers/communicator.h"
#include "solvers/exchange.h"
#include "solvers/objective.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"

namespace jetpde::solvers {
namespace {

constexpr double kPi = std::numbers::pi;

compiler::CompileOptions options() {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = compiler::PrecisionPolicy::fp64;
  return o;
}

// Ranks as threads of one process: each collective puts every rank's values side by side, waits
// for all, and combines them in rank order (so that every rank computes the same sums).
class ThreadRanks {
 public:
  explicit ThreadRanks(int size)
      : size_(size), sync_(size), slots_(static_cast<std::size_t>(size)) {}

  class Rank final : public Communicator {
   public:
    Rank(ThreadRanks& group, int rank) : group_(&group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_->size_; }
    void allreduce_sum(std::span<double> v) const override {
      combine(v, [](double a, double b) { return a + b; });
    }
    void allreduce_max(std::span<double> v) const override {
      combine(v, [](double a, double b) { return std::max(a, b); });
    }
    void broadcast(std::span<double> v, int root) const override {
      exchange(v);
      const auto& from = group_->slots_[static_cast<std::size_t>(root)];
      std::vector<double> out(from.begin(), from.end());
      group_->sync_.arrive_and_wait();  // all have read before anyone writes again
      std::copy(out.begin(), out.end(), v.begin());
    }
    void barrier() const override { group_->sync_.arrive_and_wait(); }

   private:
    void exchange(std::span<double> v) const {
      group_->slots_[static_cast<std::size_t>(rank_)].assign(v.begin(), v.end());
      group_->sync_.arrive_and_wait();
    }
    template <class Op>
    void combine(std::span<double> v, Op op) const {
      exchange(v);
      std::vector<double> out = group_->slots_[0];
      for (std::size_t r = 1; r < group_->slots_.size(); ++r)
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = op(out[i], group_->slots_[r][i]);
      group_->sync_.arrive_and_wait();
      std::copy(out.begin(), out.end(), v.begin());
    }
    ThreadRanks* group_;
    int rank_;
  };
  Rank rank(int r) { return Rank(*this, r); }

 private:
  int size_;
  std::barrier<> sync_;
  std::vector<std::vector<double>> slots_;
};

// fn(rank, communicator) on `size` ranks as threads, joined.
template <class Fn>
void on_ranks(ThreadRanks& ranks, int size, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      const ThreadRanks::Rank comm = ranks.rank(r);
      fn(r, comm);
    });
  for (std::thread& t : threads) t.join();
}

MatrixD interior(int from, int count) {  // of 32 points evenly inside (0, 1)
  MatrixD x(count, 1);
  for (int i = 0; i < count; ++i) x(i, 0) = (from + i + 1) / 33.0;
  return x;
}

// -u'' = pi^2 sin(pi x) on (0, 1), u(0) = u(1) = 0, on `n` interior points.
struct Poisson {
  Graph g{DType::f64};
  nn::Network net{g, {.inputs = 1, .hidden = {8, 8}, .outputs = 1}};
  Var x, xb = g.input("xb", {2, 1});
  std::unique_ptr<Objective> obj;
  Poisson(int n, const Communicator& comm) : x(g.input("x", {n, 1})) {
    Taylor t(TaylorPlan({{x, 0}}, {{2}}));
    const Var r = t.derivative(net(x), {2}) + (kPi * kPi) * sin(x * kPi);
    obj = std::make_unique<Objective>(std::vector<LossTerm>{{"pde", r}, {"bc", net(xb)}},
                                      net.params(), options(), comm);
    MatrixD b(2, 1);
    b << 0.0, 1.0;
    obj->set_inputs({{"xb", b}});
  }
  Eigen::VectorXd theta0() const { return obj->layout().flatten(net.init(2)); }
};

TEST(Communicator, SerialIsRankZeroOfOneAndRankZeroKeepsTheSeed) {
  const Communicator& serial = serial_communicator();
  EXPECT_EQ(serial.rank(), 0);
  EXPECT_EQ(serial.size(), 1);
  std::vector<double> v{1.5, -2};
  serial.allreduce_sum(v);
  serial.allreduce_max(v);
  serial.broadcast(v, 0);
  serial.barrier();
  EXPECT_EQ(v, (std::vector<double>{1.5, -2}));
  // Rank 0 draws what a serial run draws; the (seed + step, rank) streams of 8 ranks over 200
  // consecutive seeds never coincide.
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    EXPECT_EQ(rank_seed(seed, 0), seed);
    for (int rank = 0; rank < 8; ++rank) seen.insert(rank_seed(seed, rank));
  }
  EXPECT_EQ(seen.size(), 200u * 8);
}

ProblemSpec small_spec() {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = 16;
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 8}};
  spec.pinn.network.hidden = {4};
  return spec;
}

// Local points: the counts are totals, each rank draws its share with its own seed (rank 0 with
// the run's), so the ranks' points differ; the parameters do not depend on the rank.
TEST(Communicator, EachRankDrawsItsShareOfEveryCount) {
  const ProblemSpec spec = small_spec();
  Problem serial(spec);
  ThreadRanks ranks(2);
  Bindings points[2], resampled[2];
  Eigen::VectorXd theta[2];
  on_ranks(ranks, 2, [&](int r, const Communicator& comm) {
    Problem p(spec, comm);
    points[r] = p.objective().inputs();
    resampled[r] = p.resample(7);
    theta[r] = p.initial_theta(3);
  });
  const Bindings& a = serial.objective().inputs();
  ASSERT_EQ(a.size(), 2u);
  for (const auto& [name, all] : a) {
    EXPECT_EQ(points[0].at(name).rows() * 2, all.rows()) << name;
    EXPECT_EQ(points[1].at(name).rows() * 2, all.rows()) << name;
    EXPECT_FALSE((points[0].at(name) == points[1].at(name)).all()) << name;
    EXPECT_FALSE((resampled[0].at(name) == resampled[1].at(name)).all()) << name;
    EXPECT_FALSE((resampled[0].at(name) == points[0].at(name)).all()) << name;
  }
  EXPECT_TRUE(serial.initial_theta(3) == theta[0]);
  EXPECT_TRUE(theta[0] == theta[1]);
}

// Global points: the ranks' shares of 3 ranks, end to end, are the serial run's points (of 17
// interior points: 6, 6, 5), at construction and at every resampling.
TEST(Communicator, GlobalPointsAreTheSerialPointsSplit) {
  ProblemSpec spec = small_spec();
  spec.pinn.rank_points = RankPoints::global;
  spec.pinn.interior_points = 17;
  Problem serial(spec);
  ThreadRanks ranks(3);
  Bindings points[3], resampled[3];
  on_ranks(ranks, 3, [&](int r, const Communicator& comm) {
    Problem p(spec, comm);
    points[r] = p.objective().inputs();
    resampled[r] = p.resample(7);
  });
  const auto joined = [](const Bindings* b, const std::string& name) {
    MatrixD all(b[0].at(name).rows() + b[1].at(name).rows() + b[2].at(name).rows(),
                b[0].at(name).cols());
    all << b[0].at(name), b[1].at(name), b[2].at(name);
    return all;
  };
  EXPECT_EQ(points[2].at("interior").rows(), 5);
  for (const auto& [name, all] : serial.objective().inputs())
    EXPECT_TRUE((joined(points, name) == all).all()) << name;
  for (const auto& [name, all] : serial.resample(7))
    EXPECT_TRUE((joined(resampled, name) == all).all()) << name;
}

// Two ranks with 16 of the 32 points each: the summed loss is the serial loss over all 32, both
// ranks take the same steps through Adam and L-BFGS, and they end where the serial run ends up to
// rounding.
TEST(Communicator, TwoRanksAverageTheLossAndTakeTheSameSteps) {
  const std::vector<Stage> stages{
      {.name = "adam", .steps = 30, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
      {.name = "lbfgs", .optimizer = "lbfgs", .steps = 10}};
  Poisson serial(32, serial_communicator());
  serial.obj->set_inputs({{"x", interior(0, 32)}});
  Eigen::VectorXd theta = serial.theta0();
  Eigen::VectorXd g_serial;
  const double loss0 = serial.obj->evaluate(theta, &g_serial);
  Trainer serial_trainer(*serial.obj, stages, {.initial = {1.0, 10.0}});
  const TrainResult serial_result = serial_trainer.train(theta);

  ThreadRanks ranks(2);
  double loss[2];
  Eigen::VectorXd g[2], end[2];
  TrainResult result[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      const ThreadRanks::Rank comm = ranks.rank(r);
      Poisson p(16, comm);
      p.obj->set_inputs({{"x", interior(16 * r, 16)}});
      end[r] = p.theta0();
      loss[r] = p.obj->evaluate(end[r], &g[r]);
      Trainer trainer(*p.obj, stages, {.initial = {1.0, 10.0}});
      result[r] = trainer.train(end[r]);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(loss[0], loss[1]);
  EXPECT_NEAR(loss[0], loss0, 1e-12 * loss0);
  EXPECT_TRUE(g[0] == g[1]);
  EXPECT_LT((g[0] - g_serial).norm(), 1e-12 * g_serial.norm());
  EXPECT_TRUE(end[0] == end[1]) << "the ranks' parameters differ";
  EXPECT_EQ(result[0].steps, result[1].steps);
  EXPECT_EQ(result[0].message, result[1].message);
  EXPECT_EQ(result[0].steps, serial_result.steps);
  EXPECT_LT((end[0] - theta).norm(), 1e-6 * theta.norm()) << result[0].message << "\n"
                                                          << serial_result.message;
}

// An interrupt on one rank stops every rank after the same step.
TEST(Communicator, AStopOnOneRankStopsAllAfterTheSameStep) {
  ThreadRanks ranks(2);
  TrainResult result[2], stopped[2];
  on_ranks(ranks, 2, [&](int r, const Communicator& comm) {
    Poisson p(16, comm);
    p.obj->set_inputs({{"x", interior(16 * r, 16)}});
    {
      volatile std::sig_atomic_t flag = 0;
      Trainer trainer(*p.obj, {{.name = "adam", .steps = 40}});
      trainer.stop_when({.interrupt = &flag});
      trainer.on_step([&](const StepInfo& info) {
        if (r == 1 && info.step == 7) flag = 1;
        return true;
      });
      Eigen::VectorXd theta = p.theta0();
      result[r] = trainer.train(theta);
    }
    // A callback that stops rank 0 on the very last step: rank 1 learns it too (and neither
    // waits for the other forever).
    Trainer trainer(*p.obj, {{.name = "adam", .steps = 10}});
    trainer.on_step([&](const StepInfo& info) { return !(r == 0 && info.step == 10); });
    Eigen::VectorXd theta = p.theta0();
    stopped[r] = trainer.train(theta);
  });
  for (const TrainResult& r : result) {
    EXPECT_EQ(r.status, TrainResult::Status::interrupted);
    EXPECT_EQ(r.steps, 7);
    EXPECT_EQ(r.message, "stage 'adam': interrupted after step 7");
  }
  for (const TrainResult& r : stopped) {
    EXPECT_EQ(r.status, TrainResult::Status::stopped);
    EXPECT_EQ(r.message, "stopped by a callback at step 10");
  }
}

// Unequal shares (20 and 12 of the 32 points) weight each rank by its rows: the loss and
// gradient are still the serial ones over all 32 points.
TEST(Communicator, UnequalSharesGiveTheMeanOverAllPoints) {
  Poisson serial(32, serial_communicator());
  serial.obj->set_inputs({{"x", interior(0, 32)}});
  const Eigen::VectorXd theta = serial.theta0();
  Eigen::VectorXd g_serial;
  const double loss0 = serial.obj->evaluate(theta, &g_serial);
  const std::vector<double> slots0 = serial.obj->slot_losses();
  const std::vector<Eigen::VectorXd> terms0 = serial.obj->term_gradients(theta);
  ThreadRanks ranks(2);
  double loss[2];
  Eigen::VectorXd g[2];
  std::vector<double> slots[2];
  std::vector<Eigen::VectorXd> terms[2];
  on_ranks(ranks, 2, [&](int r, const Communicator& comm) {
    Poisson p(r == 0 ? 20 : 12, comm);
    p.obj->set_inputs({{"x", r == 0 ? interior(0, 20) : interior(20, 12)}});
    loss[r] = p.obj->evaluate(theta, &g[r]);
    slots[r] = p.obj->slot_losses();
    terms[r] = p.obj->term_gradients(theta);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(loss[r], loss0, 1e-12 * loss0);
    EXPECT_LT((g[r] - g_serial).norm(), 1e-12 * g_serial.norm());
    for (std::size_t k = 0; k < slots0.size(); ++k)
      EXPECT_NEAR(slots[r][k], slots0[k], 1e-12 * slots0[k]) << k;
    for (std::size_t t = 0; t < terms0.size(); ++t)
      EXPECT_LT((terms[r][t] - terms0[t]).norm(), 1e-12 * terms0[t].norm()) << t;
  }
}

TEST(Communicator, AllgatherAndGatherPutTheRanksEndToEnd) {
  ThreadRanks ranks(3);
  std::vector<double> all[3], at_root[3];
  on_ranks(ranks, 3, [&](int r, const Communicator& comm) {
    std::vector<double> mine(static_cast<std::size_t>(r + 1), r + 0.5);
    all[r] = comm.allgather(mine);
    at_root[r] = comm.gather(mine, 1);
  });
  const std::vector<double> expected{0.5, 1.5, 1.5, 2.5, 2.5, 2.5};
  for (int r = 0; r < 3; ++r) EXPECT_EQ(all[r], expected);
  EXPECT_TRUE(at_root[0].empty());
  EXPECT_EQ(at_root[1], expected);
  EXPECT_TRUE(at_root[2].empty());
  EXPECT_EQ(share_of(17, 2, 3).first, 12);
  EXPECT_EQ(share_of(17, 2, 3).count, 5);
  EXPECT_EQ(share_of(17, 0, 3).count, 6);
}

// The neighbour exchange on three ranks: blocks held by {0, 1}, {1, 2} and everyone (one of two
// ranges). Each holder gets the sum of the holders' parts, bit for bit the same on every holder,
// a rank's unheld block is zeroed, the extra values are summed over all; synchronize gives every
// rank each block's owner values. The messages go through the default (allgather) exchange.
TEST(ParameterExchange, SumsEachBlockOverItsHoldersOnly) {
  const std::vector<ParameterBlock> blocks{
      {.name = "a", .ranges = {{0, 2}}, .holders = {1, 0}},
      {.name = "b", .ranges = {{2, 3}}, .holders = {1, 2}},
      {.name = "all", .ranges = {{5, 1}, {6, 1}}, .holders = {0, 1, 2}}};
  // Rank r's part: entry i is (r + 1) * 10^-i (a sum whose terms are all visible).
  const auto part = [](int r) {
    Eigen::VectorXd v(7);
    for (int i = 0; i < 7; ++i) v(i) = (r + 1) * std::pow(10.0, -i);
    return v;
  };
  ThreadRanks ranks(3);
  std::vector<Eigen::VectorXd> sums(3), synced(3);
  std::vector<std::vector<int>> peers(3);
  std::vector<double> extras(3);
  on_ranks(ranks, 3, [&](int r, const Communicator& comm) {
    const ParameterExchange x(blocks, 7, comm);
    peers[static_cast<std::size_t>(r)] = x.peers();
    Eigen::VectorXd g = part(r);
    std::vector<double> extra{static_cast<double>(r)};
    x.sum(g, extra);
    sums[static_cast<std::size_t>(r)] = g;
    extras[static_cast<std::size_t>(r)] = extra[0];
    Eigen::VectorXd theta = Eigen::VectorXd::Constant(7, 100.0 + r);  // each rank its own copy
    x.synchronize(theta);
    synced[static_cast<std::size_t>(r)] = theta;
  });
  EXPECT_EQ(peers[0], std::vector<int>{1});
  EXPECT_EQ(peers[1], (std::vector<int>{0, 2}));
  EXPECT_EQ(peers[2], std::vector<int>{1});
  for (int r = 0; r < 3; ++r) EXPECT_EQ(extras[static_cast<std::size_t>(r)], 3.0);
  const Eigen::VectorXd p0 = part(0), p1 = part(1), p2 = part(2);
  // Block a on ranks 0 and 1, b on 1 and 2, "all" everywhere; exact in the holders' order.
  for (int i : {0, 1}) {
    EXPECT_EQ(sums[0](i), p0(i) + p1(i));
    EXPECT_EQ(sums[1](i), sums[0](i));
    EXPECT_EQ(sums[2](i), 0.0) << "rank 2 does not hold block a";
  }
  for (int i : {2, 3, 4}) {
    EXPECT_EQ(sums[1](i), p1(i) + p2(i));
    EXPECT_EQ(sums[2](i), sums[1](i));
    EXPECT_EQ(sums[0](i), 0.0) << "rank 0 does not hold block b";
  }
  for (int i : {5, 6})
    for (int r = 0; r < 3; ++r)
      EXPECT_NEAR(sums[static_cast<std::size_t>(r)](i), p0(i) + p1(i) + p2(i), 1e-15);
  // The owners: a and "all" rank 0, b rank 1.
  for (int r = 0; r < 3; ++r) {
    const Eigen::VectorXd& t = synced[static_cast<std::size_t>(r)];
    EXPECT_EQ(t(0), 100.0);
    EXPECT_EQ(t(1), 100.0);
    EXPECT_EQ(t(2), 101.0);
    EXPECT_EQ(t(4), 101.0);
    EXPECT_EQ(t(5), 100.0);
    EXPECT_EQ(t(6), 100.0);
  }
}

TEST(ParameterExchange, RefusesBlocksThatDoNotCoverTheVectorOnce) {
  const Communicator& one = serial_communicator();
  const auto error = [&](std::vector<ParameterBlock> blocks, Eigen::Index size) {
    try {
      ParameterExchange x(std::move(blocks), size, one);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{.name = "a", .ranges = {{0, 2}}, .holders = {0}}}, 3)
                .find("parameter 2 is in no block"),
            std::string::npos);
  EXPECT_NE(error({{.name = "a", .ranges = {{0, 2}}, .holders = {0}},
                   {.name = "b", .ranges = {{1, 2}}, .holders = {0}}},
                  3)
                .find("parameter 1 is in two blocks"),
            std::string::npos);
  EXPECT_NE(error({{.name = "a", .ranges = {{0, 4}}, .holders = {0}}}, 3).find("reaches past"),
            std::string::npos);
  EXPECT_NE(error({{.name = "a", .ranges = {{0, 3}}, .holders = {1}}}, 3).find("no holders"),
            std::string::npos);
}

}  // namespace
}  // namespace jetpde::solvers
