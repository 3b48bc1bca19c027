#include "nn/activation.h"

#include <array>
#include <utility>

#include "autodiff/errors.h"
#include "autodiff/ops.h"

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
  std::string known;
  for (const auto& [activation, text] : kNames) {
    if (name == text) return activation;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  throw UserError("unknown activation '" + name + "' (known: " + known + ")");
}

std::string activation_name(Activation activation) {
  for (const auto& [a, text] : kNames)
    if (a == activation) return text;
  throw InternalError("activation_name: unknown activation");
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
