// The C++ renderer: a kernel program's kernels as C++ source with OpenMP over rows and
// vectorizable inner loops (DESIGN.md section 7, step 7). Every buffer address is an arena
// offset and every shape a constant, so the host compiler sees fixed trip counts and strides.
// The CUDA renderer reuses the op table (each primitive's C expression) and the value printer.
#pragma once

#include <string>

#include "compiler/program.h"

namespace jetpde::compiler {

// The C type a value of `dtype` is computed in (bf16 and f16: float, rounded after each op).
std::string c_type(DType dtype);
// A literal of `dtype` that the C and CUDA compilers read back exactly (hexadecimal floats).
std::string c_literal(double value, DType dtype);
// The right-hand side computing value `index` of kernel `k` from the names `name(v)` of others.
std::string c_value_expression(const Kernel& k, int index, const std::string& prefix);

// The whole source for the CPU backend: one `extern "C" void jetpde_step<s>(char* arena)` per
// kernel step s.
std::string render_cpu_source(const Program& program);
// The exported name of the kernel at step s.
std::string kernel_symbol(std::size_t step);

}  // namespace jetpde::compiler
