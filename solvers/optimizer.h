// Optimizers behind one interface, chosen by name from a registry, driven step by step by the
// trainer's one loop (solvers/trainer.h).
//
//   solvers::Stage stage{.name = "fit", .optimizer = "adamw", .steps = 5000,
//                        .options = nn::AdamOptions{.schedule = {.lr = 1e-3},
//                                                   .weight_decay = 1e-4}};
//   std::unique_ptr<solvers::Optimizer> opt = solvers::make_optimizer(stage, layout);
//   solvers::Optimizer::Step s = opt->step(evaluate, theta);   // one step, however many
//                                                              // evaluations it takes
// Built in (solvers/optimizers/<name>.cpp):
//   adam    Adam (nn::AdamOptions; weight_decay as L2, or decoupled when options.decoupled)
//   adamw   AdamW: Adam with decoupled weight decay (nn::AdamOptions, decoupled forced on)
//   lbfgs   L-BFGS with a strong-Wolfe line search (nn::LbfgsOptions; max_iterations = steps)
//   soap    SOAP: Adam in the eigenbasis of Shampoo's factors per weight matrix (nn::SoapOptions)
// Adding one: a file solvers/optimizers/<name>.cpp with its class and a factory, and in
// optimizer.cpp the factory's declaration and one entry of the table (or register_optimizer at
// run time, as tests/solvers/optimizer_test.cpp does). The factory gets the stage (its steps and
// options) and the parameter layout (the shapes of the parameters, for per-layer state). The kind
// also declares its config keys (OptimizerKind::keys, an options::Declaration of its options
// struct) and reads its options from their values (read_options): the config schema, docs, the
// config reader and the Python keyword arguments take them from there (stage_keys()).
//
// What the trainer needs to know of a kind, it asks (OptimizerKind, Optimizer):
//   line_search         its steps take several evaluations and need one fixed objective: the
//                       trainer holds the points and the loss weights fixed through the stage
//                       (no resampling, no weight updates), the step may end the stage early,
//                       and progress shows "at most `steps`" instead of a rate-based time.
//   loss_before_update  the loss it reports for a step is at the parameters the step started
//                       from (Adam: it evaluates, then updates) rather than at those it ended
//                       with (L-BFGS: its line search accepted them): this decides which
//                       parameters are the last finite ones when a loss turns non-finite.
// The state is named values (OptimizerState), so a checkpoint saves and restores any kind
// without knowing it; a state whose kind is empty is the optimizer as constructed.
#pragma once

#include <Eigen/Core>
#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/options.h"
#include "autodiff/primitive.h"
#include "compiler/passes.h"
#include "nn/parameters.h"

namespace jetpde::solvers {

// One stage of training: an optimizer (a registered name) run for `steps` steps.
struct Stage {
  std::string name = "adam";       // the label in progress lines, messages and the history
  std::string optimizer = "adam";  // a registered name (optimizer_names())
  int steps = 1000;                // updates, or iterations of a line-search kind (at most)
  // The optimizer's options, of the type its kind takes (nn::AdamOptions for adam and adamw,
  // nn::LbfgsOptions for lbfgs, nn::SoapOptions for soap); empty: that type's defaults.
  std::any options;
  // The arithmetic of the compiled step in this stage (Objective::use_precision); empty: the
  // run's (the objective's compile options). fp64 after an f32 L-BFGS stage that stopped because
  // f32 no longer changed the loss polishes the same parameters further.
  std::optional<compiler::PrecisionPolicy> precision;
  // With a time budget (StopConditions::max_seconds): the stage ends, as after its last step,
  // once it has used this share of the time left when it started, so that the later stages
  // (an fp64 polish) still run; 0: no share of its own (the budget alone stops it).
  double time_share = 0;
  // > 0: the points are drawn again (the trainer's resampler) every this many steps of the stage;
  // a line-search stage (L-BFGS) then starts its optimizer afresh with the new points, its
  // history being of the old objective, so that a long quasi-Newton stage does not overfit one
  // draw. 0: as the run resamples (Adam stages), never in a line-search stage.
  int resample_every = 0;
  // With resample_every on a line-search stage: the stage ends at the mean of the parameters its
  // runs ended with (one run per draw) instead of the last run's, which fits its own draw of the
  // points (Polyak averaging over the draws). Also when the time budget stops the stage.
  bool average = false;
  // With average: the mean of only the last this many runs' ends (the current run's included),
  // so that the runs of a long stage that start far from its end (an f32 stage's iterations
  // handed on, hand_on) do not weigh on it; 0: every run's.
  int average_last = 0;
  // The steps this stage leaves when its optimizer stops before them (not when its time share or
  // the budget ends it) are added to the next stage's: an f32 L-BFGS stage that f32 can no longer
  // move (often within a few iterations of Adam's end) hands its iterations to the fp64 polish.
  bool hand_on = false;

  // The options as T: the defaults when empty; UserError naming the stage when they are of
  // another type.
  template <class T>
  T options_as() const;
  // True for a kind with a line search (see above); UserError for an unknown optimizer.
  bool line_search() const;
};

// An optimizer's state as named values (vectors, matrices, numbers, text), saved in a
// checkpoint as the datasets `<kind>/<name>`.
struct OptimizerState {
  using Value = std::variant<double, std::int64_t, std::vector<std::int64_t>, Eigen::VectorXd,
                             MatrixD, std::string>;
  std::string kind;  // the group it is saved under ("adam" for Adam and AdamW, "lbfgs", "soap");
                     // "": none
  std::map<std::string, Value> values;

  bool empty() const { return kind.empty(); }
  // The value `name` as T; UserError naming the kind and the name when it is missing or of
  // another type (a damaged or foreign checkpoint).
  template <class T>
  const T& get(const std::string& name) const;
};

// The loss at theta, with its gradient written (Objective::evaluate, averaged over the ranks).
using Evaluate = std::function<double(const Eigen::VectorXd& theta, Eigen::VectorXd& gradient)>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  struct Step {
    enum class Kind {
      stepped,     // theta moved: one step done
      done,        // no step: a rule of its own ended it (converged, line search failed)
      non_finite,  // the loss or its gradient at theta is not finite: theta and the state
                   // are as they were before the call
    };
    Kind kind = Kind::stepped;
    double loss = 0;           // stepped and done: the loss it reports (see loss_before_update)
    double learning_rate = 0;  // the rate of this step, for kinds that have one; else 0
  };
  // One step from theta, updated in place.
  virtual Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) = 0;

  virtual bool loss_before_update() const = 0;
  // True once a rule of its own has ended it (L-BFGS converged): the step just taken is the
  // stage's last.
  virtual bool finished() const { return false; }
  // How the stage ended, after `steps` steps with `loss` the last step's: by default
  // "<steps> steps, loss <loss>"; L-BFGS says which of its rules stopped it.
  virtual std::string ending(int steps, double loss) const;
  // Parameter-sized vectors of state it holds (memory estimates): Adam 2, L-BFGS 2 history + 2,
  // SOAP 2 and its factors and bases.
  virtual int state_vectors() const = 0;

  virtual OptimizerState state() const = 0;
  // UserError when the state is of another kind or does not fit.
  virtual void restore(const OptimizerState& state) = 0;
};

// The registry: name -> factory and traits.
struct OptimizerKind {
  std::function<std::unique_ptr<Optimizer>(const Stage& stage, const nn::ParameterLayout& layout)>
      make;
  bool line_search = false;
  // The keys of training.stages[] it takes besides name, optimizer and steps, and its options
  // (of the type `make` takes) from their values, which the config schema has checked and filled
  // with defaults. Both empty: no keys, default options.
  std::vector<options::KeyPtr> keys;
  std::function<std::any(const Stage& stage, const options::Values& values)> read_options;
};
// Adds `name`; UserError when it is taken or the factory is empty.
void register_optimizer(const std::string& name, OptimizerKind kind);
// UserError "unknown optimizer 'sgd' (known: adam, adamw, lbfgs, soap)".
const OptimizerKind& optimizer_kind(const std::string& name);
std::vector<std::string> optimizer_names();  // sorted

// The keys of a stage (training.stages[]): name, optimizer (the registered names), steps, then the
// keys of every kind in name order (a key that two kinds share, such as adam's and adamw's, once),
// then precision (Stage::precision; absent: the run's).
std::vector<options::KeyPtr> stage_keys();
// name, optimizer and steps, the keys of that kind only, precision (what jetpde.Adam(...) accepts).
// UserError for an unknown optimizer.
std::vector<options::KeyPtr> stage_keys(const std::string& optimizer);
// The stage that `values` (of stage_keys(), defaults filled in) describe: its kind's read_options
// fills its options. UserError for an unknown optimizer.
Stage stage_from_values(const options::Values& values);
// The stage's optimizer for parameters laid out as `layout`; UserError naming the stage for an
// unknown name or options that do not fit.
std::unique_ptr<Optimizer> make_optimizer(const Stage& stage, const nn::ParameterLayout& layout);

namespace detail {
[[noreturn]] void options_mismatch(const Stage& stage);
[[noreturn]] void state_mismatch(const std::string& kind, const std::string& name, bool missing);
}  // namespace detail

template <class T>
T Stage::options_as() const {
  if (!options.has_value()) return T{};
  if (const T* o = std::any_cast<T>(&options)) return *o;
  detail::options_mismatch(*this);
}

template <class T>
const T& OptimizerState::get(const std::string& name) const {
  const auto it = values.find(name);
  if (it == values.end()) detail::state_mismatch(kind, name, true);
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  detail::state_mismatch(kind, name, false);
}

}  // namespace jetpde::solvers
