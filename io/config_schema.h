// The config schema: every key a YAML config may hold, its type, default and meaning. Each key is
// declared once, by the module whose options struct it sets (autodiff/options.h: nn declares the
// network's and Adam's keys, solvers the conditions', the registry's kinds their stage keys, ...);
// this file mounts those declarations at their paths and adds io's own keys. Validation,
// defaults, `--set` overrides and docs/config.md all come from it (docs/design.md section 10;
// PETSc's PetscOptionsBegin beside each object is the model).
//
//   YAML::Node resolved = io::resolve_config(YAML::LoadFile(path), path);  // defaults filled in
//
// Errors name the key path and the place: "burgers.yaml:12:5: training.stages[0].optimizer:
// 'adma' is not one of adam, adamw, lbfgs".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "autodiff/options.h"

namespace jetpde::io {

// The key type and its builders are options' (autodiff/options.h): each module declares the keys
// of its options structs there, and this schema mounts them at their paths.
using Key = options::Key;

// The root of the schema (an object), built at first use from the modules' declarations.
const Key& config_schema();
// A schema built now from the declarations as they are (an optimizer registered since
// config_schema() was built shows in it). Its geometry keys hold a cycle (`of`): keep it for the
// program's life.
std::shared_ptr<const Key> build_config_schema();

// `config` checked against the schema, with every default filled in. UserError naming the key
// path, with `source:line:column:` when the node has a position (a --set override has none).
// Numbers may be constant expressions (`pi/2`, `0.01/pi`), integers too when the value is whole
// (`1e4`, `2^12`): evaluated once, the node then holds the value. YAML aliases are followed, but a
// config that expands to more than `max_config_values` values, or nests deeper than
// `max_config_depth`, is refused (a "billion laughs" file, a cycle).
YAML::Node resolve_config(const YAML::Node& config, const std::string& source);
// The same against another schema (build_config_schema()).
YAML::Node resolve_config(const YAML::Node& config, const std::string& source, const Key& schema);
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

// The values that `node` (a resolved mapping) holds for `keys`, as a declaration reads them
// (options::Declaration::read): integers as long long, choices as text, lists as vectors. Keys
// whose type has no options::Value (objects, lists, tables, points) and absent ones are left out.
options::Values option_values(const std::vector<options::KeyPtr>& keys, const YAML::Node& node);
// Sets `out` from the resolved mapping `node` through the declaration `d` (its keys' values).
template <class S>
void read_declared(const options::Declaration<S>& d, const YAML::Node& node, S& out) {
  d.read(out, option_values(d.keys(), node));
}

// Every key path of the schema ("training.stages[].optimizer"), depth first.
std::vector<std::string> schema_paths();
std::vector<std::string> schema_paths(const Key& schema);
// The reference table of docs/config.md: one row per key (path, type, default, meaning).
std::string schema_markdown();
std::string schema_markdown(const Key& schema);
// The key at a path of schema_paths() ("training.stages[].optimizer"); nullptr when none.
const Key* schema_key(const Key& schema, const std::string& path);

}  // namespace jetpde::io
