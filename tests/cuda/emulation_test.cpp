// The CUDA renderer's kernels, run by the host emulation of emulator.h, against the interpreter:
// every workload and every primitive with the default launch limits, and some workloads with
// limits of two blocks, which makes every grid-stride loop stride and every row sum add several
// partials (the primitive table's shapes are too small for that to change anything).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "compiler/cuda/render_cuda.h"
#include "compiler/executable.h"
#include "tests/cuda/emulator.h"
#include "tests/support/test_programs.h"

namespace jetpde::cudatest {
using namespace testprog;  // NOLINT(google-build-using-namespace): the shared test programs
namespace {

std::string cache_dir() { return ::testing::TempDir() + "jetpde-cuda-emulation-cache"; }

double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-11 : 2e-5; }

const compiler::CudaRenderOptions kTinyGrids{2, 2};

struct EmulatedCase {
  WorkloadCase workload;
  bool tiny_grids;
};
void PrintTo(const EmulatedCase& c, std::ostream* os) {
  *os << case_name(c.workload) << (c.tiny_grids ? " with tiny grids" : "");
}

class EmulatedWorkloads : public ::testing::TestWithParam<EmulatedCase> {};

TEST_P(EmulatedWorkloads, StepMatchesTheInterpreter) {
  const EmulatedCase c = GetParam();
  bench::Workload w = bench::build_workload(c.workload.name, {64, c.workload.dtype});
  const std::vector<Var> outs = w.step_outputs();
  EmulatedDevice device(lowered(outs), c.tiny_grids ? kTinyGrids : compiler::CudaRenderOptions{},
                        cache_dir());
  device.set(w.bindings);
  device.run();
  const std::vector<MatrixD> want = evaluate(outs, w.bindings, Precision::f64);
  for (std::size_t k = 0; k < outs.size(); ++k)
    EXPECT_LE(error(device.output(k), want[k]), tolerance(c.workload.dtype))
        << (k == 0 ? std::string("loss") : "gradient of " + w.params[k - 1].node().attrs.name);
}

std::vector<EmulatedCase> emulated_cases() {
  std::vector<EmulatedCase> out;
  for (const WorkloadCase& w : workload_cases()) out.push_back({w, false});
  for (const char* name : {"burgers", "ks4", "poisson32d"})
    out.push_back({{name, DType::f64}, true});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Workloads, EmulatedWorkloads, ::testing::ValuesIn(emulated_cases()),
                         [](const auto& info) {
                           return case_name(info.param.workload) +
                                  (info.param.tiny_grids ? "_tiny_grids" : "");
                         });

class EmulatedPrimitives : public ::testing::TestWithParam<DType> {};

TEST_P(EmulatedPrimitives, MatchTheInterpreter) {
  const DType dtype = GetParam();
  Graph g(dtype);
  Bindings b;
  const std::vector<Labelled> outs = primitive_outputs(g, b);
  const std::vector<Var> vars = vars_of(outs);
  EmulatedDevice device(lowered(vars), {}, cache_dir());
  device.set(b);
  device.run();
  const std::vector<MatrixD> want = evaluate(vars, b, Precision::node);
  for (std::size_t k = 0; k < outs.size(); ++k)
    EXPECT_LE(error(device.output(k), want[k]), tolerance(dtype)) << outs[k].label;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, EmulatedPrimitives, ::testing::Values(DType::f64, DType::f32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A kernel that sums over rows and over columns at once (both launches and the finish), with
// shapes that fill no block evenly (rows 1000, cols 37), and wider than the tiny grids' column
// blocks (cols 150: five blocks of 32 columns, which the row sums' grid must not cap).
TEST(EmulatedReductions, RowsAndColumnsInOneKernel) {
  for (const auto& [tiny, cols] : {std::pair{false, 37}, {true, 37}, {true, 150}}) {
    Graph g(DType::f64);
    const Var x = g.input("x", {1000, cols});
    const Var h = tanh(x) * 2.0;
    const std::vector<Var> outs{mean_rows(h), sum_cols(h), sum_rows(h * h), mean_all(h), h};
    EmulatedDevice device(lowered(outs), tiny ? kTinyGrids : compiler::CudaRenderOptions{},
                          cache_dir());
    bool mixed = false;
    for (const auto& s : device.source().steps)
      if (s) mixed = mixed || s->launches.size() == 3;
    EXPECT_TRUE(mixed) << device.program().to_text();
    const Bindings b{{"x", MatrixD::Random(1000, cols)}};
    device.set(b);
    device.run();
    const std::vector<MatrixD> want = evaluate(outs, b, Precision::f64);
    for (std::size_t k = 0; k < outs.size(); ++k)
      EXPECT_LE(error(device.output(k), want[k]), 1e-12)
          << "output " << k << " tiny " << tiny << " cols " << cols;
  }
}

// Reduced-precision policies: the emulated kernels against the CPU backend's (the same
// rounding after every operation, so nearly the same numbers).
TEST(EmulatedPrecision, Bf16AndFp16MatchTheCpuBackend) {
  for (const auto policy : {compiler::PrecisionPolicy::bf16, compiler::PrecisionPolicy::fp16}) {
    bench::Workload w = bench::build_workload("burgers", {64, DType::f32});
    const std::vector<Var> outs = w.step_outputs();
    compiler::CompileOptions o;
    o.cpu.cache_dir = cache_dir();
    o.pipeline.precision = policy;
    compiler::Executable cpu(outs, o);
    cpu.set(w.bindings);
    cpu.run();
    EmulatedDevice device(lowered(outs, o.pipeline), {}, cache_dir());
    device.set(w.bindings);
    device.run();
    for (std::size_t k = 0; k < outs.size(); ++k)
      EXPECT_LE(error(device.output(k), cpu.output(k)), 1e-3)
          << compiler::precision_name(policy) << " output " << k;
  }
}

// The 16-bit policies' GEMMs go to TF32 tensor cores on a GPU (ColumnMajorGemm::tensor_cores):
// exactly those whose operands both hold bf16 or f16 values, and TF32 changes none of those
// values, so rounding them as tensor cores do leaves every output as it was, bit for bit. The
// same rounding on the f32 GEMMs of an fp32 step does change the outputs: the check can fail.
TEST(EmulatedTensorCores, TakeExactlyTheGemmsOfSixteenBitOperandsAndChangeNothing) {
  using P = compiler::PrecisionPolicy;
  bench::Workload w = bench::build_workload("burgers", {64, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const auto run = [&](P policy, EmulatedDevice::Tf32 tf32) {
    compiler::PipelineOptions o;
    o.precision = policy;
    EmulatedDevice device(lowered(outs, o), {}, cache_dir());
    device.tf32 = tf32;
    device.set(w.bindings);
    device.run();
    std::vector<MatrixD> out;
    for (std::size_t k = 0; k < outs.size(); ++k) out.push_back(device.output(k));
    return out;
  };
  for (const P policy : {P::bf16, P::bf16_wgrad, P::fp16, P::fp32}) {
    SCOPED_TRACE(compiler::precision_name(policy));
    compiler::PipelineOptions o;
    o.precision = policy;
    const compiler::Program p = lowered(outs, o);
    int gemms = 0, tensor = 0, transposed_first = 0;
    for (const compiler::Step& s : p.steps)
      if (const auto* g = std::get_if<compiler::Gemm>(&s.op)) {
        ++gemms;
        tensor += compiler::column_major_gemm(p, *g).tensor_cores;
        // bf16_wgrad rounds the weight gradients of weights at least 32 wide each way.
        transposed_first += g->transpose_a && std::min(g->c.shape.rows, g->c.shape.cols) >=
                                                  compiler::kNativeBf16MinWidth;
      }
    if (policy == P::fp32) {
      EXPECT_EQ(tensor, 0);
    } else if (policy == P::bf16_wgrad) {
      EXPECT_EQ(tensor, transposed_first) << "the 64 x 64 weight gradients";
      EXPECT_GT(tensor, 0);
    } else {
      EXPECT_EQ(tensor, gemms);
    }
    const std::vector<MatrixD> plain = run(policy, EmulatedDevice::Tf32::off);
    const std::vector<MatrixD> rounded = run(policy, EmulatedDevice::Tf32::tensor_core_gemms);
    for (std::size_t k = 0; k < outs.size(); ++k)
      EXPECT_TRUE((plain[k] == rounded[k]).all()) << "output " << k;
  }
  const std::vector<MatrixD> f32 = run(P::fp32, EmulatedDevice::Tf32::off);
  const std::vector<MatrixD> every = run(P::fp32, EmulatedDevice::Tf32::every_f32_gemm);
  bool changed = false;
  for (std::size_t k = 0; k < outs.size(); ++k) changed = changed || !(every[k] == f32[k]).all();
  EXPECT_TRUE(changed) << "TF32 on f32 operands is not f32";
}

}  // namespace
}  // namespace jetpde::cudatest
