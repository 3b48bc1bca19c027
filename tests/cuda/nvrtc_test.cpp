// The CUDA renderer's output compiled by NVRTC (docs/design.md section 12): every kernel of every
// benchmark workload (f64 and f32, and the reduced-precision policies) and of a graph holding
// every primitive compiles to PTX containing each kernel's entry; the compile cache; the user
// errors; a golden copy of the rendered source. None of this needs a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "autodiff/errors.h"
#include "compiler/cuda/nvrtc.h"
#include "compiler/cuda/render_cuda.h"
#include "tests/support/test_programs.h"

namespace jetpde::cudatest {
using namespace testprog;  // NOLINT(google-build-using-namespace): the shared test programs
namespace {

using compiler::CudaSource;

compiler::NvrtcOptions fresh_cache(const std::string& name) {
  compiler::NvrtcOptions o;
  o.cache_dir = ::testing::TempDir() + "jetpde-nvrtc-" + name;
  std::filesystem::remove_all(o.cache_dir);
  return o;
}

// Compiles cold, checks every entry, and prints the compile time.
void expect_compiles(const std::string& label, const compiler::Program& p) {
  const CudaSource source = compiler::render_cuda_source(p);
  const compiler::CudaBinary ptx = compiler::compile_cuda(source.source, fresh_cache(label));
  EXPECT_TRUE(ptx.ptx);
  EXPECT_FALSE(ptx.cache_hit);
  EXPECT_NE(ptx.image.find(".target sm_90"), std::string::npos);
  const std::vector<std::string> symbols = source.symbols();
  for (const std::string& symbol : symbols)
    EXPECT_NE(ptx.image.find(".entry " + symbol + "("), std::string::npos) << symbol;
  std::size_t kernels = 0;
  for (const auto& s : p.steps) kernels += std::holds_alternative<compiler::Kernel>(s.op);
  std::size_t rendered = 0;
  for (const auto& s : source.steps) rendered += s.has_value();
  EXPECT_EQ(rendered, kernels);
  std::cout << "[nvrtc] " << label << ": " << kernels << " kernel steps, " << symbols.size()
            << " kernels, " << source.source.size() / 1024 << " KiB CUDA -> "
            << ptx.image.size() / 1024 << " KiB PTX in " << ptx.seconds << " s\n";
  ::testing::Test::RecordProperty("nvrtc_seconds", std::to_string(ptx.seconds));
}

class NvrtcWorkloads : public ::testing::TestWithParam<WorkloadCase> {};

TEST_P(NvrtcWorkloads, EveryKernelCompilesToPtx) {
  const WorkloadCase c = GetParam();
  bench::Workload w = bench::build_workload(c.name, {64, c.dtype});
  expect_compiles(case_name(c), lowered(w.step_outputs()));
}

INSTANTIATE_TEST_SUITE_P(Workloads, NvrtcWorkloads, ::testing::ValuesIn(workload_cases()),
                         [](const auto& info) { return case_name(info.param); });

TEST(NvrtcPrecision, ReducedPrecisionPoliciesCompile) {
  for (const auto policy : {compiler::PrecisionPolicy::bf16, compiler::PrecisionPolicy::fp16}) {
    bench::Workload w = bench::build_workload("ks4", {64, DType::f32});
    compiler::PipelineOptions o;
    o.precision = policy;
    const compiler::Program p = lowered(w.step_outputs(), o);
    const std::string source = compiler::render_cuda_source(p).source;
    EXPECT_NE(source.find(policy == compiler::PrecisionPolicy::bf16 ? "jp_bf16(" : "jp_f16("),
              std::string::npos);
    expect_compiles("ks4_" + compiler::precision_name(policy), p);
  }
}

class NvrtcPrimitives : public ::testing::TestWithParam<DType> {};

TEST_P(NvrtcPrimitives, EveryKernelCompilesToPtx) {
  Graph g(GetParam());
  Bindings b;
  const std::vector<Labelled> outs = primitive_outputs(g, b);
  expect_compiles("primitives_" + std::string(dtype_name(GetParam())), lowered(vars_of(outs)));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NvrtcPrimitives, ::testing::Values(DType::f64, DType::f32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A small program whose kernels cover the three schemes: elementwise (the second layer's input),
// a sum over columns, a mean over rows (the loss).
compiler::Program dense_layer() {
  Graph g;
  const Var x = g.input("x", {64, 2});
  const Var w = g.param("W", {2, 8});
  const Var b = g.param("b", {1, 8});
  const Var h = tanh(matmul(x, w) + b);
  const Var h2 = sin(matmul(h, g.param("W2", {8, 3})));
  const std::vector<Var> outs{mean_all(square(h - 0.5)), sum_cols(h), h2};
  return lowered(outs);
}

TEST(NvrtcCache, TheSecondCompileIsACacheHit) {
  const compiler::NvrtcOptions o = fresh_cache("hit");
  const std::string source = compiler::render_cuda_source(dense_layer()).source;
  const compiler::CudaBinary first = compiler::compile_cuda(source, o);
  const compiler::CudaBinary second = compiler::compile_cuda(source, o);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(first.image, second.image);
  std::size_t ptx = 0;
  for (const auto& e : std::filesystem::directory_iterator(o.cache_dir))
    ptx += e.path().extension() == ".ptx";
  EXPECT_EQ(ptx, 1u);
}

TEST(NvrtcCubin, AnSmArchitectureGivesACubin) {
  compiler::NvrtcOptions o = fresh_cache("cubin");
  o.arch = "sm_90";
  const compiler::CudaBinary cubin =
      compiler::compile_cuda(compiler::render_cuda_source(dense_layer()).source, o);
  EXPECT_FALSE(cubin.ptx);
  EXPECT_EQ(cubin.image.substr(0, 4),
            "\x7f"
            "ELF");
}

void expect_user_error(const std::function<void()>& f,
                       const std::function<void(const std::string&)>& check) {
  try {
    f();
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    check(e.what());
  }
}

TEST(NvrtcErrors, AnUnknownArchitectureNamesItAndNvrtcsComplaint) {
  compiler::NvrtcOptions o = fresh_cache("bad-arch");
  o.arch = "compute_10";
  expect_user_error([&] { compiler::compile_cuda("extern \"C\" __global__ void k() {}", o); },
                    [](const std::string& m) {
                      EXPECT_EQ(m.rfind("NVRTC could not compile the generated CUDA source for "
                                        "compute_10 (NVRTC_ERROR_INVALID_OPTION):\n",
                                        0),
                                0u)
                          << m;
                      EXPECT_NE(m.find("the source is kept in "), std::string::npos) << m;
                    });
}

TEST(NvrtcErrors, BadSourceGivesTheLogAndKeepsTheSource) {
  const compiler::NvrtcOptions o = fresh_cache("bad-source");
  expect_user_error(
      [&] { compiler::compile_cuda("extern \"C\" __global__ void k() { undeclared = 1; }", o); },
      [](const std::string& m) {
        EXPECT_EQ(m.rfind("NVRTC could not compile the generated CUDA source for compute_90 "
                          "(NVRTC_ERROR_COMPILATION):\n",
                          0),
                  0u)
            << m;
        EXPECT_NE(m.find("identifier \"undeclared\" is undefined"), std::string::npos) << m;
        const std::string kept = m.substr(m.find("the source is kept in ") + 22);
        EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
      });
}

// The generated source of a small graph, compared with a reviewed copy. Regenerate it with
// JETPDE_UPDATE_GOLDEN=1 after an intended change of the renderer, and review the diff.
TEST(Golden, RenderedCudaSourceOfADenseLayerAndItsLoss) {
  const std::string source = compiler::render_cuda_source(dense_layer()).source;
  const std::string path = std::string(JETPDE_SOURCE_DIR) + "/tests/cuda/golden/dense_layer.cu";
  if (const char* update = std::getenv("JETPDE_UPDATE_GOLDEN"); update && *update == '1')
    std::ofstream(path) << source;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  const std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(source, golden) << "the CUDA renderer's output changed; if intended, regenerate with "
                               "JETPDE_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace
}  // namespace jetpde::cudatest
