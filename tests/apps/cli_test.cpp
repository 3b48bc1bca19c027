// The jetpde command as a user runs it: a process, its exit status, its messages and the files
// it leaves. kill -9 in the middle of a run and --resume give the same parameters as an
// uninterrupted run; bad input gives a message and leaves no half-written file.
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

#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>
#include "compiler/openmp_env.h"
#include "io/checkpoint.h"
#include "io/hdf5_read.h"
#include "tests/support/scratch_dir.h"

extern char** environ;

namespace jetpde {
namespace {

namespace fs = std::filesystem;

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

// Runs `command` through the shell and collects its output (stdout and stderr).
Output shell(const std::string& command) {
  Output out;
  FILE* p = popen(command.c_str(), "r");
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.text.append(buf, n);
  const int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Runs `jetpde args` through the shell, one OpenMP thread, and collects its output.
Output jetpde(const std::string& args) {
  return shell("OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) + " " + args + " 2>&1");
}

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
  expect_no_temporaries();
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
  // jetpde's default is passive: libgomp then spins 0 times (300000 when nothing is set).
  ASSERT_EQ(std::string(compiler::kDefaultWaitPolicy), "OMP_WAIT_POLICY=passive");
  const std::string entry = compiler::kDefaultWaitPolicy, shown = "GOMP_SPINCOUNT = '0'";

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

}  // namespace
}  // namespace jetpde
