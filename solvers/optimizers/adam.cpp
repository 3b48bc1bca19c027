// Adam and AdamW (nn::Adam) as a trainer's optimizer: one evaluation and one update a step.
#include <cmath>

#include "autodiff/errors.h"
#include "nn/adam.h"
#include "solvers/optimizer.h"

namespace jetpde::solvers {
namespace {

class AdamOptimizer final : public Optimizer {
 public:
  explicit AdamOptimizer(nn::AdamOptions options) : adam_(options) {}

  Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) override {
    const double loss = evaluate(theta, g_);
    if (!std::isfinite(loss) || !g_.allFinite()) return {.kind = Step::Kind::non_finite};
    const double lr = adam_.learning_rate();
    adam_.step(theta, g_);
    return {.kind = Step::Kind::stepped, .loss = loss, .learning_rate = lr};
  }
  bool loss_before_update() const override { return true; }
  int state_vectors() const override { return 2; }

  // The layout checkpoints have always had: adam/m, adam/v, adam/t.
  // Taken before every step when checkpoints are written (the non-finite fallback keeps it):
  // the moments are moved in, not copied twice (an initializer list would copy).
  OptimizerState state() const override {
    nn::Adam::State s = adam_.state();
    OptimizerState out{.kind = "adam", .values = {}};
    out.values.emplace("m", std::move(s.m));
    out.values.emplace("v", std::move(s.v));
    out.values.emplace("t", std::int64_t{s.t});
    return out;
  }
  void restore(const OptimizerState& state) override {
    if (state.empty()) return;
    if (state.kind != "adam")
      throw UserError("adam: cannot restore the state of a '" + state.kind + "' optimizer");
    adam_.restore({.m = state.get<Eigen::VectorXd>("m"),
                   .v = state.get<Eigen::VectorXd>("v"),
                   .t = static_cast<int>(state.get<std::int64_t>("t"))});
  }

 private:
  nn::Adam adam_;
  Eigen::VectorXd g_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adam(const Stage& stage, const nn::ParameterLayout&) {
  return std::make_unique<AdamOptimizer>(stage.options_as<nn::AdamOptions>());
}

// The schedule runs over the stage (cosine's total) and AdamW is Adam with decoupled decay.
std::any read_adam_options(const Stage& stage, const options::Values& values) {
  nn::AdamOptions o;
  nn::adam_options().read(o, values);
  o.schedule.total_steps = stage.steps;
  return o;
}

std::any read_adamw_options(const Stage& stage, const options::Values& values) {
  nn::AdamOptions o = std::any_cast<nn::AdamOptions>(read_adam_options(stage, values));
  o.decoupled = true;
  return o;
}

std::unique_ptr<Optimizer> make_adamw(const Stage& stage, const nn::ParameterLayout&) {
  nn::AdamOptions options = stage.options_as<nn::AdamOptions>();
  options.decoupled = true;
  return std::make_unique<AdamOptimizer>(options);
}

}  // namespace jetpde::solvers
