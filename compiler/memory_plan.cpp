// Memory plan: liveness-based reuse of one arena.
//
// A temporary buffer lives from the first step that uses it to the last; inputs, params,
// constants and outputs live throughout. Buffers are placed largest first at the lowest
// 64-byte-aligned offset that overlaps no placed buffer whose lifetime overlaps theirs (the
// greedy-by-size heuristic of TFLite's arena planner). Lifetimes are closed intervals, so a step
// never writes a buffer in the memory of one it reads; a tiled region counts as one step.
#include <algorithm>
#include <numeric>

#include "compiler/lower.h"

namespace jetpde::compiler {
namespace {

constexpr std::int64_t kAlignment = 64;

std::int64_t align_up(std::int64_t x) { return (x + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

std::vector<std::int64_t> place_by_size(const std::vector<Lifetime>& items, std::int64_t* total) {
  const std::size_t n = items.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return items[a].bytes > items[b].bytes; });
  std::vector<std::int64_t> offsets(n, 0);
  std::vector<std::size_t> placed;
  *total = 0;
  for (std::size_t b : order) {
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;  // [begin, end) of live neighbours
    for (std::size_t q : placed)
      if (items[q].first <= items[b].last && items[b].first <= items[q].last)
        busy.emplace_back(offsets[q], offsets[q] + items[q].bytes);
    std::sort(busy.begin(), busy.end());
    std::int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + items[b].bytes <= begin) break;
      offset = std::max(offset, align_up(end));
    }
    offsets[b] = offset;
    *total = std::max(*total, align_up(offset + items[b].bytes));
    placed.push_back(b);
  }
  return offsets;
}

std::int64_t Buffer::bytes() const {
  return shape.size() * (packed ? 2 : dtype == DType::f64 ? 8 : 4);
}

void plan_memory(Program& p) {
  const auto n = p.buffers.size();
  const int last_step = static_cast<int>(p.steps.size());
  std::vector<int> first(n, last_step + 1), last(n, -1);
  for (int s = 0; s < last_step; ++s)
    for_each_view(p.steps[static_cast<std::size_t>(s)], [&](const View& v) {
      first[static_cast<std::size_t>(v.buffer)] =
          std::min(first[static_cast<std::size_t>(v.buffer)], s);
      last[static_cast<std::size_t>(v.buffer)] =
          std::max(last[static_cast<std::size_t>(v.buffer)], s);
    });
  // Tiles interleave a region's steps: what any of them uses lives through all of them.
  for (const TiledRegion& r : p.regions)
    for (int s = r.first; s < r.last; ++s)
      for_each_view(p.steps[static_cast<std::size_t>(s)], [&](const View& v) {
        const auto b = static_cast<std::size_t>(v.buffer);
        first[b] = std::min(first[b], r.first);
        last[b] = std::max(last[b], r.last - 1);
      });
  for (std::size_t b = 0; b < n; ++b)
    if (p.buffers[b].kind != Buffer::Kind::Temp) first[b] = -1, last[b] = last_step;
  for (const View& v : p.outputs) last[static_cast<std::size_t>(v.buffer)] = last_step;
  for (std::size_t b = 0; b < n; ++b)
    if (last[b] < 0) first[b] = last[b] = -1;  // never used by a step (an output that is a leaf)

  // A region's scratch-only locals take no arena bytes (the backend's tile scratch holds them).
  std::vector<Lifetime> lifetimes(n);
  for (std::size_t b = 0; b < n; ++b)
    lifetimes[b] = {p.buffers[b].scratch_only ? 0 : p.buffers[b].bytes(), first[b], last[b]};
  const std::vector<std::int64_t> offsets = place_by_size(lifetimes, &p.arena_bytes);
  for (std::size_t b = 0; b < n; ++b)
    p.buffers[b].offset = p.buffers[b].scratch_only ? -1 : offsets[b];
  p.peak_live_bytes = 0;
  for (int s = -1; s <= last_step; ++s) {
    std::int64_t live = 0;
    for (std::size_t b = 0; b < n; ++b)
      if (first[b] <= s && s <= last[b]) live += lifetimes[b].bytes;
    p.peak_live_bytes = std::max(p.peak_live_bytes, live);
  }
}

}  // namespace jetpde::compiler
