// `mpirun -n N jetpde run` as a batch job runs it: rank 0 writes one run folder and speaks for
// all, the run follows a one-rank run over the same points and repeats bit for bit, an error on
// one rank ends every rank with its message (no hang), and a run whose rank is killed resumes bit
// for bit on as many ranks, and correctly (not bit for bit) on another count.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "io/checkpoint.h"
#include "io/hdf5_read.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/shell.h"

extern char** environ;

namespace jetpde {
namespace {

namespace fs = std::filesystem;

using jetpde::testing::Output;
using jetpde::testing::shell;

std::string mpirun(int ranks) {
  return std::string(JETPDE_MPIEXEC) + " --oversubscribe --allow-run-as-root -n " +
         std::to_string(ranks) + " ";
}

// `jetpde args` on `ranks` ranks (0: without mpirun), one OpenMP thread each, with a time limit
// so that a hang fails the test instead of stalling it.
Output jetpde(int ranks, const std::string& args) {
  return shell("OMP_NUM_THREADS=1 timeout 300 " + (ranks > 0 ? mpirun(ranks) : "") + JETPDE_BINARY +
               " " + args + " 2>&1");
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// -u'' = pi^2 sin(pi x) on (0, 1), u = 0 at both ends, with every point set drawn whole and split
// (parallel.points: global) so that any rank count trains on the same points; fp64.
std::string poisson(int adam_steps, const std::string& out, int lbfgs_steps = 100) {
  return "geometry: {type: interval, min: [0], max: [1]}\n"
         "precision: fp64\n"
         "equations:\n  - expression: u_xx + pi^2*sin(pi*x)\n"
         "conditions:\n  - {kind: dirichlet, points: 2}\n"
         "network: {hidden: [16, 16]}\n"
         "sampling: {interior_points: 64, resample_every: 50}\n"
         "parallel: {points: global}\n"
         "training:\n  stages:\n"
         "    - {optimizer: adam, steps: " +
         std::to_string(adam_steps) +
         ", learning_rate: 0.01}\n"
         "    - {optimizer: lbfgs, steps: " +
         std::to_string(lbfgs_steps) +
         "}\n"
         "reference:\n  expressions: {u: sin(pi*x)}\n  every: 100\n"
         "output: {dir: " +
         out +
         ", checkpoint_every: 25, grid: [21], progress: plain, progress_every: 100}\n"
         "threads: 1\n";
}

class MpiRun : public jetpde::testing::ScratchDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  static std::string read(const std::string& path) {
    std::stringstream s;
    s << std::ifstream(path).rdbuf();
    return s.str();
  }
};

TEST_F(MpiRun, TwoRanksWriteOneRunFolderFollowOneRankAndRepeat) {
  const std::string one = path("one"), two = path("two"), again = path("again");
  // 300 Adam steps and 20 of L-BFGS: L-BFGS amplifies rounding differences (here those of the
  // sums over 2 ranks against 1) by about 10x per 3 iterations near a minimum, as it does those
  // of another thread count; over 20 they stay below 1e-7.
  const Output a = jetpde(0, "run " + write("one.yaml", poisson(300, one, 20)));
  ASSERT_EQ(a.status, 0) << a.text;
  const Output b = jetpde(2, "run " + write("two.yaml", poisson(300, two, 20)));
  ASSERT_EQ(b.status, 0) << b.text;
  // Rank 0 speaks for both, and says how many ranks ran.
  EXPECT_EQ(count(b.text, "relative L2 error against"), 1u) << b.text;
  EXPECT_NE(b.text.find("on 2 MPI ranks"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("| 2 ranks, comm "), std::string::npos) << b.text;
  const std::string summary = read(two + "/summary.json");
  EXPECT_NE(summary.find("\"ranks\": 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"communication\": "), std::string::npos) << summary;
  for (const char* f : {"config.yaml", "checkpoint.h5", "history.csv", "fields.vti", "fields.h5"})
    EXPECT_TRUE(fs::exists(fs::path(two) / f)) << f;
  // The same steps as one rank, the parameters to rounding.
  const io::Checkpoint ca = io::read_checkpoint(one + "/checkpoint.h5");
  const io::Checkpoint cb = io::read_checkpoint(two + "/checkpoint.h5");
  EXPECT_EQ(cb.ranks, 2);
  EXPECT_EQ(ca.state.step, cb.state.step);
  ASSERT_EQ(ca.state.theta.size(), cb.state.theta.size());
  EXPECT_LT((ca.state.theta - cb.state.theta).norm(), 1e-7 * ca.state.theta.norm());
  // The checkpoint holds both ranks' points: together, the one-rank run's.
  for (const auto& [name, all] : ca.state.inputs) {
    ASSERT_TRUE(cb.state.inputs.count(name)) << name;
    EXPECT_TRUE((cb.state.inputs.at(name) == all).all()) << name;
  }
  // Twice on 2 ranks: bit for bit.
  const Output c = jetpde(2, "run " + write("again.yaml", poisson(300, again, 20)));
  ASSERT_EQ(c.status, 0) << c.text;
  EXPECT_TRUE(io::read_checkpoint(again + "/checkpoint.h5").state.theta == cb.state.theta);
}

#if JETPDE_HAVE_PETSC
// solver: {type: petsc} under mpirun: the DMDA is split over the ranks (a direct solve by MUMPS
// instead of PETSc's own LU), rank 0 writes one run folder, and the solution is one process's to
// the solver's tolerance.
TEST_F(MpiRun, AClassicalSolveSplitsItsGridOverTheRanks) {
  const auto config = [&](const std::string& out) {
    return write(out + ".yaml",
                 "geometry: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
                 "equations: [{expression: laplacian(u) + 5*pi^2*sin(2*pi*x)*sin(pi*y)}]\n"
                 "conditions:\n"
                 "  - {kind: dirichlet, on: x == 0 or x == 1 or y == 0, value: x*y}\n"
                 "  - {kind: neumann, on: top, value: x - pi*sin(2*pi*x)}\n"
                 "solver: {type: petsc, grid: [49, 41]}\n"
                 "reference: {expressions: {u: sin(2*pi*x)*sin(pi*y) + x*y}}\n"
                 "output: {dir: " +
                     path(out) + ", grid: [21]}\n");
  };
  const auto rel_l2 = [&](const std::string& out) {
    const std::string summary = read(path(out) + "/summary.json");
    const std::size_t at = summary.find("\"rel_l2\": ");
    return at == std::string::npos ? -1.0 : std::stod(summary.substr(at + 10));
  };
  const Output a = jetpde(0, "run " + config("one"));
  ASSERT_EQ(a.status, 0) << a.text;
  for (int ranks : {2, 3}) {
    const std::string out = "ranks" + std::to_string(ranks);
    const Output b = jetpde(ranks, "run " + config(out));
    ASSERT_EQ(b.status, 0) << b.text;
    EXPECT_EQ(count(b.text, "relative L2 error against"), 1u) << b.text;
    EXPECT_NE(read(path(out) + "/summary.json").find("\"ranks\": " + std::to_string(ranks)),
              std::string::npos);
    ASSERT_GT(rel_l2("one"), 0) << read(path("one") + "/summary.json");
    EXPECT_NEAR(rel_l2(out), rel_l2("one"), 1e-8 * rel_l2("one"));
  }
}
#endif

TEST_F(MpiRun, AnErrorOnOneRankEndsEveryRankWithItsMessage) {
  // Rank 0 alone fails (its checkpoint cannot be written: a folder is in the way) while rank 1
  // trains on into the next collective: both must end, with the message.
  const std::string out = path("blocked");
  fs::create_directories(out + "/checkpoint.h5");
  const auto t0 = std::chrono::steady_clock::now();
  const Output r = jetpde(2, "run " + write("blocked.yaml", poisson(300, out)));
  EXPECT_NE(r.status, 0) << r.text;
  EXPECT_NE(r.status, 124) << "a rank hung: " << r.text;
  EXPECT_NE(r.text.find("jetpde: error: "), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("checkpoint.h5"), std::string::npos) << r.text;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
  // A config error, the same on every rank: said once.
  const Output bad = jetpde(2, "run " + write("bad.yaml", poisson(300, path("bad")) +
                                                              "sampling: {interior_points: 0}\n"));
  EXPECT_EQ(bad.status, 1) << bad.text;
  EXPECT_EQ(count(bad.text, "jetpde: error: "), 1u) << bad.text;
}

// mpirun -n 2 jetpde run cfg, started in the background: its pid.
pid_t start(const std::string& cfg, int ranks) {
  const std::string mpiexec = JETPDE_MPIEXEC, n = std::to_string(ranks);
  std::vector<std::string> args{mpiexec,
                                "--oversubscribe",
                                "--allow-run-as-root",
                                "-n",
                                n,
                                JETPDE_BINARY,
                                "run",
                                cfg,
                                "--progress",
                                "none"};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  pid_t pid = 0;
  if (posix_spawn(&pid, mpiexec.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// The checkpoint's step, once it is readable (0 before).
int checkpoint_step(const std::string& file) {
  if (!fs::exists(file)) return 0;
  try {
    return static_cast<int>(io::read_int_dataset(file, "step").at(0));
  } catch (const std::exception&) {
    return 0;
  }
}

// Starts `cfg` on 2 ranks, kills one rank (SIGKILL to a child of mpirun running jetpde) once the
// checkpoint has reached `step`, and waits for mpirun, which must end the job without success:
// the checkpoint's step then (0 when something failed, with the test's failure said).
int kill_a_rank(const std::string& cfg, const std::string& checkpoint, int step) {
  const pid_t launcher = start(cfg, 2);
  EXPECT_GT(launcher, 0);
  if (launcher <= 0) return 0;
  for (int i = 0; i < 120000 && checkpoint_step(checkpoint) < step; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Output children = shell("pgrep -P " + std::to_string(launcher));
  std::istringstream pids(children.text);
  pid_t rank = 0;
  pids >> rank;
  EXPECT_GT(rank, 0) << "no rank process under mpirun: " << children.text;
  if (rank <= 0) return 0;
  ::kill(rank, SIGKILL);
  int status = 0;
  ::waitpid(launcher, &status, 0);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mpirun reported success";
  return checkpoint_step(checkpoint);
}

// `--resume` of `cfg` on 2 ranks (killed at `killed_at`) ends with the uninterrupted run's step
// and parameters, bit for bit.
void expect_resume_ends_as(const std::string& cfg, const std::string& checkpoint,
                           const io::Checkpoint& full, int killed_at) {
  const Output b = jetpde(2, "run " + cfg + " --resume");
  ASSERT_EQ(b.status, 0) << b.text;
  const io::Checkpoint resumed = io::read_checkpoint(checkpoint);
  EXPECT_EQ(full.state.step, resumed.state.step);
  EXPECT_TRUE(full.state.theta == resumed.state.theta)
      << "killed at step " << killed_at << ": max difference "
      << (full.state.theta - resumed.state.theta).cwiseAbs().maxCoeff();
}

TEST_F(MpiRun, AKilledRankEndsTheRunAndResumeRecovers) {
  const std::string full = path("full"), killed = path("killed");
  const Output a = jetpde(2, "run " + write("full.yaml", poisson(3000, full)));
  ASSERT_EQ(a.status, 0) << a.text;
  const std::string cfg = write("killed.yaml", poisson(3000, killed));
  const std::string checkpoint = killed + "/checkpoint.h5";
  const int killed_at = kill_a_rank(cfg, checkpoint, 100);
  ASSERT_GE(killed_at, 100);
  ASSERT_FALSE(fs::exists(killed + "/summary.json"));
  const std::string copy = path("copy");
  fs::copy(killed, copy);
  // On as many ranks: bit for bit.
  const io::Checkpoint ca = io::read_checkpoint(full + "/checkpoint.h5");
  expect_resume_ends_as(cfg, checkpoint, ca, killed_at);
  EXPECT_NE(read(killed + "/summary.json").find("\"resumed_from_step\": "), std::string::npos);
  // On one rank: it goes on from the same state with its own points, and says so.
  const Output c = jetpde(0, "run " + cfg + " --resume --output " + copy);
  ASSERT_EQ(c.status, 0) << c.text;
  EXPECT_NE(c.text.find("written by 2 ranks and this run has 1"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("not bit for bit"), std::string::npos) << c.text;
  const std::string summary = read(copy + "/summary.json");
  EXPECT_NE(summary.find("\"resumed_from_step\": " + std::to_string(killed_at)), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\"ranks\": 1"), std::string::npos) << summary;
  EXPECT_EQ(io::read_checkpoint(copy + "/checkpoint.h5").state.step, ca.state.step);
}

// An XPINN on 2 x 2 cells over 2 ranks: each interface's points are held by the ranks of its two
// sides, so the ranks' inputs differ (an interface between rank 1's cells has no input on rank
// 0); the checkpoint gathers all of them, and a run killed and resumed on 2 ranks ends bit for bit
// where the uninterrupted one does.
TEST_F(MpiRun, AnXpinnRunKilledAndResumedEndsWhereTheFullOneDoes) {
  const auto config = [](const std::string& out) {
    return "geometry: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
           "precision: fp64\n"
           "equations:\n  - expression: -laplacian(u) - 2*pi^2*sin(pi*x)*sin(pi*y)\n"
           "hard_constraints:\n  - {field: u, value: 0}\n"
           "network: {hidden: [8, 8]}\n"
           "decomposition: {method: xpinn, subdomains: [2, 2], interface: {points: 16}}\n"
           "sampling: {interior_points: 128, resample_every: 50}\n"
           "training:\n  stages:\n    - {optimizer: adam, steps: 600, learning_rate: 0.01}\n"
           "output: {dir: " +
           out + ", checkpoint_every: 25, grid: [5, 5], progress: none}\nthreads: 1\n";
  };
  const std::string full = path("full"), killed = path("killed");
  const Output a = jetpde(2, "run " + write("full.yaml", config(full)));
  ASSERT_EQ(a.status, 0) << a.text;
  const std::string cfg = write("killed.yaml", config(killed));
  const std::string checkpoint = killed + "/checkpoint.h5";
  const int killed_at = kill_a_rank(cfg, checkpoint, 100);
  ASSERT_GE(killed_at, 100);
  const io::Checkpoint saved = io::read_checkpoint(checkpoint);
  // Interface 1 joins cells 2 and 3, both rank 1's: rank 0 has no row of it; interface 0
  // (cells 0 and 1) is rank 0's alone.
  ASSERT_TRUE(saved.rows.count("interface1_a")) << "the checkpoint lacks an interface's points";
  EXPECT_EQ(saved.rows.at("interface1_a"), (std::vector<std::int64_t>{0, 16}));
  EXPECT_EQ(saved.rows.at("interface0_a"), (std::vector<std::int64_t>{16, 0}));
  expect_resume_ends_as(cfg, checkpoint, io::read_checkpoint(full + "/checkpoint.h5"), killed_at);
  EXPECT_NE(read(full + "/summary.json").find("\"gradient_exchange\": \"neighbours\""),
            std::string::npos);
}

}  // namespace
}  // namespace jetpde
