// The CUDA renderer (docs/design.md section 7, step 7): a kernel program's kernels as CUDA C for
// NVRTC.
//
// It shares the C renderer's op table and value printer (c_value_expression, c_element, c_literal,
// c_type) and differs only in how a kernel's domain [rows, cols] is spread over threads and how
// its reductions combine:
//
//   elementwise only    one thread per element (i, j), a grid-stride loop over rows * cols
//   sums over columns   one thread per row i (grid-stride), looping over j, accumulating in double
//   sums over rows      threads tile [TX columns x TY rows]; each accumulates its rows in double,
//                       the block adds its TY rows in shared memory and writes one partial sum
//                       per column; `jetpde_step<s>_finish` adds the partials of all row blocks
//                       in block order (deterministic) and stores sum or mean in the target dtype
//   both                the per-row kernel (stores, sums over columns), then `jetpde_step<s>_rows`
//                       recomputes the values for the sums over rows (a kernel never reads what
//                       it stores, so the second pass sees the same operands), then the finish
//
// Scratch: the partial sums (doubles) live in the same device allocation as the arena, at
// `scratch_offset` past the program's arena; every kernel step overwrites them before its
// finishing kernel reads them, so one region serves all steps (steps run in order on one stream).
// bf16 and f16 values are computed in float and rounded after each operation (jp_bf16, jp_f16), as
// on the CPU.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/program.h"

namespace jetpde::compiler {

struct CudaRenderOptions {
  // Most blocks along one grid dimension; grid-stride loops cover the rest (not the columns of a
  // kernel that sums over rows: a block per 32 of them, uncapped).
  int max_blocks = 65535;
  // Most row blocks of a kernel that sums over rows (each writes one partial sum per column).
  int max_reduction_blocks = 256;
};

// One kernel launch: `extern "C" __global__ void <symbol>(char* arena)`.
struct CudaLaunch {
  std::string symbol;
  std::array<unsigned, 2> grid{1, 1}, block{1, 1};  // x, y
  bool barriers = false;  // whether the kernel calls __syncthreads (sums over rows)
};

// The launches of one kernel step, in order; the first is `kernel_symbol(step)`.
struct CudaKernelStep {
  std::vector<CudaLaunch> launches;
};

struct CudaSource {
  // What NVRTC compiles: the device prelude (CUDA-only definitions: jp_f16 by PTX conversions,
  // inf and nan literals), then `kernels`.
  std::string source;
  // The helpers (jp_bf16, the block sum) and kernels alone. They use only CUDA's thread indices,
  // __syncthreads, __shared__, __float_as_uint/__uint_as_float and jp_f16, so a host emulation
  // that defines those runs the same code (tests/cuda).
  std::string kernels;
  std::vector<std::optional<CudaKernelStep>> steps;  // by program step; empty for GEMMs
  std::int64_t scratch_offset = 0;  // bytes from the arena's start (past program.arena_bytes)
  std::int64_t scratch_bytes = 0;
  // The device allocation: arena plus scratch.
  std::int64_t device_bytes() const { return scratch_offset + scratch_bytes; }
  // Every kernel's symbol, in launch order.
  std::vector<std::string> symbols() const;
};

// Renders every Kernel step of `program` (after plan_memory). Kernel s is `kernel_symbol(s)`.
CudaSource render_cuda_source(const Program& program, const CudaRenderOptions& options = {});

// cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
// so B is cuBLAS's first operand and A its second, with the same transpose flags and the row
// strides of the row-major buffers as leading dimensions.
struct ColumnMajorGemm {
  bool transpose_first = false, transpose_second = false;
  int m = 0, n = 0, k = 0;  // column-major C is m x n, op(first) m x k, op(second) k x n
  std::int64_t first = 0, second = 0, c = 0;  // byte offsets in the arena
  int ld_first = 0, ld_second = 0, ldc = 0;
  bool f64 = false;  // dgemm; else sgemm (bf16 and f16 are stored as f32)
  // Both operands hold 16-bit values (bf16 or f16, stored as f32): TF32 tensor cores multiply
  // them exactly (a bf16 or f16 value is a TF32 value: 8 exponent bits, at most 10 mantissa
  // bits), so the runtime gives them cuBLAS's FAST_TF32 compute type, accumulating in f32.
  bool tensor_cores = false;
};
ColumnMajorGemm column_major_gemm(const Program& program, const Gemm& gemm);

}  // namespace jetpde::compiler
