// The compiler's one linear pipeline (docs/design.md section 7): verify, then each pass in order,
// logging before each pass and dumping the IR after it when asked.
#pragma once

#include <string>

#include "compiler/module.h"
#include "compiler/passes.h"

namespace jetpde::compiler {

struct PipelineOptions {
  PrecisionPolicy precision = PrecisionPolicy::as_built;  // see precision.cpp
  bool log = false;                                       // one line per pass on stderr
  std::string dump_ir;  // empty: no dump; "-" or "1": stderr; else a directory for NN-pass.ir files
  // log from JETPDE_LOG (set and not "0"), dump_ir from JETPDE_DUMP_IR.
  static PipelineOptions from_environment();
};

// verify -> precision -> simplify -> fold_constants -> stack_gemms -> eliminate_dead_code,
// verifying after every pass in debug builds.
Module optimize(Module module, const PipelineOptions& options);

}  // namespace jetpde::compiler
