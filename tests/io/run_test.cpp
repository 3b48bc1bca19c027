// io::run's per-step callback (RunOptions::on_step): it sees every step, and returning false
// stops the run with status "stopped", the run folder written as for a finished run. A stage in
// fp64 after an f32 one: summary.json says each stage's precision, and a run stopped inside the
// fp64 stage and resumed from its checkpoint ends with the unbroken run's parameters.
#include "io/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "io/config.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

RunConfig tiny_config(const std::string& dir,
                      const std::string& stages = "[{optimizer: adam, steps: 10}]") {
  return run_config_from_text(
      "geometry: {type: interval, min: [0], max: [1]}\n"
      "equations: [{expression: u_xx + 1}]\n"
      "conditions: [{kind: dirichlet, value: 0}]\n"
      "network: {hidden: [4]}\n"
      "sampling: {interior_points: 16}\n"
      "training: {stages: " +
          stages +
          "}\n"
          "output: {progress: none, grid: [5], checkpoint_every: 3}\n",
      "tiny.yaml", ".", {"output.dir=" + dir});
}

std::string read_text(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

TEST(RunOnStep, SeesEveryStepAndStopsTheRunWhenItReturnsFalse) {
  const fs::path dir =
      fs::temp_directory_path() / ("jetpde_run_on_step_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::vector<int> seen;
  RunOptions options;
  options.on_step = [&](const solvers::StepInfo& info) {
    seen.push_back(info.step);
    EXPECT_EQ(info.slot_losses.size(), 2u);
    return info.step < 4;
  };
  const RunReport r = run(tiny_config(dir.string()), options);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::stopped);
  EXPECT_EQ(r.result().steps, 4);
  std::ifstream summary(dir / "summary.json");
  std::stringstream text;
  text << summary.rdbuf();
  EXPECT_NE(text.str().find("\"status\": \"stopped\""), std::string::npos) << text.str();
  EXPECT_EQ(load_run(dir.string()).step, 4);
  fs::remove_all(dir);
}

TEST(RunOnStep, WithoutOneTheRunFinishes) {
  const fs::path dir =
      fs::temp_directory_path() / ("jetpde_run_no_step_" + std::to_string(getpid()));
  fs::remove_all(dir);
  RunOptions options;
  const RunReport r = run(tiny_config(dir.string()), options);
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::finished);
  EXPECT_EQ(r.result().steps, 10);
  fs::remove_all(dir);
}

TEST(RunPrecision, AnFp64StageIsInSummaryAndResumesInFp64) {
  const fs::path dir = fs::temp_directory_path() / ("jetpde_run_fp64_" + std::to_string(getpid()));
  const std::string stages =
      "[{optimizer: adam, steps: 5, learning_rate: 0.01}, {optimizer: lbfgs, steps: 5},"
      " {name: polish, optimizer: lbfgs, steps: 6, precision: fp64, function_tolerance: 0,"
      " gradient_tolerance: 0}]";
  fs::remove_all(dir);
  const RunReport full = run(tiny_config(dir.string(), stages));
  ASSERT_EQ(full.result().status, solvers::TrainResult::Status::finished) << full.result().message;
  ASSERT_EQ(full.result().steps, 16) << full.result().message;
  const std::string summary = read_text(dir / "summary.json");
  EXPECT_NE(summary.find("\"name\": \"lbfgs\",\n      \"optimizer\": \"lbfgs\",\n      \"steps\": "
                         "5,\n      \"precision\": \"fp32\""),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\"name\": \"polish\",\n      \"optimizer\": \"lbfgs\",\n      \"steps\": "
                         "6,\n      \"precision\": \"fp64\""),
            std::string::npos)
      << summary;
  EXPECT_NE(full.result().message.find("; polish (fp64): "), std::string::npos)
      << full.result().message;
  // Stopped after step 13 (the fp64 stage's third), checkpointed there, resumed.
  fs::remove_all(dir);
  RunOptions stop;
  stop.on_step = [](const solvers::StepInfo& info) { return info.step < 13; };
  EXPECT_EQ(run(tiny_config(dir.string(), stages), stop).result().steps, 13);
  RunOptions resume;
  resume.resume = true;
  std::vector<std::string> seen;
  resume.on_step = [&](const solvers::StepInfo& info) {
    seen.push_back(info.stage);
    return true;
  };
  const RunReport resumed = run(tiny_config(dir.string(), stages), resume);
  EXPECT_EQ(seen, (std::vector<std::string>{"polish", "polish", "polish"}));
  EXPECT_EQ(resumed.result().steps, 16);
  EXPECT_TRUE(resumed.solution.theta() == full.solution.theta())
      << "max difference "
      << (resumed.solution.theta() - full.solution.theta()).cwiseAbs().maxCoeff();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace jetpde::io
