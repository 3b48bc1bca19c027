// The config schema: every key a YAML config may hold, its type, default and meaning, declared
// once. Validation, defaults, `--set` overrides and docs/config.md all come from it (docs/design.md
// section 10; PETSc's options database is the model: one declaration per option).
//
//   YAML::Node resolved = io::resolve_config(YAML::LoadFile(path), path);  // defaults filled in
//
// Errors name the key path and the place: "burgers.yaml:12:5: training.stages[0].optimizer:
// 'adma' is not one of adam, lbfgs".
#pragma once

#include <memory>
#include <optional>
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
  // integer, number and their lists: the allowed range, checked where the value is read (every
  // integer also fits an `int` unless `max` says more; `*_open`: strictly above / below).
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
  std::string doc;
  std::vector<std::shared_ptr<const Key>> children;  // object and list

  const Key* child(const std::string& key) const;
};

// The root of the schema (an object).
const Key& config_schema();

// `config` checked against the schema, with every default filled in. UserError naming the key
// path, with `source:line:column:` when the node has a position (a --set override has none).
// Numbers may be constant expressions (`pi/2`, `0.01/pi`), integers too when the value is whole
// (`1e4`, `2^12`): evaluated once, the node then holds the value. YAML aliases are followed, but a
// config that expands to more than `max_config_values` values, or nests deeper than
// `max_config_depth`, is refused (a "billion laughs" file, a cycle).
YAML::Node resolve_config(const YAML::Node& config, const std::string& source);
inline constexpr long max_config_values = 100000;
inline constexpr long max_config_depth = 32;

// The value of a number written as a number or a constant expression of pi and e ("pi/2");
// false when it is neither (`why` gets the reason) or not finite.
bool number_value(const std::string& text, double* value, std::string* why);

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
