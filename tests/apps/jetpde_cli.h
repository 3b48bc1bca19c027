// The jetpde command as the apps tests run it: through the shell, with one OpenMP thread, stdout
// and stderr collected (JETPDE_BINARY: the built command, a compile definition of apps_tests).
#pragma once

#include <string>

#include "tests/support/shell.h"

namespace jetpde::testing {

inline Output jetpde_cli(const std::string& args) {
  return shell("OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) + " " + args + " 2>&1");
}

}  // namespace jetpde::testing
