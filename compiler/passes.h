// The compiler's passes, one file each (docs/design.md section 7). Each takes a module and returns
// a new one computing the same outputs; `pipeline.h` runs them in order.
#pragma once

#include <string>

#include "autodiff/options.h"
#include "compiler/backend.h"
#include "compiler/module.h"

namespace jetpde::compiler {

// Precision policies of docs/design.md section 8; `as_built` keeps the graph's own dtypes.
// (bf16_wgrad last: the numbers of the older ones stay as they were.)
enum class PrecisionPolicy { as_built, fp64, fp32, bf16, fp16, automatic, bf16_wgrad };
// The names (the config's `precision` choices: every one but as_built, which only code sets).
const options::EnumTable<PrecisionPolicy>& precision_names();
std::string precision_name(PrecisionPolicy policy);
// The config's `precision` key (its choices the table's, default fp32).
options::KeyPtr precision_key();
// Whether this CPU has AVX512-BF16 or AMX-BF16 instructions; whether it has AMX-BF16 tiles.
bool cpu_has_bf16_instructions();
bool cpu_has_amx_bf16();
// What `automatic` stands for on `backend` on this machine (any other policy is returned as it
// is): bf16_wgrad on a CPU whose bf16 GEMMs run on AMX tiles, else fp32 (see precision.cpp).
PrecisionPolicy resolve_auto(PrecisionPolicy policy, Backend backend);

// Gives every node a dtype by the policy and inserts casts. `policy` is never `automatic`
// (PipelineOptions::resolved says what it stands for). See precision.cpp.
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
