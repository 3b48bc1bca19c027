#include "solvers/optimizer.h"

#include <mutex>

#include "autodiff/errors.h"
#include "nn/adam.h"
#include "nn/detail/names.h"
#include "nn/lbfgs.h"
#include "nn/soap.h"

namespace jetpde::solvers {

// The built-in kinds, one file each in solvers/optimizers/.
std::unique_ptr<Optimizer> make_adam(const Stage& stage, const nn::ParameterLayout& layout);
std::unique_ptr<Optimizer> make_adamw(const Stage& stage, const nn::ParameterLayout& layout);
std::unique_ptr<Optimizer> make_lbfgs(const Stage& stage, const nn::ParameterLayout& layout);
std::any read_adam_options(const Stage& stage, const options::Values& values);
std::any read_adamw_options(const Stage& stage, const options::Values& values);
std::unique_ptr<Optimizer> make_soap(const Stage& stage, const nn::ParameterLayout& layout);
std::any read_lbfgs_options(const Stage& stage, const options::Values& values);
std::any read_soap_options(const Stage& stage, const options::Values& values);

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, OptimizerKind> kinds;
};

// The registry with the built-in kinds: an explicit table rather than self-registering objects,
// which a static library would drop when nothing else in their file is referenced.
Registry& registry() {
  static Registry r{.mutex = {},
                    .kinds = {
                        {"adam",
                         {.make = make_adam,
                          .line_search = false,
                          .keys = nn::adam_options().keys(),
                          .read_options = read_adam_options}},
                        {"adamw",
                         {.make = make_adamw,
                          .line_search = false,
                          .keys = nn::adam_options().keys(),
                          .read_options = read_adamw_options}},
                        {"lbfgs",
                         {.make = make_lbfgs,
                          .line_search = true,
                          .keys = nn::lbfgs_options().keys(),
                          .read_options = read_lbfgs_options}},
                        {"soap",
                         {.make = make_soap,
                          .line_search = false,
                          .keys = nn::soap_options().keys(),
                          .read_options = read_soap_options}},
                    }};
  return r;
}

std::string known_names() {
  std::string out;
  for (const std::string& n : optimizer_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

namespace detail {

void options_mismatch(const Stage& stage) {
  throw UserError("stage '" + stage.name + "': its options are not of the type optimizer '" +
                  stage.optimizer + "' takes");
}

void state_mismatch(const std::string& kind, const std::string& name, bool missing) {
  throw UserError("optimizer state '" + kind + "': " +
                  (missing ? "no value '" + name + "'" : "'" + name + "' is of another type"));
}

}  // namespace detail

bool Stage::line_search() const { return optimizer_kind(optimizer).line_search; }

std::string Optimizer::ending(int steps, double loss) const {
  return std::to_string(steps) + " steps, loss " + nn::detail::short_number(loss, 3);
}

void register_optimizer(const std::string& name, OptimizerKind kind) {
  if (name.empty()) throw UserError("register_optimizer: an empty name");
  if (!kind.make) throw UserError("register_optimizer: '" + name + "' has no factory");
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (!r.kinds.emplace(name, std::move(kind)).second)
    throw UserError("register_optimizer: '" + name + "' is registered already");
}

const OptimizerKind& optimizer_kind(const std::string& name) {
  Registry& r = registry();
  {
    const std::lock_guard lock(r.mutex);
    // Entries are never removed, and std::map does not move them: the reference stays valid.
    const auto it = r.kinds.find(name);
    if (it != r.kinds.end()) return it->second;
  }
  throw UserError("unknown optimizer '" + name + "' (known: " + known_names() + ")");
}

std::vector<std::string> optimizer_names() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, kind] : r.kinds) names.push_back(name);
  return names;
}

namespace {

std::vector<options::KeyPtr> common_stage_keys() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  return {
      key("name", T::string, "", "Label in the progress line and history (default: optimizer)."),
      options::choice("optimizer", optimizer_names(), "adam", "The optimizer."),
      at_least(1, key("steps", T::integer, "1000", "Adam or SOAP updates, or L-BFGS iterations."))};
}

// Last, after the kind's keys: keys every stage has but few set.
std::vector<options::KeyPtr> rare_stage_keys() {
  return {options::choice("precision", compiler::precision_names(), "",
                          "Arithmetic of this stage's compiled step (default: the run's "
                          "`precision`); `fp64` on an L-BFGS stage after f32 ones polishes "
                          "where f32 can no longer lower the loss."),
          options::within(0, 1,
                          options::key("time_share", options::Key::Type::number, "0",
                                       "With training.max_time: the stage ends once it has used "
                                       "this share of the time left when it started, so that "
                                       "the later stages still run (0: none of its own).")),
          options::at_least(
              0, options::key("resample_every", options::Key::Type::integer, "0",
                              "Draw the points again every this many steps of the stage; an "
                              "L-BFGS stage then starts afresh on them, its history dropped (0: "
                              "as sampling.resample_every, which never applies to L-BFGS).")),
          options::key("average", options::Key::Type::boolean, "false",
                       "With resample_every on an L-BFGS stage: end at the mean of the "
                       "parameters each run (one per draw) ended with, not at the last run's."),
          options::at_least(
              0, options::key("average_last", options::Key::Type::integer, "0",
                              "With average: the mean of only the last this many runs' ends, "
                              "the current run's included (0: every run's).")),
          options::key("hand_on", options::Key::Type::boolean, "false",
                       "The steps this stage leaves when its optimizer stops before them (an "
                       "f32 L-BFGS stage f32 can no longer move) go to the next stage.")};
}

}  // namespace

std::vector<options::KeyPtr> stage_keys() {
  std::vector<options::KeyPtr> out = common_stage_keys();
  for (const std::string& name : optimizer_names())
    out = options::merged(std::move(out), optimizer_kind(name).keys);
  for (options::KeyPtr& k : rare_stage_keys()) out.push_back(std::move(k));
  return out;
}

std::vector<options::KeyPtr> stage_keys(const std::string& optimizer) {
  std::vector<options::KeyPtr> out =
      options::merged(common_stage_keys(), optimizer_kind(optimizer).keys);
  for (options::KeyPtr& k : rare_stage_keys()) out.push_back(std::move(k));
  return out;
}

Stage stage_from_values(const options::Values& values) {
  Stage stage;
  if (const auto it = values.find("optimizer"); it != values.end())
    stage.optimizer = options::as<std::string>(it->second);
  stage.name = stage.optimizer;
  if (const auto it = values.find("name"); it != values.end())
    stage.name = options::as<std::string>(it->second);
  if (const auto it = values.find("steps"); it != values.end())
    stage.steps = options::as<int>(it->second);
  if (const auto it = values.find("precision"); it != values.end())
    stage.precision = compiler::precision_names().from_name(options::as<std::string>(it->second));
  if (const auto it = values.find("time_share"); it != values.end())
    stage.time_share = options::as<double>(it->second);
  if (const auto it = values.find("resample_every"); it != values.end())
    stage.resample_every = options::as<int>(it->second);
  if (const auto it = values.find("average"); it != values.end())
    stage.average = options::as<bool>(it->second);
  if (const auto it = values.find("average_last"); it != values.end())
    stage.average_last = options::as<int>(it->second);
  if (const auto it = values.find("hand_on"); it != values.end())
    stage.hand_on = options::as<bool>(it->second);
  const OptimizerKind& kind = optimizer_kind(stage.optimizer);
  if (kind.read_options) stage.options = kind.read_options(stage, values);
  return stage;
}

std::unique_ptr<Optimizer> make_optimizer(const Stage& stage, const nn::ParameterLayout& layout) {
  const OptimizerKind& kind = [&]() -> const OptimizerKind& {
    try {
      return optimizer_kind(stage.optimizer);
    } catch (const UserError& e) {
      throw UserError("stage '" + stage.name + "': " + e.what());
    }
  }();
  return kind.make(stage, layout);
}

}  // namespace jetpde::solvers
