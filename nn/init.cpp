#include "nn/init.h"

#include <array>
#include <cmath>
#include <utility>

#include "nn/detail/names.h"

namespace jetpde::nn {
namespace {

constexpr std::array<std::pair<Init, const char*>, 4> kNames{{
    {Init::glorot_normal, "glorot_normal"},
    {Init::glorot_uniform, "glorot_uniform"},
    {Init::he_normal, "he_normal"},
    {Init::he_uniform, "he_uniform"},
}};

}  // namespace

Init init_from_name(const std::string& name) {
  return detail::from_name<Init>(kNames, name, "initializer");
}

std::string init_name(Init init) { return detail::name_of<Init>(kNames, init); }

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
