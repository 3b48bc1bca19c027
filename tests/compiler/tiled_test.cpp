// Tiled regions (program.h, TiledRegion): which steps may run tile by tile, the memory plan that
// keeps a region's buffers apart, and the CPU runtime running them with the values of the steps
// run whole.
#include <gtest/gtest.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <variant>

#include "autodiff/ops.h"
#include "bench/workloads.h"
#include "compiler/cpu_gemm.h"
#include "compiler/executable.h"
#include "compiler/lower.h"
#include "compiler/pipeline.h"
#include "compiler/render_c.h"

namespace jetpde::compiler {
namespace {

Program lowered(std::span<const Var> outputs, std::int64_t tile) {
  Program p = lower(optimize(module_of(outputs), {}));
  find_tiled_regions(p, tile, cblas_runs_per_thread());
  plan_memory(p);
  return p;
}

// Two stacked streams through a layer: x holds 2 blocks of `n` rows, the GEMM multiplies both,
// a kernel over n rows combines block 0 with the rows of block 1 from `offset` on.
std::vector<Var> two_streams(Graph& g, std::int64_t n, std::int64_t offset) {
  const Var x = g.input("x", {2 * n, 8});
  const Var w = g.param("W", {8, 16});
  const Var w2 = g.param("W2", {16, 4});
  const Var z = matmul(x, w);
  const Var h = tanh(slice_rows(z, 0, n)) * slice_rows(z, offset, n);
  return {matmul(h, w2)};
}

TEST(TiledRegions, AGemmAndTheKernelsOverItsBlocksFormARegion) {
  Graph g;
  const std::vector<Var> outs = two_streams(g, 1024, 1024);
  const Program p = lowered(outs, 256);
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  EXPECT_EQ(p.regions[0].points, 1024);
  EXPECT_EQ(p.regions[0].tile, 256);
  EXPECT_EQ(p.regions[0].first, 0);
  EXPECT_EQ(p.regions[0].last, static_cast<int>(p.steps.size())) << p.to_text();
  EXPECT_NE(p.to_text().find("tiled steps 0.."), std::string::npos);
}

TEST(TiledRegions, ARowOfAnotherTileEndsTheRegion) {
  // Block 1 read from one row early: a tile would read a row the previous tile's GEMM writes,
  // so the GEMM (step 0) and the kernel reading its output cannot share a region; the kernel
  // and the GEMM after it can (the first GEMM's output is then complete before the region).
  Graph g;
  const std::vector<Var> outs = two_streams(g, 1024, 1023);
  const Program p = lowered(outs, 256);
  ASSERT_TRUE(std::holds_alternative<Gemm>(p.steps[0].op));
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  EXPECT_EQ(p.regions[0].first, 1) << p.to_text();
}

TEST(TiledRegions, NoRegionBelowTwoTilesOrWithoutATile) {
  Graph g;
  const std::vector<Var> outs = two_streams(g, 300, 300);
  EXPECT_TRUE(lowered(outs, 256).regions.empty()) << "300 points: fewer than two tiles";
  EXPECT_TRUE(lowered(outs, -1).regions.empty());
  EXPECT_FALSE(lowered(outs, 100).regions.empty());
  // Tiles to be measured: a region wherever two tiles of kMeasuredRegionTile fit.
  const Program automatic = lowered(outs, 0);
  ASSERT_FALSE(automatic.regions.empty());
  EXPECT_TRUE(automatic.regions[0].tune);
  EXPECT_EQ(automatic.regions[0].tile, kMeasuredRegionTile);
  EXPECT_NE(automatic.to_text().find("tiles to be measured"), std::string::npos);
  Graph small;
  EXPECT_TRUE(lowered(two_streams(small, 200, 200), 0).regions.empty());
}

TEST(TiledRegions, ARowSumIsNotReadInsideItsRegion) {
  // The mean over the rows is stored after all tiles ran: a kernel reading it starts anew.
  Graph g;
  const Var x = g.input("x", {1024, 8});
  const Var w = g.param("W", {8, 16});
  const Var h = tanh(matmul(x, w));
  const Var m = mean_rows(h);  // [1, 16]
  const Var w2 = g.param("W2", {16, 16});
  const std::vector<Var> outs{matmul(h - broadcast(m, h.shape()), w2)};
  const Program p = lowered(outs, 128);
  for (const TiledRegion& r : p.regions)
    for (int s = r.first; s < r.last; ++s)
      if (const auto* k = std::get_if<Kernel>(&p.steps[s].op))
        for (const auto& red : k->reductions)
          if (red.over_rows)
            for (int t = s + 1; t < r.last; ++t)
              for_each_view(p.steps[t], [&](const View& v) {
                EXPECT_NE(v.buffer, red.target.buffer)
                    << "step " << t << " reads step " << s << "'s row sum in its region\n"
                    << p.to_text();
              });
}

// A weight gradient c = aᵀ b is summed after all tiles ran: a step reading c starts anew, even
// one whose read looks like a tile's rows (here c has as many rows as the region has points).
// Checked by structure and by value against the program run whole.
TEST(TiledRegions, AWeightGradientIsNotReadInsideItsRegion) {
  Graph g;
  const Var x = g.input("x", {1024, 8});  // two blocks of 512 points
  const Var y = g.input("y", {1024, 4});
  const Var z = matmul(x, g.param("W", {8, 512}));                      // [1024, 512]
  const Var h = tanh(slice_rows(z, 0, 512)) * slice_rows(z, 512, 512);  // a kernel over 512
  const Var c = matmul(z, y, true, false);               // [512, 4], a sum over 1024 rows
  const std::vector<Var> outs{slice_cols(h, 0, 4) * c};  // reads c at the points' rows
  const Program p = lowered(outs, 128);
  bool joined = false;
  for (const TiledRegion& r : p.regions)
    for (int s = r.first; s < r.last; ++s) {
      const auto* gm = std::get_if<Gemm>(&p.steps[s].op);
      if (!gm || !gm->transpose_a) continue;
      joined = true;
      for (int t = s + 1; t < r.last; ++t)
        for_each_view(p.steps[t], [&](const View& v) {
          EXPECT_NE(v.buffer, gm->c.buffer)
              << "step " << t << " reads step " << s << "'s weight gradient in its region\n"
              << p.to_text();
        });
    }
  if (!sgemm_runs_per_thread()) return;
  EXPECT_TRUE(joined) << "the sum itself joins a region\n" << p.to_text();
  Bindings b;
  b["x"] = MatrixD::Random(1024, 8);
  b["y"] = MatrixD::Random(1024, 4);
  b["W"] = MatrixD::Random(8, 512) * 0.3;
  CompileOptions whole, tiled;
  whole.cpu.tile_rows = -1;
  tiled.cpu.tile_rows = 128;
  Executable a(outs, whole), t(outs, tiled);
  a.set(b);
  t.set(b);
  a.run();
  t.run();
  EXPECT_LE((t.output(0) - a.output(0)).cwiseAbs().maxCoeff(),
            1e-5 * a.output(0).cwiseAbs().maxCoeff());
}

// A one-row kernel (a scalar from the inputs: a loss weight, a reverse pass's seed) that lowering
// emits between steps of a region and a step that reads it is moved before the region, so that
// the step joins it (the Allen–Cahn step's chunk weights split its forward and reverse passes).
TEST(TiledRegions, OneRowKernelsOfTheInputsAreMovedBeforeTheRegion) {
  Graph g;
  const Var x = g.input("x", {1024, 8});
  const Var h = tanh(matmul(x, g.param("W", {8, 16})));
  const Var s = exp(g.input("q", {1, 16})) * 3.0;  // read by two steps: a kernel of its own
  const Var y = matmul(h * broadcast(s, h.shape()), g.param("W2", {16, 4}));
  const std::vector<Var> outs{y, s * 2.0};
  const Program plain = lower(optimize(module_of(outs), {}));
  const Program p = lowered(outs, 256);
  ASSERT_EQ(p.steps.size(), plain.steps.size());
  int one_row_at = -1;
  for (std::size_t k = 0; k < plain.steps.size() && one_row_at < 0; ++k)
    if (const auto* kernel = std::get_if<Kernel>(&plain.steps[k].op))
      if (kernel->domain.rows == 1) one_row_at = static_cast<int>(k);
  ASSERT_GT(one_row_at, 0) << "lowering emits the scalar after the first GEMM\n" << plain.to_text();
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  const TiledRegion& r = p.regions[0];
  EXPECT_GE(r.first, 1) << p.to_text();
  for (int k = 0; k < r.first; ++k)
    EXPECT_TRUE(std::holds_alternative<Kernel>(p.steps[k].op) &&
                std::get<Kernel>(p.steps[k].op).domain.rows == 1)
        << p.to_text();
  int gemms = 0;
  for (int k = r.first; k < r.last; ++k) gemms += std::holds_alternative<Gemm>(p.steps[k].op);
  EXPECT_EQ(gemms, 2) << "both GEMMs in the region\n" << p.to_text();
}

// A region's locals (TiledRegion::locals) are the buffers that live within its tiles: the first
// GEMM's output and the hidden layer, not the output (read after the region) nor the inputs.
TEST(TiledRegions, BuffersLivingWithinARegionAreItsLocals) {
  Graph g;
  const Var x = g.input("x", {1024, 8});
  const Var z = matmul(x, g.param("W", {8, 16}));
  const Var h = tanh(z) * sin(z);
  const Var y = matmul(h, g.param("W2", {16, 4}));
  const auto locals_of = [](const Program& p) {
    std::vector<std::string> names;
    for (const TiledRegion::Local& l : p.regions.at(0).locals) {
      EXPECT_LE(l.first, l.last);
      EXPECT_FALSE(l.summed) << "no weight gradient here";
      const Buffer& b = p.buffers[l.buffer];
      names.push_back(std::to_string(b.shape.rows) + "x" + std::to_string(b.shape.cols));
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<Var> one{y};
  const Program p = lowered(one, 256);
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  EXPECT_EQ(p.regions[0].first, 0);
  EXPECT_EQ(p.regions[0].last, static_cast<int>(p.steps.size())) << p.to_text();
  EXPECT_EQ(locals_of(p), (std::vector<std::string>{"1024x16", "1024x16"})) << p.to_text();
  EXPECT_NE(p.to_text().find("2 locals"), std::string::npos) << p.to_text();
  // h an output as well: read after the region, it stays in the arena.
  const std::vector<Var> two{y, h};
  const Program q = lowered(two, 256);
  ASSERT_EQ(q.regions.size(), 1u) << q.to_text();
  EXPECT_EQ(locals_of(q), std::vector<std::string>{"1024x16"}) << q.to_text();
}

// A weight gradient's operands are locals marked `summed`: where the gradients run whole after
// the tiles (sums_whole) they stay in the arena; the other locals have no arena bytes at all.
// order1's training step runs with its locals in a scratch per thread, its values those of the
// steps run whole (RunTileByTileAsWhole: the other workloads, short last tiles, one and two
// threads).
TEST(TiledRegions, LocalsRunInAScratchOfOneTilePerThread) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("order1", {8192, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  CompileOptions whole, tiled;
  whole.cpu.tile_rows = -1;
  tiled.cpu.tile_rows = 256;
  Executable reference(outs, whole), e(outs, tiled);
  const Program& p = e.program();
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  std::int64_t local_bytes = 0;
  int summed = 0;
  for (const TiledRegion::Local& l : p.regions[0].locals) {
    local_bytes += p.buffers[l.buffer].bytes();
    summed += l.summed ? 1 : 0;
  }
  EXPECT_GE(summed, 4) << p.to_text();
  // Every local but the weight gradients' operands lives in the scratch only: no arena bytes, so
  // that the tiled step's arena is below the whole step's (before, the region kept them all
  // live through it: 1.5x the whole step's arena on burgers).
  for (const TiledRegion::Local& l : p.regions[0].locals) {
    EXPECT_EQ(p.buffers[l.buffer].scratch_only, !l.summed) << "b" << l.buffer;
    EXPECT_EQ(p.buffers[l.buffer].offset < 0, !l.summed) << "b" << l.buffer;
  }
  EXPECT_LT(e.stats().arena_bytes, reference.stats().arena_bytes);
  reference.set(w.bindings);
  e.set(w.bindings);
  reference.run();
  EXPECT_EQ(e.stats().scratch_bytes, 0) << "before a run";
  e.run();
  // One tile's rows of the locals per thread, sharing bytes between locals of disjoint steps.
  EXPECT_GT(e.stats().scratch_bytes, 0);
  EXPECT_LT(e.stats().scratch_bytes, local_bytes);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const MatrixD want = reference.output(k), got = e.output(k);
    const double scale = std::max(1.0, want.cwiseAbs().maxCoeff());
    EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-5 * scale) << "output " << k;
  }
}

// Buffers used in the same region never share memory: tiles interleave its steps (scratch-only
// locals have no arena bytes: the runtime's scratch places them, each of its own).
void expect_region_buffers_apart(const Program& p) {
  for (const TiledRegion& r : p.regions) {
    std::vector<int> used;
    for (int s = r.first; s < r.last; ++s)
      for_each_view(p.steps[s], [&](const View& v) {
        if (!p.buffers[v.buffer].scratch_only) used.push_back(v.buffer);
      });
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (std::size_t a = 0; a < used.size(); ++a)
      for (std::size_t b = a + 1; b < used.size(); ++b) {
        const Buffer& x = p.buffers[used[a]];
        const Buffer& y = p.buffers[used[b]];
        EXPECT_TRUE(x.offset + x.bytes() <= y.offset || y.offset + y.bytes() <= x.offset)
            << "buffers " << used[a] << " and " << used[b] << " of steps " << r.first << ".."
            << r.last - 1 << " share memory";
      }
  }
}

// A kernel of a region that runs in tiles only is rendered as its rows function alone, no whole
// function (dead code, half a program's cold compile); kernels outside regions keep theirs.
TEST(TiledRegions, KernelsOfATilesOnlyRegionHaveNoWholeFunction) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("order2", {1024, DType::f32});
  CompileOptions o;
  o.cpu.tile_rows = 128;
  Executable e(w.step_outputs(), o);
  const Program& p = e.program();
  ASSERT_FALSE(p.regions.empty()) << p.to_text();
  const std::string source = render_cpu_source(p, kParallelMinElements);
  int in_regions = 0, outside = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    if (!std::holds_alternative<Kernel>(p.steps[s].op)) continue;
    const TiledRegion* region = tiled_region_of(p, s);
    const std::string whole = "void " + kernel_symbol(s) + "(char* __restrict arena)";
    const std::string rows = "void " + kernel_symbol(s) + "_rows(";
    EXPECT_EQ(can_run_whole(p, s), !region) << "step " << s;
    if (!region) {
      ++outside;
      EXPECT_NE(source.find(whole), std::string::npos) << "step " << s;
      EXPECT_EQ(source.find(rows), std::string::npos) << "step " << s;
    } else {
      ASSERT_TRUE(runs_in_tiles_only(p, *region));
      ++in_regions;
      EXPECT_EQ(source.find(whole), std::string::npos) << "step " << s;
      EXPECT_NE(source.find(rows), std::string::npos) << "step " << s;
    }
  }
  EXPECT_GT(in_regions, 0);
  EXPECT_GT(outside, 0);
}

// Runs `e` on 1 and 2 threads and expects the outputs of `reference` (the same program run whole)
// within `tolerance` of max(floor, the output's largest value).
void expect_as_whole(Executable& e, Executable& reference, const bench::Workload& w,
                     std::size_t outputs, double tolerance, double floor, const std::string& what) {
  e.set(w.bindings);
  for (int threads : {1, 2}) {
#if defined(_OPENMP)
    omp_set_num_threads(threads);
#endif
    e.run();
    for (std::size_t k = 0; k < outputs; ++k) {
      const MatrixD want = reference.output(k), got = e.output(k);
      const double scale = std::max(floor, want.cwiseAbs().maxCoeff());
      EXPECT_LE((got - want).cwiseAbs().maxCoeff(), tolerance * scale)
          << what << ", output " << k << ", " << threads << " threads";
    }
  }
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
}

class TiledWorkloads : public ::testing::TestWithParam<std::string> {};

// A training step (loss and every gradient) with its tiled regions, on 1 and 2 threads and
// with a tile that leaves a short last one, against the same program with every step whole.
TEST_P(TiledWorkloads, RunTileByTileAsWhole) {
  const bench::Workload w = bench::build_workload(GetParam(), {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  CompileOptions whole;
  whole.cpu.tile_rows = -1;
  Executable reference(outs, whole);
  EXPECT_TRUE(reference.program().regions.empty());
  reference.set(w.bindings);
  reference.run();
  for (std::int64_t tile : {128, 300}) {
    CompileOptions tiled;
    tiled.cpu.tile_rows = tile;
    Executable e(outs, tiled);
    const Program& p = e.program();
    if (!sgemm_runs_per_thread()) {
      EXPECT_TRUE(p.regions.empty()) << "tiles need an sgemm that runs on each thread";
      continue;
    }
    ASSERT_FALSE(p.regions.empty()) << p.to_text();
    int tiled_steps = 0;
    for (const TiledRegion& r : p.regions) tiled_steps += r.last - r.first;
    std::cout << "  " << GetParam() << ", tiles of " << tile << ": " << p.regions.size()
              << " regions, " << tiled_steps << " of " << p.steps.size() << " steps\n";
    expect_region_buffers_apart(p);
    expect_as_whole(e, reference, w, outs.size(), 1e-5, 1.0,
                    GetParam() + ", tiles of " + std::to_string(tile));
  }
}

// A weight gradient (c = aᵀ b over the stacked streams' rows) joins a region where it follows
// what it reads: each thread sums its tiles into a partial c, added up after the region (the
// values: RunTileByTileAsWhole). order6's step has every one of them in its region.
TEST(TiledRegions, WeightGradientsAreSummedTileByTile) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("order6", {8192, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const Program p = lowered(outs, 256);
  int inside = 0, outside = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const auto* g = std::get_if<Gemm>(&p.steps[s].op);
    if (!g || !g->transpose_a) continue;
    bool in = false;
    for (const TiledRegion& r : p.regions)
      in = in || (static_cast<int>(s) >= r.first && static_cast<int>(s) < r.last);
    ++(in ? inside : outside);
  }
  EXPECT_GE(inside, 4) << p.to_text();
  EXPECT_EQ(outside, 0) << p.to_text();
  expect_region_buffers_apart(p);
}

// A later step that could join is moved only into a region that is kept: here the f64 GEMM ends
// the first kernel's run (f64 GEMMs not run per thread, as where the CBLAS is not OpenBLAS's
// OpenMP build), and the later kernel would join it, but a region without a GEMM is not kept, so
// the steps stay in lowering's order (the memory plan is made again only for kept regions).
TEST(TiledRegions, NoStepIsMovedForARegionNotKept) {
  Graph g(DType::f64);
  const Var x = g.input("x", {1024, 8});
  const std::vector<Var> outs{matmul(tanh(x), g.param("W", {8, 16})), exp(x) * 2.0};
  const Program plain = lower(optimize(module_of(outs), {}));
  ASSERT_EQ(plain.steps.size(), 3u) << plain.to_text();
  Program p = plain;
  EXPECT_EQ(find_tiled_regions(p, 128, false), 0) << p.to_text();
  EXPECT_EQ(p.to_text(), plain.to_text());
}

// Lowering emits burgers' weight gradients and bias sums after [1, n] kernels (the input layer's
// bias gradient) that end the region; they depend on none of those and are moved up into it,
// so that no step over the points runs whole after it (the values: RunTileByTileAsWhole).
TEST(TiledRegions, LaterStepsOverThePointsAreMovedIntoTheRegion) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("burgers", {8192, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const Program plain = lower(optimize(module_of(outs), {}));
  const Program p = lowered(outs, 256);
  ASSERT_EQ(p.steps.size(), plain.steps.size());
  ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  const TiledRegion& r = p.regions[0];
  int gemms = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const bool in = static_cast<int>(s) >= r.first && static_cast<int>(s) < r.last;
    if (const auto* k = std::get_if<Kernel>(&p.steps[s].op))
      EXPECT_TRUE(in || k->domain.rows != r.points) << "step " << s << "\n" << p.to_text();
    else if (std::get<Gemm>(p.steps[s].op).transpose_a)
      gemms += in ? 1 : 100;
  }
  EXPECT_EQ(gemms, 5) << "every weight gradient in the region\n" << p.to_text();
  // Lowering's order: four of them after a [1, n] kernel (which no region holds).
  int late = 0;
  bool small = false;
  for (const Step& st : plain.steps)
    if (const auto* k = std::get_if<Kernel>(&st.op))
      small = small || k->domain.rows == 1;
    else if (small && std::get<Gemm>(st.op).transpose_a)
      ++late;
  EXPECT_EQ(late, 4) << plain.to_text();
  expect_region_buffers_apart(p);
}

// The files in `dir` whose name has `part`.
std::vector<std::filesystem::path> files_with(const std::filesystem::path& dir,
                                              const std::string& part) {
  std::vector<std::filesystem::path> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(part) != std::string::npos) found.push_back(e.path());
  return found;
}

// tile_rows 0 (auto): the first run measures each region's tile and keeps the values of the
// steps run whole; the choice goes into the compile cache, where the next executable of the same
// program finds it (and measures nothing); a damaged cache file is measured again.
TEST(TiledRegions, AutoTilesAreMeasuredOnTheFirstRunAndCached) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("burgers", {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const std::filesystem::path cache =
      std::filesystem::path(::testing::TempDir()) / ("jetpde-tiles-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  CompileOptions whole;
  whole.cpu.tile_rows = -1;
  whole.cpu.cache_dir = cache.string();
  Executable reference(outs, whole);
  reference.set(w.bindings);
  reference.run();
  CompileOptions automatic = whole;
  automatic.cpu.tile_rows = 0;  // which reads JETPDE_TILE_ROWS first: unset here
  // As measured although other tests may run beside this one (BusyMeasurementsKeepThePreferred).
  automatic.cpu.trust_busy_tiles = true;
  const char* env = std::getenv("JETPDE_TILE_ROWS");
  const std::string saved = env ? env : "";
  ::unsetenv("JETPDE_TILE_ROWS");
  const auto expect_values = [&](Executable& e, const std::string& what) {
    e.set(w.bindings);
    e.run();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const MatrixD want = reference.output(k), got = e.output(k);
      const double scale = std::max(1.0, want.cwiseAbs().maxCoeff());
      EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-5 * scale) << what << ", output " << k;
    }
    for (const TiledRegion& r : e.program().regions) {
      EXPECT_FALSE(r.tune) << what;
      EXPECT_TRUE(r.tile == 0 || std::find(kTileCandidates.begin(), kTileCandidates.end(),
                                           r.tile) != kTileCandidates.end())
          << what << ": tile " << r.tile;
      EXPECT_GE(r.points, 2 * r.tile) << what;
    }
  };

  Executable first(outs, automatic);
  ASSERT_FALSE(first.program().regions.empty()) << first.program().to_text();
  for (const TiledRegion& r : first.program().regions) EXPECT_TRUE(r.tune);
  const int regions = static_cast<int>(first.program().regions.size());
  expect_values(first, "measured");
  EXPECT_EQ(first.stats().tiles_measured, regions);
  EXPECT_GT(first.stats().tile_seconds, 0.0);
  const std::vector<std::filesystem::path> files = files_with(cache, ".tiles-");
  ASSERT_EQ(files.size(), 1u) << "the tile cache file beside the shared object";
  EXPECT_EQ(first.stats().tile_file, files[0].string());
  EXPECT_EQ(first.stats().tiles_busy, 0);
  {
    std::ifstream in(files[0]);
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
      ++lines;
      EXPECT_TRUE(line.ends_with(" 0")) << line << ": not measured under load (trusted)";
    }
    EXPECT_EQ(lines, regions);
  }

  // Tiles of 128 everywhere, as if measured so, with the weight gradients summed per tile and
  // then whole after the tiles, on all threads and on one: the next executable runs them.
  const int threads = omp_get_max_threads();
  for (const int sums_whole : {0, 1}) {
    std::int64_t scratch_all = 0;  // the tile scratches of all threads (one per thread)
    for (const int split : {0, 1}) {
      if (split >= threads) continue;
      {
        std::ofstream out(files[0]);
        for (const TiledRegion& r : first.program().regions)
          out << r.first << " " << r.last << " " << r.points << " 128 " << sums_whole << " "
              << split << "\n";
      }
      Executable second(outs, automatic);
      const std::string what = "from the cache, sums_whole " + std::to_string(sums_whole) +
                               ", threads " + std::to_string(split);
      expect_values(second, what);
      EXPECT_EQ(second.stats().tiles_measured, 0) << what;
      for (const TiledRegion& r : second.program().regions) {
        EXPECT_EQ(r.tile, 128) << what;
        EXPECT_EQ(r.sums_whole, sums_whole == 1) << what;
        EXPECT_EQ(r.threads, split) << what;
      }
      if (split == 0)
        scratch_all = second.stats().scratch_bytes;
      else
        EXPECT_EQ(second.stats().scratch_bytes * threads, scratch_all) << what << ": one scratch";
    }
  }

  // Whole (tile 0) is no choice for a region that runs in tiles only (its kernels have no whole
  // function): a cache line naming it is measured again.
  {
    {
      std::ofstream out(files[0]);
      for (const TiledRegion& r : first.program().regions) {
        EXPECT_TRUE(runs_in_tiles_only(first.program(), r));
        out << r.first << " " << r.last << " " << r.points << " 0 0 0\n";
      }
    }
    Executable again(outs, automatic);
    expect_values(again, "after tile 0 in the cache");
    EXPECT_EQ(again.stats().tiles_measured, regions);
  }

  // A damaged file, one naming a tile that is not a candidate, lines of older layouts (without
  // sums_whole, without threads), a bad sums_whole, a thread count out of range, a bad busy
  // flag and a field more: measured again. (Lines without the busy flag are read: above.)
  const TiledRegion& r0 = first.program().regions[0];
  const std::string head =
      std::to_string(r0.first) + " " + std::to_string(r0.last) + " " + std::to_string(r0.points);
  for (const std::string& text :
       {std::string("garbage\n1 2"), head + " 300 0 0\n", head + " 128\n", head + " 128 0\n",
        head + " 128 2 0\n", head + " 128 0 " + std::to_string(threads) + "\n",
        head + " 128 0 -1\n", head + " 128 0 0 2\n", head + " 128 0 0 x\n",
        head + " 128 0 0 1 0\n"}) {
    { std::ofstream(files[0]) << text; }
    Executable again(outs, automatic);
    expect_values(again, "after '" + text + "'");
    EXPECT_EQ(again.stats().tiles_measured, regions) << text;
  }
  if (env) ::setenv("JETPDE_TILE_ROWS", saved.c_str(), 1);
  std::filesystem::remove_all(cache);
}

// A tile measured while other processes keep the cores busy is not trusted: the region takes
// the preferred tile (weight gradients per tile, all threads), and the cache keeps that, so that
// the next executable runs the same tiles unmeasured, and knows that they were measured under
// load (CompileStats::tiles_busy: `jetpde run` says so). Two spinning children are the other
// processes.
TEST(TiledRegions, BusyMeasurementsKeepThePreferredTile) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  if (!std::ifstream("/proc/stat")) GTEST_SKIP() << "no /proc/stat: every measurement is trusted";
  const bench::Workload w = bench::build_workload("burgers", {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const std::filesystem::path cache = std::filesystem::path(::testing::TempDir()) /
                                      ("jetpde-busy-tiles-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  CompileOptions o;
  o.cpu.tile_rows = 0;
  o.cpu.cache_dir = cache.string();
  const char* env = std::getenv("JETPDE_TILE_ROWS");
  const std::string saved = env ? env : "";
  ::unsetenv("JETPDE_TILE_ROWS");
  std::vector<pid_t> spinners;
  for (int k = 0; k < 2; ++k) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    spinners.push_back(pid);
  }
  Executable busy(outs, o);
  busy.set(w.bindings);
  busy.run();
  // The same spinners as ranks of this process's job on the machine (as many as it has cores, so
  // that whatever else runs stays below them): not other processes; and as rank 1, its tiles in
  // a file of its own.
  CompileOptions rank1 = o;
  rank1.cpu.ranks_here = 1 + static_cast<int>(std::thread::hardware_concurrency());
  rank1.cpu.rank = 1;
  Executable sibling(outs, rank1);
  sibling.set(w.bindings);
  sibling.run();
  for (const pid_t pid : spinners) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  const int regions = static_cast<int>(busy.program().regions.size());
  ASSERT_GT(regions, 0);
  EXPECT_EQ(busy.stats().tiles_measured, regions);
  EXPECT_EQ(busy.stats().tiles_busy, regions);
  EXPECT_EQ(sibling.stats().tiles_measured, regions);
  EXPECT_EQ(sibling.stats().tiles_busy, 0) << "the spinners taken for this job's ranks";
  EXPECT_TRUE(sibling.stats().tile_file.ends_with(
      ".tiles-" + std::to_string(omp_get_max_threads()) + "-threads-rank-1"))
      << sibling.stats().tile_file;
  EXPECT_NE(sibling.stats().tile_file, busy.stats().tile_file);
  for (const TiledRegion& r : busy.program().regions) {
    ASSERT_GE(r.points, 2 * kPreferredTile);
    EXPECT_EQ(r.tile, kPreferredTile);
    EXPECT_FALSE(r.sums_whole);
    EXPECT_EQ(r.threads, 0);
  }
  Executable again(outs, o);
  again.set(w.bindings);
  again.run();
  EXPECT_EQ(again.stats().tiles_measured, 0) << "the preferred tile, from the cache";
  EXPECT_EQ(again.stats().tiles_busy, regions) << "and the cache says why";
  for (const TiledRegion& r : again.program().regions) EXPECT_EQ(r.tile, kPreferredTile);
  if (env) ::setenv("JETPDE_TILE_ROWS", saved.c_str(), 1);
  std::filesystem::remove_all(cache);
}

// Auto without measuring (CpuCompileOptions::measure_tiles false: evaluation programs): every
// region's tile is kPreferredTile from the start, nothing is measured on the first run, and
// JETPDE_TILE_ROWS=auto means the same.
TEST(TiledRegions, UnmeasuredAutoTilesAreThePreferredTile) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const bench::Workload w = bench::build_workload("burgers", {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const char* env = std::getenv("JETPDE_TILE_ROWS");
  const std::string saved = env ? env : "";
  CompileOptions o;
  o.cpu.measure_tiles = false;
  for (const char* setting : {"", "auto"}) {
    ::setenv("JETPDE_TILE_ROWS", setting, 1);
    EXPECT_EQ(tile_rows(o.cpu), kPreferredTile) << "JETPDE_TILE_ROWS='" << setting << "'";
    Executable e(outs, o);
    ASSERT_FALSE(e.program().regions.empty()) << e.program().to_text();
    e.set(w.bindings);
    e.run();
    EXPECT_EQ(e.stats().tiles_measured, 0);
    for (const TiledRegion& r : e.program().regions) {
      EXPECT_FALSE(r.tune);
      EXPECT_EQ(r.tile, kPreferredTile);
    }
  }
  ::setenv("JETPDE_TILE_ROWS", "64", 1);  // a number still fixes the tiles
  EXPECT_EQ(tile_rows(o.cpu), 64);
  if (env)
    ::setenv("JETPDE_TILE_ROWS", saved.c_str(), 1);
  else
    ::unsetenv("JETPDE_TILE_ROWS");
}

// Under the 16-bit policies the GEMMs run in the regions too: native bf16 GEMMs on packed
// operands (each thread its own oneDNN matmul over its tile; c += aᵀ b into its partial for the
// weight gradients), f16 and emulated bf16 ones as the sgemm of f32-stored values; weights cast
// to 16 bits (kernels of the weights' rows) move before the region. Burgers' step is then one
// region holding every GEMM under the bf16 policies (fp16 scales each operand by its rms over
// all rows first: a sum that ends regions), and gives the values of its steps run whole, on 1
// and 2 threads with a short last tile.
// Options under `policy` with tiles of `tile` points (-1: every step whole).
CompileOptions with_tiles(PrecisionPolicy policy, std::int64_t tile) {
  CompileOptions o;
  o.pipeline.precision = policy;
  o.cpu.tile_rows = tile;
  return o;
}

// How many of p's GEMMs run outside every region.
int gemms_outside_regions(const Program& p) {
  int outside = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    bool in = false;
    for (const TiledRegion& r : p.regions)
      in = in || (static_cast<int>(s) >= r.first && static_cast<int>(s) < r.last);
    outside += std::holds_alternative<Gemm>(p.steps[s].op) && !in ? 1 : 0;
  }
  return outside;
}

class TiledSixteenBit : public ::testing::TestWithParam<PrecisionPolicy> {};

TEST_P(TiledSixteenBit, GemmsRunInTheRegionAsWhole) {
  if (!sgemm_runs_per_thread()) GTEST_SKIP() << "tiles need an sgemm that runs on each thread";
  const PrecisionPolicy policy = GetParam();
  const bench::Workload w = bench::build_workload("burgers", {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  Executable reference(outs, with_tiles(policy, -1));
  reference.set(w.bindings);
  reference.run();
  Executable e(outs, with_tiles(policy, 300));
  const Program& p = e.program();
  const bool scaled = policy == PrecisionPolicy::fp16;
  ASSERT_FALSE(p.regions.empty()) << p.to_text();
  if (!scaled) {
    ASSERT_EQ(p.regions.size(), 1u) << p.to_text();
  }
  int gemms = 0, packed = 0;
  for (const Step& step : p.steps)
    if (const auto* g = std::get_if<Gemm>(&step.op)) {
      ++gemms;
      packed += p.buffers[g->a.buffer].packed ? 1 : 0;
    }
  EXPECT_EQ(gemms_outside_regions(p), 0) << p.to_text();
  EXPECT_EQ(packed, policy != PrecisionPolicy::fp16 && native_bf16_gemm_available()
                        ? e.stats().native_bf16_gemms
                        : 0);
  if (policy == PrecisionPolicy::bf16 && native_bf16_gemm_available()) {
    EXPECT_GT(2 * packed, gemms) << "the 64-wide layers' GEMMs native";
  }
  expect_region_buffers_apart(p);
  expect_as_whole(e, reference, w, outs.size(), 2e-5, 1e-3, precision_name(policy));
}

// In fp64 the GEMMs run in the regions too where the CBLAS's dgemm runs on each calling thread
// alone (OpenBLAS's OpenMP build): each thread's dgemm over its tile, weight gradients into an f64
// partial per thread. Every GEMM of the step then runs inside a region, and the values are those
// of the steps run whole to f64 rounding, on 1 and 2 threads with a short last tile.
class TiledF64 : public ::testing::TestWithParam<std::string> {};

TEST_P(TiledF64, GemmsRunInTheRegionAsWhole) {
  if (!sgemm_runs_per_thread() || !cblas_runs_per_thread())
    GTEST_SKIP() << "f64 tiles need a dgemm that runs on each thread";
  const bench::Workload w = bench::build_workload(GetParam(), {1000, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  Executable reference(outs, with_tiles(PrecisionPolicy::fp64, -1));
  reference.set(w.bindings);
  reference.run();
  Executable e(outs, with_tiles(PrecisionPolicy::fp64, 300));
  const Program& p = e.program();
  ASSERT_FALSE(p.regions.empty()) << p.to_text();
  int f64 = 0;
  for (const Step& step : p.steps)
    if (const auto* g = std::get_if<Gemm>(&step.op))
      f64 += p.buffers[g->c.buffer].dtype == DType::f64 ? 1 : 0;
  EXPECT_GT(f64, 0) << p.to_text();
  EXPECT_EQ(gemms_outside_regions(p), 0) << p.to_text();
  expect_region_buffers_apart(p);
  expect_as_whole(e, reference, w, outs.size(), 1e-12, 1e-3, GetParam());
}

// A small network in f64 as evaluations compile it: a 2-column input (k = 2), 12 wide, one output
// column (n = 1), 300 points in tiles of 128, 100 and 64 (short last tiles), run twice.
TEST(TiledF64, ANarrowNetworkRunsTileByTileAsWhole) {
  if (!sgemm_runs_per_thread() || !cblas_runs_per_thread())
    GTEST_SKIP() << "f64 tiles need a dgemm that runs on each thread";
  Graph g(DType::f64);
  const Var x = g.input("x", {300, 2});
  const Var w0 = g.param("W0", {2, 12}), w1 = g.param("W1", {12, 12}), w2 = g.param("W2", {12, 1});
  const Var b0 = g.param("b0", {1, 12});
  const std::vector<Var> outs{matmul(tanh(matmul(tanh(matmul(x * 2.0, w0) + b0), w1)), w2)};
  const Bindings values{{"x", MatrixD::Random(300, 2)},
                        {"W0", MatrixD::Random(2, 12)},
                        {"W1", MatrixD::Random(12, 12)},
                        {"W2", MatrixD::Random(12, 1)},
                        {"b0", MatrixD::Random(1, 12)}};
  Executable reference(outs, with_tiles(PrecisionPolicy::fp64, -1));
  reference.set(values);
  reference.run();
  const MatrixD want = reference.output(0);
  for (const std::int64_t tile : {128, 100, 64}) {
    Executable e(outs, with_tiles(PrecisionPolicy::fp64, tile));
    ASSERT_EQ(e.program().regions.size(), 1u) << e.program().to_text();
    e.set(values);
    for (int run = 0; run < 2; ++run) {  // the GEMMs overwrite what the last run left
      e.run();
      EXPECT_LE((e.output(0) - want).cwiseAbs().maxCoeff(), 1e-13 * want.cwiseAbs().maxCoeff())
          << "tiles of " << tile << ", run " << run;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, TiledF64, ::testing::Values("burgers", "order6", "poisson32d"));

INSTANTIATE_TEST_SUITE_P(Policies, TiledSixteenBit,
                         ::testing::Values(PrecisionPolicy::bf16, PrecisionPolicy::bf16_wgrad,
                                           PrecisionPolicy::fp16),
                         [](const auto& info) { return precision_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Workloads, TiledWorkloads,
                         ::testing::Values("burgers", "ns2d", "ks4", "order6", "poisson32d"));

}  // namespace
}  // namespace jetpde::compiler
