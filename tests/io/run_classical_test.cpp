// `solver: {type: petsc}` through io::run: the classical solve writes the run folder the writers
// write for a trained run, with its iterations and residuals in summary.json, and what it refuses
// is refused before the folder is touched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "autodiff/errors.h"
#include "io/config.h"
#include "io/run.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

RunConfig poisson_config(const std::string& dir, const std::string& geometry,
                         std::vector<std::string> overrides = {}) {
  overrides.push_back("output.dir=" + dir);
  return run_config_from_text(
      "geometry: " + geometry + "\n" +
          "equations: [{expression: laplacian(u) + 2*pi^2*sin(pi*x)*sin(pi*y)}]\n"
          "conditions: [{kind: dirichlet, value: 0}]\n"
          "solver: {type: petsc, grid: [33, 33]}\n"
          "reference: {expressions: {u: sin(pi*x)*sin(pi*y)}}\n"
          "output: {progress: none, grid: [9], quantities: [u_x]}\n",
      "poisson.yaml", ".", overrides);
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

#if JETPDE_HAVE_PETSC

TEST(RunClassical, WritesTheRunFolderWithTheSolvesRecord) {
  const fs::path dir = temp_dir("jetpde_run_petsc");
  const RunConfig c = poisson_config(dir.string(), "{type: rectangle, min: [0, 0], max: [1, 1]}");
  const RunReport r = run(c);
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::finished);
  EXPECT_EQ(r.result().steps, 1);  // one Newton iteration: the problem is linear
  // 2nd order on 33 x 33: about 8e-4 relative.
  EXPECT_LT(r.solution.metrics().at("rel_l2"), 2e-3);
  EXPECT_GT(r.solution.metrics().at("rel_l2"), 1e-5);
  EXPECT_EQ(r.solution.precision(), "fp64");
  EXPECT_THROW(r.solution.problem(), UserError);
  for (const char* f : {"config.yaml", "fields.vti", "fields.h5", "summary.json"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "checkpoint.h5"));
  std::ifstream in(dir / "summary.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["solver"]["type"], "petsc");
  EXPECT_EQ(j["solver"]["converged"], true);
  EXPECT_EQ(j["solver"]["grid"], nlohmann::json::array({33, 33}));
  EXPECT_EQ(j["solver"]["unknowns"], 33 * 33);
  EXPECT_LT(j["solver"]["residual_norm"]["final"].get<double>(),
            1e-6 * j["solver"]["residual_norm"]["initial"].get<double>());
  EXPECT_GT(j["solver"]["seconds"].get<double>(), 0.0);
  EXPECT_EQ(j["metrics"]["rel_l2"].get<double>(), r.solution.metrics().at("rel_l2"));
  // `jetpde eval` and `export` load the folder: the solution is solved again from config.yaml,
  // the same numbers.
  const LoadedRun loaded = load_run(dir.string());
  MatrixD points(3, 2);
  points << 0.3, 0.7, 0.5, 0.5, 0.91, 0.02;
  const MatrixD a = r.solution.evaluate(points, {"u", "u_x"});
  const MatrixD b = loaded.solution.evaluate(points, {"u", "u_x"});
  EXPECT_LT((a - b).abs().maxCoeff(), 1e-12);
  EXPECT_EQ(loaded.step, 1);
  fs::remove_all(dir);
}

TEST(RunClassical, AShapeItCannotGridIsAnErrorBeforeTheFolder) {
  const fs::path dir = temp_dir("jetpde_run_petsc_disk");
  const RunConfig c = poisson_config(dir.string(), "{type: disk, center: [0, 0], radius: 1}");
  try {
    run(c);
    FAIL() << "a disk was solved by finite differences";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("poisson.yaml: solver (petsc): "), std::string::npos) << what;
    EXPECT_NE(what.find("boxes only"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(RunClassical, OptionsPetscDoesNotKnowAreAnError) {
  const fs::path dir = temp_dir("jetpde_run_petsc_options");
  const RunConfig c = poisson_config(dir.string(), "{type: rectangle, min: [0, 0], max: [1, 1]}",
                                     {"solver.options=-snes_type no_such_snes"});
  try {
    run(c);
    FAIL() << "an unknown SNES type was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_snes"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// PINN configs run classically: what their networks build in (Burgers' hard initial and boundary
// values, Allen-Cahn's periodic input) are conditions for the grid.
TEST(RunClassical, BurgersConfigAgainstColeHopf) {
  const fs::path dir = temp_dir("jetpde_run_petsc_burgers");
  const RunConfig c =
      load_run_config(std::string(JETPDE_SOURCE_DIR) + "/examples/burgers.yaml",
                      {"solver.type=petsc", "solver.grid=[1025]", "output.dir=" + dir.string(),
                       "output.grid=[17]", "output.time_steps=3", "output.progress=none"});
  const RunReport r = run(c);
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::finished);
  // 1.2e-3 measured (2nd order: 2.9e-4 on 2049 points); the PINN's 7.7e-4 takes two minutes.
  EXPECT_LT(r.solution.metrics().at("rel_l2"), 2e-3);
  fs::remove_all(dir);
}

TEST(RunClassical, AllenCahnConfigAgainstItsReferenceData) {
  const std::string data = std::string(JETPDE_SOURCE_DIR) + "/../shared/data/allen_cahn.h5";
  if (!fs::exists(data)) GTEST_SKIP() << data << " is absent";
  const fs::path dir = temp_dir("jetpde_run_petsc_allen_cahn");
  const RunConfig c =
      load_run_config(std::string(JETPDE_SOURCE_DIR) + "/examples/allen_cahn.yaml",
                      {"solver.type=petsc", "solver.grid=[256]", "output.dir=" + dir.string(),
                       "output.grid=[17]", "output.time_steps=3", "output.progress=none"});
  const RunReport r = run(c);
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::finished);
  EXPECT_LT(r.solution.metrics().at("rel_l2"), 3e-3);  // 1.8e-3 measured; 4.5e-4 on 512 points
  fs::remove_all(dir);
}

// reference: {solver: petsc}: a PINN run validated against the classical solution of its own
// problem, in history.csv and summary.json.
TEST(RunClassical, AsTheReferenceOfAPinnRun) {
  const fs::path dir = temp_dir("jetpde_run_petsc_reference");
  const auto config = [&](const std::string& reference) {
    return run_config_from_text(
        "geometry: {type: interval, min: [0], max: [1]}\n"
        "equations: [{expression: u_xx + pi^2*sin(pi*x)}]\n"
        "conditions: [{kind: dirichlet, value: 0}]\n"
        "network: {hidden: [8]}\n"
        "sampling: {interior_points: 32}\n"
        "training: {stages: [{optimizer: adam, steps: 10}]}\n"
        "reference: {" +
            reference +
            ", every: 5}\n"
            "output: {progress: none, grid: [9]}\n",
        "reference.yaml", ".", {"output.dir=" + dir.string()});
  };
  const RunReport exact = run(config("expressions: {u: sin(pi*x)}"));
  const RunReport r = run(config("solver: petsc, grid: [257]"));
  // The same network measured against the classical solution and against the exact one: the
  // same error, up to the classical solution's own (about 1e-5 here).
  ASSERT_TRUE(r.solution.metrics().count("rel_l2"));
  EXPECT_NEAR(r.solution.metrics().at("rel_l2"), exact.solution.metrics().at("rel_l2"), 1e-4);
  EXPECT_GT(r.solution.metrics().at("rel_l2"), 1e-2);  // ten steps: far from converged
  std::ifstream in(dir / "summary.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["reference_solver"]["solver"], "petsc");
  EXPECT_EQ(j["reference_solver"]["grid"], nlohmann::json::array({257}));
  std::ifstream history(dir / "history.csv");
  std::string header;
  std::getline(history, header);
  EXPECT_NE(header.find("rel_l2"), std::string::npos) << header;
  fs::remove_all(dir);
}

#else

TEST(RunClassical, WithoutPetscTheSolverTypeIsAnError) {
  const fs::path dir = temp_dir("jetpde_run_petsc_absent");
  EXPECT_THROW(run(poisson_config(dir.string(), "{type: rectangle, min: [0, 0], max: [1, 1]}")),
               UserError);
}

#endif

TEST(RunClassical, AClassicalReferenceIsTheOnlyReference) {
  EXPECT_THROW(poisson_config("unused", "{type: rectangle, min: [0, 0], max: [1, 1]}",
                              {"reference.solver=petsc"}),  // and expressions
               UserError);
}

TEST(RunClassical, TheGridMustFitTheAxes) {
  EXPECT_THROW(poisson_config("unused", "{type: rectangle, min: [0, 0], max: [1, 1]}",
                              {"solver.grid=[9, 9, 9]"}),
               UserError);
  EXPECT_THROW(
      poisson_config("unused", "{type: rectangle, min: [0, 0], max: [1, 1]}", {"solver.grid=[2]"}),
      UserError);
}

}  // namespace
}  // namespace jetpde::io
