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
// overlap in memory; others may share it. Inputs, params and constants live throughout. A buffer
// used in a tiled region lives through the whole region (its tiles run the steps interleaved).
void plan_memory(Program& program);

// The placement plan_memory makes (greedy by size, as TFLite's arena planner): each item of
// `bytes` that lives over steps [first, last] (closed) gets the lowest 64-byte-aligned offset free
// of every larger item whose steps overlap its own. Returns the offsets; *total: the bytes spanned.
struct Lifetime {
  std::int64_t bytes = 0;
  int first = 0, last = 0;
};
std::vector<std::int64_t> place_by_size(const std::vector<Lifetime>& items, std::int64_t* total);

// Marks the tiled regions of a program (program.h, TiledRegion; tile_regions.cpp): maximal runs of
// steps, at least one GEMM and one kernel, that work row by row over the same points, with tiles
// of `tile` points (none when tile < 0 or a region would have fewer than two tiles); tile 0: the
// tiles to be measured by the backend (TiledRegion::tune), regions wherever two tiles of
// kMeasuredRegionTile fit. Later steps that can join a region and depend on none of the steps they
// pass are moved up into it (only where a region is marked). GEMMs in f64 join regions only where
// `f64_gemms` (the backend's dgemm runs on each calling thread alone: cblas_runs_per_thread()).
// Replaces program.regions; where it marks any, the memory must be planned again after it.
// Returns how many it marked.
int find_tiled_regions(Program& program, std::int64_t tile, bool f64_gemms);

// Rematerialization (remat.cpp): while the planned arena exceeds `target_bytes`, a temporary live
// across the step with the most bytes live, stored whole by one kernel whose loads are live and
// unchanged at its next read, is computed again just before that read by a copy of the kernel
// (the largest first); stops where nothing qualifies. The outputs stay bit for bit. Leaves the
// program planned; returns how many buffers it recomputed.
int rematerialize(Program& program, std::int64_t target_bytes);

// Moves every step that writes only program outputs (each written by it alone) to right after
// the last step writing what it reads, so that its operands die sooner; values do not change.
// Returns how many steps moved.
int hoist_output_steps(Program& program);

// plan_memory, then, with `fraction` < 1, hoist_output_steps and rematerialize down to that
// fraction of the plain plan's arena (CompileOptions::memory_fraction). Returns the buffers
// recomputed.
int plan_memory_within(Program& program, double fraction);

}  // namespace jetpde::compiler
