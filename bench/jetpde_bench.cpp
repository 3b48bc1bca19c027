// jetpde_bench: seconds per training step of the WORKLOADS.md workloads, run by the reference
// interpreter in float32. One step = network + every derivative the residual needs + loss + the
// gradient of the loss with respect to every weight and bias (bench/workloads.h builds them).
//
//   jetpde_bench [--workload NAME]... [--executor cpu|cuda|interpreter]... [--precision P]
//                [--steps N] [--points N] [--json FILE]
//
// The compiled executors (cpu; cuda, where built and a GPU is present) also report the compile
// time cold (an empty cache) and from the cache, the kernel and GEMM counts, the arena, the split
// of a step between GEMMs and kernels run whole and the tiled regions (compiler/program.h; each
// region's tile measured by the warm-up run, or JETPDE_TILE_ROWS: N points, 0 for none; the
// threads' scratches holding a tile of the regions' local buffers), and the
// rate the GEMMs run whole reach (the SGEMM rate printed beside them is this CPU's, measured in
// the same run).
//
// And each compiled step's distance from this machine's limit: the step's GEMM FLOPs at the
// machine's GEMM rate (2048^3 SGEMM; DGEMM for fp64) plus the memory a step cannot avoid at the
// machine's bandwidth (a triad on every thread): the points read, the parameters read and their
// gradient written, and every hidden layer's Taylor streams written in the forward pass and read
// back in the reverse one (N x width x streams values each way). "x limit" is the measured step
// over that sum: 1.0 would be the hardware's speed of a step that stores its streams. A tiled
// region keeps a tile's streams in its thread's scratch, in cache, so that they need not go to
// memory at all: such a step can run below 1.0, down to its GEMM FLOPs alone.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>
#include <unistd.h>

#include <cblas.h>

#include <stdexcept>

#include <filesystem>
#include <variant>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "bench/options.h"
#include "bench/workloads.h"
#include "compiler/cpu_gemm.h"
#include "compiler/executable.h"

namespace jetpde::bench {
namespace {

constexpr const char* kUsage =
    "usage: jetpde_bench [--workload NAME]... [--executor E]... [--precision P] [--steps N]\n"
    "                    [--points N] [--json FILE]\n"
    "  --workload NAME  run only this workload (repeatable; default: all)\n"
    "  --executor E     cpu (compiled), cuda (compiled, on the GPU) or interpreter (repeatable;\n"
    "                   default: cpu and interpreter)\n"
    "  --precision P    policy of the compiled executor: fp32 (default), fp64, bf16, bf16_wgrad,\n"
    "                   fp16, auto\n"
    "  --steps N        timed steps per workload, after one warm-up (default 5)\n"
    "  --points N       points per workload instead of each workload's own count\n"
    "  --json FILE      also write the results to FILE as JSON\n";

struct Options {
  std::vector<std::string> workloads;
  std::vector<std::string> executors;
  compiler::PrecisionPolicy precision = compiler::PrecisionPolicy::fp32;
  int steps = 5;
  int points = 0;
  std::string json;
};

int positive_int(const std::string& flag, const std::string& text) {
  const long long value = positive_integer(flag, text);
  if (value > 2147483647) throw UserError(flag + " wants a positive integer, got '" + text + "'");
  return static_cast<int>(value);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg != "--workload" && arg != "--steps" && arg != "--points" && arg != "--json" &&
        arg != "--executor" && arg != "--precision")
      throw UserError("unknown option '" + arg + "'");
    if (i + 1 >= argc) throw UserError(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--workload") o.workloads.push_back(value);
    if (arg == "--steps") o.steps = positive_int(arg, value);
    if (arg == "--points") o.points = positive_int(arg, value);
    if (arg == "--json") o.json = value;
    if (arg == "--executor") {
      if (value != "cpu" && value != "cuda" && value != "interpreter")
        throw UserError("--executor wants cpu, cuda or interpreter, got '" + value + "'");
      o.executors.push_back(value);
    }
    if (arg == "--precision") o.precision = precision_from_name(value);
  }
  if (o.executors.empty()) o.executors = {"cpu", "interpreter"};
  for (const std::string& name : o.workloads) workload_spec(name);  // unknown names fail now
  if (o.workloads.empty())
    for (const WorkloadSpec& s : workload_specs()) o.workloads.push_back(s.name);
  return o;
}

struct Result {
  std::string name;
  std::string executor;
  int points = 0;
  int streams = 0;
  double build_seconds = 0;
  double median_seconds = 0;
  double points_per_second = 0;
  double loss = 0;
  std::vector<double> step_seconds;
  // compiled only
  double compile_cold_seconds = 0, compile_cached_seconds = 0;
  int kernels = 0, gemms = 0, native_bf16_gemms = 0;
  std::int64_t arena_bytes = 0;
  double gemm_seconds = 0, kernel_seconds = 0, gemm_gflops = 0;
  // Tiled regions (compiler/program.h): their steps' time, apart from the GEMMs and kernels
  // run whole, and how many steps they hold.
  double tiled_seconds = 0;
  int tiled_steps = 0;
  // Each region's tile as the warm-up run measured it ("512,whole,256+w/1t": +w where its weight
  // gradients run whole after the tiles, /Nt where its tiles run on N threads, fewer than all),
  // and the seconds that took (JETPDE_TILE_ROWS unset or auto; a number fixes the tiles).
  std::string tiles;
  double tile_seconds = 0;
  int tiles_busy = 0;  // regions whose tile was measured while other processes took the cores
  std::int64_t scratch_bytes = 0;  // the threads' tile scratches (CompileStats::scratch_bytes)
  // The limit (see the top of this file).
  double gemm_flops = 0, min_bytes = 0;
  double limit_gemm_seconds = 0, limit_memory_seconds = 0;
  double limit_seconds() const { return limit_gemm_seconds + limit_memory_seconds; }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Builds the workload (untimed, reported apart), runs one warm-up step, then `steps` timed ones.
Result run_interpreter(const Workload& w, const Options& o) {
  Result r;
  const std::vector<Var> outputs = w.step_outputs();
  r.loss = evaluate(outputs, w.bindings, Precision::f32)[0](0, 0);  // warm-up
  for (int s = 0; s < o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<MatrixD> values = evaluate(outputs, w.bindings, Precision::f32);
    r.step_seconds.push_back(seconds_since(start));
    r.loss = values[0](0, 0);
  }
  return r;
}

double gemm_flops(const compiler::Gemm& g) {
  const double k = static_cast<double>(g.transpose_a ? g.a.shape.rows : g.a.shape.cols);
  return 2.0 * static_cast<double>(g.c.shape.rows) * static_cast<double>(g.c.shape.cols) * k;
}

// Compiles twice (an empty cache, then from the cache), then times steps as the interpreter's,
// and splits a step between GEMMs and kernels with per-step timings.
Result run_compiled(const Workload& w, const Options& o, compiler::Backend backend) {
  Result r;
  const std::vector<Var> outputs = w.step_outputs();
  compiler::CompileOptions co = compiler::CompileOptions::from_environment();
  co.backend = backend;
  co.pipeline.precision = o.precision;
  co.strict = true;
  co.cpu.cache_dir = (std::filesystem::temp_directory_path() /
                      ("jetpde-bench-cache-" + std::to_string(::getpid())))
                         .string();
  std::filesystem::remove_all(co.cpu.cache_dir);
  compiler::Executable cold(outputs, co);
  r.compile_cold_seconds = cold.stats().total_seconds;
  compiler::Executable exe(outputs, co);
  r.compile_cached_seconds = exe.stats().total_seconds;
  std::filesystem::remove_all(co.cpu.cache_dir);
  r.kernels = exe.stats().kernels;
  r.gemms = exe.stats().gemms;
  r.native_bf16_gemms = exe.stats().native_bf16_gemms;
  r.arena_bytes = exe.stats().arena_bytes;
  exe.set(w.bindings);
  exe.run();  // warm-up
  for (int s = 0; s < o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    exe.run();
    r.step_seconds.push_back(seconds_since(start));
  }
  r.loss = exe.output(0)(0, 0);
  std::vector<double> gemm, kernel, tiled;
  double flops = 0, whole_flops = 0;  // all GEMMs'; those run whole (outside tiled regions)
  for (int s = 0; s < o.steps; ++s) {
    const std::vector<double> t = exe.run_timed();
    double g = 0, k = 0, tl = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto& op = exe.program().steps[i].op;
      bool in_region = false;
      for (const compiler::TiledRegion& region : exe.program().regions)
        in_region =
            in_region || (static_cast<int>(i) >= region.first && static_cast<int>(i) < region.last);
      const auto* gm = std::get_if<compiler::Gemm>(&op);
      if (gm && s == 0) flops += gemm_flops(*gm);
      if (in_region) {
        tl += t[i];  // a region's time is its first step's
      } else if (gm) {
        g += t[i];
        if (s == 0) whole_flops += gemm_flops(*gm);
      } else {
        k += t[i];
      }
    }
    gemm.push_back(g);
    kernel.push_back(k);
    tiled.push_back(tl);
  }
  r.gemm_seconds = median(gemm);
  r.kernel_seconds = median(kernel);
  r.tiled_seconds = median(tiled);
  for (const compiler::TiledRegion& region : exe.program().regions) {
    r.tiled_steps += region.last - region.first;
    r.tiles +=
        (r.tiles.empty() ? "" : ",") +
        (region.tile > 0 ? std::to_string(region.tile) : std::string("whole")) +
        (region.tile > 0 && region.sums_whole ? "+w" : "") +
        (region.tile > 0 && region.threads > 0 ? "/" + std::to_string(region.threads) + "t" : "");
  }
  r.tile_seconds = exe.stats().tile_seconds;
  r.tiles_busy = exe.stats().tiles_busy;
  r.scratch_bytes = exe.stats().scratch_bytes;
  r.gemm_gflops = r.gemm_seconds > 0 ? whole_flops / r.gemm_seconds * 1e-9 : 0.0;
  r.gemm_flops = flops;
  return r;
}

// The bytes a step cannot avoid moving (see the top of this file), in the precision's element
// size (bf16 and fp16 keep f32 values outside the GEMM operands).
double min_step_bytes(const Workload& w, compiler::PrecisionPolicy precision) {
  const double element = precision == compiler::PrecisionPolicy::fp64 ? 8.0 : 4.0;
  double parameters = 0;
  for (const Var& p : w.params)
    parameters += static_cast<double>(p.shape().rows) * static_cast<double>(p.shape().cols);
  double streams = 0;
  for (int width : w.spec.hidden)
    streams += static_cast<double>(w.points) * width * std::max(1, w.stream_count);
  const double points = static_cast<double>(w.points) * w.spec.inputs();
  return element * (points + 2 * parameters + 2 * streams);
}

struct Machine {
  double sgemm_peak = 0;    // 2048^3, GFLOP/s
  double sgemm_skinny = 0;  // 32768 x 64 x 64, a stacked PINN layer
  double dgemm_peak = 0;    // 1024^3 in double
  double bandwidth = 0;     // GB/s, triad on every thread
  int threads = 1;
};

Result run_workload(const std::string& name, const std::string& executor, const Options& o,
                    const Machine& m) {
  const auto build_start = std::chrono::steady_clock::now();
  const Workload w = build_workload(name, {.points = o.points});
  const double build_seconds = seconds_since(build_start);
  Result r = executor == "cpu"    ? run_compiled(w, o, compiler::Backend::cpu)
             : executor == "cuda" ? run_compiled(w, o, compiler::Backend::cuda)
                                  : run_interpreter(w, o);
  r.name = name;
  r.executor = executor;
  r.build_seconds = build_seconds;
  r.points = w.points;
  r.streams = w.stream_count;
  r.median_seconds = median(r.step_seconds);
  r.points_per_second = w.points / r.median_seconds;
  if (executor == "cpu") {
    const double rate =
        o.precision == compiler::PrecisionPolicy::fp64 ? m.dgemm_peak : m.sgemm_peak;
    r.min_bytes = min_step_bytes(w, o.precision);
    r.limit_gemm_seconds = r.gemm_flops / (rate * 1e9);
    r.limit_memory_seconds = r.min_bytes / (m.bandwidth * 1e9);
  }
  return r;
}

// This machine's SGEMM rate in GFLOP/s (median of 5) on m x k times k x n, with the library the
// compiled executor uses (compiler/cpu_gemm.h).
double sgemm_rate(int m, int k, int n) {
  std::vector<float> a(static_cast<std::size_t>(m) * k, 0.5f),
      b(static_cast<std::size_t>(k) * n, 0.25f), c(static_cast<std::size_t>(m) * n);
  std::vector<double> t;
  for (int rep = 0; rep < 6; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    compiler::sgemm_row_major(false, false, m, n, k, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    if (rep > 0) t.push_back(seconds_since(start));
  }
  return 2.0 * m * n * k / median(t) * 1e-9;
}

// DGEMM at n^3 through the CBLAS the compiled fp64 GEMMs call (compiler/cpu_runtime.cpp), GFLOP/s.
double dgemm_rate(int n) {
  const std::size_t size = static_cast<std::size_t>(n) * n;
  std::vector<double> a(size, 0.5), b(size, 0.25), c(size);
  std::vector<double> t;
  for (int rep = 0; rep < 4; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                0.0, c.data(), n);
    if (rep > 0) t.push_back(seconds_since(start));
  }
  return 2.0 * n * n * n / median(t) * 1e-9;
}

// Memory bandwidth in GB/s: a = b + s c over three arrays of 32 Mi floats (384 MiB, far past any
// cache), on every OpenMP thread, counted as STREAM counts a triad (two reads and a write).
double triad_bandwidth() {
  const std::size_t n = std::size_t{1} << 25;
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  std::vector<double> t;
  for (int rep = 0; rep < 6; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const float s = 0.5f + static_cast<float>(rep);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i) a[i] = b[i] + s * c[i];
    if (rep > 0) t.push_back(seconds_since(start));
  }
  if (a[n / 2] != 1.0f + 5.5f * 2.0f) throw std::runtime_error("triad: wrong result");
  return 3.0 * sizeof(float) * static_cast<double>(n) / median(t) * 1e-9;
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name")) {
      const std::size_t start = line.find_first_not_of(" \t", line.find(':') + 1);
      if (line.find(':') != std::string::npos && start != std::string::npos)
        return line.substr(start);
    }
  return "unknown";
}

// Which of the OpenBLAS variables that `make bench` drops are set in this process.
std::string openblas_environment() {
  std::string set;
  for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"})
    if (const char* value = std::getenv(name))
      set += (set.empty() ? "" : ", ") + std::string(name) + "=" + value;
  return set.empty() ? "both unset" : set;
}

void print_facts(const Options& o, const Machine& m) {
  std::cout << "jetpde_bench  " << utc_date() << "\n"
            << "cores: " << std::thread::hardware_concurrency() << "  cpu: " << cpu_model() << "\n"
            << "executors: cpu, cuda = compiled (precision "
            << compiler::precision_name(o.precision)
            << "), interpreter = the reference interpreter (float32, one thread)\n"
            << "OpenBLAS environment: " << openblas_environment()
            << " (`make bench` unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE)\n";
  std::printf("machine SGEMM (%s): %.1f GFLOP/s at 2048^3, %.1f GFLOP/s at 32768x64x64\n",
              compiler::sgemm_library(), m.sgemm_peak, m.sgemm_skinny);
  std::printf(
      "machine DGEMM (CBLAS): %.1f GFLOP/s at 1024^3; memory: %.1f GB/s (triad, %d "
      "threads)\n",
      m.dgemm_peak, m.bandwidth, m.threads);
  std::printf(
      "limit of a step: its GEMM FLOPs at the %s rate + its unavoidable bytes at that "
      "bandwidth; x limit = step / limit\n",
      o.precision == compiler::PrecisionPolicy::fp64 ? "DGEMM" : "SGEMM");
  std::printf(
      "CPU bf16 GEMMs: %s\n",
      compiler::native_bf16_gemm_available()
          ? "native where both operands are bf16 (oneDNN matmul, AVX512-BF16/AMX; column bf16)"
          : "emulated (f32 GEMMs on bf16-rounded operands)");
  std::cout << "steps: 1 warm-up + " << o.steps << " timed (median reported)\n\n";
  std::printf("%-12s %-11s %6s %7s %10s %11s %9s %9s %7s %6s %8s %8s %8s %7s %8s %5s %9s %9s %7s\n",
              "workload", "executor", "points", "streams", "s/step", "points/s", "cold s",
              "cached s", "kernels", "gemms", "gemm s", "kern s", "tiled s", "GFLOP/s", "arena MB",
              "bf16", "limit s", "min MB", "x limit");
  std::fflush(stdout);
}

void print_row(const Result& r) {
  // Six decimals where a step takes under a millisecond (a GPU), four otherwise.
  const bool fast = r.median_seconds < 1e-3;
  std::printf(fast ? "%-12s %-11s %6d %7d %10.6f %11.0f" : "%-12s %-11s %6d %7d %10.4f %11.0f",
              r.name.c_str(), r.executor.c_str(), r.points, r.streams, r.median_seconds,
              r.points_per_second);
  if (r.executor != "interpreter")
    std::printf(fast ? " %9.3f %9.4f %7d %6d %8.6f %8.6f %8.6f %7.1f %8.1f %5d"
                     : " %9.3f %9.4f %7d %6d %8.4f %8.4f %8.4f %7.1f %8.1f %5d",
                r.compile_cold_seconds, r.compile_cached_seconds, r.kernels, r.gemms,
                r.gemm_seconds, r.kernel_seconds, r.tiled_seconds, r.gemm_gflops,
                static_cast<double>(r.arena_bytes) / (1 << 20), r.native_bf16_gemms);
  if (r.limit_seconds() > 0)
    std::printf(fast ? " %9.6f %9.1f %7.2f" : " %9.4f %9.1f %7.2f", r.limit_seconds(),
                r.min_bytes / (1 << 20), r.median_seconds / r.limit_seconds());
  std::printf("\n");
  if (!r.tiles.empty())
    std::printf("%-12s tiles %s (measured in %.2f s%s), tile scratch %.2f MB\n", "",
                r.tiles.c_str(), r.tile_seconds,
                r.tiles_busy > 0 ? "; other processes busy: the preferred tile kept" : "",
                static_cast<double>(r.scratch_bytes) / (1 << 20));
  std::fflush(stdout);
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

void write_json(const std::string& path, const Options& o, const Machine& m,
                const std::vector<Result>& results) {
  std::ofstream out(path);
  if (!out) throw UserError("cannot write '" + path + "'");
  out.precision(9);
  out << "{\n";
  out << R"(  "date": )" << quoted(utc_date()) << ",\n";
  out << R"(  "cores": )" << std::thread::hardware_concurrency() << ",\n";
  out << R"(  "cpu": )" << quoted(cpu_model()) << ",\n";
  out << R"(  "precision": )" << quoted(compiler::precision_name(o.precision)) << R"(, "steps": )"
      << o.steps << ",\n";
  out << R"(  "openblas_environment": )" << quoted(openblas_environment()) << ",\n";
  out << R"(  "sgemm_library": )" << quoted(compiler::sgemm_library()) << ",\n";
  out << R"(  "sgemm_gflops_2048": )" << m.sgemm_peak << R"(, "sgemm_gflops_32768x64x64": )"
      << m.sgemm_skinny << R"(, "dgemm_gflops_1024": )" << m.dgemm_peak << R"(, "triad_gb_per_s": )"
      << m.bandwidth << R"(, "threads": )" << m.threads << ",\n";
  out << R"(  "results": [)"
      << "\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << R"(    {"workload": )" << quoted(r.name) << R"(, "executor": )" << quoted(r.executor)
        << R"(, "points": )" << r.points << R"(, "streams": )" << r.streams
        << R"(, "build_seconds": )" << r.build_seconds << R"(, "median_seconds_per_step": )"
        << r.median_seconds << R"(, "points_per_second": )" << r.points_per_second
        << R"(, "loss": )" << r.loss << R"(, "step_seconds": [)";
    for (std::size_t s = 0; s < r.step_seconds.size(); ++s)
      out << (s ? ", " : "") << r.step_seconds[s];
    out << "]";
    if (r.executor != "interpreter")
      out << R"(, "compile_cold_seconds": )" << r.compile_cold_seconds
          << R"(, "compile_cached_seconds": )" << r.compile_cached_seconds << R"(, "kernels": )"
          << r.kernels << R"(, "gemms": )" << r.gemms << R"(, "native_bf16_gemms": )"
          << r.native_bf16_gemms << R"(, "arena_bytes": )" << r.arena_bytes
          << R"(, "gemm_seconds": )" << r.gemm_seconds << R"(, "kernel_seconds": )"
          << r.kernel_seconds << R"(, "tiled_seconds": )" << r.tiled_seconds
          << R"(, "tiled_steps": )" << r.tiled_steps << R"(, "tiles": )" << quoted(r.tiles)
          << R"(, "tile_seconds": )" << r.tile_seconds << R"(, "scratch_bytes": )"
          << r.scratch_bytes << R"(, "gemm_gflops": )" << r.gemm_gflops;
    if (r.limit_seconds() > 0)
      out << R"(, "gemm_flops": )" << r.gemm_flops << R"(, "min_bytes": )" << r.min_bytes
          << R"(, "limit_gemm_seconds": )" << r.limit_gemm_seconds
          << R"(, "limit_memory_seconds": )" << r.limit_memory_seconds << R"(, "times_limit": )"
          << r.median_seconds / r.limit_seconds();
    out << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out) throw UserError("error writing '" + path + "'");
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  Machine m;
  m.sgemm_peak = sgemm_rate(2048, 2048, 2048);
  m.sgemm_skinny = sgemm_rate(32768, 64, 64);
  m.dgemm_peak = dgemm_rate(1024);
  m.bandwidth = triad_bandwidth();
  m.threads = omp_get_max_threads();
  print_facts(o, m);
  std::vector<Result> results;
  for (const std::string& name : o.workloads)
    for (const std::string& executor : o.executors) {
      results.push_back(run_workload(name, executor, o, m));
      print_row(results.back());
    }
  if (!o.json.empty()) {
    write_json(o.json, o, m, results);
    std::cout << "\nwrote " << o.json << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace jetpde::bench

int main(int argc, char** argv) {
  try {
    return jetpde::bench::run(argc, argv);
  } catch (const jetpde::UserError& e) {
    std::cerr << "jetpde_bench: " << e.what() << "\n" << jetpde::bench::kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "jetpde_bench: " << e.what() << "\n";
    return 1;
  }
}
