// The compiler's passes, one file each (docs/design.md section 7). Each takes a module and returns
// a new one computing the same outputs; `pipeline.h` runs them in order.
#pragma once

#include <string>

#include "compiler/module.h"

namespace jetpde::compiler {

// Precision policies of docs/design.md section 8; `as_built` keeps the graph's own dtypes.
enum class PrecisionPolicy { as_built, fp64, fp32, bf16, fp16, automatic };
std::string precision_name(PrecisionPolicy policy);
// `automatic` resolved for this machine: bf16 where GEMMs run on bf16 hardware, else fp32.
// Whether this CPU has AVX512-BF16 or AMX-BF16 instructions.
bool cpu_has_bf16_instructions();
PrecisionPolicy resolve_auto(PrecisionPolicy policy);

// Gives every node a dtype by the policy and inserts casts. See precision.cpp.
Module apply_precision(const Module& in, PrecisionPolicy policy);

// Algebraic identities with zeros and ones, double negation, chains of constant factors,
// cheaper forms of constant powers. See simplify.cpp.
Module simplify(const Module& in);

// Evaluates operations whose operands are all constants, when the result is small.
Module fold_constants(const Module& in);

// Matmuls sharing a weight become one GEMM over stacked rows, forward and backward.
Module stack_gemms(const Module& in);

// Drops nodes no output needs. Common subexpressions are already shared by interning, so the
// rebuilt graph is also CSE'd.
Module eliminate_dead_code(const Module& in);

}  // namespace jetpde::compiler
