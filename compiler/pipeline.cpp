#include "compiler/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "autodiff/verify.h"
#include "compiler/passes.h"

namespace jetpde::compiler {
namespace {

struct NamedPass {
  const char* name;
  Module (*run)(const Module&);
};

constexpr NamedPass kPasses[] = {
    {"simplify", simplify},
    {"fold_constants", fold_constants},
    {"stack_gemms", stack_gemms},
    {"eliminate_dead_code", eliminate_dead_code},
};

bool dump_to_stderr(const PipelineOptions& o) { return o.dump_ir == "-" || o.dump_ir == "1"; }

void dump(const PipelineOptions& o, int index, const char* name, const Module& m) {
  if (o.dump_ir.empty()) return;
  const std::vector<Var> outs = m.output_vars();
  const std::string text = to_text(*m.graph, outs);
  if (dump_to_stderr(o)) {
    std::cerr << "// after " << name << "\n" << text;
    return;
  }
  std::filesystem::create_directories(o.dump_ir);
  char file[64];
  std::snprintf(file, sizeof file, "%02d-%s.ir", index, name);
  std::ofstream(std::filesystem::path(o.dump_ir) / file) << text;
}

}  // namespace

void dump_program(const PipelineOptions& o, const std::string& listing) {
  if (o.dump_ir.empty()) return;
  if (dump_to_stderr(o)) {
    std::cerr << "// kernel program\n" << listing;
    return;
  }
  const std::filesystem::path dir(o.dump_ir);
  std::filesystem::create_directories(dir);
  for (int n = 0;; ++n) {
    const std::filesystem::path file = dir / ("kernels-" + std::to_string(n) + ".txt");
    if (!std::filesystem::exists(file)) {
      std::ofstream(file) << listing;
      return;
    }
  }
}

PipelineOptions PipelineOptions::from_environment() {
  PipelineOptions o;
  if (const char* log = std::getenv("JETPDE_LOG")) o.log = *log && std::string(log) != "0";
  if (const char* dump = std::getenv("JETPDE_DUMP_IR")) o.dump_ir = dump;
  if (const char* as = std::getenv("JETPDE_AUTO_PRECISION"); as && *as) {
    try {
      o.auto_as = precision_names().from_name(as);
    } catch (const UserError& e) {
      throw UserError(std::string("JETPDE_AUTO_PRECISION: ") + e.what());
    }
    if (*o.auto_as == PrecisionPolicy::automatic)
      throw UserError("JETPDE_AUTO_PRECISION: auto cannot stand for itself");
  }
  return o;
}

PrecisionPolicy PipelineOptions::resolved(Backend backend) const {
  if (precision != PrecisionPolicy::automatic) return precision;
  const PrecisionPolicy p = auto_as.value_or(resolve_auto(precision, backend));
  if (p == PrecisionPolicy::automatic || p == PrecisionPolicy::as_built)
    throw UserError("precision auto cannot stand for " + precision_name(p));
  return p;
}

Module optimize(Module m, const PipelineOptions& o) {
  verify(*m.graph);
  dump(o, 0, "input", m);
  int index = 1;
  if (o.precision != PrecisionPolicy::as_built) {
    if (o.log) std::cerr << "[jetpde] pass precision (" << precision_name(o.precision) << ")\n";
    m = apply_precision(m, o.precision);
    dump(o, index++, "precision", m);
  }
  for (const NamedPass& pass : kPasses) {
    if (o.log) std::cerr << "[jetpde] pass " << pass.name << ": " << m.graph->size() << " nodes\n";
    m = pass.run(m);
#ifndef NDEBUG
    verify(*m.graph);
#endif
    dump(o, index++, pass.name, m);
  }
  if (o.log) std::cerr << "[jetpde] optimized: " << m.graph->size() << " nodes\n";
  return m;
}

}  // namespace jetpde::compiler
