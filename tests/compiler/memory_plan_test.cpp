// The memory plan: buffers live at the same step never share memory, and the arena is reported
// against the sum of the buffers live at the same time.
#include <gtest/gtest.h>

#include <variant>

#include "autodiff/ops.h"
#include "bench/workloads.h"
#include "compiler/lower.h"
#include "compiler/pipeline.h"

namespace jetpde::compiler {
namespace {

// Lifetimes recomputed here, independently of the plan: [first, last] step using each buffer.
struct Lifetimes {
  std::vector<int> first, last;
};

Lifetimes lifetimes(const Program& p) {
  const int end = static_cast<int>(p.steps.size());
  Lifetimes l{std::vector<int>(p.buffers.size(), end), std::vector<int>(p.buffers.size(), -1)};
  auto touch = [&](const View& v, int s) {
    l.first[v.buffer] = std::min(l.first[v.buffer], s);
    l.last[v.buffer] = std::max(l.last[v.buffer], s);
  };
  for (int s = 0; s < end; ++s) {
    if (const auto* k = std::get_if<Kernel>(&p.steps[s].op)) {
      for (const View& v : k->loads) touch(v, s);
      for (const auto& st : k->stores) touch(st.target, s);
      for (const auto& r : k->reductions) touch(r.target, s);
    } else {
      const Gemm& g = std::get<Gemm>(p.steps[s].op);
      touch(g.a, s), touch(g.b, s), touch(g.c, s);
    }
  }
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind != Buffer::Kind::Temp) l.first[b] = -1, l.last[b] = end;
  for (const View& v : p.outputs) l.last[v.buffer] = end;
  return l;
}

std::int64_t max_live_bytes(const Program& p, const Lifetimes& l) {
  std::int64_t best = 0;
  for (int s = -1; s <= static_cast<int>(p.steps.size()); ++s) {
    std::int64_t live = 0;
    for (std::size_t b = 0; b < p.buffers.size(); ++b)
      if (l.first[b] <= s && s <= l.last[b]) live += p.buffers[b].bytes();
    best = std::max(best, live);
  }
  return best;
}

void expect_sound_plan(const Program& p) {
  const Lifetimes l = lifetimes(p);
  for (std::size_t a = 0; a < p.buffers.size(); ++a)
    for (std::size_t b = a + 1; b < p.buffers.size(); ++b) {
      if (l.first[a] > l.last[b] || l.first[b] > l.last[a]) continue;  // never live together
      const Buffer& x = p.buffers[a];
      const Buffer& y = p.buffers[b];
      EXPECT_TRUE(x.offset + x.bytes() <= y.offset || y.offset + y.bytes() <= x.offset)
          << "buffers " << a << " and " << b << " are live together and overlap";
    }
  for (const Buffer& b : p.buffers) EXPECT_LE(b.offset + b.bytes(), p.arena_bytes);
  EXPECT_EQ(p.peak_live_bytes, max_live_bytes(p, l));
  EXPECT_GE(p.arena_bytes, p.peak_live_bytes);
}

Program plan(std::span<const Var> outputs) {
  Program p = lower(optimize(module_of(outputs), {}));
  plan_memory(p);
  return p;
}

TEST(MemoryPlan, AChainReusesMemoryDownToTheLiveSet) {
  Graph g;
  const Var x = g.input("x", {256, 16});
  const Var w = g.param("W", {16, 16});
  Var h = x;
  for (int layer = 0; layer < 6; ++layer) h = matmul(h, w);  // GEMM after GEMM: two live temps
  const std::vector<Var> outs{sum_all(h)};
  const Program p = plan(outs);
  expect_sound_plan(p);
  // At each GEMM: the input x, W, and the GEMM's operand and result.
  EXPECT_EQ(p.peak_live_bytes, 256 * 16 * 4 * 3 + 16 * 16 * 4);
  EXPECT_LE(p.arena_bytes, p.peak_live_bytes + 64 * 8) << "only alignment padding on a chain";
}

class WorkloadPlans : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkloadPlans, LiveBuffersNeverOverlap) {
  const bench::Workload w = bench::build_workload(GetParam(), {128, DType::f32});
  const std::vector<Var> outs = w.step_outputs();
  const Program p = plan(outs);
  expect_sound_plan(p);
  std::cout << "  " << GetParam() << ": arena " << p.arena_bytes << " bytes, live peak "
            << p.peak_live_bytes << " bytes (" << p.arena_bytes / double(p.peak_live_bytes)
            << "x)\n";
  EXPECT_LE(p.arena_bytes, 2 * p.peak_live_bytes) << "fragmentation beyond 2x";
}

INSTANTIATE_TEST_SUITE_P(Workloads, WorkloadPlans,
                         ::testing::Values("burgers", "ns2d", "ks4", "order6", "poisson32d"));

}  // namespace
}  // namespace jetpde::compiler
