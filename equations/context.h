// Context: the symbol table an expression is parsed against.
//
// It declares the fields (the network's outputs, in output-column order), the coordinates (the
// input's columns, in order; at most one of them is time), constants with values, trainable
// scalar parameters with initial values, and definitions (named sub-expressions, parsed when
// declared and inlined where used). Declare fields and coordinates before the definitions that
// use them.
//
//   Context ctx;
//   ctx.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / M_PI);
//   ctx.define("f", "sin(pi*x)");   // usable as `f` in later expressions
//
// Spatial coordinates are the coordinates less time: the Laplacian, grad, div and the normal n
// range over them. Reserved names (UserError when declared): pi, n, d, and the function names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "equations/expr.h"

namespace jetpde::equations {

enum class SymbolKind { field, coordinate, constant, param, definition };
const char* symbol_kind_name(SymbolKind kind);  // "field", "coordinate", ...

struct Symbol {
  SymbolKind kind = SymbolKind::field;
  std::string name;
  int index = -1;      // field and coordinate: position in declaration order
  double value = 0.0;  // constant: value; param: initial value
  Expr expr;           // definition: the parsed expression
  std::string text;    // definition: its source
};

class Context {
 public:
  Context& field(const std::string& name);
  Context& fields(const std::vector<std::string>& names);
  Context& coordinate(const std::string& name);
  Context& coordinates(const std::vector<std::string>& names);
  // Declares a coordinate that is time (at most one); it is excluded from spatial operators.
  Context& time(const std::string& name);
  Context& constant(const std::string& name, double value);
  Context& param(const std::string& name, double initial);
  // Parses `text` now (UserError with its column when it is wrong) and inlines it wherever
  // `name` appears later. A definition may be a vector (e.g. "vec(1, 0)").
  Context& define(const std::string& name, const std::string& text);

  const std::vector<std::string>& field_names() const { return fields_; }
  const std::vector<std::string>& coordinate_names() const { return coordinates_; }
  int time_index() const { return time_; }  // -1 when no coordinate is time
  // Indices of the spatial coordinates, in declaration order.
  std::vector<int> spatial() const;
  std::vector<std::string> spatial_names() const;
  int field_index(const std::string& name) const;             // -1 when not a field
  int coordinate_index(const std::string& name) const;        // -1 when not a coordinate
  const Symbol* find(const std::string& name) const;          // nullptr when undeclared
  std::vector<const Symbol*> symbols(SymbolKind kind) const;  // in declaration order

 private:
  void declare(Symbol symbol);

  std::vector<Symbol> symbols_;
  std::map<std::string, std::size_t> by_name_;
  std::vector<std::string> fields_, coordinates_;
  int time_ = -1;
};

// Whether `name` is reserved by the language (pi, n, d, and, or, not, function names).
bool is_reserved(const std::string& name);

}  // namespace jetpde::equations
