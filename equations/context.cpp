// Context: declarations, their checks, and look-up.
#include "equations/context.h"

#include <algorithm>
#include <cctype>

#include "autodiff/errors.h"
#include "equations/parser.h"

namespace jetpde::equations {

const char* symbol_kind_name(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::field:
      return "field";
    case SymbolKind::coordinate:
      return "coordinate";
    case SymbolKind::constant:
      return "constant";
    case SymbolKind::param:
      return "parameter";
    case SymbolKind::definition:
      return "definition";
  }
  return "?";
}

bool is_reserved(const std::string& name) {
  static const char* const reserved[] = {"pi", "n", "d", "grad", "div", "dot", "laplacian", "vec"};
  if (std::any_of(std::begin(reserved), std::end(reserved),
                  [&](const char* r) { return name == r; }))
    return true;
  // The functions (autodiff/functions.h) and the word operators: and, or, not.
  for (const functions::Info& f : functions::infos()) {
    const char* spelling = f.symbol ? f.symbol : f.name;
    if (name == spelling) return true;
  }
  return false;
}

namespace {
bool is_identifier(const std::string& name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}
}  // namespace

void Context::declare(Symbol symbol) {
  const std::string& name = symbol.name;
  if (!is_identifier(name))
    throw UserError("context: '" + name +
                    "' is not a name (letters, digits and '_', starting with a letter)");
  if (is_reserved(name))
    throw UserError(
        "context: '" + name +
        "' is reserved by the expression language (pi, n, d, the functions, and, or, not)");
  if (const Symbol* old = find(name))
    throw UserError("context: '" + name + "' is already declared as a " +
                    symbol_kind_name(old->kind));
  by_name_[name] = symbols_.size();
  symbols_.push_back(std::move(symbol));
}

Context& Context::field(const std::string& name) {
  declare({SymbolKind::field, name, static_cast<int>(fields_.size()), 0.0, {}, {}});
  fields_.push_back(name);
  return *this;
}

Context& Context::fields(const std::vector<std::string>& names) {
  for (const std::string& n : names) field(n);
  return *this;
}

Context& Context::coordinate(const std::string& name) {
  declare({SymbolKind::coordinate, name, static_cast<int>(coordinates_.size()), 0.0, {}, {}});
  coordinates_.push_back(name);
  return *this;
}

Context& Context::coordinates(const std::vector<std::string>& names) {
  for (const std::string& n : names) coordinate(n);
  return *this;
}

Context& Context::time(const std::string& name) {
  if (time_ >= 0)
    throw UserError("context: a second time coordinate '" + name + "' (time is '" +
                    coordinates_[static_cast<std::size_t>(time_)] + "')");
  coordinate(name);
  time_ = static_cast<int>(coordinates_.size()) - 1;
  return *this;
}

Context& Context::constant(const std::string& name, double value) {
  declare({SymbolKind::constant, name, -1, value, {}, {}});
  return *this;
}

Context& Context::param(const std::string& name, double initial) {
  declare({SymbolKind::param, name, -1, initial, {}, {}});
  return *this;
}

Context& Context::define(const std::string& name, const std::string& text) {
  Expr expr = parse_definition(text, *this, name);
  declare({SymbolKind::definition, name, -1, 0.0, std::move(expr), text});
  return *this;
}

std::vector<int> Context::spatial() const {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(coordinates_.size()); ++i)
    if (i != time_) out.push_back(i);
  return out;
}

std::vector<std::string> Context::spatial_names() const {
  std::vector<std::string> out;
  for (int i : spatial()) out.push_back(coordinates_[static_cast<std::size_t>(i)]);
  return out;
}

int Context::field_index(const std::string& name) const {
  const Symbol* s = find(name);
  return s && s->kind == SymbolKind::field ? s->index : -1;
}

int Context::coordinate_index(const std::string& name) const {
  const Symbol* s = find(name);
  return s && s->kind == SymbolKind::coordinate ? s->index : -1;
}

const Symbol* Context::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &symbols_[it->second];
}

std::vector<const Symbol*> Context::symbols(SymbolKind kind) const {
  std::vector<const Symbol*> out;
  for (const Symbol& s : symbols_)
    if (s.kind == kind) out.push_back(&s);
  return out;
}

}  // namespace jetpde::equations
