// Small helpers shared by nn/ and the layers above it: the short number format of progress and
// stop messages. (Enum names are autodiff/options.h's EnumTable.)
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "autodiff/errors.h"

namespace jetpde::nn::detail {

// "%.<digits>g", and "nan" for any NaN (printf may say -nan).
inline std::string short_number(double x, int digits = 3) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

}  // namespace jetpde::nn::detail
