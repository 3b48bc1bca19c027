// io::run's per-step callback (RunOptions::on_step): it sees every step, and returning false
// stops the run with status "stopped", the run folder written as for a finished run.
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

RunConfig tiny_config(const std::string& dir) {
  return run_config_from_text(
      "geometry: {type: interval, min: [0], max: [1]}\n"
      "equations: [{expression: u_xx + 1}]\n"
      "conditions: [{kind: dirichlet, value: 0}]\n"
      "network: {hidden: [4]}\n"
      "sampling: {interior_points: 16}\n"
      "training: {stages: [{optimizer: adam, steps: 10}]}\n"
      "output: {progress: none, grid: [5]}\n",
      "tiny.yaml", ".", {"output.dir=" + dir});
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

}  // namespace
}  // namespace jetpde::io
