// Config: a checked run description (io::RunConfig), from a YAML file or from YAML text (what
// jetpde.Problem writes). Both go through the schema of io/config_schema.h, so a problem written
// in Python gets the same defaults and the same errors as a YAML file.
#include <pybind11/stl.h>

#include <memory>

#include "io/config.h"
#include "python/src/bindings.h"

namespace jetpde::python {

namespace {

std::string dump(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

void define_config(py::module_& m) {
  py::class_<io::RunConfig, std::shared_ptr<io::RunConfig>>(
      m, "Config", "A checked run config: every default filled in, overrides applied.")
      .def_property_readonly("name", [](const io::RunConfig& c) { return c.name; })
      .def_property_readonly("source", [](const io::RunConfig& c) { return c.source; })
      .def_property_readonly("output_dir", [](const io::RunConfig& c) { return c.output.dir; })
      .def_property_readonly("seed", [](const io::RunConfig& c) { return c.seed; })
      .def_property_readonly("threads", [](const io::RunConfig& c) { return c.threads; })
      .def_property_readonly(
          "coordinates",
          [](const io::RunConfig& c) { return c.spec.math.domain->coordinate_names(); })
      .def_property_readonly(
          "fields", [](const io::RunConfig& c) { return c.spec.math.context.field_names(); })
      .def_property_readonly(
          "yaml", [](const io::RunConfig& c) { return dump(c.resolved); },
          "The resolved config as YAML (what the run folder's config.yaml holds).")
      .def_property_readonly(
          "recipe",
          [](const io::RunConfig& c) -> py::object {
            if (!c.recipe.applied) return py::none();
            return py::str(c.recipe.describe());
          },
          "What the default recipe read of the problem and chose (docs/config.md), or None when "
          "the config gave its training stages.");

  m.def(
      "load_config",
      [](const std::string& path, const std::vector<std::string>& overrides) {
        py::gil_scoped_release released;
        return std::make_shared<io::RunConfig>(io::load_run_config(path, overrides));
      },
      py::arg("path"), py::arg("overrides") = std::vector<std::string>{});
  m.def(
      "config_from_text",
      [](const std::string& text, const std::string& source, const std::string& base_dir,
         const std::vector<std::string>& overrides) {
        py::gil_scoped_release released;
        return std::make_shared<io::RunConfig>(
            io::run_config_from_text(text, source, base_dir, overrides));
      },
      py::arg("text"), py::arg("source"), py::arg("base_dir"),
      py::arg("overrides") = std::vector<std::string>{});
}

}  // namespace jetpde::python
