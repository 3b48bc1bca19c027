// The graphs every backend test compiles: each benchmark workload's training step and one graph
// holding every primitive (values, Taylor derivatives up to order 4, gradients),
// plus the comparison the backends are held to (the CPU oracle: tests/compiler/compiled_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "bench/workloads.h"
#include "compiler/lower.h"
#include "compiler/module.h"
#include "compiler/pipeline.h"
#include "tests/support/primitive_table.h"

namespace jetpde::testprog {

struct Labelled {
  std::string label;
  Var var;
};

// All rows of the primitive table in one graph: per row, the values, the Taylor derivatives in
// a scalar coordinate s of orders 1..4, and the gradient of sum(y c) with respect to the operands.
inline std::vector<Labelled> primitive_outputs(Graph& g, Bindings& b) {
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

inline std::vector<Var> vars_of(const std::vector<Labelled>& outs) {
  std::vector<Var> vars;
  for (const Labelled& l : outs) vars.push_back(l.var);
  return vars;
}

// The program an Executable would run: optimized, lowered, memory planned.
inline compiler::Program lowered(std::span<const Var> outputs,
                                 const compiler::PipelineOptions& options = {}) {
  compiler::Program p = compiler::lower(compiler::optimize(compiler::module_of(outputs), options));
  compiler::plan_memory(p);
  return p;
}

struct WorkloadCase {
  std::string name;
  DType dtype;
};

inline std::vector<WorkloadCase> workload_cases() {
  std::vector<WorkloadCase> out;
  for (const auto& spec : bench::workload_specs())
    for (DType d : {DType::f64, DType::f32}) out.push_back({spec.name, d});
  return out;
}

inline std::string case_name(const WorkloadCase& c) {
  return c.name + "_" + std::string(dtype_name(c.dtype));
}
inline void PrintTo(const WorkloadCase& c, std::ostream* os) { *os << case_name(c); }

// Relative error with respect to the reference's magnitude (at least 1).
inline double error(const MatrixD& got, const MatrixD& want) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) return INFINITY;
  const double e = (got - want).abs().maxCoeff() / std::max(1.0, want.abs().maxCoeff());
  return std::isnan(e) ? INFINITY : e;
}

}  // namespace jetpde::testprog
