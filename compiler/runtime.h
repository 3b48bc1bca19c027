// A backend's runtime role (thin: see docs/design.md section 7): memory and launches for one
// compiled program. The Executable validates names and shapes and then hands over to a Runtime;
// backends that are built only where their toolkit exists (CUDA) register a factory instead of
// being named in the Executable, so no #ifdef appears outside their own folder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "compiler/executable.h"
#include "compiler/module.h"

namespace jetpde::compiler {

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual void set(const std::string& name, const MatrixD& value) = 0;
  virtual void run() = 0;
  // Runs once, timing each step (empty where steps are not separate).
  virtual std::vector<double> run_timed() {
    run();
    return {};
  }
  virtual MatrixD output(std::size_t k) const = 0;
  virtual const Program* program() const { return nullptr; }
};

struct RuntimeFactory {
  // Whether the backend can run here; otherwise `why` says why not.
  bool (*available)(const CompileOptions& options, std::string* why) = nullptr;
  // Compiles the (optimized) module; fills the stats it knows.
  std::unique_ptr<Runtime> (*make)(const Module& module, const CompileOptions& options,
                                   CompileStats& stats) = nullptr;
  // The bytes its memory has free now (host memory, or the device's); 0 when unknown.
  std::int64_t (*free_memory)() = nullptr;
};

// Registers the runtime of `backend`; returns true so that it can initialize a static.
bool register_runtime(Backend backend, RuntimeFactory factory);
const RuntimeFactory* find_runtime(Backend backend);

}  // namespace jetpde::compiler
