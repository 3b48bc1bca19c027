// The CUDA backend through the Executable. Where a CUDA device exists: every workload and every
// primitive against the interpreter, and the reduced-precision policies against the CPU backend
// (skipped, with the reason, elsewhere). Where none exists: a cuda request warns and runs on the
// CPU, and a strict one is a UserError naming the reason.
#include <gtest/gtest.h>

#include <iostream>

#include "autodiff/errors.h"
#include "compiler/executable.h"
#include "compiler/runtime.h"
#include "tests/support/test_programs.h"

namespace jetpde::cudatest {
using namespace testprog;  // NOLINT(google-build-using-namespace): the shared test programs
namespace {

using compiler::Backend;

// Empty when a CUDA device can run programs here; else why not.
const std::string& no_device_reason() {
  static const std::string reason = [] {
    const compiler::RuntimeFactory* f = compiler::find_runtime(Backend::cuda);
    if (!f) return std::string("the CUDA runtime is not linked into this test");
    std::string why;
    return f->available(compiler::CompileOptions{}, &why) ? std::string() : why;
  }();
  return reason;
}

#define SKIP_WITHOUT_A_DEVICE() \
  if (!no_device_reason().empty()) GTEST_SKIP() << no_device_reason();

compiler::CompileOptions options(Backend backend) {
  compiler::CompileOptions o;
  o.backend = backend;
  o.strict = true;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-cuda-test-cache";
  return o;
}

// f32 on the GPU: cuBLAS's summation order and CUDA's math functions (within 2 ulp) differ from
// the CPU's; the errors are printed so that the bands can be tightened from measurements.
double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-10 : 5e-5; }

TEST(CudaRegistration, TheCudaRuntimeIsLinked) {
  EXPECT_NE(compiler::find_runtime(Backend::cuda), nullptr);
}

class CudaWorkloads : public ::testing::TestWithParam<WorkloadCase> {};

TEST_P(CudaWorkloads, StepMatchesTheInterpreter) {
  SKIP_WITHOUT_A_DEVICE();
  const WorkloadCase c = GetParam();
  bench::Workload w = bench::build_workload(c.name, {256, c.dtype});
  const std::vector<Var> outs = w.step_outputs();
  compiler::Executable exe(outs, options(Backend::cuda));
  ASSERT_EQ(exe.backend(), Backend::cuda);
  exe.set(w.bindings);
  exe.run();
  const std::vector<MatrixD> want = evaluate(outs, w.bindings, Precision::f64);
  double worst = 0;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const double e = error(exe.output(k), want[k]);
    worst = std::max(worst, e);
    EXPECT_LE(e, tolerance(c.dtype))
        << (k == 0 ? std::string("loss") : "gradient of " + w.params[k - 1].node().attrs.name);
  }
  std::cout << "[cuda] " << case_name(c) << ": largest relative error " << worst << ", "
            << exe.stats().kernels << " kernels, " << exe.stats().gemms << " GEMMs, build "
            << exe.stats().build_seconds << " s\n";
  // Running again on new points gives the new result without recompiling.
  w.bindings["x"] = bench::uniform_points(256, w.spec.inputs(), 77);
  exe.set("x", w.bindings["x"]);
  exe.run();
  EXPECT_LE(error(exe.output(0), evaluate(outs[0], w.bindings, Precision::f64)),
            tolerance(c.dtype));
  EXPECT_EQ(exe.run_timed().size(), exe.program().steps.size());
}

INSTANTIATE_TEST_SUITE_P(Workloads, CudaWorkloads, ::testing::ValuesIn(workload_cases()),
                         [](const auto& info) { return case_name(info.param); });

class CudaPrimitives : public ::testing::TestWithParam<DType> {};

TEST_P(CudaPrimitives, MatchTheInterpreter) {
  SKIP_WITHOUT_A_DEVICE();
  const DType dtype = GetParam();
  Graph g(dtype);
  Bindings b;
  const std::vector<Labelled> outs = primitive_outputs(g, b);
  const std::vector<Var> vars = vars_of(outs);
  compiler::Executable exe(vars, options(Backend::cuda));
  exe.set(b);
  exe.run();
  const std::vector<MatrixD> want = evaluate(vars, b, Precision::node);
  double worst = 0;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const double e = error(exe.output(k), want[k]);
    worst = std::max(worst, e);
    EXPECT_LE(e, tolerance(dtype)) << outs[k].label;
  }
  std::cout << "[cuda] primitives_" << dtype_name(dtype) << ": largest relative error " << worst
            << "\n";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaPrimitives, ::testing::Values(DType::f64, DType::f32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// Sums over rows and columns in one kernel, on shapes large enough that every grid-stride loop
// strides and the row sums add many blocks' partials, and odd enough to fill no block evenly.
TEST(CudaReductions, RowsAndColumnsInOneKernel) {
  SKIP_WITHOUT_A_DEVICE();
  for (const DType dtype : {DType::f64, DType::f32}) {
    for (const Shape shape : {Shape{1000, 37}, Shape{200003, 3}, Shape{70001, 129}}) {
      Graph g(dtype);
      const Var x = g.input("x", shape);
      const Var h = tanh(x) * 2.0;
      const std::vector<Var> outs{mean_rows(h), sum_cols(h), sum_rows(h * h), mean_all(h), h};
      compiler::Executable exe(outs, options(Backend::cuda));
      const Bindings b{{"x", MatrixD::Random(shape.rows, shape.cols)}};
      exe.set(b);
      exe.run();
      const std::vector<MatrixD> want = evaluate(outs, b, Precision::node);
      for (std::size_t k = 0; k < outs.size(); ++k)
        EXPECT_LE(error(exe.output(k), want[k]), dtype == DType::f64 ? 1e-12 : 1e-5)
            << "output " << k << " of " << shape.str() << " in " << dtype_name(dtype);
    }
  }
}

// bf16 and fp16 round after every operation on both backends; where the f32 values before a
// rounding differ in the last bit, the rounded ones differ by one 16-bit ulp, hence the band.
TEST(CudaPrecision, Bf16AndFp16MatchTheCpuBackend) {
  SKIP_WITHOUT_A_DEVICE();
  for (const auto policy : {compiler::PrecisionPolicy::bf16, compiler::PrecisionPolicy::fp16}) {
    bench::Workload w = bench::build_workload("burgers", {256, DType::f32});
    const std::vector<Var> outs = w.step_outputs();
    compiler::CompileOptions cpu_options = options(Backend::cpu),
                             cuda_options = options(Backend::cuda);
    cpu_options.pipeline.precision = cuda_options.pipeline.precision = policy;
    compiler::Executable cpu(outs, cpu_options), cuda(outs, cuda_options);
    cpu.set(w.bindings);
    cuda.set(w.bindings);
    cpu.run();
    cuda.run();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const double e = error(cuda.output(k), cpu.output(k));
      EXPECT_LE(e, 1e-2) << compiler::precision_name(policy) << " output " << k;
      if (k == 0)
        std::cout << "[cuda] burgers " << compiler::precision_name(policy)
                  << ": loss relative to the CPU backend " << e << "\n";
    }
  }
}

// CUDA graphs (CompileOptions::cuda_graphs): from its second run on, a step is one graph launch.
// Run after run, on points bound anew before each, its outputs are those of the same program
// launched step by step (the same kernels and cuBLAS calls), and no warning says a capture failed.
TEST(CudaGraphs, ReplayedStepsGiveTheStepByStepOutputs) {
  SKIP_WITHOUT_A_DEVICE();
  bench::Workload w = bench::build_workload("burgers", {256, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  compiler::CompileOptions o = options(Backend::cuda);
  compiler::Executable graphs(outs, o);
  o.cuda_graphs = false;
  compiler::Executable plain(outs, o);
  double first_loss = 0, worst = 0;
  ::testing::internal::CaptureStderr();
  for (int run = 0; run < 4; ++run) {
    w.bindings["x"] = bench::uniform_points(256, w.spec.inputs(), 100 + run);
    graphs.set(w.bindings);
    plain.set(w.bindings);
    graphs.run();
    plain.run();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const double e = error(graphs.output(k), plain.output(k));
      worst = std::max(worst, e);
      EXPECT_LE(e, 1e-6) << "run " << run << ", output " << k;
    }
    if (run == 0) first_loss = graphs.output(0)(0, 0);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(graphs.output(0)(0, 0), first_loss) << "the graph read the points bound last";
  std::cout << "[cuda] graphs: largest relative difference from step-by-step launches " << worst
            << "\n";
}

TEST(CudaFallback, WithoutADeviceACudaRequestWarnsAndRunsOnTheCpu) {
  if (no_device_reason().empty())
    GTEST_SKIP() << "a CUDA device is present; the fallback is tested where there is none";
  ASSERT_NE(compiler::find_runtime(Backend::cuda), nullptr);
  EXPECT_EQ(no_device_reason().rfind("no CUDA device: ", 0), 0u) << no_device_reason();
  bench::Workload w = bench::build_workload("burgers", {64, DType::f64});
  const std::vector<Var> outs = w.step_outputs();
  compiler::CompileOptions o = options(Backend::cuda);
  o.strict = false;
  ::testing::internal::CaptureStderr();
  compiler::Executable exe(outs, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exe.backend(), Backend::cpu);
  EXPECT_EQ(err, "jetpde: warning: backend cuda cannot run (" + no_device_reason() +
                     "); using cpu instead\n");
  exe.set(w.bindings);
  exe.run();
  const std::vector<MatrixD> want = evaluate(outs, w.bindings, Precision::f64);
  for (std::size_t k = 0; k < outs.size(); ++k)
    EXPECT_LE(error(exe.output(k), want[k]), 1e-11) << "output " << k;
}

TEST(CudaFallback, AStrictRequestFailsWithTheReason) {
  if (no_device_reason().empty())
    GTEST_SKIP() << "a CUDA device is present; the fallback is tested where there is none";
  Graph g(DType::f64);
  const std::vector<Var> outs{tanh(g.input("x", {8, 2}))};
  try {
    compiler::Executable exe(outs, options(Backend::cuda));
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "backend cuda was required but cannot run: " + no_device_reason());
  }
}

}  // namespace
}  // namespace jetpde::cudatest
