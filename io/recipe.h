// The default recipe (docs/config.md, "The default recipe"): a PINN config without training
// stages (no `training` section, or one with other keys only, such as max_time) and without
// `training: {recipe: none}`, or any config with `training: {recipe: auto}`, gets the network, the
// sampling and the training chosen from the problem, as config keys. The config loader reads the
// problem once to learn its facts (time, the derivatives' orders, periodic coordinates, the
// domain's size, the loss terms), adds the keys the recipe chooses that the config does not give,
// and reads the result: so the choice is ordinary config, printed at the start of a run and written
// into its config.yaml, and running that file again makes the same run.
//
//   YAML::Node raw = YAML::Load(text);
//   if (io::wants_recipe(raw)) {
//     io::Recipe r = io::apply_recipe(raw, io::problem_facts(first_reading.spec));
//     std::puts(r.describe().c_str());   // "recipe auto: time-dependent ... chose: ..."
//   }
//
// What the config gives wins: a `network` section (or a decomposition's network) is kept whole;
// of `sampling`, `training` and `training.weighting` each key the config gives is kept and the
// others are filled. training.stages is chosen only when the config has none.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "autodiff/options.h"
#include "solvers/spec.h"

namespace jetpde::io {

// training.recipe: none (the config's training as written, the schema's defaults for the rest) or
// auto (this file). A PINN config that gives no training.stages and no recipe is auto.
enum class RecipeKind { none, automatic };
const options::EnumTable<RecipeKind>& recipe_names();

// What the recipe reads of a problem.
struct ProblemFacts {
  bool time = false;      // a time coordinate (the last one)
  double t0 = 0, t1 = 0;  // its interval
  int spatial_dims = 0;   // spatial coordinates
  int max_order = 0;      // the highest total derivative order in the equations
  int time_order = 0;     // the highest order in time
  std::vector<std::pair<std::string, double>> periodic;  // coordinate, period (periodic
                                                         // conditions on a box)
  int periodic_conditions = 0;                           // of the conditions
  int loss_terms = 0;                // equations and conditions (each a loss term)
  bool can_march = false;            // time windows would be accepted (solvers/marching.h)
  std::vector<std::string> spatial;  // the spatial coordinates' names
  std::vector<double> extents;       // the bounding box's side per coordinate (time last)
};
ProblemFacts problem_facts(const solvers::ProblemSpec& spec);

struct Recipe {
  bool applied = false;
  std::string facts;  // what it read ("time-dependent (t in [0, 1]), derivatives to order 2, ...")
  std::vector<std::pair<std::string, std::string>> chosen;  // key path -> value (YAML flow)
  std::vector<std::string> kept;                            // what the config gave
  // "recipe auto: <facts>\n  chose network: {...}\n  ...\n  kept from the config: network".
  std::string describe() const;
};

// True for a PINN config (solver.type absent or pinn) with training.recipe: auto, or with
// neither a recipe nor stages. Nothing is checked here (the schema checks the value later).
bool wants_recipe(const YAML::Node& raw);

// Adds to `raw` the recipe's keys that it lacks (and training.recipe: auto) and says what it did.
Recipe apply_recipe(YAML::Node& raw, const ProblemFacts& facts);

}  // namespace jetpde::io
