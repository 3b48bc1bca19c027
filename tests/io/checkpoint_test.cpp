// Checkpoints: every part of a trainer state survives the HDF5 round trip bit for bit, and a file
// that is not a checkpoint is named.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/checkpoint.h"
#include "io/hdf5_write.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using Checkpoints = jetpde::testing::ScratchDirTest;

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
  s.inputs = {{"interior", MatrixD::Random(5, 2)}, {"condition0", MatrixD::Random(3, 2)}};
  s.adam = {Eigen::VectorXd::Random(7), Eigen::VectorXd::Random(7).cwiseAbs(), 1200};
  s.lbfgs.s = {Eigen::VectorXd::Random(7), Eigen::VectorXd::Random(7)};
  s.lbfgs.y = {Eigen::VectorXd::Random(7), Eigen::VectorXd::Random(7)};
  s.lbfgs.g = Eigen::VectorXd::Random(7);
  s.lbfgs.f = 0.1 + 0.2;
  s.lbfgs.iterations = 34;
  s.lbfgs.evaluations = 41;
  s.lbfgs.started = true;
  s.lbfgs.stop = nn::LbfgsStop::running;
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
  ASSERT_EQ(t.inputs.size(), 2u);
  EXPECT_TRUE((t.inputs.at("interior") == s.inputs.at("interior")).all());
  EXPECT_TRUE((t.inputs.at("condition0") == s.inputs.at("condition0")).all());
  EXPECT_TRUE(t.adam.m == s.adam.m);
  EXPECT_TRUE(t.adam.v == s.adam.v);
  EXPECT_EQ(t.adam.t, 1200);
  ASSERT_EQ(t.lbfgs.s.size(), 2u);
  EXPECT_TRUE(t.lbfgs.s[1] == s.lbfgs.s[1]);
  EXPECT_TRUE(t.lbfgs.y[0] == s.lbfgs.y[0]);
  EXPECT_TRUE(t.lbfgs.g == s.lbfgs.g);
  EXPECT_EQ(t.lbfgs.f, 0.1 + 0.2);
  EXPECT_EQ(t.lbfgs.iterations, 34);
  EXPECT_EQ(t.lbfgs.evaluations, 41);
  EXPECT_TRUE(t.lbfgs.started);
  EXPECT_EQ(t.endings, s.endings);
  EXPECT_EQ(t.loss, 1.0 / 7);
}

TEST_F(Checkpoints, AnEmptyHistoryAndNoInputsRoundTrip) {
  Checkpoint c;
  c.state.theta = Eigen::VectorXd::Ones(3);
  c.state.adam = {Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), 0};
  write_checkpoint(path("c.h5"), c);
  const Checkpoint r = read_checkpoint(path("c.h5"));
  EXPECT_TRUE(r.state.lbfgs.s.empty());
  EXPECT_TRUE(r.state.inputs.empty());
  EXPECT_TRUE(r.state.endings.empty());
  EXPECT_TRUE(r.config.empty());
}

TEST_F(Checkpoints, AFileThatIsNotACheckpointIsNamed) {
  Hdf5Writer w(path("other.h5"));
  w.write("u", std::vector<double>{1, 2});
  w.commit();
  jetpde::testing::expect_user_error(
      [&] { read_checkpoint(path("other.h5")); },
      path("other.h5") + ": not a jetpde checkpoint (no format attribute 'jetpde checkpoint 1')");
}

}  // namespace
}  // namespace jetpde::io
