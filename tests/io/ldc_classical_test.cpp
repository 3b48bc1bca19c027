// The lid-driven cavity at Re 100 solved classically from its config (examples/ldc_petsc.yaml:
// the velocity-pressure form, solvers/classical's pressure stabilization), against the reference
// fields ../shared/data/ldc_re100.h5 and Ghia, Ghia & Shin's centerline table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "io/config.h"
#include "io/hdf5_read.h"
#include "io/run.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

#if JETPDE_HAVE_PETSC

std::string data_dir() { return std::string(JETPDE_SOURCE_DIR) + "/../shared/data"; }

struct Centerline {
  std::vector<double> coord, value;
};

// The Re = 100 column of the table: u(y) at x = 0.5 and v(x) at y = 0.5.
void read_ghia(Centerline* u, Centerline* v) {
  std::ifstream in(data_dir() + "/ghia1982_centerlines.csv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream s(line);
    std::string table, coord, re100;
    std::getline(s, table, ',');
    std::getline(s, coord, ',');
    std::getline(s, re100, ',');
    Centerline* c = table == "u_vs_y" ? u : table == "v_vs_x" ? v : nullptr;
    if (!c) continue;
    c->coord.push_back(std::stod(coord));
    c->value.push_back(std::stod(re100));
  }
}

struct CavityErrors {
  double rel_l2 = 0, rel_l2_away = 0, ghia_u = 0, ghia_v = 0, seconds = 0;
  int iterations = 0;
};

CavityErrors solve_cavity(const std::string& config, int n) {
  const fs::path dir = fs::temp_directory_path() /
                       ("jetpde_ldc_petsc_" + std::to_string(n) + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string grid = std::to_string(n);
  const RunConfig c =
      load_run_config(std::string(JETPDE_SOURCE_DIR) + "/examples/" + config,
                      {"solver.type=petsc", "solver.grid=[" + grid + ", " + grid + "]",
                       "output.dir=" + dir.string(), "output.grid=[9]", "output.progress=none"});
  const RunReport r = run(c);
  EXPECT_EQ(r.result().status, solvers::TrainResult::Status::finished) << r.result().message;
  CavityErrors e;
  e.rel_l2 = r.solution.metrics().at("rel_l2");
  e.seconds = r.result().seconds;
  e.iterations = r.result().steps;
  // The velocity error away from the lid's corners (the data's points farther than 0.1 from
  // both): what the corners' jump does not dominate.
  const std::string file = data_dir() + "/ldc_re100.h5";
  const std::vector<double> x = read_dataset(file, "x").values, y = read_dataset(file, "y").values;
  const MatrixD u = read_dataset(file, "u").matrix(), v = read_dataset(file, "v").matrix();
  std::vector<std::array<double, 4>> kept;  // x, y, u, v
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < y.size(); ++j) {
      const double dl = std::hypot(x[i], 1 - y[j]), dr = std::hypot(1 - x[i], 1 - y[j]);
      if (std::min(dl, dr) > 0.1)
        kept.push_back({x[i], y[j], u(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)),
                        v(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))});
    }
  MatrixD points(static_cast<Eigen::Index>(kept.size()), 2);
  for (std::size_t k = 0; k < kept.size(); ++k)
    points.row(static_cast<Eigen::Index>(k)) << kept[k][0], kept[k][1];
  const MatrixD f = r.solution.fields(points);
  double err = 0, norm = 0;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const Eigen::Index row = static_cast<Eigen::Index>(k);
    err += std::pow(f(row, 0) - kept[k][2], 2) + std::pow(f(row, 1) - kept[k][3], 2);
    norm += kept[k][2] * kept[k][2] + kept[k][3] * kept[k][3];
  }
  e.rel_l2_away = std::sqrt(err / norm);
  // The centerlines.
  Centerline gu, gv;
  read_ghia(&gu, &gv);
  EXPECT_EQ(gu.coord.size(), 17u);
  EXPECT_EQ(gv.coord.size(), 17u);
  for (std::size_t k = 0; k < gu.coord.size(); ++k) {
    MatrixD p(1, 2);
    p << 0.5, gu.coord[k];
    e.ghia_u = std::max(e.ghia_u, std::abs(r.solution.fields(p)(0, 0) - gu.value[k]));
  }
  for (std::size_t k = 0; k < gv.coord.size(); ++k) {
    MatrixD p(1, 2);
    p << gv.coord[k], 0.5;
    e.ghia_v = std::max(e.ghia_v, std::abs(r.solution.fields(p)(0, 1) - gv.value[k]));
  }
  std::printf(
      "  %s, %d x %d: rel. L2 %.3e (%.3e farther than 0.1 from the lid's corners), Ghia max |du| "
      "%.3e, |dv| %.3e; %d Newton iterations, %.1f s\n",
      config.c_str(), n, n, e.rel_l2, e.rel_l2_away, e.ghia_u, e.ghia_v, e.iterations, e.seconds);
  fs::remove_all(dir);
  return e;
}

bool have_data() {
  return fs::exists(data_dir() + "/ldc_re100.h5") &&
         fs::exists(data_dir() + "/ghia1982_centerlines.csv");
}

TEST(LidDrivenCavity, PetscAgainstTheReferenceAndGhia) {
  if (!have_data())
    GTEST_SKIP() << "no " << data_dir() << "/ldc_re100.h5 or ghia1982_centerlines.csv "
                 << "(../shared/data absent)";
  const CavityErrors coarse = solve_cavity("ldc_petsc.yaml", 33),
                     fine = solve_cavity("ldc_petsc.yaml", 65);
  // Measured (2026-12-01): 8.7e-2 and 4.1e-2 overall, first order: the lid's velocity jump at
  // the corners, which no grid function resolves, dominates the L2 norm there; 4.8e-2 and 1.4e-2
  // away from the corners.
  EXPECT_LT(fine.rel_l2, 0.05);
  EXPECT_LT(fine.rel_l2_away, 0.02);
  EXPECT_GT(coarse.rel_l2 / fine.rel_l2, 1.8);
  EXPECT_GT(coarse.rel_l2_away / fine.rel_l2_away, 2.6);
  // Ghia's table and the reference differ by up to 4.9e-3 in u and 9e-3 in v (the data's
  // README); 2.6e-3 and 6.3e-3 measured on 65 x 65.
  EXPECT_LT(fine.ghia_u, 5e-3);
  EXPECT_LT(fine.ghia_v, 9e-3);
}

// The PINN's own config (its singular parts are a known part plus the network: no condition for
// the grid): the same problem text solves, its lid corners taking the lid's u = 1 (the first
// condition that holds them).
TEST(LidDrivenCavity, ThePinnConfigSolvesAsWritten) {
  if (!have_data()) GTEST_SKIP() << "no " << data_dir() << "/ldc_re100.h5 (../shared/data absent)";
  const CavityErrors e = solve_cavity("ldc.yaml", 33);
  EXPECT_LT(e.rel_l2, 0.16);  // 0.12 measured (0.087 with the walls' value at the corners)
  EXPECT_LT(e.ghia_u, 2e-2);
}

#endif

}  // namespace
}  // namespace jetpde::io
