// The executable's life cycle: the compile cache, the interpreter fallback, and its user errors.
#include <gtest/gtest.h>

#include "tests/support/user_error.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "autodiff/errors.h"
#include "autodiff/grad.h"
#include "autodiff/ops.h"
#include "compiler/cpu_compiler.h"
#include "compiler/executable.h"
#include "compiler/lower.h"
#include "compiler/pipeline.h"
#include "compiler/render_c.h"

namespace jetpde::compiler {
namespace {

CompileOptions fresh_cache(const std::string& name) {
  CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-cache-" + name;
  std::filesystem::remove_all(o.cpu.cache_dir);
  return o;
}

struct Layer {
  Graph g{DType::f64};
  Var x = g.input("x", {8, 2});
  Var w = g.param("W", {2, 3});
  Var b = g.param("b", {1, 3});
  Var y = tanh(matmul(x, w) + b);
  Bindings values{
      {"x", MatrixD::Random(8, 2)}, {"W", MatrixD::Random(2, 3)}, {"b", MatrixD::Random(1, 3)}};
};

using jetpde::testing::expect_user_error;

TEST(CompileCache, TheSecondCompileIsACacheHit) {
  const CompileOptions o = fresh_cache("hit");
  Layer l;
  const std::vector<Var> outs{l.y};
  Executable first(outs, o);
  EXPECT_FALSE(first.stats().cache_hit);
  Executable second(outs, o);
  EXPECT_TRUE(second.stats().cache_hit);
  std::size_t objects = 0;
  for (const auto& e : std::filesystem::directory_iterator(o.cpu.cache_dir))
    objects += e.path().extension() == ".so";
  EXPECT_EQ(objects, 1u);
  second.set(l.values);
  second.run();
  EXPECT_TRUE(second.output(0).isApprox(evaluate(l.y, l.values)));
}

// The cache within its limit: whole programs (shared object, source, tile files) least recently
// used first, down to three quarters of the limit; never the program just built nor one used in
// the last 10 minutes; build temporaries older than a day. A build over a tiny limit keeps (and
// runs) its own program; no limit removes nothing; a bad JETPDE_CACHE_MAX_MB is a UserError.
TEST(CompileCache, PrunedToItsLimitLeastRecentlyUsedFirst) {
  namespace fs = std::filesystem;
  const CompileOptions o = fresh_cache("prune");
  const fs::path dir = o.cpu.cache_dir;
  fs::create_directories(dir);
  const auto now = fs::file_time_type::clock::now();
  const auto file = [&](const std::string& name, std::size_t bytes, auto age) {
    std::ofstream(dir / name) << std::string(bytes, 'x');
    fs::last_write_time(dir / name, now - age);
  };
  using std::chrono::hours, std::chrono::minutes;
  // Six programs of 150 kB: ages 5, 4, 3, 2 hours, 5 minutes, and "keep" 10 hours.
  const std::vector<std::pair<std::string, fs::file_time_type::duration>> programs{
      {"a", hours(5)}, {"b", hours(4)},   {"c", hours(3)},
      {"d", hours(2)}, {"e", minutes(5)}, {"keep", hours(10)}};
  for (const auto& [key, age] : programs) {
    file("jetpde-" + key + ".so", 100'000, age);
    file("jetpde-" + key + ".cpp", 50'000, age);
  }
  file("jetpde-a.so.tiles-1-threads", 1'000, hours(1));  // a's time is its object's
  file("tmp-old-1.cpp", 10, hours(48));
  file("tmp-new-1.cpp", 10, hours(1));
  EXPECT_EQ(prune_cache(dir.string(), -1, "keep"), 0) << "no limit";
  EXPECT_EQ(prune_cache(dir.string(), 2'000'000, "keep"), 0) << "within the limit";
  // 901 kB over 600: down to 450, the oldest first: a (with its tiles), b, c.
  EXPECT_EQ(prune_cache(dir.string(), 600'000, "keep"), 451'000);
  for (const auto& [key, age] : programs) {
    const bool gone = key == "a" || key == "b" || key == "c";
    EXPECT_EQ(fs::exists(dir / ("jetpde-" + key + ".so")), !gone) << key;
    EXPECT_EQ(fs::exists(dir / ("jetpde-" + key + ".cpp")), !gone) << key;
  }
  EXPECT_FALSE(fs::exists(dir / "jetpde-a.so.tiles-1-threads"));
  EXPECT_FALSE(fs::exists(dir / "tmp-old-1.cpp"));
  EXPECT_TRUE(fs::exists(dir / "tmp-new-1.cpp"));

  // A real build over a limit of one byte: what may go goes (d, and "keep", now an old program
  // like any other), its own program stays and runs, and so does e (used 5 minutes ago).
  CompileOptions tiny = o;
  tiny.cpu.cache_max_bytes = 1;
  Layer l;
  const std::vector<Var> outs{l.y};
  Executable exe(outs, tiny);
  EXPECT_FALSE(exe.stats().cache_hit);
  EXPECT_FALSE(fs::exists(dir / "jetpde-d.so"));
  EXPECT_FALSE(fs::exists(dir / "jetpde-keep.so"));
  EXPECT_TRUE(fs::exists(dir / "jetpde-e.so"));
  exe.set(l.values);
  exe.run();
  EXPECT_TRUE(exe.output(0).isApprox(evaluate(l.y, l.values)));
  std::size_t objects = 0;
  for (const auto& e : fs::directory_iterator(dir)) objects += e.path().extension() == ".so";
  EXPECT_EQ(objects, 2u) << "e (used within 10 minutes) and the new one";

  CpuCompileOptions env;
  ::setenv("JETPDE_CACHE_MAX_MB", "12", 1);
  EXPECT_EQ(cache_max_bytes(env), 12 * 1024 * 1024);
  ::setenv("JETPDE_CACHE_MAX_MB", "0", 1);
  EXPECT_LT(cache_max_bytes(env), 0) << "0: no limit";
  ::setenv("JETPDE_CACHE_MAX_MB", "lots", 1);
  expect_user_error([&] { cache_max_bytes(env); },
                    "JETPDE_CACHE_MAX_MB: 'lots' is not a whole number of megabytes (0: no limit)");
  ::unsetenv("JETPDE_CACHE_MAX_MB");
  EXPECT_EQ(cache_max_bytes(env), kCacheMaxBytes);
  fs::remove_all(dir);
}

// A cold compile's translation units: about equal in size (largest kernel first into the unit
// with the fewest bytes), none empty.
TEST(CompileUnits, BalancedBySizeNoneEmpty) {
  using V = std::vector<std::size_t>;
  EXPECT_EQ(balanced_units({10, 10, 10, 10}, 2), (V{0, 1, 0, 1}));
  // One big kernel, first or last: the small ones go together.
  EXPECT_EQ(balanced_units({90, 5, 5, 5, 5}, 2), (V{0, 1, 1, 1, 1}));
  EXPECT_EQ(balanced_units({5, 5, 5, 5, 90}, 2), (V{1, 1, 1, 1, 0}));
  // Two big kernels among small ones: one each (52 and 51).
  EXPECT_EQ(balanced_units({1, 50, 1, 50, 1}, 2), (V{0, 0, 1, 1, 0}));
  // poisson32d's kernels under auto, in kB, in source order: cut into consecutive runs they were
  // 152 and 87; here 121 and 118.
  const V sizes{22, 22, 22, 17, 32, 37, 37, 29, 13, 8};
  const V unit = balanced_units(sizes, 2);
  EXPECT_EQ(unit, (V{1, 0, 1, 0, 0, 0, 1, 1, 0, 1}));
  std::size_t first = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) first += unit[k] == 0 ? sizes[k] : 0;
  EXPECT_EQ(first, 121u);
  // More units than a size alone would give, each still gets a kernel.
  EXPECT_EQ(balanced_units({100, 1, 1}, 3), (V{0, 1, 2}));
  // More units than kernels: one a kernel; none or one unit: everything in it.
  EXPECT_EQ(balanced_units({3, 4}, 4), (V{1, 0}));
  EXPECT_EQ(balanced_units({3, 4}, 1), (V{0, 0}));
  EXPECT_EQ(balanced_units({3, 4}, 0), (V{0, 0}));
  EXPECT_EQ(balanced_units({}, 2), V{});
}

// The memory plan without the code: the arena and peak an Executable reports, in every precision
// (bf16's packed operands included where the CPU multiplies bf16), growing with the rows.
TEST(EstimateMemory, IsTheArenaTheExecutableAllocates) {
  for (PrecisionPolicy p : {PrecisionPolicy::fp64, PrecisionPolicy::fp32, PrecisionPolicy::bf16}) {
    CompileOptions o = fresh_cache("estimate");
    o.pipeline.precision = p;
    Layer layer;
    const Var loss = mean_all(square(layer.y));
    const std::vector<Var> out{loss, layer.y};
    const MemoryEstimate e = estimate_memory(out, o);
    const Executable exe(out, o);
    EXPECT_EQ(e.arena_bytes, exe.stats().arena_bytes) << precision_name(p);
    EXPECT_EQ(e.peak_live_bytes, exe.stats().peak_live_bytes) << precision_name(p);
    Graph g(DType::f64);
    const Var big = tanh(matmul(g.input("x", {800, 2}), g.param("W", {2, 3})));
    EXPECT_GT(estimate_memory(std::vector<Var>{big}, o).arena_bytes, 50 * e.arena_bytes / 8);
  }
  EXPECT_GT(available_memory(Backend::cpu), 0);
}

// Memory within a fraction: a tanh MLP's loss and gradient (the shape of a PINN step: the forward
// pass's activations read again by the backward pass) compiled plain and asked for 70% of the
// plain arena. The weight and bias gradients move up to where their operands are ready, the
// activation derivatives (1 - tanh^2) are computed where the backward pass reads them instead
// of with the first backward kernel, the arena shrinks to the target (65% here: the floor is the
// four layers' activations and two backward buffers), estimate_memory plans the same, and the
// outputs are bit for bit the plain program's.
TEST(Rematerialize, RecomputedValuesLeaveTheOutputsBitForBit) {
  Graph g(DType::f64);
  const Var x = g.input("x", {256, 2});
  std::vector<Var> params;
  Bindings values{{"x", MatrixD::Random(256, 2)}};
  Var h = x;
  for (int l = 0; l < 4; ++l) {
    const int in = l == 0 ? 2 : 32, out = l == 3 ? 1 : 32;
    const Var w = g.param("W" + std::to_string(l), {in, out});
    const Var b = g.param("b" + std::to_string(l), {1, out});
    params.insert(params.end(), {w, b});
    values["W" + std::to_string(l)] = MatrixD::Random(in, out) * 0.5;
    values["b" + std::to_string(l)] = MatrixD::Random(1, out) * 0.1;
    h = matmul(h, w) + broadcast(b, {256, out});
    if (l < 3) h = tanh(h);
  }
  const Var loss = mean_all(square(h));
  std::vector<Var> out{loss};
  for (const Var& d : grad(loss, params)) out.push_back(d);
  CompileOptions plain = fresh_cache("remat");
  plain.pipeline.precision = PrecisionPolicy::fp32;
  // Every step whole, as under a memory budget: tiled regions sum the weight gradients tile by
  // tile, in another order than the whole GEMM.
  plain.cpu.tile_rows = -1;
  CompileOptions recompute = plain;
  recompute.memory_fraction = 0.7;
  Executable a(out, plain), b(out, recompute);
  EXPECT_EQ(a.stats().recomputed, 0);
  EXPECT_GT(b.stats().recomputed, 0);
  EXPECT_LE(b.stats().arena_bytes, 0.7 * a.stats().arena_bytes);
  EXPECT_EQ(estimate_memory(out, recompute).arena_bytes, b.stats().arena_bytes);
  EXPECT_GT(b.program().steps.size(), a.program().steps.size());
  a.set(values);
  b.set(values);
  a.run();
  b.run();
  for (std::size_t k = 0; k < out.size(); ++k)
    EXPECT_TRUE((a.output(k) == b.output(k)).all()) << "output " << k;
}

TEST(Fallback, NoHostCompilerMeansTheInterpreterWithAWarning) {
  CompileOptions o = fresh_cache("fallback");
  o.cpu.compiler = "/nonexistent/c++";
  Layer l;
  const std::vector<Var> outs{l.y};
  ::testing::internal::CaptureStderr();
  Executable exe(outs, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exe.backend(), Backend::interpreter);
  EXPECT_EQ(err,
            "jetpde: warning: backend cpu cannot run (no working host compiler found); using the "
            "reference interpreter instead\n");
  exe.set(l.values);
  exe.run();
  EXPECT_TRUE(exe.output(0).isApprox(evaluate(l.y, l.values)));
}

TEST(Fallback, AStrictRequestFailsWithTheReason) {
  CompileOptions o = fresh_cache("strict");
  o.cpu.compiler = "/nonexistent/c++";
  o.strict = true;
  Layer l;
  const std::vector<Var> outs{l.y};
  expect_user_error([&] { Executable exe(outs, o); },
                    "backend cpu was required but cannot run: no working host compiler found");
}

TEST(ExecutableErrors, UnknownNamesShapesAndEarlyReads) {
  Layer l;
  const std::vector<Var> outs{l.y};
  Executable exe(outs, fresh_cache("errors"));
  expect_user_error([&] { exe.set("W1", MatrixD::Zero(2, 3)); },
                    "executable: the graph has no input or param named 'W1'");
  expect_user_error([&] { exe.set("W", MatrixD::Zero(3, 2)); },
                    "executable: 'W' [2,3] is bound to a value of shape [3,2]");
  expect_user_error([&] { exe.output(0); }, "executable: output read before run()");
  exe.set(l.values);
  exe.run();
  expect_user_error([&] { exe.output(1); }, "executable: no output number 1");
}

// JETPDE_CUDA_GRAPHS: 0 or 1 (CompileOptions::cuda_graphs; on when unset), anything else an error
// naming the variable.
TEST(CompileOptionsFromEnvironment, CudaGraphsOnOrOff) {
  ::unsetenv("JETPDE_CUDA_GRAPHS");
  EXPECT_TRUE(CompileOptions::from_environment().cuda_graphs);
  ::setenv("JETPDE_CUDA_GRAPHS", "0", 1);
  EXPECT_FALSE(CompileOptions::from_environment().cuda_graphs);
  ::setenv("JETPDE_CUDA_GRAPHS", "1", 1);
  EXPECT_TRUE(CompileOptions::from_environment().cuda_graphs);
  ::setenv("JETPDE_CUDA_GRAPHS", "off", 1);
  expect_user_error([] { CompileOptions::from_environment(); },
                    "JETPDE_CUDA_GRAPHS: 'off' is neither 0 (off) nor 1 (on)");
  ::unsetenv("JETPDE_CUDA_GRAPHS");
}

// The generated source of a small graph, compared with a reviewed copy. Regenerate it with
// JETPDE_UPDATE_GOLDEN=1 after an intended change of the renderer, and review the diff.
// Each stream's product summed over the rows and the sums added up (a first layer's weight
// gradient over its input dimensions): lowered in graph order, each [1, n] addition would close
// the kernel computing the sum it reads, one kernel per stream; the sums are lowered after the
// rest, so the streams share one kernel over the points. The values: the interpreter's.
TEST(Lowering, RowSumsDoNotCloseTheKernelsTheyRead) {
  Graph g;
  const Var x = g.input("x", {64, 4});
  const Var h = tanh(matmul(x, g.param("W", {4, 8})));
  Var total;
  for (int k = 0; k < 4; ++k) {
    const Var part = sum_rows(h * broadcast(slice_cols(x, k, 1), h.shape()));
    total = k == 0 ? part : total + part * 0.5;
  }
  const std::vector<Var> outs{total};
  const Program p = lower(optimize(module_of(outs), {}));
  int over_points = 0;
  for (const Step& s : p.steps)
    if (const auto* k = std::get_if<Kernel>(&s.op)) over_points += k->domain.rows == 64 ? 1 : 0;
  EXPECT_EQ(over_points, 1) << p.to_text();
  Bindings b{{"x", MatrixD::Random(64, 4)}, {"W", MatrixD::Random(4, 8)}};
  CompileOptions o;
  o.backend = Backend::interpreter;
  Executable reference(outs, o), compiled(outs, CompileOptions{});
  for (Executable* e : {&reference, &compiled}) {
    e->set(b);
    e->run();
  }
  EXPECT_LE((compiled.output(0) - reference.output(0)).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Golden, RenderedSourceOfADenseLayerAndItsLoss) {
  Graph g;
  const Var x = g.input("x", {64, 2});
  const Var w = g.param("W", {2, 8});
  const Var b = g.param("b", {1, 8});
  const Var h = tanh(matmul(x, w) + b);
  const std::vector<Var> outs{mean_all(square(h - 0.5)), sum_cols(h)};
  Program p = lower(optimize(module_of(outs), {}));
  plan_memory(p);
  const std::string source = render_cpu_source(p);
  const std::string path =
      std::string(JETPDE_SOURCE_DIR) + "/tests/compiler/golden/dense_layer.cpp";
  if (const char* update = std::getenv("JETPDE_UPDATE_GOLDEN"); update && *update == '1')
    std::ofstream(path) << source;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  const std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(source, golden);
}

// Which kernels run on the OpenMP team follows the threshold (rows x cols elements), and a
// kernel's results on one thread do not depend on it.
TEST(ParallelThreshold, KernelsAtOrAboveItRunParallel) {
  Graph g;
  const Var x = g.input("x", {64, 8});  // 512 elements
  const std::vector<Var> outs{sum_cols(tanh(x))};
  Program p = lower(optimize(module_of(outs), {}));
  plan_memory(p);
  const auto count = [](const std::string& s, const std::string& what) {
    int n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  const std::string serial = render_cpu_source(p, 513), parallel = render_cpu_source(p, 512);
  EXPECT_GT(count(serial, "#pragma omp parallel if(0)"), 0) << serial;
  EXPECT_EQ(count(serial, "#pragma omp parallel if(1)"), 0) << serial;
  EXPECT_EQ(count(parallel, "#pragma omp parallel if(0)"), 0) << parallel;
  EXPECT_EQ(count(parallel, "#pragma omp parallel if(1)"), count(serial, "#pragma omp parallel"));
  EXPECT_EQ(render_cpu_source(p), render_cpu_source(p, kParallelMinElements));

  MatrixD values(64, 8);
  for (Eigen::Index i = 0; i < values.size(); ++i) values.data()[i] = 0.01 * (i % 37) - 0.2;
  std::vector<MatrixD> results;
  for (std::int64_t threshold : {std::int64_t{512}, std::int64_t{1} << 40}) {
    CompileOptions o = fresh_cache("threshold" + std::to_string(threshold));
    o.cpu.parallel_min_elements = threshold;
    Executable exe(outs, o);
    exe.set("x", values);
    exe.run();
    results.push_back(exe.output(0));
  }
  if (const char* t = std::getenv("OMP_NUM_THREADS"); t && std::string(t) == "1") {
    EXPECT_TRUE((results[0] == results[1]).all());
  }
  EXPECT_TRUE(results[0].isApprox(results[1], 1e-6));
}

// A kernel over a width the compiler would end in scalar code (16 columns in a vector, the tail of
// 4 or 5 in scalar arithmetic and calls) runs its tail in loops of 8 and 4 columns of their own,
// with or without <cmath> calls; widths whose tail the compiler vectorizes (8, 24) keep one loop.
// The values, the row sums and the column sums are those of the interpreter.
TEST(ColumnLoops, AWidthWithAScalarTailGetsLoopsOfItsOwn) {
  const auto source = [](std::int64_t cols, bool math) {
    Graph g(DType::f32);
    const Var x = g.input("x", {64, cols});
    const Var y = math ? tanh(x) : x * x;
    Program p = lower(optimize(module_of(std::vector<Var>{sum_cols(y), sum_rows(y)}), {}));
    plan_memory(p);
    return render_cpu_source(p);
  };
  const std::string w20 = source(20, true), w29 = source(29, true);
  EXPECT_NE(w20.find("for (long j = 0; j < 16; ++j)"), std::string::npos) << w20;
  EXPECT_NE(w20.find("#pragma omp simd simdlen(4) reduction(+:c0)\n    for (long j = 16; j < 20;"),
            std::string::npos)
      << w20;
  EXPECT_NE(w29.find("simdlen(8) reduction(+:c0)\n    for (long j = 16; j < 24;"),
            std::string::npos)
      << w29;
  EXPECT_NE(w29.find("simdlen(4) reduction(+:c0)\n    for (long j = 24; j < 28;"),
            std::string::npos)
      << w29;
  EXPECT_NE(w29.find("for (long j = 28; j < 29; ++j)"), std::string::npos) << w29;
  const std::string w20_plain = source(20, false);
  EXPECT_NE(w20_plain.find("simdlen(4) reduction(+:c0)\n    for (long j = 16; j < 20;"),
            std::string::npos)
      << w20_plain;
  for (const auto& [cols, math] : {std::pair<std::int64_t, bool>{8, true}, {24, true}, {24, false}})
    EXPECT_EQ(source(cols, math).find("simdlen"), std::string::npos) << cols << " " << math;

  for (const std::int64_t cols : {20, 29}) {
    Graph g(DType::f64);
    const Var x = g.input("x", {64, cols});
    const Var y = tanh(x) * exp(x);
    const std::vector<Var> outs{y, sum_cols(y), sum_rows(y)};
    MatrixD values(64, cols);
    for (Eigen::Index i = 0; i < values.size(); ++i) values.data()[i] = 0.013 * (i % 151) - 1;
    Executable exe(outs, fresh_cache("columns" + std::to_string(cols)));
    exe.set("x", values);
    exe.run();
    for (int o = 0; o < 3; ++o) {
      const MatrixD want = evaluate(outs[static_cast<std::size_t>(o)], {{"x", values}});
      EXPECT_LT((exe.output(o) - want).cwiseAbs().maxCoeff(), 1e-12 * want.cwiseAbs().maxCoeff())
          << "cols " << cols << ", output " << o;
    }
  }
}

}  // namespace
}  // namespace jetpde::compiler
