// Command-line values the bench programs share (jetpde_bench, jetpde_memory_bench).
#pragma once

#include <string>

#include "autodiff/errors.h"
#include "compiler/passes.h"

namespace jetpde::bench {

inline compiler::PrecisionPolicy precision_from_name(const std::string& name) {
  using P = compiler::PrecisionPolicy;
  for (P p : {P::fp64, P::fp32, P::bf16, P::fp16, P::automatic})
    if (compiler::precision_name(p) == name) return p;
  throw UserError("--precision wants fp64, fp32, bf16, fp16 or auto, got '" + name + "'");
}

// `text` as a positive integer, or a UserError naming `flag`.
inline long long positive_integer(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0)
    throw UserError(flag + " wants a positive integer, got '" + text + "'");
  return value;
}

}  // namespace jetpde::bench
