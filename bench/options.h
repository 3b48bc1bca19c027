// Command-line values the bench programs share (jetpde_bench, jetpde_memory_bench).
#pragma once

#include <string>

#include "autodiff/errors.h"
#include "compiler/passes.h"

namespace jetpde::bench {

// A policy by the config's name (the enum table's: every policy but as_built).
inline compiler::PrecisionPolicy precision_from_name(const std::string& name) {
  try {
    return compiler::precision_names().from_name(name);
  } catch (const UserError& e) {
    throw UserError(std::string("--precision: ") + e.what());
  }
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
