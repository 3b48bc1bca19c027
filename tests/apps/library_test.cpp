// `jetpde export RUN --library DIR`: a trained model as a standalone C library. A small run is
// exported, examples/library's C program is compiled against the library and run on 300 points
// (three blocks of 128, the last padded), and its values are `jetpde eval --precision fp64`'s bit
// for bit; so are the Fortran program's, built with CMake through the exported package config.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/executable.h"
#include "tests/apps/jetpde_cli.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/shell.h"

namespace jetpde {
namespace {

namespace fs = std::filesystem;
using jetpde::testing::Output;
using jetpde::testing::shell;

Output jetpde(const std::string& args) { return testing::jetpde_cli(args); }

// A CSV of numbers with a header: the header, and the rows' numbers.
struct Table {
  std::string header;
  std::vector<std::vector<double>> rows;
};

Table read_csv(const std::string& text) {
  Table t;
  std::stringstream lines(text);
  std::getline(lines, t.header);
  for (std::string line; std::getline(lines, line);) {
    std::vector<double> row;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(std::stod(cell));
    t.rows.push_back(row);
  }
  return t;
}

class Library : public jetpde::testing::ScratchDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return path(name);
  }
  // Poisson's equation on the unit square, briefly trained (the values only need to be a
  // network's), and 300 points in it, for eval (CSV) and for the example programs (stdin).
  void SetUp() override {
    ScratchDirTest::SetUp();
    run_ = path("run");
    const Output r = jetpde(
        "run " + write("p.yaml",
                       "geometry: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
                       "equations:\n  - expression: laplacian(u) + 2*pi^2*sin(pi*x)*sin(pi*y)\n"
                       "conditions:\n  - {kind: dirichlet, points: 32}\n"
                       "network: {hidden: [12, 12]}\n"
                       "sampling: {interior_points: 64}\n"
                       "training:\n  stages:\n    - {optimizer: adam, steps: 20}\n"
                       "output: {dir: " +
                           run_ + ", grid: [5, 5], progress: none}\nthreads: 1\n"));
    ASSERT_EQ(r.status, 0) << r.text;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> unit(0, 1);
    std::ostringstream csv, stdin_text;
    csv.precision(17);
    stdin_text.precision(17);
    csv << "x,y\n";
    stdin_text << kPoints << "\n";
    for (int i = 0; i < kPoints; ++i) {
      const double x = unit(rng), y = unit(rng);
      csv << x << "," << y << "\n";
      stdin_text << x << " " << y << "\n";
    }
    points_csv_ = write("points.csv", csv.str());
    points_txt_ = write("points.txt", stdin_text.str());
  }
  // `jetpde eval` of the same fields in fp64.
  Table eval(const std::string& fields) {
    const Output e =
        shell("OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) + " eval " + run_ + " --points " +
              points_csv_ + " --fields '" + fields + "' --precision fp64 2>/dev/null");
    EXPECT_EQ(e.status, 0) << e.text;
    return read_csv(e.text);
  }
  static constexpr int kPoints = 300;
  std::string run_, points_csv_, points_txt_;
};

void expect_same_bits(const Table& got, const Table& want, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.header, want.header);
  ASSERT_EQ(got.rows.size(), want.rows.size());
  int differ = 0;
  for (std::size_t i = 0; i < want.rows.size(); ++i) {
    ASSERT_EQ(got.rows[i].size(), want.rows[i].size()) << "row " << i;
    for (std::size_t k = 0; k < want.rows[i].size(); ++k)
      if (got.rows[i][k] != want.rows[i][k] && differ++ < 5)
        ADD_FAILURE() << "row " << i << " column " << k << ": " << got.rows[i][k] << " vs "
                      << want.rows[i][k];
  }
  EXPECT_EQ(differ, 0);
}

TEST_F(Library, TheCProgramGivesEvalsValuesBitForBit) {
  const std::string lib = path("lib"), fields = "u,u_x,laplacian(u)";
  const Output x =
      jetpde("export " + run_ + " --library " + lib + " --block 128 --fields '" + fields + "'");
  ASSERT_EQ(x.status, 0) << x.text;
  EXPECT_NE(
      x.text.find("wrote libmodel.so, model.h, modelConfig.cmake and model.cpp in " + lib +
                  ": u, u_x, laplacian(u) at points (x, y) in fp64 on the CPU, 128 points a block"),
      std::string::npos)
      << x.text;
  for (const char* f : {"libmodel.so", "model.h", "modelConfig.cmake", "model.cpp"})
    EXPECT_TRUE(fs::exists(fs::path(lib) / f)) << f;
  for (const auto& e : fs::directory_iterator(lib))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  // The C program, compiled and linked with nothing of jetpde's but the exported folder.
  const std::string program = path("eval_c");
  const Output cc = shell("cc -std=c99 -Wall -Werror -o " + program + " " +
                          std::string(JETPDE_SOURCE_DIR) + "/examples/library/main.c -I" + lib +
                          " -L" + lib + " -lmodel -Wl,-rpath," + lib + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.text;
  const Output c = shell(program + " < " + points_txt_);
  ASSERT_EQ(c.status, 0) << c.text;
  const Table want = eval(fields);
  ASSERT_EQ(want.rows.size(), static_cast<std::size_t>(kPoints));
  expect_same_bits(read_csv(c.text), want, "C");
  // What the header says.
  std::stringstream header;
  header << std::ifstream(fs::path(lib) / "model.h").rdbuf();
  EXPECT_NE(header.str().find("#define MODEL_COORDINATES 2"), std::string::npos) << header.str();
  EXPECT_NE(header.str().find("#define MODEL_OUTPUTS 3"), std::string::npos) << header.str();
}

TEST_F(Library, TheFortranProgramBuiltWithCMakeGivesEvalsValuesBitForBit) {
  if (shell("gfortran --version >/dev/null 2>&1").status != 0 ||
      shell("cmake --version >/dev/null 2>&1").status != 0)
    GTEST_SKIP() << "gfortran or cmake not found (scripts/bootstrap.sh installs them)";
  const std::string lib = path("lib");
  const Output x = jetpde("export " + run_ + " --library " + lib + " --block 1000");
  ASSERT_EQ(x.status, 0) << x.text;
  const std::string build = path("build");
  const Output cfg =
      shell("cmake -S " + std::string(JETPDE_SOURCE_DIR) + "/examples/library -B " + build +
            " -DCMAKE_PREFIX_PATH=" + lib + " 2>&1 && cmake --build " + build + " 2>&1");
  ASSERT_EQ(cfg.status, 0) << cfg.text;
  const Output f = shell(build + "/eval_fortran < " + points_txt_);
  ASSERT_EQ(f.status, 0) << f.text;
  expect_same_bits(read_csv(f.text), eval("u"), "Fortran");
  const Output c = shell(build + "/eval_c < " + points_txt_);
  ASSERT_EQ(c.status, 0) << c.text;
  expect_same_bits(read_csv(c.text), eval("u"), "C through CMake");
}

#ifdef JETPDE_CUDA_LIBRARY_DIR
// --device cuda: the same model as a library on device pointers, compiled by nvcc (for one
// architecture here, to keep the test short). It exports only its C API, and
// examples/library/main_cuda.c links it with nothing of jetpde's. With a GPU, the program's values
// are `jetpde eval` on CUDA's bit for bit (the same kernels, the same cuBLAS calls); without one,
// the library loads, and says so: no device.
TEST_F(Library, TheCudaLibraryTakesDevicePointers) {
  const std::string lib = path("lib"), fields = "u,u_x,laplacian(u)";
  const Output x = jetpde("export " + run_ + " --library " + lib +
                          " --block 128 --device cuda --cuda-arch sm_90 --fields '" + fields + "'");
  ASSERT_EQ(x.status, 0) << x.text;
  EXPECT_NE(x.text.find("wrote libmodel.so, model.h, modelConfig.cmake and model.cu in " + lib +
                        ": u, u_x, laplacian(u) at points (x, y) in fp64 on the GPU (device "
                        "pointers), 128 points a block"),
            std::string::npos)
      << x.text;
  for (const char* f : {"libmodel.so", "model.h", "modelConfig.cmake", "model.cu"})
    EXPECT_TRUE(fs::exists(fs::path(lib) / f)) << f;
  for (const auto& e : fs::directory_iterator(lib))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  const Output symbols = shell("nm -D --defined-only " + lib + "/libmodel.so");
  ASSERT_EQ(symbols.status, 0) << symbols.text;
  for (const char* f : {"model_cuda_create", "model_cuda_eval", "model_cuda_destroy",
                        "model_cuda_error", "model_coordinates", "model_outputs"})
    EXPECT_NE(symbols.text.find(f), std::string::npos) << f << " not exported:\n" << symbols.text;
  EXPECT_EQ(symbols.text.find("jetpde_step"), std::string::npos) << symbols.text;

  const Output bad =
      jetpde("export " + run_ + " --library " + path("lib2") + " --device cuda --cuda-arch volta");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.text.find("--cuda-arch: 'volta' is not a GPU architecture (sm_XY or compute_XY"),
            std::string::npos)
      << bad.text;
  EXPECT_FALSE(fs::exists(path("lib2") + "/libmodel.so"));

  const std::string program = path("eval_cuda");
  const Output cc =
      shell("cc -std=c99 -Wall -Werror -o " + program + " " + std::string(JETPDE_SOURCE_DIR) +
            "/examples/library/main_cuda.c -I" + lib + " -I" + JETPDE_CUDA_INCLUDE_DIR + " -L" +
            lib + " -lmodel -L" + JETPDE_CUDA_LIBRARY_DIR + " -lcudart -Wl,-rpath," + lib + ":" +
            JETPDE_CUDA_LIBRARY_DIR + " 2>&1");
  ASSERT_EQ(cc.status, 0) << cc.text;
  const Output c = shell(program + " < " + points_txt_ + " 2>&1");
  std::string why;
  if (!compiler::backend_can_run(compiler::Backend::cuda, {}, &why)) {
    EXPECT_EQ(c.status, 3) << c.text;
    EXPECT_NE(c.text.find("model_cuda_create: no CUDA device: "), std::string::npos) << c.text;
    GTEST_SKIP() << "built and linked; not run (" << why << ")";
  }
  ASSERT_EQ(c.status, 0) << c.text;
  const Output e = shell(std::string(JETPDE_BINARY) + " eval " + run_ + " --points " + points_csv_ +
                         " --fields '" + fields +
                         "' --precision fp64 --set device=cuda --set require_device=true "
                         "2>/dev/null");
  ASSERT_EQ(e.status, 0) << e.text;
  expect_same_bits(read_csv(c.text), read_csv(e.text), "CUDA");
}
#endif

TEST_F(Library, BadOptionsAreNamed) {
  const Output name = jetpde("export " + run_ + " --library " + path("lib") + " --name 2d-model");
  EXPECT_EQ(name.status, 1);
  EXPECT_NE(name.text.find("library name '2d-model': expected a C identifier"), std::string::npos)
      << name.text;
  const Output grid = jetpde("export " + run_ + " --library " + path("lib") + " --grid 5");
  EXPECT_EQ(grid.status, 1);
  EXPECT_NE(grid.text.find("--library writes a library, not grid files"), std::string::npos)
      << grid.text;
  const Output precision =
      jetpde("export " + run_ + " --library " + path("lib") + " --precision fp32");
  EXPECT_EQ(precision.status, 1);
  EXPECT_NE(precision.text.find("the library computes in fp64"), std::string::npos)
      << precision.text;
  const Output arch = jetpde("export " + run_ + " --library " + path("lib") + " --cuda-arch sm_90");
  EXPECT_EQ(arch.status, 1);
  EXPECT_NE(arch.text.find("--cuda-arch goes with --device cuda"), std::string::npos) << arch.text;
  const Output field = jetpde("export " + run_ + " --library " + path("lib") + " --fields 'u_x+'");
  EXPECT_EQ(field.status, 1);
  EXPECT_NE(field.text.find("--fields: "), std::string::npos) << field.text;
  EXPECT_FALSE(fs::exists(path("lib") + "/libmodel.so")) << "nothing built on bad input";
}

}  // namespace
}  // namespace jetpde
