// jetpde_bench: seconds per training step of the WORKLOADS.md workloads, run by the reference
// interpreter in float32. One step = network + every derivative the residual needs + loss + the
// gradient of the loss with respect to every weight and bias (bench/workloads.h builds them).
//
//   jetpde_bench [--workload NAME]... [--steps N] [--points N] [--json FILE]
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

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "bench/workloads.h"

namespace jetpde::bench {
namespace {

constexpr const char* kUsage =
    "usage: jetpde_bench [--workload NAME]... [--steps N] [--points N] [--json FILE]\n"
    "  --workload NAME  run only this workload (repeatable; default: all)\n"
    "  --steps N        timed steps per workload, after one warm-up (default 5)\n"
    "  --points N       points per workload instead of each workload's own count\n"
    "  --json FILE      also write the results to FILE as JSON\n";

struct Options {
  std::vector<std::string> workloads;
  int steps = 5;
  int points = 0;
  std::string json;
};

int positive_int(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0)
    throw UserError(flag + " wants a positive integer, got '" + text + "'");
  return value;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg != "--workload" && arg != "--steps" && arg != "--points" && arg != "--json")
      throw UserError("unknown option '" + arg + "'");
    if (i + 1 >= argc) throw UserError(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--workload") o.workloads.push_back(value);
    if (arg == "--steps") o.steps = positive_int(arg, value);
    if (arg == "--points") o.points = positive_int(arg, value);
    if (arg == "--json") o.json = value;
  }
  for (const std::string& name : o.workloads) workload_spec(name);  // unknown names fail now
  if (o.workloads.empty())
    for (const WorkloadSpec& s : workload_specs()) o.workloads.push_back(s.name);
  return o;
}

struct Result {
  std::string name;
  int points = 0;
  int streams = 0;
  double build_seconds = 0;
  double median_seconds = 0;
  double points_per_second = 0;
  double loss = 0;
  std::vector<double> step_seconds;
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
Result run_workload(const std::string& name, const Options& o) {
  Result r;
  const auto build_start = std::chrono::steady_clock::now();
  const Workload w = build_workload(name, {.points = o.points});
  r.build_seconds = seconds_since(build_start);
  const std::vector<Var> outputs = w.step_outputs();
  r.loss = evaluate(outputs, w.bindings, Precision::f32)[0](0, 0);  // warm-up
  for (int s = 0; s < o.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<MatrixD> values = evaluate(outputs, w.bindings, Precision::f32);
    r.step_seconds.push_back(seconds_since(start));
    r.loss = values[0](0, 0);
  }
  r.name = name;
  r.points = w.points;
  r.streams = w.stream_count;
  r.median_seconds = median(r.step_seconds);
  r.points_per_second = w.points / r.median_seconds;
  return r;
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

void print_facts(const Options& o) {
  std::cout << "jetpde_bench  " << utc_date() << "\n"
            << "cores: " << std::thread::hardware_concurrency() << "  cpu: " << cpu_model() << "\n"
            << "executor: reference interpreter (autodiff/interpreter.h), float32, one thread.\n"
            << "  The interpreter is the reference path; compiled speed comes with the compiler.\n"
            << "  `make bench` unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this run (here: "
            << openblas_environment() << ").\n"
            << "steps: 1 warm-up + " << o.steps << " timed (median reported)\n\n";
  std::printf("%-12s %7s %7s %9s %12s %14s %12s\n", "workload", "points", "streams", "build s",
              "s/step", "points/s", "loss");
  std::fflush(stdout);
}

void print_row(const Result& r) {
  std::printf("%-12s %7d %7d %9.3f %12.4f %14.0f %12.4e\n", r.name.c_str(), r.points, r.streams,
              r.build_seconds, r.median_seconds, r.points_per_second, r.loss);
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

void write_json(const std::string& path, const Options& o, const std::vector<Result>& results) {
  std::ofstream out(path);
  if (!out) throw UserError("cannot write '" + path + "'");
  out.precision(9);
  out << "{\n";
  out << R"(  "date": )" << quoted(utc_date()) << ",\n";
  out << R"(  "cores": )" << std::thread::hardware_concurrency() << ",\n";
  out << R"(  "cpu": )" << quoted(cpu_model()) << ",\n";
  out << R"(  "executor": "interpreter", "precision": "f32", "steps": )" << o.steps << ",\n";
  out << R"(  "results": [)"
      << "\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << R"(    {"workload": )" << quoted(r.name) << R"(, "points": )" << r.points
        << R"(, "streams": )" << r.streams << R"(, "build_seconds": )" << r.build_seconds
        << R"(, "median_seconds_per_step": )" << r.median_seconds << R"(, "points_per_second": )"
        << r.points_per_second << R"(, "loss": )" << r.loss << R"(, "step_seconds": [)";
    for (std::size_t s = 0; s < r.step_seconds.size(); ++s)
      out << (s ? ", " : "") << r.step_seconds[s];
    out << "]}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out) throw UserError("error writing '" + path + "'");
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  print_facts(o);
  std::vector<Result> results;
  for (const std::string& name : o.workloads) {
    results.push_back(run_workload(name, o));
    print_row(results.back());
  }
  if (!o.json.empty()) {
    write_json(o.json, o, results);
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
