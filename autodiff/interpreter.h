// The reference interpreter (docs/design.md section 7): evaluates any graph node by node with each
// primitive's reference evaluation (Eigen). It is the oracle every compiled program is tested
// against, and the fallback where no compiler is available. Values of intermediate nodes are
// released after their last use, so memory follows the live set, not the graph size.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "autodiff/ir.h"
#include "autodiff/primitive.h"

namespace jetpde {

enum class Precision {
  f64,   // every node in double (the oracle)
  f32,   // every node in float
  node,  // each node in its own dtype; bf16 and f16 results are rounded to that type
};

// Values of inputs and params, by name. Shapes must match the leaves'.
using Bindings = std::unordered_map<std::string, MatrixD>;

// Evaluates `outputs` (all of one graph). UserError when a needed leaf is unbound or misshapen.
std::vector<MatrixD> evaluate(std::span<const Var> outputs, const Bindings& bindings,
                              Precision precision = Precision::f64);
MatrixD evaluate(Var output, const Bindings& bindings, Precision precision = Precision::f64);

// Rounds a float to the nearest value of `dtype` (ties to even); f32 and f64 unchanged.
float round_to(DType dtype, float value);

}  // namespace jetpde
