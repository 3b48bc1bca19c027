// Checkpoints: every part of a trainer state survives the HDF5 round trip bit for bit (any
// optimizer's state), checkpoints of the first layout still resume, a SOAP stage resumes from a
// file, and a file that is not a checkpoint is named.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <type_traits>
#include <variant>

#include "autodiff/ops.h"
#include "io/checkpoint.h"
#include "io/hdf5_write.h"
#include "nn/network.h"
#include "nn/soap.h"
#include "solvers/objective.h"
#include "solvers/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using Checkpoints = jetpde::testing::ScratchDirTest;

// Every value of both states, bit for bit, and nothing more in either.
bool same(const solvers::OptimizerState& a, const solvers::OptimizerState& b) {
  if (a.kind != b.kind || a.values.size() != b.values.size()) return false;
  for (const auto& [name, value] : a.values) {
    const auto it = b.values.find(name);
    if (it == b.values.end() || it->second.index() != value.index()) return false;
    const bool equal = std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(it->second);
          if constexpr (std::is_same_v<T, MatrixD>)
            return x.rows() == y.rows() && x.cols() == y.cols() && (x == y).all();
          else if constexpr (std::is_same_v<T, Eigen::VectorXd>)
            return x.size() == y.size() && x == y;
          else
            return x == y;
        },
        value);
    if (!equal) return false;
  }
  return true;
}

// A tiny objective for resuming: a 1-3-1 network fitted to sin on five points, trained through
// Adam then L-BFGS with checkpoints every 5 steps.
struct TinyFit {
  Graph g{DType::f64};
  nn::Network net{g, {.inputs = 1, .hidden = {3}, .outputs = 1}};
  Var x = g.input("x", {5, 1});
  solvers::Objective obj;
  static compiler::CompileOptions options() {
    compiler::CompileOptions o;
    o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
    o.pipeline.precision = compiler::PrecisionPolicy::fp64;
    return o;
  }
  TinyFit() : obj({{"fit", net(x) - sin(x * 2.0)}}, net.params(), options()) {
    obj.set_inputs({{"x", MatrixD(Eigen::VectorXd::LinSpaced(5, -1.0, 1.0))}});
  }
  Eigen::VectorXd theta0() const { return obj.layout().flatten(net.init(4)); }
};

TEST_F(Checkpoints, EveryPartRoundTripsBitForBit) {
  Checkpoint c;
  c.config = "seed: 3\nnetwork: {hidden: [8]}\n";
  c.seed = 3;
  solvers::TrainerState& s = c.state;
  s.step = 1234;
  s.stage = 1;
  s.stage_step = 34;
  s.theta = Eigen::VectorXd::LinSpaced(7, -1.0 / 3, 2.0 / 7);
  s.theta[2] = std::numeric_limits<double>::denorm_min();
  s.term_weights = {1.0, 10.0 / 3};
  s.slot_weights = {0.5, 0.5, 10.0 / 3};
  s.slot_losses = {1e-300, 0.1, 2.5};
  s.causal_scales = {155.75, 1.0};
  s.run_sum = Eigen::VectorXd::LinSpaced(7, 1.0 / 3, 3.0);  // an averaging stage's finished runs
  s.runs_summed = 2;
  s.run_ends = MatrixD::Random(3, 7);  // a tail average's last runs (Stage::average_last)
  s.inputs = {{"interior", MatrixD::Random(5, 2)}, {"condition0", MatrixD::Random(3, 2)}};
  const MatrixD pairs = MatrixD::Random(2, 7);
  const Eigen::VectorXd g = Eigen::VectorXd::Random(7);
  s.optimizer = {.kind = "lbfgs",
                 .values = {{"s", pairs},
                            {"y", MatrixD(pairs * 3)},
                            {"g", g},
                            {"f", 0.1 + 0.2},
                            {"counts", std::vector<std::int64_t>{34, 41, 1, 0}},
                            {"detail", std::string("")}}};
  s.endings = "adam: 1200 steps, loss 0.0012";
  s.loss = 1.0 / 7;
  write_checkpoint(path("checkpoint.h5"), c);
  const Checkpoint r = read_checkpoint(path("checkpoint.h5"));
  EXPECT_EQ(r.config, c.config);
  EXPECT_EQ(r.seed, 3u);
  const solvers::TrainerState& t = r.state;
  EXPECT_EQ(t.step, 1234);
  EXPECT_EQ(t.stage, 1);
  EXPECT_EQ(t.stage_step, 34);
  EXPECT_TRUE(t.theta == s.theta);
  EXPECT_EQ(t.term_weights, s.term_weights);
  EXPECT_EQ(t.slot_weights, s.slot_weights);
  EXPECT_EQ(t.slot_losses, s.slot_losses);
  EXPECT_EQ(t.causal_scales, s.causal_scales);
  EXPECT_TRUE(t.run_sum == s.run_sum);
  EXPECT_EQ(t.runs_summed, 2);
  ASSERT_EQ(t.run_ends.rows(), 3);
  EXPECT_TRUE((t.run_ends == s.run_ends).all());
  ASSERT_EQ(t.inputs.size(), 2u);
  EXPECT_TRUE((t.inputs.at("interior") == s.inputs.at("interior")).all());
  EXPECT_TRUE((t.inputs.at("condition0") == s.inputs.at("condition0")).all());
  EXPECT_EQ(t.optimizer.kind, "lbfgs");
  EXPECT_TRUE(same(t.optimizer, s.optimizer));
  EXPECT_TRUE((t.optimizer.get<MatrixD>("s") == pairs).all());
  EXPECT_TRUE(t.optimizer.get<Eigen::VectorXd>("g") == g);
  EXPECT_EQ(t.optimizer.get<double>("f"), 0.1 + 0.2);
  EXPECT_EQ(t.optimizer.get<std::vector<std::int64_t>>("counts"),
            (std::vector<std::int64_t>{34, 41, 1, 0}));
  EXPECT_EQ(t.endings, s.endings);
  EXPECT_EQ(t.loss, 1.0 / 7);
}

TEST_F(Checkpoints, AnEmptyHistoryAndNoInputsRoundTrip) {
  Checkpoint c;
  c.state.theta = Eigen::VectorXd::Ones(3);
  c.state.optimizer = {.kind = "adam",
                       .values = {{"m", Eigen::VectorXd()},
                                  {"v", Eigen::VectorXd()},
                                  {"t", std::int64_t{0}},
                                  {"pairs", MatrixD(0, 3)}}};
  write_checkpoint(path("c.h5"), c);
  const Checkpoint r = read_checkpoint(path("c.h5"));
  EXPECT_EQ(r.state.optimizer.kind, "adam");
  EXPECT_EQ(r.state.optimizer.get<Eigen::VectorXd>("m").size(), 0);
  EXPECT_EQ(r.state.optimizer.get<MatrixD>("pairs").rows(), 0);
  EXPECT_EQ(r.state.optimizer.get<MatrixD>("pairs").cols(), 3);
  EXPECT_TRUE(r.state.inputs.empty());
  EXPECT_TRUE(r.state.endings.empty());
  EXPECT_TRUE(r.config.empty());
  // No optimizer state (a stage that had not started): none read back.
  c.state.optimizer = {};
  write_checkpoint(path("none.h5"), c);
  EXPECT_TRUE(read_checkpoint(path("none.h5")).state.optimizer.empty());
}

// The checkpoint writer knows no optimizer kinds: any state of named values (a kind registered
// later, here every type of value) survives, and a name that cannot be a dataset is refused.
TEST_F(Checkpoints, AnyOptimizerStateRoundTrips) {
  Checkpoint c;
  c.state.theta = Eigen::VectorXd::Ones(2);
  c.state.optimizer = {
      .kind = "soap",
      .values = {{"beta", 0.95},
                 {"steps", std::int64_t{-3}},
                 {"shapes", std::vector<std::int64_t>{4, 2, 1}},
                 {"moment", Eigen::VectorXd(Eigen::VectorXd::LinSpaced(5, 0.0, 1.0 / 3))},
                 {"q0", MatrixD(MatrixD::Random(4, 4))},
                 {"note", std::string("first line\nsecond line")}}};
  write_checkpoint(path("c.h5"), c);
  const solvers::OptimizerState r = read_checkpoint(path("c.h5")).state.optimizer;
  EXPECT_EQ(r.kind, "soap");
  EXPECT_TRUE(same(r, c.state.optimizer));
  jetpde::testing::expect_user_error([&] { r.get<double>("steps"); },
                                     "optimizer state 'soap': 'steps' is of another type");
  jetpde::testing::expect_user_error([&] { r.get<double>("gamma"); },
                                     "optimizer state 'soap': no value 'gamma'");
  c.state.optimizer.values["a/b"] = 1.0;
  jetpde::testing::expect_user_error(
      [&] { write_checkpoint(path("bad.h5"), c); },
      "checkpoint: optimizer state 'soap': 'a/b' is not a plain name");
  EXPECT_FALSE(std::filesystem::exists(path("bad.h5")));
}

// Checkpoints written before optimizers were registered kinds (format 1, by the code of that
// time: tests/io/data/checkpoint_v1_step{5,10}.h5, in the Adam and in the L-BFGS stage of
// TinyFit's run) still resume, to the parameters of the run that never stopped: bit for bit on
// the CPU that wrote them (an AMD Zen 4), to 1e-10 relative on another (an Intel Xeon with
// AVX-512 rounds the steps before the checkpoint otherwise: 7e-13 apart).
TEST_F(Checkpoints, ACheckpointOfTheFirstLayoutStillResumes) {
  const std::vector<solvers::Stage> stages{
      {.name = "adam", .steps = 8, .options = nn::AdamOptions{.schedule = {.lr = 2e-2}}},
      {.name = "lbfgs", .optimizer = "lbfgs", .steps = 8}};
  const auto run = [&](const solvers::TrainerState* resume) {
    TinyFit fit;
    solvers::Trainer trainer(fit.obj, stages);
    Eigen::VectorXd theta = fit.theta0();
    const solvers::TrainResult r = trainer.train(theta, resume);
    EXPECT_EQ(r.status, solvers::TrainResult::Status::finished) << r.message;
    return std::pair{theta, r};
  };
  const auto [full, full_result] = run(nullptr);
  // What the code of that time printed for this run.
  EXPECT_EQ(full_result.steps, 16);
  EXPECT_EQ(full_result.message,
            "adam: 8 steps, loss 0.0789; lbfgs: iteration limit (8) reached: 8 iterations, 17 "
            "evaluations, f = 0.00029, max |g| = 0.014");
  const std::string data = std::string(JETPDE_SOURCE_DIR) + "/tests/io/data/";
  for (const auto& [file, kind] : {std::pair{"checkpoint_v1_step5.h5", "adam"},
                                   std::pair{"checkpoint_v1_step10.h5", "lbfgs"}}) {
    const Checkpoint c = read_checkpoint(data + file);
    EXPECT_EQ(c.state.optimizer.kind, kind) << file;
    EXPECT_EQ(c.seed, 4u);
    const auto [resumed, r] = run(&c.state);
    EXPECT_EQ(r.steps, full_result.steps) << file;
    EXPECT_EQ(r.message, full_result.message) << file;
    EXPECT_LE((resumed - full).cwiseAbs().maxCoeff(), 1e-10 * full.cwiseAbs().maxCoeff()) << file;
  }
}

// A SOAP stage (a 1-4-4-1 network: the 4 x 4 weight has both factors) checkpointed to a file
// mid-run, between two refreshes of its bases, resumes from the file to the parameters of the
// run that never stopped, bit for bit.
TEST_F(Checkpoints, ASoapStageResumesFromAFileBitForBit) {
  const std::vector<solvers::Stage> stages{
      {.name = "soap",
       .optimizer = "soap",
       .steps = 20,
       .options = nn::SoapOptions{.schedule = {.lr = 2e-2}, .precondition_frequency = 3}}};
  const auto run = [&](const solvers::TrainerState* resume, bool save) {
    Graph g{DType::f64};
    nn::Network net{g, {.inputs = 1, .hidden = {4, 4}, .outputs = 1}};
    const Var x = g.input("x", {5, 1});
    solvers::Objective obj({{"fit", net(x) - sin(x * 2.0)}}, net.params(), TinyFit::options());
    obj.set_inputs({{"x", MatrixD(Eigen::VectorXd::LinSpaced(5, -1.0, 1.0))}});
    solvers::Trainer trainer(obj, stages);
    if (save)
      trainer.checkpoint_every(8, [&](const solvers::TrainerState& s) {
        if (s.step == 8) write_checkpoint(path("soap.h5"), {.state = s});
      });
    Eigen::VectorXd theta = obj.layout().flatten(net.init(4));
    const solvers::TrainResult r = trainer.train(theta, resume);
    EXPECT_EQ(r.status, solvers::TrainResult::Status::finished) << r.message;
    return std::pair{theta, r};
  };
  const auto [full, full_result] = run(nullptr, true);
  const Checkpoint c = read_checkpoint(path("soap.h5"));
  EXPECT_EQ(c.state.optimizer.kind, "soap");
  EXPECT_EQ(c.state.optimizer.get<std::int64_t>("t"), 8);
  EXPECT_EQ(c.state.optimizer.get<MatrixD>("QL2").rows(), 4);  // W1, the 4 x 4 weight
  const auto [resumed, r] = run(&c.state, false);
  EXPECT_EQ(r.message, full_result.message);
  EXPECT_TRUE(resumed == full) << "max difference " << (resumed - full).cwiseAbs().maxCoeff();
}

TEST_F(Checkpoints, AFileThatIsNotACheckpointIsNamed) {
  Hdf5Writer w(path("other.h5"));
  w.write("u", std::vector<double>{1, 2});
  w.commit();
  jetpde::testing::expect_user_error(
      [&] { read_checkpoint(path("other.h5")); },
      path("other.h5") + ": not a jetpde checkpoint (no format attribute 'jetpde checkpoint 2')");
}

}  // namespace
}  // namespace jetpde::io
