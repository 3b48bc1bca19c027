// Linked into executables (jetpde::openmp_defaults): starts the process's OpenMP runtime with
// jetpde's wait policy unless the user chose one (compiler/openmp_env.h). Runs from
// .preinit_array, before any shared library's constructor (libgomp reads the policy in its
// own): when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, the process re-executes itself
// with kDefaultWaitPolicy added. Nothing of the program has run yet, so nothing is lost; should the
// exec fail, the program goes on with libgomp's default.
#include <alloca.h>
#include <unistd.h>

#include <cstring>

#include "compiler/openmp_env.h"

namespace {

void start_with_openmp_defaults(int, char** argv, char** env) {
  if (!jetpde::compiler::openmp_wait_policy_unset(env)) return;
  std::size_t n = 0;
  while (env && env[n]) ++n;
  // No allocation: libc is not initialized yet.
  char** with = static_cast<char**>(alloca(sizeof(char*) * (n + 2)));
  if (n) std::memcpy(with, env, sizeof(char*) * n);
  with[n] = const_cast<char*>(jetpde::compiler::kDefaultWaitPolicy);
  with[n + 1] = nullptr;
  ::execve("/proc/self/exe", argv, with);
}

[[gnu::section(".preinit_array"),
  gnu::used]] void (*const preinit_openmp_defaults)(int, char**,
                                                    char**) = start_with_openmp_defaults;

}  // namespace
