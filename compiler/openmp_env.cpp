#include "compiler/openmp_env.h"

#include <cstdlib>
#include <cstring>

namespace jetpde::compiler {

bool openmp_wait_policy_unset(char** environment) {
  for (char** e = environment; e && *e; ++e)
    if (std::strncmp(*e, "OMP_WAIT_POLICY=", 16) == 0 ||
        std::strncmp(*e, "GOMP_SPINCOUNT=", 15) == 0)
      return false;
  return true;
}

std::string openmp_wait_policy() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (!policy && !spin) return "libgomp's default (GOMP_SPINCOUNT=300000)";
  std::string out;
  if (policy) out = std::string("OMP_WAIT_POLICY=") + policy;
  if (spin) out += (out.empty() ? "" : " ") + std::string("GOMP_SPINCOUNT=") + spin;
  return out + (out == kDefaultWaitPolicy ? " (jetpde's default)" : " (environment)");
}

}  // namespace jetpde::compiler
