// The config schema: every key a YAML config may hold, its type, default and meaning, declared
// once. Validation, defaults, `--set` overrides and docs/config.md all come from it (DESIGN.md
// section 10; PETSc's options database is the model: one declaration per option).
//
//   YAML::Node resolved = io::resolve_config(YAML::LoadFile(path), path);  // defaults filled in
//
// Errors name the key path and the place: "burgers.yaml:12:5: training.stages[0].optimizer:
// 'adma' is not one of adam, lbfgs".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace jetpde::io {

struct Key {
  enum class Type {
    string,    // any text (expressions, names, paths)
    integer,   // a whole number
    number,    // a real number
    boolean,   // true / false
    choice,    // one of `choices`
    numbers,   // a list of numbers
    integers,  // a list of whole numbers
    strings,   // a list of texts (a single text counts as a list of one)
    points,    // a list of points, each a list of numbers: [[0, 0], [1, 0]]
    table,     // a mapping name -> number or expression text (constants, parameters)
    object,    // a mapping with the keys `children`
    list       // a list of objects, each with the keys `children`
  };
  std::string name;
  Type type = Type::string;
  std::string default_value;  // YAML text; "" with required = false: absent unless given
  bool required = false;
  bool optional = false;  // an object that is absent unless given (otherwise its defaults apply)
  std::vector<std::string> choices;
  std::string doc;
  std::vector<std::shared_ptr<const Key>> children;  // object and list

  const Key* child(const std::string& key) const;
};

// The root of the schema (an object).
const Key& config_schema();

// `config` checked against the schema, with every default filled in. UserError naming the key
// path, with `source:line:column:` when the node has a position (a --set override has none).
YAML::Node resolve_config(const YAML::Node& config, const std::string& source);

// "source:line:column: " for a node read from the file, "source: " for one that was not (a
// default, an override): the prefix of every config error.
std::string config_place(const YAML::Node& node, const std::string& source);

// Applies `path=value` (as given to --set: "training.stages.0.steps=100") to `config`; value is
// YAML ("[1, 2]", "true", "0.01"). UserError naming the override when the path is malformed.
void apply_override(YAML::Node& config, const std::string& assignment);

// Every key path of the schema ("training.stages[].optimizer"), depth first.
std::vector<std::string> schema_paths();
// The reference table of docs/config.md: one row per key (path, type, default, meaning).
std::string schema_markdown();

}  // namespace jetpde::io
