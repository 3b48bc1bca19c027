// The jetpde command as a user runs it: a process, its exit status, its messages and the files
// it leaves. kill -9 in the middle of a run and --resume give the same parameters as an
// uninterrupted run; bad input gives a message and leaves no half-written file.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <thread>

#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>
#include "compiler/openmp_env.h"
#include "io/checkpoint.h"
#include "io/hdf5_read.h"
#include "tests/apps/jetpde_cli.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/shell.h"

extern char** environ;

namespace jetpde {
namespace {

namespace fs = std::filesystem;

using jetpde::testing::Output;
using jetpde::testing::shell;

Output jetpde(const std::string& args) { return testing::jetpde_cli(args); }

class Cli : public jetpde::testing::ScratchDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // No temporary file of an atomic write anywhere under the test folder.
  void expect_no_temporaries() {
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
};

// -u'' = pi^2 sin(pi x) on (0, 1), u = 0 at both ends: u = sin(pi x). Small, so each run takes
// a few seconds, and long enough (Adam then L-BFGS) to be killed in the middle.
std::string poisson(int adam_steps, const std::string& out,
                    const std::string& reference = "  expressions: {u: sin(pi*x)}\n") {
  return "geometry: {type: interval, min: [0], max: [1]}\n"
         "equations:\n  - expression: u_xx + pi^2*sin(pi*x)\n"
         "conditions:\n  - {kind: dirichlet, points: 2}\n"
         "network: {hidden: [16, 16]}\n"
         "sampling: {interior_points: 64, resample_every: 50}\n"
         "training:\n  stages:\n"
         "    - {optimizer: adam, steps: " +
         std::to_string(adam_steps) +
         ", learning_rate: 0.01}\n"
         "    - {optimizer: lbfgs, steps: 200}\n"
         "reference:\n" +
         reference + "output: {dir: " + out +
         ", checkpoint_every: 25, grid: [21], progress: plain, "
         "progress_every: 1000}\n"
         "threads: 1\n";
}

// A training step whose tiles were measured while other processes kept the cores busy runs the
// default tile, and `run` says so at its end, naming the tile file, with summary.json's
// compile.tiles_busy: here the first run's tile file is marked so, as a loaded machine leaves it.
TEST_F(Cli, TilesMeasuredUnderLoadAreSaidAtTheEnd) {
  const std::string cache = (dir_ / "cache").string(), out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", poisson(20, out));
  const auto run = [&] {
    return shell("JETPDE_CACHE_DIR=" + cache + " OMP_NUM_THREADS=1 " + JETPDE_BINARY + " run " +
                 cfg + " --set sampling.interior_points=1000 --set training.stages.1.steps=1 2>&1");
  };
  const auto summary = [&] {
    std::stringstream text;
    text << std::ifstream(fs::path(out) / "summary.json").rdbuf();
    return text.str();
  };
  const Output first = run();
  ASSERT_EQ(first.status, 0) << first.text;
  ASSERT_EQ(summary().find("\"tiled_regions\": 0"), std::string::npos)
      << "no tiled region to measure: " << summary();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().ends_with(".tiles-1-threads")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << "the training step's tile file";
  std::string lines;
  {
    std::ifstream in(files[0]);
    for (std::string line; std::getline(in, line);) {
      ASSERT_GE(line.size(), 2u) << line;
      lines += line.substr(0, line.size() - 1) + "1\n";  // busy
    }
  }
  ASSERT_FALSE(lines.empty());
  std::ofstream(files[0]) << lines;
  const Output second = run();
  ASSERT_EQ(second.status, 0) << second.text;
  EXPECT_NE(second.text.find("measured while other processes kept the cores busy"),
            std::string::npos)
      << second.text;
  EXPECT_NE(second.text.find("Delete " + files[0].string() + " to measure again"),
            std::string::npos)
      << second.text;
  EXPECT_EQ(summary().find("\"tiles_busy\": 0"), std::string::npos) << summary();
  EXPECT_NE(summary().find("\"tile_file\": \"" + files[0].string() + "\""), std::string::npos)
      << summary();
  // `info` lists the file too.
  const Output info =
      shell("JETPDE_CACHE_DIR=" + cache + " " + std::string(JETPDE_BINARY) + " info 2>&1");
  ASSERT_EQ(info.status, 0) << info.text;
  EXPECT_NE(info.text.find("compile cache: " + cache + " ("), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("tiles measured under load: "), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("    " + files[0].string() + "\n"), std::string::npos) << info.text;
}

TEST_F(Cli, RunWritesEveryOutputAndEvalAndExportReadThem) {
  const std::string out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", poisson(300, out));
  const Output r = jetpde("run " + cfg);
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("relative L2 error against the exact solution: "), std::string::npos)
      << r.text;
  for (const char* f :
       {"config.yaml", "checkpoint.h5", "history.csv", "fields.vti", "fields.h5", "summary.json"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  // history.csv: a header and one row per 10 steps (the default), plus the last step.
  std::ifstream history(fs::path(out) / "history.csv");
  std::string header;
  std::getline(history, header);
  EXPECT_EQ(header.rfind("step,stage,seconds,loss,learning_rate,loss_pde,loss_dirichlet_u", 0), 0u)
      << header;
  // summary.json has the final error, small after 500 steps.
  std::stringstream summary;
  summary << std::ifstream(fs::path(out) / "summary.json").rdbuf();
  EXPECT_NE(summary.str().find("\"rel_l2\""), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("\"status\": \"finished\""), std::string::npos);
  // and the training step's compile: its tiles, and how many were measured under load.
  for (const char* key : {"\"compile\"", "\"from_cache\"", "\"tiled_regions\"",
                          "\"tiles_measured\"", "\"tiles_busy\"", "\"tile_file\""})
    EXPECT_NE(summary.str().find(key), std::string::npos) << key << " in " << summary.str();
  // fields.h5: u on the 21-point grid, u_exact and the residual.
  EXPECT_EQ(io::read_dataset(out + "/fields.h5", "u").dims, (std::vector<std::int64_t>{1, 21}));
  EXPECT_TRUE(io::has_dataset(out + "/fields.h5", "residual_pde"));
  // fields.vti, read back with VTK's reader: the grid and the arrays ParaView will show.
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName((out + "/fields.vti").c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  int dims[3];
  image->GetDimensions(dims);
  EXPECT_EQ(dims[0], 21);
  EXPECT_EQ(dims[1], 1);
  for (const char* name : {"u", "u_exact", "u_error", "residual_pde"})
    EXPECT_NE(image->GetPointData()->GetArray(name), nullptr) << name;
  vtkDataArray* u_vtk = image->GetPointData()->GetArray("u");
  ASSERT_NE(u_vtk, nullptr);
  EXPECT_NEAR(u_vtk->GetTuple1(10), 1.0, 2e-2);  // u(0.5) = sin(pi/2)
  EXPECT_EQ(u_vtk->GetTuple1(10), io::read_dataset(out + "/fields.h5", "u").values[10]);
  // eval at three points, with a derivative; commas inside d(...) do not split the list.
  const std::string points = write("points.csv", "x\n0.25\n0.5\n0.75\n");
  const Output e = jetpde("eval " + out + " --points " + points + " --fields 'u,u_x,d(u, x, 2)'");
  ASSERT_EQ(e.status, 0) << e.text;
  std::stringstream lines(e.text);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "x,u,u_x,\"d(u, x, 2)\"");
  std::getline(lines, line);  // x = 0.25: u = sin(pi/4), u_x = pi cos(pi/4)
  double x, u, ux;
  char c1, c2;
  std::stringstream(line) >> x >> c1 >> u >> c2 >> ux;
  EXPECT_NEAR(u, std::sin(M_PI / 4), 2e-2) << line;
  EXPECT_NEAR(ux, M_PI * std::cos(M_PI / 4), 1e-1) << line;
  // The points from any data file (io/data_files.h): a whitespace table with a '%' comment; an
  // empty table is named, not a shape [0, 1].
  const Output e2 = jetpde("eval " + out + " --points " + write("points.dat", "% x\nx\n0.5\n"));
  ASSERT_EQ(e2.status, 0) << e2.text;
  EXPECT_EQ(e2.text.rfind("x,u\n0.5,", 0), 0u) << e2.text;
  const std::string empty = write("empty.csv", "x\n");
  const Output e3 = jetpde("eval " + out + " --points " + empty);
  EXPECT_NE(e3.status, 0);
  EXPECT_NE(e3.text.find("--points: '" + empty + "' holds no data: no rows after the header line"),
            std::string::npos)
      << e3.text;
  const Output x2 = jetpde("export " + out + " --output " + (dir_ / "exported").string() +
                           " --grid 11 --quantities u_xx");
  ASSERT_EQ(x2.status, 0) << x2.text;
  EXPECT_TRUE(io::has_dataset((dir_ / "exported/fields.h5").string(), "u_xx"));
  EXPECT_TRUE(io::has_dataset((dir_ / "exported/fields.h5").string(), "u_exact"));
  // The fp32 run evaluated in fp64 (--precision, or --set precision=...): it says so, and the
  // values agree with fp32's to fp32's accuracy.
  const Output e64 = jetpde("eval " + out + " --points " + points + " --precision fp64");
  ASSERT_EQ(e64.status, 0) << e64.text;
  EXPECT_NE(e64.text.find("u at 3 points in fp64 (trained in fp32)"), std::string::npos)
      << e64.text;
  std::stringstream lines64(e64.text);
  std::getline(lines64, line);
  std::getline(lines64, line);
  double u64;
  std::stringstream(line) >> x >> c1 >> u64;
  EXPECT_NEAR(u64, u, 1e-5) << line;
  EXPECT_NE(u64, u) << "the same digits: was it evaluated in fp32 again?";
  const Output x64 = jetpde("export " + out + " --output " + (dir_ / "exported64").string() +
                            " --grid 11 --set precision=fp64");
  ASSERT_EQ(x64.status, 0) << x64.text;
  EXPECT_NE(x64.text.find(", in fp64 (trained in fp32)"), std::string::npos) << x64.text;
  expect_no_temporaries();
}

// A time-marched run (training.time_windows): one run folder of the combined solution, which
// eval reads (the windows' networks), the windows in summary.json and history.csv, and --resume
// refused.
TEST_F(Cli, TimeMarchedRunWritesTheWindowsAndEvalReadsTheCombinedSolution) {
  const std::string out = (dir_ / "marched").string();
  const std::string cfg =
      write("heat.yaml",
            "geometry: {type: interval, min: [0], max: [1], time: [0, 1]}\n"
            "equations:\n  - expression: u_t - 0.2*u_xx\n"
            "conditions:\n"
            "  - {kind: initial_value, value: sin(pi*x), points: 64, weight: 10}\n"
            "  - {kind: dirichlet, on: spatial, points: 64, weight: 10}\n"
            "network: {hidden: [16, 16]}\n"
            "sampling: {interior_points: 256, time_chunks: 4}\n"
            "training:\n  time_windows: 2\n  stages:\n"
            "    - {optimizer: adam, steps: 300, learning_rate: 0.01}\n"
            "  weighting: {causal_epsilon: 1, causal_scale: initial}\n"
            "reference:\n  expressions: {u: sin(pi*x)*exp(-0.2*pi^2*t)}\n"
            "output: {dir: " +
                out + ", grid: [9], time_steps: 3, progress: none}\nthreads: 1\n");
  const Output r = jetpde("run " + cfg);
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("2 time windows: w1: adam: 300 steps"), std::string::npos) << r.text;
  EXPECT_TRUE(fs::exists(fs::path(out) / "subdomains.vtm"));  // its pieces are the windows
  std::stringstream summary;
  summary << std::ifstream(fs::path(out) / "summary.json").rdbuf();
  const std::string json = summary.str();
  EXPECT_NE(json.find("\"steps\": 600,"), std::string::npos) << json;
  // The windows in order, each with its interval and steps; the edge's jump among the losses.
  const std::size_t windows = json.find("\"time_windows\": ["),
                    first = json.find("\"t0\": 0.0,", windows),
                    second = json.find("\"t0\": 0.5,", first);
  EXPECT_NE(windows, std::string::npos) << json;
  EXPECT_NE(first, std::string::npos) << json;
  EXPECT_NE(second, std::string::npos) << json;
  EXPECT_NE(json.find("\"steps\": 300,", second), std::string::npos) << json;
  EXPECT_NE(json.find("\"interface_solution\": "), std::string::npos) << json;
  // The causal scale every window used: the first window's, measured at its start.
  const std::size_t scales = json.find("\"causal_scales\": {");
  EXPECT_NE(scales, std::string::npos) << json;
  EXPECT_NE(json.find("\"pde\": ", scales), std::string::npos) << json;
  std::ifstream history(fs::path(out) / "history.csv");
  std::string line, last;
  while (std::getline(history, line))
    if (!line.empty()) last = line;
  EXPECT_EQ(last.rfind("600,w2/adam,", 0), 0u) << last;
  // eval: the combined solution near the exact one in both windows.
  const Output e =
      jetpde("eval " + out + " --points " + write("xt.csv", "x,t\n0.5,0.25\n0.5,0.75\n"));
  ASSERT_EQ(e.status, 0) << e.text;
  std::stringstream lines(e.text);
  std::getline(lines, line);
  EXPECT_EQ(line, "x,t,u");
  for (const double t : {0.25, 0.75}) {
    std::getline(lines, line);
    double x, tt, u;
    char c1, c2;
    std::stringstream(line) >> x >> c1 >> tt >> c2 >> u;
    EXPECT_NEAR(u, std::exp(-0.2 * M_PI * M_PI * t), 0.03) << line;
  }
  const Output again = jetpde("run " + cfg + " --resume");
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.text.find("--resume: resuming a time-marched run (training.time_windows) is not "
                            "supported yet"),
            std::string::npos)
      << again.text;
}

TEST_F(Cli, KillNineThenResumeGivesTheSameParameters) {
  // The uninterrupted run.
  const std::string full = (dir_ / "full").string(), killed = (dir_ / "killed").string();
  const Output a = jetpde("run " + write("full.yaml", poisson(4000, full)));
  ASSERT_EQ(a.status, 0) << a.text;
  // The same config, killed with SIGKILL once it has written a checkpoint past step 100.
  const std::string cfg = write("killed.yaml", poisson(4000, killed));
  pid_t pid;
  std::vector<std::string> args{JETPDE_BINARY, "run", cfg, "--progress", "none"};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ASSERT_EQ(posix_spawn(&pid, JETPDE_BINARY, nullptr, nullptr, argv.data(), environ), 0);
  const std::string checkpoint = killed + "/checkpoint.h5";
  int step = 0;
  for (int i = 0; i < 60000 && step < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (fs::exists(checkpoint))
      step = static_cast<int>(io::read_int_dataset(checkpoint, "step").at(0));
  }
  ::kill(pid, SIGKILL);
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
  ASSERT_FALSE(fs::exists(killed + "/summary.json"));
  const int killed_at = static_cast<int>(io::read_int_dataset(checkpoint, "step").at(0));
  EXPECT_LT(killed_at, 4200);
  // Resume, and compare the final parameters bit for bit.
  const Output b = jetpde("run " + cfg + " --resume");
  ASSERT_EQ(b.status, 0) << b.text;
  const io::Checkpoint ca = io::read_checkpoint(full + "/checkpoint.h5");
  const io::Checkpoint cb = io::read_checkpoint(checkpoint);
  EXPECT_EQ(ca.state.step, cb.state.step);
  ASSERT_EQ(ca.state.theta.size(), cb.state.theta.size());
  EXPECT_TRUE(ca.state.theta == cb.state.theta)
      << "killed at step " << killed_at << ": max difference "
      << (ca.state.theta - cb.state.theta).cwiseAbs().maxCoeff();
  std::stringstream summary;
  summary << std::ifstream(killed + "/summary.json").rdbuf();
  EXPECT_NE(summary.str().find("\"resumed_from_step\": " + std::to_string(killed_at)),
            std::string::npos)
      << summary.str();
  // history.csv has each step once: the rows after the checkpoint were written again.
  std::ifstream history(killed + "/history.csv");
  std::string line;
  std::getline(history, line);
  int last = 0, rows = 0;
  while (std::getline(history, line)) {
    const int s = std::stoi(line.substr(0, line.find(',')));
    EXPECT_GT(s, last) << line;
    last = s;
    ++rows;
  }
  EXPECT_EQ(last, ca.state.step);
  expect_no_temporaries();
}

// Starts `jetpde run cfg --progress none` (SIGINT and SIGTERM at their default actions, whatever
// this process has; SIGINT ignored with `ignoring_sigint`, as a shell without job control starts
// a background command), waits until its checkpoint is past `step`, sends `signo`, and returns
// the wait status.
int run_and_signal(const std::string& cfg, const std::string& checkpoint, int step, int signo,
                   bool ignoring_sigint = false) {
  std::vector<std::string> args{JETPDE_BINARY, "run", cfg, "--progress", "none"};
  if (ignoring_sigint)
    args.insert(args.begin(), {"/bin/sh", "-c", "trap '' INT; exec \"$0\" \"$@\""});
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  const int spawned = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) return -1;
  for (int i = 0, at = 0; i < 60000 && at < step; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (fs::exists(checkpoint))
      at = static_cast<int>(io::read_int_dataset(checkpoint, "step").at(0));
  }
  ::kill(pid, signo);
  int status;
  ::waitpid(pid, &status, 0);
  return status;
}

std::string read_text(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// SIGTERM (a batch system's warning before its kill) and SIGINT (Ctrl-C): the step ends, then
// the checkpoint, the fields and summary.json (status "interrupted") are written and the exit
// status is 128 + the signal; --resume ends with the uninterrupted run's parameters, bit for bit.
TEST_F(Cli, SigtermAndSigintStopCleanlyAndResumeGivesTheSameParameters) {
  const std::string full = (dir_ / "full").string();
  const Output a = jetpde("run " + write("full.yaml", poisson(4000, full)));
  ASSERT_EQ(a.status, 0) << a.text;
  const io::Checkpoint ca = io::read_checkpoint(full + "/checkpoint.h5");
  for (const int signo : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(signo == SIGTERM ? "SIGTERM" : "SIGINT");
    const std::string out = (dir_ / ("signal" + std::to_string(signo))).string();
    const std::string cfg = write("signal.yaml", poisson(4000, out));
    const int status = run_and_signal(cfg, out + "/checkpoint.h5", 100, signo);
    ASSERT_TRUE(WIFEXITED(status)) << "the run was killed by the signal instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), 128 + signo);
    const std::string summary = read_text(out + "/summary.json");
    EXPECT_NE(summary.find("\"status\": \"interrupted\""), std::string::npos) << summary;
    for (const char* f : {"fields.vti", "fields.h5", "history.csv"})
      EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
    const io::Checkpoint stopped = io::read_checkpoint(out + "/checkpoint.h5");
    EXPECT_GE(stopped.state.step, 100);
    EXPECT_NE(summary.find("\"steps\": " + std::to_string(stopped.state.step)),
              std::string::npos)
        << summary;  // the checkpoint is the step the run stopped at, not an earlier one
    const Output b = jetpde("run " + cfg + " --resume");
    ASSERT_EQ(b.status, 0) << b.text;
    const io::Checkpoint cb = io::read_checkpoint(out + "/checkpoint.h5");
    EXPECT_EQ(ca.state.step, cb.state.step);
    EXPECT_TRUE(ca.state.theta == cb.state.theta)
        << "stopped at step " << stopped.state.step << ": max difference "
        << (ca.state.theta - cb.state.theta).cwiseAbs().maxCoeff();
    // Both parts' steps and times: the whole run's training time is the sum of the two.
    const std::string resumed = read_text(out + "/summary.json");
    EXPECT_NE(resumed.find("\"this_part\": {\n    \"steps\": " +
                           std::to_string(cb.state.step - stopped.state.step)),
              std::string::npos)
        << resumed;
    EXPECT_NE(resumed.find("\"whole_run\": {\n    \"steps\": " + std::to_string(cb.state.step)),
              std::string::npos)
        << resumed;
    EXPECT_GT(cb.state.seconds, stopped.state.seconds);
    EXPECT_NE(b.text.find(" steps in "), std::string::npos);
    EXPECT_NE(b.text.find("(this part " + std::to_string(cb.state.step - stopped.state.step) +
                          " steps in "),
              std::string::npos)
        << b.text;
  }
  expect_no_temporaries();
}

// A run started with SIGINT ignored keeps ignoring it (blocked for sigwait, it would not be).
TEST_F(Cli, ARunStartedIgnoringSigintTrainsOnThroughIt) {
  const std::string out = (dir_ / "ignoring").string();
  const std::string cfg = write("ignoring.yaml", poisson(4000, out));
  const int status = run_and_signal(cfg, out + "/checkpoint.h5", 100, SIGINT, true);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(read_text(out + "/summary.json").find("\"status\": \"finished\""), std::string::npos);
}

// training.max_time: a budget far shorter than the stages stops after a step with everything
// written (status time_limit, exit status 4); training.target_error: the run stops at the first
// validation below the target.
TEST_F(Cli, TimeBudgetAndTargetErrorStopEarly) {
  const std::string out = (dir_ / "budget").string();
  Output r =
      jetpde("run " + write("budget.yaml", poisson(1000000, out)) + " --set training.max_time=3");
  EXPECT_EQ(r.status, 4) << r.text;
  EXPECT_NE(r.text.find("the time budget is spent after step "), std::string::npos) << r.text;
  const io::Checkpoint stopped = io::read_checkpoint(out + "/checkpoint.h5");
  EXPECT_GT(stopped.state.step, 0);
  EXPECT_LT(stopped.state.step, 1000000);
  const std::string summary = read_text(out + "/summary.json");
  EXPECT_NE(summary.find("\"status\": \"time_limit\""), std::string::npos);
  // Measured as a finished run is, though no validation step came before the stop.
  EXPECT_NE(summary.find("\"rel_l2\": "), std::string::npos) << summary;
  EXPECT_TRUE(fs::exists(out + "/fields.h5"));
  // The next part of a batch job resumes with a budget of its own (max_time may change).
  r = jetpde("run " + (dir_ / "budget.yaml").string() + " --set training.max_time=2 --resume");
  EXPECT_EQ(r.status, 4) << r.text;
  EXPECT_GT(io::read_checkpoint(out + "/checkpoint.h5").state.step, stopped.state.step);

  const std::string target = (dir_ / "target").string();
  r = jetpde("run " + write("target.yaml", poisson(4000, target)) +
             " --set training.target_error=0.02 --set reference.every=20");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("rel_l2 "), std::string::npos);
  EXPECT_NE(r.text.find(" is below the target 0.02 at step "), std::string::npos) << r.text;
  EXPECT_NE(read_text(target + "/summary.json").find("\"status\": \"target_reached\""),
            std::string::npos);
  // history.csv: every validation before the last is at or above the target, the last below.
  std::ifstream history(target + "/history.csv");
  std::string line;
  std::getline(history, line);
  std::vector<double> errors;
  int last_step = 0;
  while (std::getline(history, line)) {
    last_step = std::stoi(line.substr(0, line.find(',')));
    const std::string tail = line.substr(line.rfind(',') + 1);  // columns ..., rel_l2, max_abs
    const std::size_t rel = line.rfind(',', line.rfind(',') - 1);
    const std::string rel_l2 = line.substr(rel + 1, line.rfind(',') - rel - 1);
    if (!tail.empty()) errors.push_back(std::stod(rel_l2));
  }
  ASSERT_GE(errors.size(), 2u);
  for (std::size_t k = 0; k + 1 < errors.size(); ++k) EXPECT_GE(errors[k], 0.02) << k;
  EXPECT_LT(errors.back(), 0.02);
  EXPECT_EQ(io::read_checkpoint(target + "/checkpoint.h5").state.step, last_step);
  EXPECT_EQ(last_step % 20, 0);
  // A target without a validation during training is refused before anything runs.
  r = jetpde("run " + write("no_every.yaml", poisson(10, (dir_ / "x").string())) +
             " --set training.target_error=0.02");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("training.target_error: needs reference.every > 0"), std::string::npos)
      << r.text;
}

// summary.json gives the precision that ran: `auto` resolved for this machine and backend
// (bf16_wgrad where the CPU's bf16 GEMMs run on AMX, as `jetpde info` says, else fp32).
TEST_F(Cli, SummarySaysThePrecisionThatRan) {
  const std::string out = (dir_ / "auto").string();
  const Output r =
      jetpde("run " + write("p.yaml", poisson(4, out)) + " --max-steps 2 --set precision=auto");
  ASSERT_EQ(r.status, 0) << r.text;
  const std::string info = jetpde("info").text;
  const bool amx = info.find("bf16 gemm:     native (AMX)") != std::string::npos;
  EXPECT_NE(info.find(std::string("precision auto: ") + (amx ? "bf16_wgrad" : "fp32") +
                      " on cpu, fp32 on cuda"),
            std::string::npos)
      << info;
  EXPECT_NE(read_text(out + "/summary.json")
                .find(std::string("\"precision\": \"") + (amx ? "bf16_wgrad" : "fp32") + "\""),
            std::string::npos)
      << read_text(out + "/summary.json");
}

// A config without training stages runs the default recipe: the choice is printed, recorded in
// summary.json, and config.yaml holds it, so that running config.yaml again prints no new choice.
TEST_F(Cli, TheDefaultRecipeIsPrintedRecordedAndReproducible) {
  const std::string out = (dir_ / "recipe").string();
  const std::string config =
      write("r.yaml",
            "geometry: {type: interval, min: [0], max: [1], time: [0, 1]}\n"
            "equations: [{expression: u_t - 0.1*u_xx}]\n"
            "conditions: [{kind: initial_value, value: sin(pi*x)}, {kind: dirichlet}]\n"
            "output: {dir: " +
                out + ", grid: [11], time_steps: 3, progress: none}\n");
  const Output check = jetpde("run " + config + " --check");
  ASSERT_EQ(check.status, 0) << check.text;
  EXPECT_NE(check.text.find("jetpde: recipe auto: time-dependent (t in [0, 1]), 1 spatial "
                            "dimension, derivatives to order 2 (1 in time), 3 loss terms\n"
                            "  chose network: {architecture: modified_mlp"),
            std::string::npos)
      << check.text;
  const Output r = jetpde("run " + config + " --max-steps 2 --set sampling.interior_points=64");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("kept from the config: sampling.interior_points"), std::string::npos)
      << r.text;
  const std::string summary = read_text(out + "/summary.json");
  EXPECT_NE(summary.find("\"recipe\": {\n    \"facts\": \"time-dependent"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\"sampling.time_chunks\": \"32\""), std::string::npos) << summary;
  const Output again = jetpde("run " + out + "/config.yaml --check");
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_NE(again.text.find("recipe auto"), std::string::npos) << again.text;
  EXPECT_EQ(again.text.find("chose"), std::string::npos) << again.text;
}

// Above 3-D the validation points are sampled (reference.points, default 100000) instead of a
// 31-per-axis grid (28.6 M points in 5-D), and a count too large for the memory is refused
// before training.
TEST_F(Cli, ValidationAbove3dIsSampledAndItsSizeChecked) {
  const std::string out = (dir_ / "five").string();
  const std::string cfg =
      write("five.yaml",
            "geometry: {type: hypercube, min: [0, 0, 0, 0, 0], max: [1, 1, 1, 1, 1]}\n"
            "equations:\n  - expression: laplacian(u)\n"
            "conditions:\n  - {kind: dirichlet, value: x1, points: 64}\n"
            "network: {hidden: [8]}\nsampling: {interior_points: 64}\n"
            "training: {stages: [{steps: 2}]}\nreference: {expressions: {u: x1}}\n"
            "output: {dir: " +
                out + ", grid: [3], progress: none}\n");
  Output r = jetpde("run " + cfg);
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(read_text(out + "/summary.json").find("\"validation_points\": 100000"),
            std::string::npos)
      << read_text(out + "/summary.json");
  r = jetpde("run " + cfg + " --set reference.points=500");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(read_text(out + "/summary.json").find("\"validation_points\": 500"), std::string::npos);
  // 2^31 - 1 points of 5 coordinates and one field: 137 GB.
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  double kb = 0;
  while (meminfo >> name >> kb >> unit && name != "MemAvailable:") {
  }
  if (name != "MemAvailable:" || kb * 1024 > 2.5e11) GTEST_SKIP() << "too much memory to test";
  r = jetpde("run " + cfg + " --set reference.points=2147483647");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("jetpde: error: reference.points: validating at 2147483647 points needs "
                        "about 137 GB of memory, more than half of the "),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("give fewer points (reference.points) ("), std::string::npos) << r.text;
  // The output grid, 101 points per axis in 5-D (1e10 points), is refused before anything runs.
  fs::remove_all(out);
  r = jetpde("run " + cfg + " --set output.grid=[101]");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("five.yaml: output.grid: an output grid of 1.05e+10 points needs about "),
            std::string::npos)
      << r.text;
  EXPECT_FALSE(fs::exists(out));
}

double json_number(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(json.substr(at + key.size() + 4));
}

// reference.metrics: expressions of the fields against the same expression of the reference. An
// exact solution given as expressions is substituted, derivatives included; reference data has
// values only, so a derivative of it is refused before training.
TEST_F(Cli, MetricsOfExpressionsOfTheFields) {
  const std::string out = (dir_ / "metrics").string();
  const Output r = jetpde("run " + write("m.yaml", poisson(300, out,
                                                           "  expressions: {u: sin(pi*x)}\n"
                                                           "  metrics: {same: u, slope: u_x, "
                                                           "twice: 2*abs(u) + x}\n")));
  ASSERT_EQ(r.status, 0) << r.text;
  const std::string summary = read_text(out + "/summary.json");
  const double rel_l2 = json_number(summary, "rel_l2");
  EXPECT_NEAR(json_number(summary, "same_rel_l2"), rel_l2, 1e-6 * rel_l2 + 1e-12) << summary;
  EXPECT_NEAR(json_number(summary, "same_max_abs"), json_number(summary, "max_abs"), 1e-9);
  // twice = 2|u| + x: its largest error is twice u's (u >= 0 on [0, 1]).
  EXPECT_NEAR(json_number(summary, "twice_max_abs"), 2 * json_number(summary, "max_abs"), 1e-6);
  // u_x against pi cos(pi x): small after training (a zero or missing derivative would be 1).
  EXPECT_LT(json_number(summary, "slope_rel_l2"), 0.05) << summary;
  std::ifstream history(out + "/history.csv");
  std::string header;
  std::getline(history, header);
  EXPECT_NE(header.find(",same_rel_l2,same_max_abs,slope_rel_l2,slope_max_abs,twice_rel_l2"),
            std::string::npos)
      << header;
  // Reference data: values only.
  const std::string data = write("ref.csv", "x,u\n0.25,0.7071\n0.5,1\n0.75,0.7071\n");
  const std::string cfg = write(
      "d.yaml", poisson(10, (dir_ / "d").string(),
                        "  data: {file: " + data + "}\n  metrics: {slope: u_x, speed: abs(u)}\n"));
  Output d = jetpde("run " + cfg);
  EXPECT_EQ(d.status, 1);
  EXPECT_NE(d.text.find("jetpde: error: reference.metrics.slope: 'u_x': a derivative of 'u', "
                        "which the reference gives as values only"),
            std::string::npos)
      << d.text;
  d = jetpde("run " + cfg + " --set 'reference.metrics={speed: abs(u)}'");
  EXPECT_EQ(d.status, 0) << d.text;
}

TEST_F(Cli, BadInputGivesAMessageAndWritesNothing) {
  const std::string out = (dir_ / "run").string();
  // Malformed YAML.
  Output r = jetpde("run " + write("bad.yaml", "geometry: [1, 2\n"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("jetpde: error: " + (dir_ / "bad.yaml").string() + ":2:1: not valid YAML"),
            std::string::npos)
      << r.text;
  // A wrong type and an unknown key, with line and column.
  r = jetpde("run " + write("type.yaml", poisson(10, out) + "seed: one\n"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("type.yaml:16:7: seed: 'one' is not an integer"), std::string::npos)
      << r.text;
  r = jetpde("run " + write("key.yaml", poisson(10, out) + "sede: 1\n"));
  EXPECT_NE(r.text.find("key.yaml:16:1: sede: unknown key"), std::string::npos) << r.text;
  // A missing reference file.
  r = jetpde("run " + write("ref.yaml", poisson(10, out, "  data: {file: nothere.h5}\n")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("reference.data.file: no such file: " + (dir_ / "nothere.h5").string()),
            std::string::npos)
      << r.text;
  // A key given twice.
  r = jetpde("run " + write("twice.yaml", poisson(10, out) + "threads: 2\n"));
  EXPECT_NE(
      r.text.find("twice.yaml:16:1: threads: given twice (a YAML mapping holds each key once)"),
      std::string::npos)
      << r.text;
  EXPECT_FALSE(fs::exists(out));  // nothing was created for any of these
  // An output folder that cannot be created (a file is in the way).
  write("blocker", "");
  r = jetpde("run " + write("out.yaml", poisson(10, (dir_ / "blocker" / "run").string())));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("output.dir: cannot create the run folder '" +
                        (dir_ / "blocker" / "run").string() + "'"),
            std::string::npos)
      << r.text;
  // --resume without a checkpoint.
  r = jetpde("run " + write("resume.yaml", poisson(10, out)) + " --resume");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("--resume: no checkpoint in '" + out + "' (nothing to resume)"),
            std::string::npos)
      << r.text;
  expect_no_temporaries();
}

// CUDA asked for on a machine without a GPU: a warning and the CPU, or an error when required.
TEST_F(Cli, CudaWithoutAGpuFallsBackOrFails) {
  const Output info = jetpde("info");
  if (info.text.find("cuda         yes") != std::string::npos)
    GTEST_SKIP() << "a CUDA device is present: the fallback cannot be tested here";
  const std::string out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", poisson(5, out));
  Output r = jetpde("run " + cfg + " --max-steps 2 --set device=cuda");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("jetpde: warning: device: cuda cannot run here ("), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("); running on the CPU"), std::string::npos) << r.text;
  fs::remove_all(out);
  r = jetpde("run " + cfg + " --max-steps 2 --set device=cuda --set require_device=true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("jetpde: error: device: cuda is required (require_device: true) but "
                        "cannot run here: "),
            std::string::npos)
      << r.text;
  EXPECT_FALSE(fs::exists(out + "/checkpoint.h5"));
}

TEST_F(Cli, HelpEverywhere) {
  for (const char* cmd : {"--help", "run --help", "eval --help", "export --help", "info --help"}) {
    const Output r = jetpde(cmd);
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.text.find("Usage:"), std::string::npos) << cmd << ": " << r.text;
  }
  const Output r = jetpde("run");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.text.find("config is required"), std::string::npos) << r.text;
}

// jetpde starts libgomp with its wait policy when the user set none, and leaves a user's
// OMP_WAIT_POLICY or GOMP_SPINCOUNT alone. libgomp prints what it started with
// (OMP_DISPLAY_ENV=verbose, on stderr), so this checks what the runtime read, not only the
// environment; the re-executed process keeps its arguments and exit status.
TEST(CliOpenmp, WaitPolicyDefaultAndTheUsersOwn) {
  const auto with_env = [](const std::string& env, const std::string& args) {
    return shell("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " + env +
                 " OMP_NUM_THREADS=1 OMP_DISPLAY_ENV=verbose " + JETPDE_BINARY + " " + args +
                 " 2>&1");
  };
  // jetpde's default is a short spin: libgomp then spins 1000 times (300000 when nothing is set).
  ASSERT_EQ(std::string(compiler::kDefaultWaitPolicy), "GOMP_SPINCOUNT=1000");
  const std::string entry = compiler::kDefaultWaitPolicy, shown = "GOMP_SPINCOUNT = '1000'";

  Output r = with_env("", "info");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find(shown), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("OpenMP wait:   " + entry + " (jetpde's default)"), std::string::npos)
      << r.text;

  r = with_env("GOMP_SPINCOUNT=777", "info");
  EXPECT_NE(r.text.find("GOMP_SPINCOUNT = '777'"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("OpenMP wait:   GOMP_SPINCOUNT=777 (environment)"), std::string::npos)
      << r.text;

  r = with_env("OMP_WAIT_POLICY=active", "info");
  EXPECT_NE(r.text.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find(shown), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("OpenMP wait:   OMP_WAIT_POLICY=active (environment)"), std::string::npos)
      << r.text;

  r = with_env("", "run /nonexistent/config.yaml");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("/nonexistent/config.yaml"), std::string::npos) << r.text;
}

#if JETPDE_HAVE_PETSC
// solver: {type: petsc} from the command line: --petsc-options reach the same options database
// as solver.options, after it and after PETSC_OPTIONS (the order PETSc itself gives a file, the
// environment and its command line), for the solve and for a classical reference; -help lists
// what the solve reads; --check checks what the solver refuses, without solving.
std::string petsc_poisson(const std::string& out, const std::string& options,
                          const std::string& geometry = "{type: interval, min: [0], max: [1]}") {
  return "geometry: " + geometry +
         "\n"
         "equations: [{expression: laplacian(u) + pi^2*sin(pi*x)}]\n"
         "conditions: [{kind: dirichlet, value: 0}]\n"
         "solver: {type: petsc, grid: [33], options: \"" +
         options +
         "\"}\n"
         "reference: {expressions: {u: sin(pi*x)}}\n"
         "output: {dir: " +
         out + ", grid: [9], progress: none}\n";
}

std::string summary_method(const std::string& out) {
  std::ifstream in(out + "/summary.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::size_t at = s.find("\"method\": \"");
  return at == std::string::npos ? "" : s.substr(at + 11, s.find('"', at + 11) - at - 11);
}

TEST_F(Cli, PetscOptionsComeAfterTheConfigAndTheEnvironment) {
  const std::string out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", petsc_poisson(out, "-ksp_type no_such_ksp"));
  Output r = jetpde("run " + cfg);
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("no_such_ksp: not a KSP type"), std::string::npos) << r.text;
  r = jetpde("run " + cfg + " --petsc-options \"-ksp_type gmres -snes_monitor\"");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("SNES Function norm"), std::string::npos) << r.text;
  EXPECT_EQ(summary_method(out), "SNES newtonls, KSP gmres, PC lu");
  // PETSC_OPTIONS overrides the config, the command line overrides both.
  r = shell("PETSC_OPTIONS='-ksp_type cg' OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) +
            " run " + cfg + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(summary_method(out), "SNES newtonls, KSP cg, PC lu");
  r = shell("PETSC_OPTIONS='-ksp_type cg' OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) +
            " run " + cfg + " --petsc-options '-ksp_type bcgs' 2>&1");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(summary_method(out), "SNES newtonls, KSP bcgs, PC lu");
  std::ifstream in(out + "/summary.json");
  std::stringstream summary;
  summary << in.rdbuf();
  EXPECT_NE(summary.str().find("\"command_line_options\": \"-ksp_type bcgs\""), std::string::npos)
      << summary.str();
}

TEST_F(Cli, PetscHelpListsTheOptionsTheSolveReads) {
  const std::string out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", petsc_poisson(out, ""));
  const Output r = jetpde("run " + cfg + " --petsc-options -help");
  ASSERT_EQ(r.status, 0) << r.text;
  for (const char* name : {"-snes_type", "-ksp_type", "-pc_type"})
    EXPECT_NE(r.text.find(name), std::string::npos) << name << "\n" << r.text.substr(0, 2000);
  // -log_view, which PETSc itself reads only at PetscInitialize: the solve's table of events.
  const Output log = jetpde("run " + cfg + " --petsc-options -log_view");
  ASSERT_EQ(log.status, 0) << log.text;
  EXPECT_NE(log.text.find("SNESSolve"), std::string::npos) << log.text;
  EXPECT_EQ(log.text.find("did not use"), std::string::npos) << log.text;
}

// eval on a classical run folder: the grid solution's values, and it says how they are had.
TEST_F(Cli, EvalOfAClassicalRunSaysItInterpolatesTheGrid) {
  const std::string out = (dir_ / "run").string();
  ASSERT_EQ(jetpde("run " + write("p.yaml", petsc_poisson(out, ""))).status, 0);
  const std::string points = write("p.csv", "x\n0.25\n0.5\n");
  const Output r = jetpde("eval " + out + " --points " + points + " --fields u,u_x");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("from the finite-difference grid solution (values interpolated"),
            std::string::npos)
      << r.text;
  // sin(pi x) on 33 points: 2nd-order accurate values (and u_x = 0 at the midpoint).
  std::istringstream rows(r.text.substr(r.text.find("x,u,u_x")));
  std::string header, first, second;
  std::getline(rows, header);
  std::getline(rows, first);
  std::getline(rows, second);
  const double u = std::stod(first.substr(first.find(',') + 1));
  EXPECT_NEAR(u, std::sin(std::numbers::pi / 4), 2e-3) << first;
  const double ux = std::stod(second.substr(second.rfind(',') + 1));
  EXPECT_NEAR(ux, 0.0, 1e-6) << second;
}

TEST_F(Cli, PetscOptionsReachAClassicalReference) {
  const std::string out = (dir_ / "run").string();
  const std::string cfg = write("p.yaml", poisson(20, out, "  solver: petsc\n  grid: [65]\n"));
  const Output r = jetpde("run " + cfg + " --max-steps 2 --petsc-options -snes_monitor");
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("SNES Function norm"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("jetpde: reference: petsc"), std::string::npos) << r.text;
}

TEST_F(Cli, CheckOnAPetscConfigChecksWhatTheSolverRefuses) {
  const std::string out = (dir_ / "run").string();
  Output r = jetpde("run " + write("p.yaml", petsc_poisson(out, "")) + " --check");
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("the config is valid: the petsc solver takes it on a 33 grid"),
            std::string::npos)
      << r.text;
  // The shape, the grid, the equation count: run()'s messages, and nothing solved or written.
  const std::string disk =
      write("disk.yaml", petsc_poisson(out, "", "{type: disk, center: [0, 0], radius: 1}"));
  r = jetpde("run " + disk + " --check");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("disk.yaml: solver (petsc): the petsc solver discretizes boxes only"),
            std::string::npos)
      << r.text;

  const Output run = jetpde("run " + disk);  // the same message from the run itself
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.text.find("disk.yaml: solver (petsc): the petsc solver discretizes boxes only"),
            std::string::npos)
      << run.text;
  r = jetpde("run " + write("q.yaml", petsc_poisson(out, "")) +
             " --check --set 'equations=[{expression: u_xx}, {expression: u}]'");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("one equation per field: 2 equations for 1 fields"), std::string::npos)
      << r.text;
  EXPECT_FALSE(fs::exists(out));
}
#endif

}  // namespace
}  // namespace jetpde
