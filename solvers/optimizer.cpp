#include "solvers/optimizer.h"

#include <mutex>

#include "autodiff/errors.h"
#include "nn/detail/names.h"

namespace jetpde::solvers {

// The built-in kinds, one file each in solvers/optimizers/.
std::unique_ptr<Optimizer> make_adam(const Stage& stage, const nn::ParameterLayout& layout);
std::unique_ptr<Optimizer> make_adamw(const Stage& stage, const nn::ParameterLayout& layout);
std::unique_ptr<Optimizer> make_lbfgs(const Stage& stage, const nn::ParameterLayout& layout);

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
                        {"adam", {.make = make_adam, .line_search = false}},
                        {"adamw", {.make = make_adamw, .line_search = false}},
                        {"lbfgs", {.make = make_lbfgs, .line_search = true}},
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
