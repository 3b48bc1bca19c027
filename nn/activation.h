// Activation functions of the networks, as graph expressions: each is a primitive or a short
// composition of primitives, so Taylor mode and reverse mode take it like any other node.
#pragma once

#include <string>

#include "autodiff/ir.h"
#include "autodiff/options.h"

namespace jetpde::nn {

enum class Activation {
  tanh,
  sin,
  silu,      // x sigmoid(x)
  sigmoid,   // 1 / (1 + exp(-x))
  softplus,  // log(1 + exp(x)), as -log(sigmoid(-x)); finite while sigmoid(-x) does not
             // underflow (x below ~87 in f32, ~708 in f64)
};

// The names (the config's network.activation choices).
const options::EnumTable<Activation>& activation_names();
Activation activation_from_name(const std::string& name);  // UserError naming the known ones
std::string activation_name(Activation activation);

Var activate(Activation activation, Var x);

}  // namespace jetpde::nn
