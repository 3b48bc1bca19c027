// Lowering: a module becomes a kernel program (docs/design.md section 7, steps 4 to 6).
//
// Fusion decides how to compute, never what: every elementwise node joins an open kernel of its
// domain that computes one of its operands (kernels computing several operands merge), slices
// and broadcasts of stored values are views, reductions become epilogues of the kernel that
// computes their operand, matmuls become GEMMs, and concatenations are written in place by the
// producers of their parts. A kernel is emitted (closed) as soon as a later step reads what it
// stores, which keeps the step order a valid schedule.
#pragma once

#include "compiler/module.h"
#include "compiler/program.h"

namespace jetpde::compiler {

Program lower(const Module& module);

// Assigns arena offsets: buffers whose lifetimes (first to last step using them) overlap never
// overlap in memory; others may share it. Inputs, params and constants live throughout.
void plan_memory(Program& program);

}  // namespace jetpde::compiler
