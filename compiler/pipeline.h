// The compiler's one linear pipeline (docs/design.md section 7): verify, then each pass in order,
// logging before each pass and dumping the IR after it when asked.
#pragma once

#include <optional>
#include <string>

#include "compiler/module.h"
#include "compiler/passes.h"

namespace jetpde::compiler {

struct PipelineOptions {
  PrecisionPolicy precision = PrecisionPolicy::as_built;  // see precision.cpp
  // What `automatic` stands for; unset: resolve_auto's choice for the backend that compiles.
  // Tests and benchmarks set it to run auto's machinery (the trainer's check against fp32) where
  // this machine would choose fp32.
  std::optional<PrecisionPolicy> auto_as;
  bool log = false;  // one line per pass on stderr
  // empty: no dump; "-" or "1": stderr; else a directory for NN-pass.ir files and, from the
  // backends that lower them, the kernel program of each (kernels-N.txt, dump_program).
  std::string dump_ir;
  // log from JETPDE_LOG (set and not "0"), dump_ir from JETPDE_DUMP_IR, auto_as from
  // JETPDE_AUTO_PRECISION (a policy's name: measuring auto's check where it would mean fp32).
  static PipelineOptions from_environment();
  // `precision` with `automatic` resolved for `backend` (by auto_as where set).
  PrecisionPolicy resolved(Backend backend) const;
};

// verify -> precision -> simplify -> fold_constants -> stack_gemms -> eliminate_dead_code,
// verifying after every pass in debug builds.
Module optimize(Module module, const PipelineOptions& options);

// Writes `listing` (a kernel program's Program::to_text) where options.dump_ir says: to stderr, or
// to the next free kernels-N.txt of its directory. Nothing when dump_ir is empty.
void dump_program(const PipelineOptions& options, const std::string& listing);

}  // namespace jetpde::compiler
