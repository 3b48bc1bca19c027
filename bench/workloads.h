// The benchmark workloads of shared/bench/WORKLOADS.md as jetpde graphs.
//
// Building a workload gives everything one training step evaluates: the MLP, its Taylor-mode
// derivatives (one plan per workload), the loss exactly as WORKLOADS.md states it, and the
// reverse-mode gradient of the loss with respect to every weight and bias. It also gives the data
// the step runs on: points uniform in [0, 1]^d and Glorot-normal weights with zero biases, both
// seeded. Building is kept apart from timing so that any executor (the reference interpreter now,
// the compiler later) can run the same graphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "nn/mlp.h"

namespace jetpde::bench {

// One row of the WORKLOADS.md table.
struct WorkloadSpec {
  std::string name;  // "burgers", "ns2d", "ks4", "order1".."order6", "poisson32d"
  std::vector<std::string> coordinates;  // input columns in order, e.g. {"x", "t"}
  std::vector<int> hidden;               // widths of the hidden layers
  int outputs = 1;
  int points = 0;    // default point count
  std::string loss;  // the loss as WORKLOADS.md writes it
  int inputs() const { return static_cast<int>(coordinates.size()); }
};

// All workloads, in the order of WORKLOADS.md.
const std::vector<WorkloadSpec>& workload_specs();
// The workload called `name`; UserError naming the known workloads when there is none.
const WorkloadSpec& workload_spec(const std::string& name);

struct BuildOptions {
  int points = 0;                // 0: the workload's own point count
  DType dtype = DType::f32;      // dtype of the graph's leaves
  std::uint64_t param_seed = 0;  // Glorot-normal weights (biases are zero)
  std::uint64_t point_seed = 1;  // points uniform in [0, 1]^d
};

// A built workload. Owns its graph; every Var points into it.
struct Workload {
  WorkloadSpec spec;
  int points = 0;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<nn::Mlp> mlp;
  Var x;                       // input "x" [points, inputs]
  Var u;                       // network output [points, outputs]
  std::vector<Var> residuals;  // [points, 1] each; the loss is the sum of their mean squares
  Var loss;                    // [1, 1]
  std::vector<Var> params;     // W0, b0, W1, b1, ...
  std::vector<Var> grads;      // d loss / d params[k], with params[k]'s shape
  int stream_count = 0;        // Taylor streams carried by every node
  std::string plan;            // the plan, as TaylorPlan::str()
  Bindings bindings;           // initial parameters and "x"

  // What one step evaluates: the loss, then the gradients in `params` order.
  std::vector<Var> step_outputs() const;
};

Workload build_workload(const std::string& name, const BuildOptions& options = {});

// Points uniform in [0, 1]^cols from `seed`.
MatrixD uniform_points(int rows, int cols, std::uint64_t seed);

}  // namespace jetpde::bench
