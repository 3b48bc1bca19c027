// The accuracy cases of issue 4 as functions: each builds a Problem (or runs the example config
// that describes it: ldc, allen_cahn, poisson2d_cg), trains it with a budget scaled by `scale`,
// and measures its error against a reference. jetpde_accuracy runs them with the full budgets;
// tests/bench/accuracy_test.cpp with small ones.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace jetpde::bench {

struct AccuracyOptions {
  std::string data_dir = "../shared/data";
  double scale = 1.0;  // multiplies every step budget
  std::uint64_t seed = 0;
};

struct AccuracyResult {
  std::map<std::string, double> metrics;  // rel_l2, max_abs, nu, ...
  std::string target;                     // e.g. "rel_l2 <= 1e-3"
  bool met = false;
  std::string message;  // how training ended
  double wall_seconds = 0;
  bool skipped = false;  // reference data missing
};

struct AccuracyCase {
  std::string name;
  std::string description;
  std::function<AccuracyResult(const AccuracyOptions&)> run;
};

const std::vector<AccuracyCase>& accuracy_cases();
const AccuracyCase& accuracy_case(const std::string& name);  // UserError naming the known ones

}  // namespace jetpde::bench
