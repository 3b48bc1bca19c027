// Compiled programs against the interpreter (docs/design.md section 12): every primitive (values,
// Taylor derivatives up to order 4, gradients) and every benchmark workload, in f64 and f32, with
// a tolerance per dtype.
#include <gtest/gtest.h>

#include <random>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "bench/workloads.h"
#include "compiler/executable.h"
#include "tests/support/test_programs.h"

namespace jetpde {
namespace {

using testprog::error;
using testprog::Labelled;
using testprog::primitive_outputs;
using testprog::workload_cases;
using testprog::WorkloadCase;

compiler::CompileOptions test_options() {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  return o;
}

double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-11 : 2e-5; }

class CompiledPrimitives : public ::testing::TestWithParam<DType> {};

TEST_P(CompiledPrimitives, MatchTheInterpreter) {
  const DType dtype = GetParam();
  Graph g(dtype);
  Bindings b;
  const std::vector<Labelled> outs = primitive_outputs(g, b);
  std::vector<Var> vars;
  for (const Labelled& l : outs) vars.push_back(l.var);
  compiler::Executable exe(vars, test_options());
  ASSERT_EQ(exe.backend(), compiler::Backend::cpu);
  exe.set(b);
  exe.run();
  // The oracle honours node dtypes too: a cast to f32 rounds in both.
  const std::vector<MatrixD> want = evaluate(vars, b, Precision::node);
  for (std::size_t k = 0; k < outs.size(); ++k)
    EXPECT_LE(error(exe.output(k), want[k]), tolerance(dtype)) << outs[k].label;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledPrimitives, ::testing::Values(DType::f64, DType::f32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

class CompiledWorkloads : public ::testing::TestWithParam<WorkloadCase> {};

TEST_P(CompiledWorkloads, StepMatchesTheInterpreter) {
  const WorkloadCase c = GetParam();
  bench::Workload w = bench::build_workload(c.name, {64, c.dtype});
  const std::vector<Var> outs = w.step_outputs();
  compiler::Executable exe(outs, test_options());
  exe.set(w.bindings);
  exe.run();
  const std::vector<MatrixD> want = evaluate(outs, w.bindings, Precision::f64);
  for (std::size_t k = 0; k < outs.size(); ++k)
    EXPECT_LE(error(exe.output(k), want[k]), tolerance(c.dtype))
        << (k == 0 ? std::string("loss") : "gradient of " + w.params[k - 1].node().attrs.name);
  // Running again on new points gives the new result without recompiling.
  w.bindings["x"] = bench::uniform_points(64, w.spec.inputs(), 77);
  exe.set("x", w.bindings["x"]);
  exe.run();
  EXPECT_LE(error(exe.output(0), evaluate(outs[0], w.bindings, Precision::f64)),
            tolerance(c.dtype));
}

INSTANTIATE_TEST_SUITE_P(Workloads, CompiledWorkloads, ::testing::ValuesIn(workload_cases()),
                         [](const auto& info) { return testprog::case_name(info.param); });

}  // namespace
}  // namespace jetpde
