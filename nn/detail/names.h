// Small helpers shared by nn/ and the layers above it: enum <-> name tables for options chosen by
// name, and the short number format of progress and stop messages.
#pragma once

#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <utility>

#include "autodiff/errors.h"

namespace jetpde::nn::detail {

template <class E>
using NameTable = std::span<const std::pair<E, const char*>>;

// The enum value called `name`; UserError "unknown <what> 'name' (known: a, b, c)".
template <class E>
E from_name(NameTable<E> table, const std::string& name, const std::string& what) {
  std::string known;
  for (const auto& [value, text] : table) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  throw UserError("unknown " + what + " '" + name + "' (known: " + known + ")");
}

template <class E>
std::string name_of(NameTable<E> table, E value) {
  for (const auto& [v, text] : table)
    if (v == value) return text;
  throw InternalError("name_of: a value without a name");
}

// "%.<digits>g", and "nan" for any NaN (printf may say -nan).
inline std::string short_number(double x, int digits = 3) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

}  // namespace jetpde::nn::detail
