// Weight initializers, seeded. Fan-in and fan-out are a weight's rows and columns ([in, out]).
//
//   glorot_normal   N(0, 2 / (in + out))          glorot_uniform  U(±sqrt(6 / (in + out)))
//   he_normal       N(0, 2 / in)                  he_uniform      U(±sqrt(6 / in))
#pragma once

#include <random>
#include <string>

#include "autodiff/options.h"
#include "autodiff/primitive.h"

namespace jetpde::nn {

enum class Init { glorot_normal, glorot_uniform, he_normal, he_uniform };

const options::EnumTable<Init>& init_names();  // network.init
Init init_from_name(const std::string& name);  // UserError naming the known ones
std::string init_name(Init init);

// A [rows, cols] weight drawn from `rng`.
MatrixD init_weight(Init init, std::int64_t rows, std::int64_t cols, std::mt19937_64& rng);

}  // namespace jetpde::nn
