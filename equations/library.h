// The standard library of named equations (docs/design.md section 9). Each is defined by residual
// strings in the expression language, parsed through the same path as user equations, with its
// fields, coordinates (time is "t"; space is x, y, z, or x1 ... xd above 3 dimensions) and
// parameters with defaults.
//
//   Pde burgers = library_equation("burgers", {{"nu", "0.05"}});
//   // burgers.context: field u, coordinates x and t (time), constant nu = 0.05
//   // burgers.equations[0].text == "u_t + u*u_x = nu*u_xx"
//
// Parameter values are expression text. A value that is a constant ("0.01/pi") declares a
// constant; a parameter named in `trainable` becomes a trainable parameter with that initial
// value; a value that depends on the coordinates ("sin(pi*x)*sin(pi*y)") becomes a definition.
// Structural parameters (dim, steady) shape the equations themselves and take integers.
// library_info() lists every parameter with its default and meaning.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "equations/context.h"
#include "equations/parser.h"

namespace jetpde::equations {

struct LibraryParameter {
  std::string name;
  std::string default_value;  // expression text; "" for a parameter that is unset by default
  std::string meaning;
  bool structural = false;  // shapes the equations (dim, steady): an integer, never trainable
};

struct LibraryInfo {
  std::string name;
  std::string description;  // the equations, in words and symbols
  std::vector<LibraryParameter> parameters;
};

// A problem's equations: the Context they were parsed in and one residual each (labelled).
struct Pde {
  std::string name;
  Context context;
  std::vector<Equation> equations;
};

// Every equation's name, sorted.
std::vector<std::string> library_names();
// UserError listing the valid names for an unknown one.
const LibraryInfo& library_info(const std::string& name);
// UserError for an unknown equation or parameter (listing the valid ones), a structural value
// out of range, a trainable parameter whose value is not a constant.
Pde library_equation(const std::string& name, const std::map<std::string, std::string>& values = {},
                     const std::set<std::string>& trainable = {});

}  // namespace jetpde::equations
