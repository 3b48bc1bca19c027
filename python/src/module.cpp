// The _jetpde extension module: the C++ side of the `jetpde` Python package (python/jetpde/).
// Every call into jetpde's C++ API goes through the files of this folder; the package's Python
// code builds configs, wraps results and documents the API.
#include "python/src/bindings.h"
#include "python/src/signals.h"

PYBIND11_MODULE(_jetpde, m) {
  m.doc() = "jetpde's C++ core (use the jetpde package, not this module)";
  jetpde::python::define_errors(m);
  jetpde::python::define_config(m);
  jetpde::python::define_options(m);
  jetpde::python::define_geometry(m);
  jetpde::python::define_solution(m);
  jetpde::python::define_solve(m);
  // Before any computing: the OpenMP threads never run a signal handler (signals.h).
  jetpde::python::start_threads_without_signals(0);
}
