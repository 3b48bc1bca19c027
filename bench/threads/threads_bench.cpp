// jetpde_threads_bench: steps per second of the compiled CPU executor on 1 and 2 OpenMP threads,
// quiet and with a busy process competing for one core, for several OpenMP wait policies and
// kernel parallel thresholds, all in one run (bench/README.md, "Threads").
//
//   jetpde_threads_bench [--case NAME:POINTS]... [--seconds S] [--rounds R]
//
// libgomp reads its wait policy when it is loaded, so every measurement is a child process (this
// program again, with --child) started with its own environment. The busy process is a forked
// child pinned to one CPU that spins until it is killed after the measurement (or with this
// program, or after a bound of its own). Each round runs every configuration once, in a rotated
// order; the tables give the median over rounds and the spread (max - min) / median.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "bench/workloads.h"
#include "compiler/executable.h"
#include "compiler/openmp_env.h"
#include "compiler/render_c.h"

namespace jetpde::bench {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr const char* kUsage =
    "usage: jetpde_threads_bench [--case NAME:POINTS]... [--seconds S] [--rounds R]\n"
    "  --case NAME:POINTS  a workload of bench/workloads.cpp and its point count (repeatable;\n"
    "                      default: burgers:1024 burgers:8192 ns2d:8192)\n"
    "  --seconds S         timed seconds per measurement, after one warm-up step (default 1.5)\n"
    "  --rounds R          every configuration R times, interleaved (default 3)\n";

struct Case {
  std::string workload;
  int points = 0;
  std::string label() const { return workload + ":" + std::to_string(points); }
};

Case parse_case(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw UserError("--case " + text + ": expected NAME:POINTS");
  Case c{text.substr(0, colon), std::atoi(text.c_str() + colon + 1)};
  workload_spec(c.workload);  // unknown names fail now
  if (c.points <= 0) throw UserError("--case " + text + ": POINTS must be a positive integer");
  return c;
}

// --child: builds the case, compiles it (from the shared cache after the first), runs one
// warm-up step, then steps for `seconds`; prints steps per second and a checksum of all outputs.
int run_child(const Case& c, double seconds, const std::string& cache, std::int64_t parallel_min) {
  const Workload w = build_workload(c.workload, {.points = c.points});
  const std::vector<Var> outputs = w.step_outputs();
  compiler::CompileOptions co = compiler::CompileOptions::from_environment();
  co.backend = compiler::Backend::cpu;
  co.strict = true;
  co.cpu.cache_dir = cache;
  co.cpu.parallel_min_elements = parallel_min;
  compiler::Executable exe(outputs, co);
  exe.set(w.bindings);
  exe.run();  // warm-up
  int steps = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (steps < 3 || elapsed < seconds) {
    exe.run();
    ++steps;
    elapsed = seconds_since(start);
  }
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const MatrixD v = exe.output(k);
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      std::uint64_t bits;
      std::memcpy(&bits, v.data() + i, 8);
      for (int b = 0; b < 8; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ULL;
    }
  }
  std::printf("RESULT %.6g %016llx %d\n", steps / elapsed, static_cast<unsigned long long>(h),
              steps);
  return 0;
}

// A process spinning on `cpu` until killed, or after `bound` seconds at the latest.
pid_t start_busy(int cpu, double bound) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and with this program, should it end first
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof set, &set);
  const auto start = Clock::now();
  volatile std::uint64_t x = 0;
  while (seconds_since(start) < bound)
    for (int i = 0; i < 1000000; ++i) x = x + 1;
  ::_exit(0);
}

void stop_busy(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// One measured configuration.
struct Config {
  std::string policy;  // a row of the policy table, "-" for 1-thread runs
  std::string env;     // the OpenMP variables it sets, as NAME=VALUE words
  int threads = 1;
  bool busy = false;
  std::int64_t parallel_min = compiler::kParallelMinElements;
  std::string key() const {
    return policy + "|" + std::to_string(threads) + "|" + (busy ? "busy" : "quiet") + "|" +
           std::to_string(parallel_min);
  }
};

struct Measurement {
  double steps_per_second = 0;
  std::string checksum;
};

std::string self_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw UserError("cannot read /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

Measurement measure(const Case& c, const Config& cfg, double seconds, const std::string& cache,
                    int busy_cpu) {
  const std::string cmd =
      "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u OMP_NUM_THREADS -u OMP_PROC_BIND " + cfg.env +
      " OMP_NUM_THREADS=" + std::to_string(cfg.threads) + " '" + self_path() + "' --child " +
      c.label() + " --seconds " + std::to_string(seconds) + " --cache '" + cache +
      "' --parallel-min " + std::to_string(cfg.parallel_min);
  const pid_t busy = cfg.busy ? start_busy(busy_cpu, 20 * seconds + 120) : 0;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  if (pipe) {
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  }
  const int status = pipe ? ::pclose(pipe) : -1;
  if (busy) stop_busy(busy);
  const auto at = out.find("RESULT ");
  if (status != 0 || at == std::string::npos)
    throw UserError("the measurement failed (" + cmd + "):\n" + out);
  Measurement m;
  char sum[64] = {0};
  std::sscanf(out.c_str() + at, "RESULT %lf %63s", &m.steps_per_second, sum);
  m.checksum = sum;
  return m;
}

struct Stat {
  double median = 0, spread = 0;
};

Stat stat_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  Stat s;
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.spread = s.median > 0 ? (v.back() - v.front()) / s.median : 0;
  return s;
}

std::string cell(const Stat& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%8.2f ±%3.0f%%", s.median, 50 * s.spread);
  return buf;
}

std::string ratio(double a, double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%6.2fx", b > 0 ? a / b : 0.0);
  return buf;
}

int run_driver(const std::vector<Case>& cases, double seconds, int rounds) {
  // The policies compared: libgomp's default (what GOMP_SPINCOUNT is when neither variable is
  // set; set explicitly here so that the row means the same wherever it runs), shorter spins and
  // passive; jetpde's default (compiler/openmp_env.h) is one of them.
  std::vector<std::pair<std::string, std::string>> policies{
      {"libgomp default", "GOMP_SPINCOUNT=300000"},
      {"spin 10000", "GOMP_SPINCOUNT=10000"},
      {"spin 1000", "GOMP_SPINCOUNT=1000"},
      {"spin 100", "GOMP_SPINCOUNT=100"},
      {"passive", "OMP_WAIT_POLICY=passive"}};
  std::string jetpde_policy, jetpde_env = compiler::kDefaultWaitPolicy;
  for (auto& [name, env] : policies)
    if (env == jetpde_env) jetpde_policy = name += " (jetpde)";
  if (jetpde_policy.empty()) policies.push_back({jetpde_policy = "jetpde", jetpde_env});
  const std::vector<std::int64_t> thresholds{8192, compiler::kParallelMinElements, 131072, 524288,
                                             std::int64_t{1} << 40};

  std::vector<Config> configs;
  configs.push_back({"-", jetpde_env, 1, false});
  configs.push_back({"-", jetpde_env, 1, true});
  for (const auto& [name, env] : policies) {
    configs.push_back({name, env, 2, false});
    configs.push_back({name, env, 2, true});
  }
  for (std::int64_t t : thresholds)
    if (t != compiler::kParallelMinElements)
      configs.push_back({jetpde_policy, jetpde_env, 2, false, t});

  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ::sched_getaffinity(0, sizeof allowed, &allowed);
  int busy_cpu = 0;
  while (busy_cpu < CPU_SETSIZE && !CPU_ISSET(busy_cpu, &allowed)) ++busy_cpu;

  const std::string cache = (std::filesystem::temp_directory_path() /
                             ("jetpde-threads-bench-" + std::to_string(::getpid())))
                                .string();
  std::printf(
      "jetpde_threads_bench: %zu cases x %zu configurations x %d rounds, %.1f s each; %u CPUs "
      "online, busy process on CPU %d\nsteps/s: median over rounds ±half the spread "
      "(max - min); ratios of medians\n",
      cases.size(), configs.size(), rounds, seconds,
      static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)), busy_cpu);
  bool identical = true;
  for (const Case& c : cases) {
    std::map<std::string, std::vector<double>> rates;
    std::map<std::string, std::string> sums;  // by threads and threshold: one result each
    for (int r = 0; r < rounds; ++r)
      for (std::size_t i = 0; i < configs.size(); ++i) {
        const Config& cfg = configs[(i + static_cast<std::size_t>(r) * 3) % configs.size()];
        const Measurement m = measure(c, cfg, seconds, cache, busy_cpu);
        rates[cfg.key()].push_back(m.steps_per_second);
        // Results depend on the thread count a kernel runs on, never on the wait policy.
        const std::string result_key =
            std::to_string(cfg.threads) + "|" +
            (cfg.threads == 1 ? std::string("any") : std::to_string(cfg.parallel_min));
        auto [it, fresh] = sums.emplace(result_key, m.checksum);
        if (!fresh && it->second != m.checksum) {
          identical = false;
          std::printf("  results differ: %s, %s against %s\n", cfg.key().c_str(),
                      m.checksum.c_str(), it->second.c_str());
        }
      }
    const Stat one = stat_of(rates[configs[0].key()]);
    const Stat one_busy = stat_of(rates[configs[1].key()]);
    const Stat lib_busy = stat_of(rates[configs[3].key()]);
    std::printf("\n== %s: 1 thread %s steps/s, 1 thread + busy %s\n", c.label().c_str(),
                cell(one).c_str(), cell(one_busy).c_str());
    std::printf("%-22s %16s %8s %16s %10s %12s %12s\n", "wait policy (2 thr.)", "quiet steps/s",
                "÷1 thr.", "busy steps/s", "busy÷quiet", "÷1 thr.+busy", "÷libgomp");
    for (const auto& [name, env] : policies) {
      const Stat q = stat_of(rates[Config{name, env, 2, false}.key()]);
      const Stat b = stat_of(rates[Config{name, env, 2, true}.key()]);
      std::printf("%-22s %16s %8s %16s %10s %12s %12s\n", name.c_str(), cell(q).c_str(),
                  ratio(q.median, one.median).c_str(), cell(b).c_str(),
                  ratio(b.median, q.median).c_str(), ratio(b.median, one_busy.median).c_str(),
                  ratio(b.median, lib_busy.median).c_str());
    }
    std::printf("%-22s %16s %8s   (2 threads, quiet, %s)\n", "parallel from (elem.)", "steps/s",
                "÷1 thr.", jetpde_policy.c_str());
    for (std::int64_t t : thresholds) {
      const Stat q = stat_of(rates[Config{jetpde_policy, jetpde_env, 2, false, t}.key()]);
      const std::string name =
          t >= (std::int64_t{1} << 40) ? std::string("never (GEMMs only)") : std::to_string(t);
      std::printf("%-22s %16s %8s%s\n", name.c_str(), cell(q).c_str(),
                  ratio(q.median, one.median).c_str(),
                  t == compiler::kParallelMinElements ? "   (current)" : "");
    }
    std::fflush(stdout);
  }
  std::filesystem::remove_all(cache);
  std::printf("\nresults: %s\n", identical ? "identical for each thread count and threshold, "
                                             "whatever the wait policy and load"
                                           : "DIFFER (see above)");
  return identical ? 0 : 1;
}

}  // namespace
}  // namespace jetpde::bench

int main(int argc, char** argv) {
  using namespace jetpde::bench;
  try {
    std::vector<Case> cases;
    double seconds = 1.5;
    int rounds = 3;
    std::string child, cache;
    std::int64_t parallel_min = jetpde::compiler::kParallelMinElements;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (i + 1 >= argc) throw jetpde::UserError(arg + ": expected a value\n" + kUsage);
      const std::string value = argv[++i];
      if (arg == "--case")
        cases.push_back(parse_case(value));
      else if (arg == "--seconds")
        seconds = std::atof(value.c_str());
      else if (arg == "--rounds")
        rounds = std::atoi(value.c_str());
      else if (arg == "--child")
        child = value;
      else if (arg == "--cache")
        cache = value;
      else if (arg == "--parallel-min")
        parallel_min = std::atoll(value.c_str());
      else
        throw jetpde::UserError("unknown option " + arg + "\n" + kUsage);
    }
    if (!(seconds > 0) || rounds < 1)
      throw jetpde::UserError("--seconds and --rounds must be positive");
    if (!child.empty()) return run_child(parse_case(child), seconds, cache, parallel_min);
    if (cases.empty())
      for (const char* c : {"burgers:1024", "burgers:8192", "ns2d:8192"})
        cases.push_back(parse_case(c));
    return run_driver(cases, seconds, rounds);
  } catch (const jetpde::UserError& e) {
    std::fprintf(stderr, "jetpde_threads_bench: %s\n", e.what());
    return 1;
  }
}
