#include "nn/init.h"

#include <array>
#include <cmath>
#include <utility>

#include "autodiff/options.h"

namespace jetpde::nn {
namespace {

constexpr std::array<options::EnumName<Init>, 4> kNames{{
    {Init::glorot_normal, "glorot_normal", "N(0, 2 / (in + out))"},
    {Init::glorot_uniform, "glorot_uniform", "U(+-sqrt(6 / (in + out)))"},
    {Init::he_normal, "he_normal", "N(0, 2 / in)"},
    {Init::he_uniform, "he_uniform", "U(+-sqrt(6 / in))"},
}};

}  // namespace

const options::EnumTable<Init>& init_names() {
  static constexpr options::EnumTable<Init> table("initializer", kNames);
  return table;
}

Init init_from_name(const std::string& name) { return init_names().from_name(name); }

std::string init_name(Init init) { return init_names().name(init); }

MatrixD init_weight(Init init, std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  const double fan_in = static_cast<double>(rows), fan_out = static_cast<double>(cols);
  const bool glorot = init == Init::glorot_normal || init == Init::glorot_uniform;
  const double variance = glorot ? 2.0 / (fan_in + fan_out) : 2.0 / fan_in;
  MatrixD w(rows, cols);
  if (init == Init::glorot_normal || init == Init::he_normal) {
    std::normal_distribution<double> normal(0.0, std::sqrt(variance));
    for (auto& x : w.reshaped()) x = normal(rng);
  } else {
    const double limit = std::sqrt(3.0 * variance);  // U(±a) has variance a² / 3
    std::uniform_real_distribution<double> uniform(-limit, limit);
    for (auto& x : w.reshaped()) x = uniform(rng);
  }
  return w;
}

}  // namespace jetpde::nn
