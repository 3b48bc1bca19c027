// The pieces of the _jetpde extension (module.cpp puts them together): one define_<area> per
// area, in the order module.cpp calls them (later areas use the classes of earlier ones).
#pragma once

#include <pybind11/pybind11.h>

namespace jetpde::python {

namespace py = pybind11;

void define_errors(py::module_& m);    // errors.cpp: jetpde.Error
void define_config(py::module_& m);    // config.cpp: Config, load_config, config_from_text
void define_options(py::module_& m);   // options.cpp: the declared config keys
void define_geometry(py::module_& m);  // geometry.cpp: bounds and sampled points of a domain
void define_solution(py::module_& m);  // solution.cpp: Solution, load_run
void define_solve(py::module_& m);     // solve.cpp: solve (training, callbacks, Ctrl-C)

}  // namespace jetpde::python
