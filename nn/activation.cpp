#include "nn/activation.h"

#include <array>
#include <utility>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "autodiff/options.h"

namespace jetpde::nn {
namespace {

constexpr std::array<options::EnumName<Activation>, 5> kNames{{
    {Activation::tanh, "tanh", "hyperbolic tangent"},
    {Activation::sin, "sin", "sine (SIREN-like)"},
    {Activation::silu, "silu", "x * sigmoid(x) (swish)"},
    {Activation::sigmoid, "sigmoid", "1 / (1 + exp(-x))"},
    {Activation::softplus, "softplus", "log(1 + exp(x))"},
}};

}  // namespace

const options::EnumTable<Activation>& activation_names() {
  static constexpr options::EnumTable<Activation> table("activation", kNames);
  return table;
}

Activation activation_from_name(const std::string& name) {
  return activation_names().from_name(name);
}

std::string activation_name(Activation activation) { return activation_names().name(activation); }

Var activate(Activation activation, Var x) {
  switch (activation) {
    case Activation::tanh:
      return tanh(x);
    case Activation::sin:
      return sin(x);
    case Activation::silu:
      return x * sigmoid(x);
    case Activation::sigmoid:
      return sigmoid(x);
    case Activation::softplus:
      return -log(sigmoid(-x));
  }
  throw InternalError("activate: unknown activation");
}

}  // namespace jetpde::nn
