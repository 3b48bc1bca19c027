#include "nn/activation.h"

#include <array>
#include <utility>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "nn/detail/names.h"

namespace jetpde::nn {
namespace {

constexpr std::array<std::pair<Activation, const char*>, 5> kNames{{
    {Activation::tanh, "tanh"},
    {Activation::sin, "sin"},
    {Activation::silu, "silu"},
    {Activation::sigmoid, "sigmoid"},
    {Activation::softplus, "softplus"},
}};

}  // namespace

Activation activation_from_name(const std::string& name) {
  return detail::from_name<Activation>(kNames, name, "activation");
}

std::string activation_name(Activation activation) {
  return detail::name_of<Activation>(kNames, activation);
}

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
