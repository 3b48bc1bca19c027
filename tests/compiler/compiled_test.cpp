// Compiled programs against the interpreter (DESIGN.md section 12): every primitive (values,
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
#include "tests/support/primitive_table.h"

namespace jetpde {
namespace {

compiler::CompileOptions test_options() {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  return o;
}

// Relative error with respect to the reference's magnitude (at least 1).
double error(const MatrixD& got, const MatrixD& want) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) return INFINITY;
  return (got - want).abs().maxCoeff() / std::max(1.0, want.abs().maxCoeff());
}

double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-11 : 2e-5; }

struct Labelled {
  std::string label;
  Var var;
};

// All rows of the primitive table in one graph: per row, the values, the Taylor derivatives in
// a scalar coordinate s of orders 1..4, and the gradient of sum(y c) with respect to the operands.
std::vector<Labelled> primitive_outputs(Graph& g, Bindings& b) {
  std::mt19937_64 rng(5);
  std::vector<Labelled> out;
  const Var s = g.input("s", {1, 1});
  b["s"] = MatrixD::Constant(1, 1, 0.2);
  for (const primtable::Row& r : primtable::table()) {
    const std::string tag = std::string(r.name) + "_";
    const double mid = 0.5 * (r.lo + r.hi), half = 0.45 * (r.hi - r.lo);
    std::vector<Var> params, operands, curves;
    for (std::size_t i = 0; i < r.shapes.size(); ++i) {
      const std::string name = tag + std::to_string(i);
      const bool data = r.first_is_data && i == 0;
      const Var leaf = data ? g.input(name, r.shapes[i]) : g.param(name, r.shapes[i]);
      b[name] = primtable::random_matrix(r.shapes[i], data ? 0 : r.lo, data ? 1 : r.hi, rng, data);
      operands.push_back(leaf);
      if (!data) params.push_back(leaf);
      const Var c =
          primtable::constant_of(g, primtable::random_matrix(r.shapes[i], -1.5, 1.5, rng));
      curves.push_back(data ? leaf : mid + half * sin(s * c + leaf));
    }
    const Var y = r.apply(operands);
    out.push_back({tag + "value", y});
    const Var weights = primtable::constant_of(g, primtable::random_matrix(y.shape(), -1, 1, rng));
    const std::vector<Var> grads = grad(sum_all(y * weights), params);
    for (std::size_t i = 0; i < grads.size(); ++i)
      out.push_back({tag + "grad" + std::to_string(i), grads[i]});
    Taylor t(TaylorPlan({{s, 0}}, {{4}}));
    const Var yc = r.apply(curves);
    for (int k = 1; k <= 4; ++k)
      out.push_back({tag + "d" + std::to_string(k), t.derivative(yc, {k})});
  }
  return out;
}

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

struct WorkloadCase {
  std::string name;
  DType dtype;
};

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

std::vector<WorkloadCase> workload_cases() {
  std::vector<WorkloadCase> out;
  for (const auto& spec : bench::workload_specs())
    for (DType d : {DType::f64, DType::f32}) out.push_back({spec.name, d});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Workloads, CompiledWorkloads, ::testing::ValuesIn(workload_cases()),
                         [](const auto& info) {
                           return info.param.name + "_" + std::string(dtype_name(info.param.dtype));
                         });

}  // namespace
}  // namespace jetpde
