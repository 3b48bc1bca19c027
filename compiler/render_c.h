// The C++ renderer: a kernel program's kernels as C++ source with OpenMP over rows and
// vectorizable inner loops (docs/design.md section 7, step 7). Every buffer address is an arena
// offset and every shape a constant, so the host compiler sees fixed trip counts and strides.
// The CUDA renderer reuses the op table (each primitive's C expression) and the value printer.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/program.h"

namespace jetpde::compiler {

// `using std::exp; ...` lines for every C math function the primitives' C expressions call (the
// float overloads of <cmath> for unqualified calls).
std::string c_math_using_lines();
// The C type a value of `dtype` is computed in (bf16 and f16: float, rounded after each op).
std::string c_type(DType dtype);
// A literal of `dtype` that the C and CUDA compilers read back exactly (hexadecimal floats).
std::string c_literal(double value, DType dtype);
// The right-hand side computing value `index` of kernel `k` from the names `name(v)` of others.
std::string c_value_expression(const Kernel& k, int index, const std::string& prefix);
// The typed address of `v`'s buffer, `((float*)(arena + offset))`, as a C expression over `arena`.
std::string c_pointer(const Program& program, const View& v, bool writable);
// Element (i, j) of view `v` (offsets and broadcasting applied), as a C expression over `arena`,
// `i` and `j`; an lvalue when `writable`.
std::string c_element(const Program& program, const View& v, bool writable);

// A kernel runs on the OpenMP team when its domain has at least this many elements (rows x cols),
// else on the calling thread alone (bench/README.md, section "Threads", measures where 2 threads
// pay off).
inline constexpr std::int64_t kParallelMinElements = 32768;

// The whole source for the CPU backend: one `extern "C" void jetpde_step<s>(char* arena)` per
// kernel step s; kernels of at least `parallel_min_elements` elements run in parallel. A kernel
// in a tiled region (program.regions) also gets `jetpde_step<s>_rows(char* arena, long i0,
// long i1, double* acc, char* const* lb, const long* lr)`, its rows [i0, i1) on the calling
// thread with the row sums added to acc[r * cols + j] (r: the reduction's index); it addresses
// the region's local buffers (TiledRegion::locals, slot k) at lb[k], row (block of the region's
// points) * lr[2k] - lr[2k + 1] * i0 + i: lb[k] = the buffer in the arena with lr = {points, 0},
// or a scratch of one tile's rows per block with lr = {tile, 1}. And, when it sums over rows,
// `jetpde_step<s>_row_sums(char* arena, const double* partial, long stride, int nt)`, which
// stores the sums of nt threads' accumulators (thread t's at partial + t * stride).
std::string render_cpu_source(const Program& program,
                              std::int64_t parallel_min_elements = kParallelMinElements);
// Precedes each kernel in the rendered source: where the CPU compiler may split it into several
// translation units compiled in parallel (each gets the text before the first marker).
inline constexpr const char* kPartMarker = "//@jetpde-part\n";

// The exported name of the kernel at step s.
std::string kernel_symbol(std::size_t step);

}  // namespace jetpde::compiler
