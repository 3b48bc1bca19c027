// How the OpenMP runtime's threads wait, and where jetpde sets it.
//
// libgomp reads its wait policy once, when it is loaded (a constructor that runs before main):
// an idle thread spins GOMP_SPINCOUNT times (300000, a few milliseconds, when neither
// OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set) before it sleeps. A step of the CPU backend is many
// short parallel regions (kernels and GEMMs) with serial work between them, so the waiting
// threads spin through most of a step; with another process on one of the cores they take its
// time slices from the thread that has work, and a 2-thread step ran several times slower than a
// 1-thread one (bench/README.md, section "Threads", has the figures). jetpde therefore starts its
// processes with kDefaultWaitPolicy (a short spin), unless the user chose a policy (either variable
// set).
//
// Setting it in main is too late: programs link libgomp (the kernels, oneDNN and OpenBLAS all run
// on it), so its constructor has run; and setenv before libc's own initialization (from
// .preinit_array) is undone by it. An executable that links `jetpde::openmp_defaults`
// (compiler/openmp_start.cpp) therefore checks its environment from .preinit_array, before any
// shared library's constructor, and when neither variable is set re-executes itself
// (/proc/self/exe, same arguments) with kDefaultWaitPolicy added: a second program load, a few
// milliseconds, before anything has run. Programs that embed the library and do not link it keep
// libgomp's default, or whatever their environment says.
#pragma once

#include <string>

namespace jetpde::compiler {

// The variable jetpde adds, as NAME=VALUE: a thread without work spins 1000 times (a few
// microseconds) for the next parallel region, then sleeps. On a quiet machine it kept 92-98% of
// libgomp's default speed, where passive (sleep at once) lost 24-59% to wake-ups; with a
// competing process it ran 1.1-1.8x libgomp's default (passive 1.8-2.0x) and, on a machine
// loaded by several builds, 8-50x (bench/README.md, "Threads").
inline constexpr const char* kDefaultWaitPolicy = "GOMP_SPINCOUNT=1000";

// Whether `environment` (a null-terminated NAME=VALUE array) leaves the wait policy to jetpde:
// neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is in it (set, even empty, is the user's choice).
bool openmp_wait_policy_unset(char** environment);

// The wait policy this process's OpenMP runtime was started with, for `jetpde info`:
// "GOMP_SPINCOUNT=1000 (jetpde's default)", "OMP_WAIT_POLICY=active (environment)", or
// "libgomp's default (GOMP_SPINCOUNT=300000)".
std::string openmp_wait_policy();

}  // namespace jetpde::compiler
