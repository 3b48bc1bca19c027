// jetpde_accuracy: trains the accuracy cases of issue 4 with their full budgets and compares them
// with reference solutions (../shared/data, or exact solutions), printing one line per case and
// writing every figure with its wall time to a JSON file.
//
//   jetpde_accuracy [--case NAME]... [--data DIR] [--json FILE] [--scale S] [--seed N]
//
// --scale multiplies every step budget (0.05 gives the smoke runs the tests use). Cases:
//   burgers          Burgers 1-D, nu = 0.01/pi, against burgers.h5 (Raissi et al.: 6.7e-4)
//   burgers_inverse  recover nu from 2000 noisy samples of burgers.h5 (1% noise)
//   plate4           clamped plate, laplacian^2 u = f, exact solution sin^2(pi x) sin^2(pi y)
//   bvp6             u^(6) = -pi^6 sin(pi x) with u, u'', u'''' = 0 at both ends: sin(pi x)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "bench/accuracy/cases.h"

namespace jetpde::bench {
namespace {

struct Options {
  std::vector<std::string> cases;
  std::string data = "../shared/data";
  std::string json;
  double scale = 1.0;
  std::uint64_t seed = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: jetpde_accuracy [--case NAME]... [--data DIR] [--json FILE] "
                   "[--scale S] [--seed N]\ncases:";
      for (const AccuracyCase& c : accuracy_cases()) std::cout << " " << c.name;
      std::cout << "\n";
      std::exit(0);
    }
    if (i + 1 >= argc) throw UserError(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--case")
      o.cases.push_back(v);
    else if (a == "--data")
      o.data = v;
    else if (a == "--json")
      o.json = v;
    else if (a == "--scale")
      o.scale = std::stod(v);
    else if (a == "--seed")
      o.seed = std::stoull(v);
    else
      throw UserError("unknown option '" + a + "'");
  }
  if (o.cases.empty())
    for (const AccuracyCase& c : accuracy_cases()) o.cases.push_back(c.name);
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<std::pair<std::string, AccuracyResult>> results;
  for (const std::string& name : o.cases) {
    const AccuracyCase& c = accuracy_case(name);
    const auto start = std::chrono::steady_clock::now();
    AccuracyResult r = c.run({.data_dir = o.data, .scale = o.scale, .seed = o.seed});
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-16s", name.c_str());
    for (const auto& [k, v] : r.metrics) std::printf(" %s %.3g", k.c_str(), v);
    std::printf("  target %s  %.1f s  (%s)\n", r.target.c_str(), r.wall_seconds, r.message.c_str());
    std::fflush(stdout);
    results.emplace_back(name, std::move(r));
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out.precision(6);
    out << "{\n  \"scale\": " << o.scale << ", \"seed\": " << o.seed << ",\n  \"cases\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& [name, r] = results[i];
      out << "    {\"case\": \"" << name << "\", \"wall_seconds\": " << r.wall_seconds
          << ", \"target\": \"" << r.target << "\", \"met\": " << (r.met ? "true" : "false");
      for (const auto& [k, v] : r.metrics) out << ", \"" << k << "\": " << v;
      out << ", \"message\": \"" << r.message << "\"}" << (i + 1 < results.size() ? "," : "")
          << "\n";
    }
    out << "  ]\n}\n";
    std::cout << "wrote " << o.json << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace jetpde::bench

int main(int argc, char** argv) {
  try {
    return jetpde::bench::run(argc, argv);
  } catch (const jetpde::UserError& e) {
    std::cerr << "jetpde_accuracy: " << e.what() << "\n";
    return 2;
  }
}
