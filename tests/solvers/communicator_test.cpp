// The communicator seam: serial is rank 0 of 1 and changes nothing; ranks draw their own points
// (rank 0 those of a serial run); with several ranks (threads here, each with its own objective
// and half of the points) the loss and gradient are averaged in Objective::evaluate, every rank
// takes the same steps, and a stop on one rank stops all after the same step.
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

TEST(Communicator, EachRankSamplesItsOwnPointsAndRankZeroASerialRunsPoints) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = 16;
  spec.math.conditions = {{.kind = Condition::Kind::dirichlet, .value = "0"}};
  spec.pinn.conditions = {{.points = 8}};
  spec.pinn.network.hidden = {4};
  ThreadRanks ranks(2);  // no collectives are called here
  const ThreadRanks::Rank rank0 = ranks.rank(0), rank1 = ranks.rank(1);
  Problem serial(spec), first(spec, rank0), second(spec, rank1);
  const Bindings& a = serial.objective().inputs();
  const Bindings& b = first.objective().inputs();
  const Bindings& c = second.objective().inputs();
  ASSERT_EQ(a.size(), 2u);
  for (const auto& [name, points] : a) {
    EXPECT_TRUE((b.at(name) == points).all()) << name;
    EXPECT_FALSE((c.at(name) == points).all()) << name;
  }
  for (const auto& [name, points] : serial.resample(7)) {
    EXPECT_TRUE((first.resample(7).at(name) == points).all()) << name;
    EXPECT_FALSE((second.resample(7).at(name) == points).all()) << name;
  }
  // The network's initial parameters do not depend on the rank: every rank starts alike.
  EXPECT_TRUE(serial.initial_theta(3) == second.initial_theta(3));
}

// Two ranks with 16 of the 32 points each: the averaged loss is the serial loss over all 32
// (every rank has as many points), both ranks take the same steps through Adam and L-BFGS, and
// they end where the serial run ends up to rounding.
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
  const ThreadRanks::Rank comms[2] = {ranks.rank(0), ranks.rank(1)};
  std::vector<std::unique_ptr<Poisson>> p;
  for (int r = 0; r < 2; ++r) {
    p.push_back(std::make_unique<Poisson>(16, comms[r]));
    p.back()->obj->set_inputs({{"x", interior(16 * r, 16)}});
  }
  double loss[2];
  Eigen::VectorXd g[2], end[2];
  TrainResult result[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      end[r] = p[static_cast<std::size_t>(r)]->theta0();
      loss[r] = p[static_cast<std::size_t>(r)]->obj->evaluate(end[r], &g[r]);
      Trainer trainer(*p[static_cast<std::size_t>(r)]->obj, stages, {.initial = {1.0, 10.0}});
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
  const ThreadRanks::Rank comms[2] = {ranks.rank(0), ranks.rank(1)};
  std::vector<std::unique_ptr<Poisson>> p;
  for (int r = 0; r < 2; ++r) {
    p.push_back(std::make_unique<Poisson>(16, comms[r]));
    p.back()->obj->set_inputs({{"x", interior(16 * r, 16)}});
  }
  TrainResult result[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      volatile std::sig_atomic_t flag = 0;
      Trainer trainer(*p[static_cast<std::size_t>(r)]->obj, {{.name = "adam", .steps = 40}});
      trainer.stop_when({.interrupt = &flag});
      trainer.on_step([&](const StepInfo& info) {
        if (r == 1 && info.step == 7) flag = 1;
        return true;
      });
      Eigen::VectorXd theta = p[static_cast<std::size_t>(r)]->theta0();
      result[r] = trainer.train(theta);
    });
  for (std::thread& t : threads) t.join();
  for (const TrainResult& r : result) {
    EXPECT_EQ(r.status, TrainResult::Status::interrupted);
    EXPECT_EQ(r.steps, 7);
    EXPECT_EQ(r.message, "stage 'adam': interrupted after step 7");
  }
  // A callback that stops rank 0 on the very last step: rank 1 learns it too (and neither waits
  // for the other forever).
  threads.clear();
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      Trainer trainer(*p[static_cast<std::size_t>(r)]->obj, {{.name = "adam", .steps = 10}});
      trainer.on_step([&](const StepInfo& info) { return !(r == 0 && info.step == 10); });
      Eigen::VectorXd theta = p[static_cast<std::size_t>(r)]->theta0();
      result[r] = trainer.train(theta);
    });
  for (std::thread& t : threads) t.join();
  for (const TrainResult& r : result) {
    EXPECT_EQ(r.status, TrainResult::Status::stopped);
    EXPECT_EQ(r.message, "stopped by a callback at step 10");
  }
}

}  // namespace
}  // namespace jetpde::solvers
