// Tiled regions (program.h, TiledRegion): runs of steps that may run one tile of points at a
// time, so that a layer's GEMM output, its Taylor recurrence and the next layer's GEMM input
// stay in cache instead of going through memory between steps (issue 16 item 1;
// bench/gemm/README.md measures the gain).
//
// A step can join a region over `points` rows when it works row by row over them: a kernel
// whose domain has `points` rows (its row reductions become per-thread partial sums that the
// backend adds up after the region), a GEMM c = a op(b) whose rows are whole blocks of `points`
// (stacked streams), or a GEMM c = aᵀ b summing over such rows (a weight gradient: each thread
// accumulates aᵀ b over its tiles' rows into a partial c of its own, and the backend adds the
// partials up after the region, as it does the row sums), with operands stored in f32 (bf16 and
// f16 values rounded in f32 too), packed bf16 (a native bf16 GEMM) or f64 (where the CBLAS's dgemm
// runs on each calling thread alone). What a region
// writes must be read and written inside it only at rows i + b * points of the tile's points i:
// no broadcast row, no offset that is not a whole block, no GEMM reading it as its right operand
// in c = a b (that reads every row); a sum's result (a row reduction's, a weight gradient's),
// added up after the region, is not read inside it.
//
// Where a step ends a region, later steps that could join it and depend on none of the steps
// between (no buffer one writes that the other reads or writes) are moved up into it, so that
// lowering's order (weight gradients and bias sums after 1 x n bias kernels) does not leave
// them to run whole after the region, reading their operands from memory again.
#include <algorithm>
#include <unordered_set>

#include "compiler/lower.h"

namespace jetpde::compiler {
namespace {

struct Access {
  View view;
  bool write;
  bool whole;  // reads or writes every row (a GEMM's right operand; a row reduction's target)
};

std::vector<Access> accesses_of(const Step& step) {
  std::vector<Access> out;
  if (const auto* k = std::get_if<Kernel>(&step.op)) {
    for (const View& v : k->loads) out.push_back({v, false, false});
    for (const auto& s : k->stores) out.push_back({s.target, true, false});
    for (const auto& r : k->reductions) out.push_back({r.target, true, r.over_rows});
  } else {
    const Gemm& g = std::get<Gemm>(step.op);
    // aᵀ b reads both operands row by row and sums into all of c; a op(b) reads all of b.
    out.push_back({g.a, false, false});
    out.push_back({g.b, false, !g.transpose_a});
    out.push_back({g.c, true, g.transpose_a});
  }
  return out;
}

// Whether `step` can run on the tiles of `points` rows, ignoring what other steps of the region
// do with its buffers; f64 GEMMs only where `f64_gemms`.
bool tileable(const Program& p, const Step& step, std::int64_t points, bool f64_gemms) {
  if (const auto* k = std::get_if<Kernel>(&step.op)) return k->domain.rows == points;
  const Gemm& g = std::get<Gemm>(step.op);
  // Called by each thread on its tile: the library's sgemm where every operand is stored in f32
  // (f32, or bf16/f16 values rounded in f32), the native bf16 GEMM where both operands are packed
  // bf16 (c f32), the CBLAS's dgemm where they are f64 and it runs on its caller alone.
  const auto buffer = [&](const View& v) -> const Buffer& {
    return p.buffers[static_cast<std::size_t>(v.buffer)];
  };
  const bool native = buffer(g.a).packed && buffer(g.b).packed;
  for (const View* v : {&g.a, &g.b, &g.c}) {
    const Buffer& b = buffer(*v);
    if ((b.dtype == DType::f64 && !f64_gemms) || (b.packed != native && v != &g.c) ||
        (v == &g.c && b.packed))
      return false;
  }
  if (g.transpose_a)  // aᵀ b: a sum over the rows of a and b, blocks of `points`
    return !g.transpose_b && g.a.shape.rows == g.b.shape.rows && g.a.shape.rows % points == 0;
  return g.c.shape.rows % points == 0 && g.a.shape.rows == g.c.shape.rows;
}

// Whether the access touches only rows i + b * points of the tile's points i.
bool within_tile(const Access& a, std::int64_t points) {
  return !a.whole && !a.view.row_broadcast && a.view.row0 % points == 0;
}

// The points of a region starting at step `s`: the rows of the first kernel, past GEMMs that
// could join it (tileable() checks them against those rows) and one-row kernels (which would be
// moved before it); 0 when none.
std::int64_t points_from(const Program& p, std::size_t s) {
  for (; s < p.steps.size(); ++s)
    if (const auto* k = std::get_if<Kernel>(&p.steps[s].op); k && k->domain.rows > 1)
      return k->domain.rows;
  return 0;
}

// The rows (in blocks of `points`) and columns an access covers.
struct Extent {
  std::int64_t block0, blocks, col0, cols;
};
Extent extent_of(const Step& step, const View& v, std::int64_t points) {
  const std::int64_t rows = std::holds_alternative<Kernel>(step.op) ? points : v.shape.rows;
  return {v.row0 / points, std::max<std::int64_t>(1, rows / points), v.col0,
          v.col_broadcast ? 1 : v.shape.cols};
}

// TiledRegion::locals of region r: the buffers written in it that no step outside it uses and
// no output is, whose every access inside it stays within the tile and whose every read follows
// writes covering it (in step order: a tile's scratch holds nothing from before the region).
std::vector<TiledRegion::Local> region_locals(const Program& p, const TiledRegion& r) {
  const std::size_t nb = p.buffers.size();
  std::vector<bool> excluded(nb, false), written(nb, false);
  for (const View& v : p.outputs) excluded[static_cast<std::size_t>(v.buffer)] = true;
  for (std::size_t b = 0; b < nb; ++b)
    if (p.buffers[b].kind != Buffer::Kind::Temp || p.buffers[b].shape.rows % r.points != 0)
      excluded[b] = true;
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    if (static_cast<int>(s) < r.first || static_cast<int>(s) >= r.last)
      for_each_view(p.steps[s],
                    [&](const View& v) { excluded[static_cast<std::size_t>(v.buffer)] = true; });
  // By buffer: for each of its blocks, which columns the region wrote so far.
  std::vector<std::vector<std::vector<bool>>> covered(nb);
  std::vector<TiledRegion::Local> found(nb);
  std::vector<bool> summed(nb, false);
  for (int s = r.first; s < r.last; ++s) {
    const Step& step = p.steps[static_cast<std::size_t>(s)];
    const auto* g = std::get_if<Gemm>(&step.op);
    const std::vector<Access> acc = accesses_of(step);
    // Reads first: a step reading what it writes reads the values from before it.
    for (const bool writes : {false, true})
      for (const Access& a : acc) {
        if (a.write != writes) continue;
        const auto b = static_cast<std::size_t>(a.view.buffer);
        if (excluded[b]) continue;
        if (!within_tile(a, r.points)) {
          excluded[b] = true;
          continue;
        }
        auto& blocks = covered[b];
        if (blocks.empty())
          blocks.assign(
              static_cast<std::size_t>(p.buffers[b].shape.rows / r.points),
              std::vector<bool>(static_cast<std::size_t>(p.buffers[b].shape.cols), false));
        const Extent e = extent_of(step, a.view, r.points);
        for (std::int64_t k = e.block0; k < e.block0 + e.blocks && !excluded[b]; ++k)
          for (std::int64_t c = e.col0; c < e.col0 + e.cols; ++c) {
            if (k >= static_cast<std::int64_t>(blocks.size()) ||
                c >= static_cast<std::int64_t>(blocks[static_cast<std::size_t>(k)].size()) ||
                (!writes && !blocks[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)])) {
              excluded[b] = true;
              break;
            }
            if (writes) blocks[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)] = true;
          }
        if (!written[b]) found[b].first = s;
        written[b] = written[b] || writes;
        found[b].last = s;
        if (g && g->transpose_a && !writes) summed[b] = true;
      }
  }
  std::vector<TiledRegion::Local> out;
  for (std::size_t b = 0; b < nb; ++b)
    if (written[b] && !excluded[b])
      out.push_back({static_cast<int>(b), found[b].first, found[b].last, summed[b]});
  return out;
}

}  // namespace

int find_tiled_regions(Program& p, std::int64_t tile, bool f64_gemms) {
  p.regions.clear();
  for (Buffer& b : p.buffers) b.scratch_only = false;
  if (tile < 0) return 0;
  const bool tune = tile == 0;
  if (tune) tile = kMeasuredRegionTile;
  const std::size_t n = p.steps.size();
  std::size_t s = 0;
  while (s < n) {
    const std::int64_t points = points_from(p, s);
    // Fewer than two tiles: nothing to gain over running the steps whole.
    if (points < 2 * tile) {
      ++s;
      continue;
    }
    // Written in the region; read beyond a tile; summed into after the region.
    std::unordered_set<int> written, elsewhere, summed;
    bool gemm = false, kernel = false;
    // Whether step `st` can run inside the region after the steps taken so far; and taking it.
    const auto fits = [&](const Step& st) {
      if (!tileable(p, st, points, f64_gemms)) return false;
      const std::vector<Access> acc = accesses_of(st);
      for (const Access& a : acc) {
        const bool tile_only = within_tile(a, points);
        if (!tile_only && written.count(a.view.buffer) > 0) return false;
        if (a.write && elsewhere.count(a.view.buffer) > 0) return false;
        if (summed.count(a.view.buffer) > 0) return false;
        // The same step may not write a buffer and read it beyond the tile either.
        if (!tile_only)
          for (const Access& b : acc)
            if (b.write && b.view.buffer == a.view.buffer && &b != &a) return false;
      }
      return true;
    };
    const auto take = [&](const Step& st) {
      for (const Access& a : accesses_of(st)) {
        if (a.write) written.insert(a.view.buffer);
        if (!within_tile(a, points)) elsewhere.insert(a.view.buffer);
        if (a.write && a.whole) summed.insert(a.view.buffer);
      }
      (std::holds_alternative<Gemm>(st.op) ? gemm : kernel) = true;
    };
    std::size_t e = s;
    for (; e < n && fits(p.steps[e]); ++e) take(p.steps[e]);
    // Later steps that could join and depend on none of the steps between: moved up into it;
    // later kernels over fewer rows than the points (scalars such as loss weights and the seeds
    // of a reverse pass, weights cast to 16 bits) that depend on none of the region's steps nor
    // of those between: moved up before it, so that what depends on them can join (where the
    // region is kept: the memory plan is made again only then).
    std::vector<std::size_t> moved, hoisted;
    if (e > s) {
      std::unordered_set<int> passed_reads, passed_writes, region_reads, region_writes;
      const auto record = [&](const Step& st, std::unordered_set<int>& reads,
                              std::unordered_set<int>& writes) {
        for (const Access& a : accesses_of(st)) (a.write ? writes : reads).insert(a.view.buffer);
      };
      const auto independent_of = [&](const Step& st, const std::unordered_set<int>& reads,
                                      const std::unordered_set<int>& writes) {
        for (const Access& a : accesses_of(st))
          if (writes.count(a.view.buffer) > 0 || (a.write && reads.count(a.view.buffer) > 0))
            return false;
        return true;
      };
      for (std::size_t t = s; t < e; ++t) record(p.steps[t], region_reads, region_writes);
      for (std::size_t t = e; t < n; ++t) {
        const Step& st = p.steps[t];
        const bool independent = independent_of(st, passed_reads, passed_writes);
        const auto* k = std::get_if<Kernel>(&st.op);
        if (t > e && independent && fits(st)) {
          take(st);
          record(st, region_reads, region_writes);
          moved.push_back(t);
        } else if (k && k->domain.rows < points && independent &&
                   independent_of(st, region_reads, region_writes)) {
          hoisted.push_back(t);
        } else {
          record(st, passed_reads, passed_writes);
        }
      }
    }
    const std::size_t last = e + moved.size() + hoisted.size();
    if (gemm && kernel && e + moved.size() - s >= 2) {
      if (!moved.empty() || !hoisted.empty()) {
        // [s, e) and the moved steps after the hoisted ones, then the rest in their order.
        std::vector<Step> region, rest, ahead;
        std::vector<int> where(n - e, 0);  // 1 moved, 2 hoisted
        for (const std::size_t t : moved) where[t - e] = 1;
        for (const std::size_t t : hoisted) where[t - e] = 2;
        for (std::size_t t = s; t < e; ++t) region.push_back(std::move(p.steps[t]));
        for (std::size_t t = e; t < n; ++t)
          (where[t - e] == 1   ? region
           : where[t - e] == 2 ? ahead
                               : rest)
              .push_back(std::move(p.steps[t]));
        std::size_t at = s;
        for (auto* part : {&ahead, &region, &rest})
          for (Step& st : *part) p.steps[at++] = std::move(st);
      }
      const auto first = static_cast<int>(s + hoisted.size());
      p.regions.push_back({first, static_cast<int>(last), points, tile, tune});
      s = last;
    } else {
      ++s;
    }
  }
  for (TiledRegion& r : p.regions) {
    r.locals = region_locals(p, r);
    // Every local but the weight gradients' operands (which the region may read whole after its
    // tiles: sums_whole) lives in the backend's tile scratch only: the region always runs in
    // tiles, and the memory plan gives those locals no arena bytes.
    for (const TiledRegion::Local& l : r.locals)
      if (!l.summed) p.buffers[static_cast<std::size_t>(l.buffer)].scratch_only = true;
  }
  return static_cast<int>(p.regions.size());
}

}  // namespace jetpde::compiler
