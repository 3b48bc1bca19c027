// jetpde_memory_bench: a training step's memory and time under a memory budget (docs/design.md
// section 9, "Memory"). Each workload of WORKLOADS.md at 1x, 4x and 16x its point count, trained
// as `jetpde run` trains it (solvers::Objective: the weighted loss, its slots and the gradient),
// in three ways: the plain step over all points; the same with values of the backward pass
// computed again instead of kept (CompileOptions::memory_fraction: the budget over the plain
// arena; the plan goes as far as recomputation reaches); and in the fewest batches of the points
// that fit the budget (solvers::choose_batches on compiler::estimate_memory's plans, as Problem
// chooses them), each batch through the same program. The budget defaults to the plain arena at
// the first scale, so that the larger counts must shrink. Per case: the step's arena as compiled
// (its peak memory: every buffer of the step lives in it; the points and parameters besides are
// a few MB), the median seconds per step, and each way's time over the plain step's.
//
//   jetpde_memory_bench [--workload NAME]... [--scales 1,4,16] [--budget BYTES] [--steps N]
//                       [--points N] [--precision P]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "bench/options.h"
#include "bench/workloads.h"
#include "compiler/executable.h"
#include "solvers/objective.h"

namespace jetpde::bench {
namespace {

constexpr const char* kUsage =
    "usage: jetpde_memory_bench [--workload NAME]... [--scales 1,4,16] [--budget BYTES]\n"
    "                           [--steps N] [--points N] [--precision P]\n"
    "  --workload NAME  only this workload (repeatable; default: burgers, ns2d, poisson32d)\n"
    "  --scales LIST    multiples of each workload's point count (default 1,4,16)\n"
    "  --budget BYTES   the memory budget (default: the one-batch arena at the first scale)\n"
    "  --steps N        timed steps per case, after one warm-up (default 3)\n"
    "  --points N       the 1x point count instead of each workload's own\n"
    "  --precision P    fp32 (default), fp64, bf16, bf16_wgrad, fp16, auto\n";

struct Options {
  std::vector<std::string> workloads;
  std::vector<int> scales{1, 4, 16};
  std::int64_t budget = 0;
  int steps = 3;
  int points = 0;
  compiler::PrecisionPolicy precision = compiler::PrecisionPolicy::fp32;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg != "--workload" && arg != "--scales" && arg != "--budget" && arg != "--steps" &&
        arg != "--points" && arg != "--precision")
      throw UserError("unknown option '" + arg + "'");
    if (i + 1 >= argc) throw UserError(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--workload") o.workloads.push_back(value);
    if (arg == "--budget") o.budget = positive_integer(arg, value);
    if (arg == "--steps") o.steps = static_cast<int>(positive_integer(arg, value));
    if (arg == "--points") o.points = static_cast<int>(positive_integer(arg, value));
    if (arg == "--scales") {
      o.scales.clear();
      std::stringstream in(value);
      for (std::string item; std::getline(in, item, ',');)
        o.scales.push_back(static_cast<int>(positive_integer(arg, item)));
    }
    if (arg == "--precision") o.precision = precision_from_name(value);
  }
  for (const std::string& name : o.workloads) workload_spec(name);  // unknown names fail now
  if (o.workloads.empty()) o.workloads = {"burgers", "ns2d", "poisson32d"};
  return o;
}

std::vector<solvers::LossTerm> terms_of(const Workload& w) {
  std::vector<solvers::LossTerm> terms;
  for (std::size_t r = 0; r < w.residuals.size(); ++r)
    terms.push_back({"r" + std::to_string(r), w.residuals[r]});
  return terms;
}

// The median seconds of `steps` steps (loss and gradient) after one warm-up.
double seconds_per_step(solvers::Objective& objective, const Eigen::VectorXd& theta, int steps) {
  Eigen::VectorXd gradient;
  objective.evaluate(theta, &gradient);
  std::vector<double> seconds;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    objective.evaluate(theta, &gradient);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

double mb(std::int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

int run(const Options& o) {
  compiler::CompileOptions options = compiler::CompileOptions::from_environment();
  options.pipeline.precision = o.precision;
  std::printf("jetpde_memory_bench: %s, budget %s, %d timed steps\n",
              compiler::precision_name(o.precision).c_str(),
              o.budget > 0 ? (std::to_string(mb(o.budget)) + " MB").c_str()
                           : "the one-batch arena at the first scale",
              o.steps);
  std::printf("%-11s %5s %8s | %9s %8s | %9s %8s %6s | %7s %9s %8s %6s\n", "", "", "", "plain", "",
              "recompute", "", "", "batches", "", "", "");
  std::printf("%-11s %5s %8s | %9s %8s | %9s %8s %6s | %7s %9s %8s %6s\n", "workload", "scale",
              "points", "arena MB", "s/step", "arena MB", "s/step", "x time", "count", "arena MB",
              "s/step", "x time");
  for (const std::string& name : o.workloads) {
    const WorkloadSpec& spec = workload_spec(name);
    std::int64_t budget = o.budget;
    for (int scale : o.scales) {
      const int points = (o.points > 0 ? o.points : spec.points) * scale;
      const Workload whole = build_workload(name, {.points = points});
      solvers::Objective plain(terms_of(whole), whole.params, options);
      plain.set_inputs({{"x", whole.bindings.at("x")}});
      Bindings params = whole.bindings;
      params.erase("x");
      const Eigen::VectorXd theta = plain.layout().flatten(params);
      const std::int64_t plain_arena = plain.executable().stats().arena_bytes;
      const double plain_seconds = seconds_per_step(plain, theta, o.steps);
      if (budget == 0) budget = plain_arena;
      // The batch counts the points allow (powers of 2, at least 64 points a batch), planned.
      std::vector<int> counts;
      for (int k = 2; points % k == 0 && points / k >= 64; k *= 2) counts.push_back(k);
      const solvers::BatchChoice choice =
          plain_arena <= budget
              ? solvers::BatchChoice{.batches = 1, .bytes = plain_arena, .fits = true}
              : solvers::choose_batches(counts, budget, plain_arena, [&](int batches) {
                  const Workload part = build_workload(name, {.points = points / batches});
                  const solvers::LossPrograms programs =
                      solvers::build_loss_programs(terms_of(part), part.params);
                  return compiler::estimate_memory(programs.step, options).arena_bytes;
                });
      compiler::CompileOptions recomputing = options;
      recomputing.memory_fraction =
          std::min(1.0, static_cast<double>(budget) / static_cast<double>(plain_arena));
      solvers::Objective recomputed(terms_of(whole), whole.params, recomputing);
      recomputed.set_inputs({{"x", whole.bindings.at("x")}});
      const double recomputed_seconds = seconds_per_step(recomputed, theta, o.steps);
      const Workload part = build_workload(name, {.points = points / choice.batches});
      solvers::Objective batched(terms_of(part), part.params, options,
                                 solvers::serial_communicator(), choice.batches);
      batched.set_inputs({{"x", whole.bindings.at("x")}});
      const double batched_seconds = seconds_per_step(batched, theta, o.steps);
      std::printf("%-11s %4dx %8d | %9.1f %8.4f | %9.1f %8.4f %6.2f | %7d %9.1f %8.4f %6.2f%s\n",
                  name.c_str(), scale, points, mb(plain_arena), plain_seconds,
                  mb(recomputed.executable().stats().arena_bytes), recomputed_seconds,
                  recomputed_seconds / plain_seconds, choice.batches,
                  mb(batched.executable().stats().arena_bytes), batched_seconds,
                  batched_seconds / plain_seconds, choice.fits ? "" : "  (over the budget)");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace jetpde::bench

int main(int argc, char** argv) {
  try {
    return jetpde::bench::run(jetpde::bench::parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "jetpde_memory_bench: error: " << e.what() << "\n";
    return 1;
  }
}
