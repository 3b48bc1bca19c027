// Scheduling and rematerialization for memory. A step that writes only program outputs (a weight
// gradient's GEMM, a bias gradient's row sum) runs as soon as what it reads is written, so that
// its operands die early (lowering emits the backward pass's weight gradients last).
//
// Rematerialization: a buffer that the forward pass stores and the backward pass reads much later
// is stored once for its early readers and computed again, by a copy of the kernel that stored
// it, just before its late ones, so that it is not live in between (gradient checkpointing at
// the granularity of one fused kernel). Only what is cheap and exact to recompute qualifies: a
// temporary written by exactly one step, a kernel storing it whole, whose loads are still live
// and unchanged where the copy runs (inputs, parameters, constants, or temporaries read there
// anyway and not written since). The copy computes the same values with the same code, so the
// program's outputs do not change by a bit; it costs one more elementwise kernel over the
// buffer's domain.
#include <algorithm>
#include <map>
#include <set>

#include "compiler/lower.h"

namespace jetpde::compiler {
namespace {

template <class F>
void for_each_read(const Step& step, F f) {
  if (const auto* k = std::get_if<Kernel>(&step.op)) {
    for (const View& v : k->loads) f(v.buffer);
  } else {
    const Gemm& g = std::get<Gemm>(step.op);
    f(g.a.buffer);
    f(g.b.buffer);
  }
}

template <class F>
void for_each_write(const Step& step, F f) {
  if (const auto* k = std::get_if<Kernel>(&step.op)) {
    for (const auto& s : k->stores) f(s.target.buffer);
    for (const auto& r : k->reductions) f(r.target.buffer);
  } else {
    f(std::get<Gemm>(step.op).c.buffer);
  }
}

struct Lifetimes {
  std::vector<std::vector<int>> reads, writes;  // by buffer: the steps, ascending
  std::vector<bool> output;                     // read by the program's outputs
};

Lifetimes lifetimes(const Program& p) {
  Lifetimes l;
  l.reads.resize(p.buffers.size());
  l.writes.resize(p.buffers.size());
  l.output.resize(p.buffers.size(), false);
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const int step = static_cast<int>(s);
    std::set<int> read, written;
    for_each_read(p.steps[s], [&](int b) { read.insert(b); });
    for_each_write(p.steps[s], [&](int b) { written.insert(b); });
    for (int b : read) l.reads[static_cast<std::size_t>(b)].push_back(step);
    for (int b : written) l.writes[static_cast<std::size_t>(b)].push_back(step);
  }
  for (const View& v : p.outputs) l.output[static_cast<std::size_t>(v.buffer)] = true;
  return l;
}

// The step with the most bytes live (temporaries from first to last use), and its bytes.
std::pair<int, std::int64_t> peak(const Program& p, const Lifetimes& l) {
  std::vector<std::int64_t> live(p.steps.size() + 1, 0);
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    if (p.buffers[b].kind != Buffer::Kind::Temp || l.output[b]) continue;
    int first = static_cast<int>(p.steps.size()), last = -1;
    for (int s : l.reads[b]) first = std::min(first, s), last = std::max(last, s);
    for (int s : l.writes[b]) first = std::min(first, s), last = std::max(last, s);
    for (int s = first; s <= last; ++s) live[static_cast<std::size_t>(s)] += p.buffers[b].bytes();
  }
  const auto it = std::max_element(live.begin(), live.end());
  return {static_cast<int>(it - live.begin()), *it};
}

// Kernel k with only the stores `keep` accepts (and its reductions when `reductions`), and the
// values and loads those need.
template <class Keep>
Kernel prune(const Kernel& k, Keep keep, bool reductions) {
  std::vector<bool> needed(k.values.size(), false);
  Kernel out;
  out.domain = k.domain;
  for (const auto& s : k.stores)
    if (keep(s)) needed[static_cast<std::size_t>(s.value)] = true;
  if (reductions)
    for (const auto& r : k.reductions) needed[static_cast<std::size_t>(r.value)] = true;
  for (std::size_t v = k.values.size(); v-- > 0;)
    if (needed[v])
      for (int a : k.values[v].args) needed[static_cast<std::size_t>(a)] = true;
  std::vector<int> value_at(k.values.size(), -1), load_at(k.loads.size(), -1);
  for (std::size_t v = 0; v < k.values.size(); ++v) {
    if (!needed[v]) continue;
    Value value = k.values[v];
    for (int& a : value.args) a = value_at[static_cast<std::size_t>(a)];
    if (value.kind == Value::Kind::Load) {
      int& at = load_at[static_cast<std::size_t>(value.load)];
      if (at < 0) {
        at = static_cast<int>(out.loads.size());
        out.loads.push_back(k.loads[static_cast<std::size_t>(value.load)]);
      }
      value.load = at;
    }
    value_at[v] = static_cast<int>(out.values.size());
    out.values.push_back(value);
  }
  for (const auto& s : k.stores)
    if (keep(s)) out.stores.push_back({value_at[static_cast<std::size_t>(s.value)], s.target});
  if (reductions)
    for (auto r : k.reductions) {
      r.value = value_at[static_cast<std::size_t>(r.value)];
      out.reductions.push_back(r);
    }
  return out;
}

// Kernel k reduced to its store to `buffer` and what that store needs.
Kernel only_store(const Kernel& k, int buffer) {
  return prune(
      k, [&](const Kernel::Store& s) { return s.target.buffer == buffer; }, false);
}

// A buffer computed (again) before step `late`: when it is read before, its reads from `late` on
// go to a new buffer that the copy of its kernel writes; when it is not (it waits, stored, for a
// late reader), its store moves from the producer into the copy.
struct Candidate {
  int buffer = -1, producer = -1, late = -1;
  bool read_early = true;
  std::int64_t bytes = 0;
};

bool whole(const View& v, const Buffer& b) {
  return v.row0 == 0 && v.col0 == 0 && v.shape == b.shape && !v.row_broadcast && !v.col_broadcast;
}

// Buffers live at step `at` (written at or before it, read after it, not read at it) that can be
// computed after it instead.
std::vector<Candidate> candidates(const Program& p, const Lifetimes& l, int at) {
  std::vector<Candidate> out;
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buffer = p.buffers[b];
    if (buffer.kind != Buffer::Kind::Temp || l.output[b] || l.writes[b].size() != 1) continue;
    const int producer = l.writes[b].front();
    const auto* k = std::get_if<Kernel>(&p.steps[static_cast<std::size_t>(producer)].op);
    if (k == nullptr || producer > at) continue;
    bool stored_whole = false;
    for (const auto& s : k->stores)
      if (s.target.buffer == static_cast<int>(b))
        stored_whole = stored_whole || whole(s.target, buffer);
    if (!stored_whole) continue;
    const auto late = std::upper_bound(l.reads[b].begin(), l.reads[b].end(), at);
    if (late == l.reads[b].end() || std::binary_search(l.reads[b].begin(), l.reads[b].end(), at))
      continue;  // not read after `at`, or read at it
    // Every load of the copy unchanged at `late` (never written after the producer) and live at
    // `at`: an input, a parameter, a constant, or a temporary read after `at` (then the copy
    // may lengthen its life, but only after `at`).
    const Kernel copy = only_store(*k, static_cast<int>(b));
    const bool loads_live = std::all_of(copy.loads.begin(), copy.loads.end(), [&](const View& v) {
      const auto q = static_cast<std::size_t>(v.buffer);
      if (!l.writes[q].empty() && l.writes[q].back() > producer) return false;
      if (p.buffers[q].kind != Buffer::Kind::Temp || l.output[q]) return true;
      return !l.reads[q].empty() && l.reads[q].back() > at;
    });
    if (loads_live)
      out.push_back(
          {static_cast<int>(b), producer, *late, late != l.reads[b].begin(), buffer.bytes()});
  }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.bytes > b.bytes; });
  return out;
}

void recompute(Program& p, const Candidate& c) {
  Kernel& producer = std::get<Kernel>(p.steps[static_cast<std::size_t>(c.producer)].op);
  Kernel k = only_store(producer, c.buffer);
  int late = c.late;
  if (!c.read_early) {  // the store moves: the producer keeps the rest, or goes
    producer = prune(
        producer, [&](const Kernel::Store& s) { return s.target.buffer != c.buffer; }, true);
    if (producer.stores.empty() && producer.reductions.empty()) {
      p.steps.erase(p.steps.begin() + c.producer);
      --late;
    }
    p.steps.insert(p.steps.begin() + late, Step{std::move(k)});
    return;
  }
  Buffer copy = p.buffers[static_cast<std::size_t>(c.buffer)];
  copy.offset = -1;
  p.buffers.push_back(copy);
  const int fresh = static_cast<int>(p.buffers.size() - 1);
  const auto retarget = [&](View& v) {
    if (v.buffer == c.buffer) v.buffer = fresh;
  };
  for (std::size_t s = static_cast<std::size_t>(late); s < p.steps.size(); ++s) {
    if (auto* step = std::get_if<Kernel>(&p.steps[s].op)) {
      for (View& v : step->loads) retarget(v);
    } else {
      Gemm& g = std::get<Gemm>(p.steps[s].op);
      retarget(g.a);
      retarget(g.b);
    }
  }
  for (auto& s : k.stores) s.target.buffer = fresh;
  p.steps.insert(p.steps.begin() + late, Step{std::move(k)});
}

}  // namespace

int hoist_output_steps(Program& p) {
  std::vector<bool> output(p.buffers.size(), false);
  for (const View& v : p.outputs) output[static_cast<std::size_t>(v.buffer)] = true;
  int moved = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const Lifetimes l = lifetimes(p);
    bool only_outputs = true;
    for_each_write(p.steps[s], [&](int b) {
      only_outputs = only_outputs && output[static_cast<std::size_t>(b)] &&
                     l.writes[static_cast<std::size_t>(b)].size() == 1;
    });
    if (!only_outputs) continue;
    // Right after the last step before it that writes what it reads.
    std::size_t to = 0;
    for_each_read(p.steps[s], [&](int b) {
      for (int w : l.writes[static_cast<std::size_t>(b)])
        if (static_cast<std::size_t>(w) < s) to = std::max(to, static_cast<std::size_t>(w) + 1);
    });
    if (to >= s) continue;
    Step step = std::move(p.steps[s]);
    p.steps.erase(p.steps.begin() + static_cast<std::ptrdiff_t>(s));
    p.steps.insert(p.steps.begin() + static_cast<std::ptrdiff_t>(to), std::move(step));
    ++moved;
  }
  return moved;
}

int rematerialize(Program& p, std::int64_t target_bytes) {
  plan_memory(p);
  // One buffer at a time, the largest live at the peak first, planned again after each; the
  // smallest arena seen is kept (a copy that lengthens its loads' lives may raise a later step
  // above the old peak). The cap bounds chains of copies.
  Program best = p;
  int recomputed = 0, best_recomputed = 0;
  const std::size_t cap = 2 * p.steps.size();
  while (best.arena_bytes > target_bytes && static_cast<std::size_t>(recomputed) < cap) {
    const Lifetimes l = lifetimes(p);
    const std::vector<Candidate> found = candidates(p, l, peak(p, l).first);
    if (found.empty()) break;
    recompute(p, found.front());
    ++recomputed;
    plan_memory(p);
    if (p.arena_bytes < best.arena_bytes) best = p, best_recomputed = recomputed;
  }
  p = std::move(best);
  return best_recomputed;
}

int plan_memory_within(Program& p, double fraction) {
  plan_memory(p);
  if (fraction >= 1) return 0;
  const auto target = static_cast<std::int64_t>(fraction * static_cast<double>(p.arena_bytes));
  hoist_output_steps(p);
  return rematerialize(p, target);
}

}  // namespace jetpde::compiler
