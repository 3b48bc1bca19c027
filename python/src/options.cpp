// The config keys as their modules declare them (autodiff/options.h, mounted by
// io/config_schema.cpp): jetpde.Network, jetpde.Adam, jetpde.Dirichlet, ... take exactly these
// keywords, and their docstrings are written from them (python/jetpde/_problem.py).
#include <pybind11/stl.h>

#include "io/config_schema.h"
#include "python/src/bindings.h"
#include "solvers/optimizer.h"

namespace jetpde::python {

namespace {

const char* type_word(options::Key::Type type) {
  using T = options::Key::Type;
  switch (type) {
    case T::string:
      return "string";
    case T::integer:
      return "integer";
    case T::number:
      return "number";
    case T::boolean:
      return "boolean";
    case T::choice:
      return "choice";
    case T::numbers:
      return "numbers";
    case T::integers:
      return "integers";
    case T::strings:
      return "strings";
    case T::points:
      return "points";
    case T::table:
      return "table";
    case T::object:
      return "object";
    case T::list:
      return "list";
  }
  return "?";
}

using Row =
    std::tuple<std::string, std::string, std::string, std::string, std::vector<std::string>, bool>;

std::vector<Row> rows(const std::vector<options::KeyPtr>& keys) {
  std::vector<Row> out;
  for (const options::KeyPtr& k : keys)
    out.emplace_back(k->name, type_word(k->type), k->default_value, options::described(*k),
                     k->choices, k->required);
  return out;
}

}  // namespace

void define_options(py::module_& m) {
  m.def(
      "option_keys",
      [](const std::string& path) {
        const options::Key* k =
            path.empty() ? &io::config_schema() : io::schema_key(io::config_schema(), path);
        if (!k) throw UserError("option_keys: no key '" + path + "' in the config schema");
        if (k->type != options::Key::Type::object && k->type != options::Key::Type::list)
          throw UserError("option_keys: '" + path + "' is a value, not a mapping of keys");
        return rows(k->children);
      },
      py::arg("path"),
      "The keys of the mapping at `path` of the config schema (\"\": the top level, \"network\", "
      "\"conditions[]\", \"conditions[].data\", ...), each (name, type, default, doc, choices, "
      "required); default is YAML text, \"\" when none.");
  m.def(
      "optimizer_keys", [](const std::string& name) { return rows(solvers::stage_keys(name)); },
      py::arg("name"),
      "The keys a training stage of optimizer `name` takes (name, optimizer, steps and its own), "
      "as option_keys gives them.");
  m.def("optimizer_names", &solvers::optimizer_names, "The registered optimizers, sorted.");
}

}  // namespace jetpde::python
