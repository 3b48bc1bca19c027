// Dead-code elimination: rebuilding from the outputs keeps only what they need.
#include "compiler/passes.h"

namespace jetpde::compiler {

Module eliminate_dead_code(const Module& in) { return rewrite(in); }

}  // namespace jetpde::compiler
