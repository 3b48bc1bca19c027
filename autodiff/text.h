// Numbers as text, for what must read back exactly (an expression's constants, a config's period,
// VTK times, exact solutions' parameters in messages).
#pragma once

#include <charconv>
#include <string>

namespace jetpde {

// The shortest decimal text that reads back as the same double (std::to_chars): 0.1 for 0.1,
// 6.283185307179586 for 2 pi, 1e-05; "-0" for -0.0, "inf" and "nan" as to_chars writes them.
inline std::string exact_text(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

}  // namespace jetpde
