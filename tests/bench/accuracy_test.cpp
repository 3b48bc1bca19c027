// The accuracy cases (bench/accuracy/cases.h) with small budgets: each must reach an error that
// an untrained or broken solver cannot, far from the full-budget targets that `make bench`
// measures (build/bench/accuracy.json).
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/accuracy/cases.h"

namespace jetpde::bench {
namespace {

std::string data_dir() { return std::string(JETPDE_SOURCE_DIR) + "/../shared/data"; }

AccuracyResult run(const std::string& name, double scale) {
  AccuracyResult r = accuracy_case(name).run({.data_dir = data_dir(), .scale = scale, .seed = 0});
  std::cout << "  " << name << " (budget x" << scale << "):";
  for (const auto& [k, v] : r.metrics) std::cout << " " << k << " " << v;
  std::cout << "\n";
  return r;
}

TEST(Accuracy, BurgersAgainstTheReference) {
  if (!std::filesystem::exists(data_dir() + "/burgers.h5"))
    GTEST_SKIP() << "no " << data_dir() << "/burgers.h5 (../shared/data absent)";
  const AccuracyResult r = run("burgers", 0.05);
  EXPECT_LT(r.metrics.at("rel_l2"), 0.05);  // an untrained network: about 1; full budget 6e-4
}

TEST(Accuracy, BurgersInverseMovesNuTowardsTheTruth) {
  if (!std::filesystem::exists(data_dir() + "/burgers.h5"))
    GTEST_SKIP() << "no " << data_dir() << "/burgers.h5 (../shared/data absent)";
  const AccuracyResult r = run("burgers_inverse", 0.05);
  EXPECT_LT(r.metrics.at("nu_rel_error"), 1.8);  // the initial guess 0.01 is off by 2.14
  EXPECT_LT(r.metrics.at("rel_l2"), 0.1);
}

TEST(Accuracy, LidDrivenCavityRunsItsExampleConfig) {
  if (!std::filesystem::exists(data_dir() + "/ldc_re100.h5"))
    GTEST_SKIP() << "no " << data_dir() << "/ldc_re100.h5 (../shared/data absent)";
  const AccuracyResult r = run("ldc", 0.1);
  // After 6 steps: about 0.6 (the corner flows alone already carry part of it); 0.30 measured at
  // this budget; full budget 5.9e-3.
  EXPECT_LT(r.metrics.at("velocity_rel_l2"), 0.45);
}

TEST(Accuracy, ClampedPlateFourthOrder) {
  EXPECT_LT(run("plate4", 0.05).metrics.at("rel_l2"), 0.1);
}

// At a twentieth of the budget 3 to 5 seeds of 20 end above 1e-3 (seed 0 among them after a last
// bit of tanh changed); at a fifth, measured 2026-12-04, seeds 0-19 end at 1.3e-6 to 1.7e-4.
TEST(Accuracy, SixthOrderBoundaryValueProblem) {
  EXPECT_LT(run("bvp6", 0.2).metrics.at("rel_l2"), 1e-3);
}

}  // namespace
}  // namespace jetpde::bench
