// The trainer: runs an Objective through stages of optimizers (Adam, then L-BFGS, ...), with
// loss weighting, causal weighting, resampling, validation and callbacks, and stops cleanly when
// the loss stops being finite.
//
//   solvers::Trainer trainer(objective, {
//       {.name = "adam", .optimizer = solvers::Stage::Optimizer::adam, .steps = 20000,
//        .adam = {.schedule = {.kind = nn::Schedule::Kind::exponential, .lr = 1e-3}}},
//       {.name = "lbfgs", .optimizer = solvers::Stage::Optimizer::lbfgs, .steps = 5000}});
//   trainer.validate_every(500, [&](const Eigen::VectorXd& theta) { return metrics(theta); });
//   solvers::TrainResult r = trainer.train(theta);
//   std::cout << r.message << "\n";
//
// Loss weights, per term (LossTerm order), updated every `every` Adam steps and held fixed in
// L-BFGS stages (a line search needs one objective):
//   fixed      the initial weights.
//   annealing  learning-rate annealing (Wang, Teng & Perdikaris 2021): the first term keeps its
//              weight; term i's target is max|grad L_0| / mean|grad L_i|.
//   ntk        NTK weighting (Wang, Yu & Perdikaris 2022): term i's target is sum_j tr_j / tr_i
//              with tr_i the mean diagonal of its NTK block (Objective::ntk_traces).
// A target enters as w <- momentum w + (1 - momentum) target.
// Stop conditions (StopConditions), checked after every step but the last: an interrupt flag (a
// signal handler sets it), a wall-time budget and a target validation error. Each ends the run
// as a finished one ends (a checkpoint, the result), with its own status.
// Causal weighting (Wang, Sankaran & Perdikaris 2022), for terms split into time chunks (rows
// ordered by time): chunk k's weight is the term's weight times exp(-epsilon sum_{l<k} L_l) / M,
// from the previous step's chunk losses (so epsilon = 0 gives the plain mean).
#pragma once

#include <Eigen/Core>
#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/adam.h"
#include "nn/lbfgs.h"
#include "solvers/objective.h"

namespace jetpde::solvers {

struct Stage {
  std::string name = "adam";
  enum class Optimizer { adam, lbfgs };
  Optimizer optimizer = Optimizer::adam;
  int steps = 1000;  // Adam updates, or L-BFGS iterations
  nn::AdamOptions adam;
  nn::LbfgsOptions lbfgs;  // its max_iterations is replaced by `steps`
};

struct Weighting {
  enum class Kind { fixed, annealing, ntk };
  Kind kind = Kind::fixed;
  std::vector<double> initial;  // per term; empty: the objective's weights when training starts
  int every = 100;
  double momentum = 0.9;
  int probes = 4;               // ntk
  double causal_epsilon = 0.0;  // chunked terms only
};

using Metrics = std::map<std::string, double>;

struct StepInfo {
  int step = 0;  // counted over all stages, from 1
  std::string stage;
  double loss = 0;                  // weighted
  std::vector<double> slot_losses;  // unweighted, per slot (Objective::slot_names)
  std::vector<double> weights;      // per slot
  double learning_rate = 0;         // Adam stages
  double seconds = 0;               // since train() began (this part of a resumed run)
  double run_seconds = 0;           // training time of the whole run, resumed parts included
  Metrics metrics;                  // filled on validation steps
};

// Everything a trainer needs to continue exactly where it was (a checkpoint): after `step` steps,
// `stage_step` of them in stage `stage`; the optimizer state of that stage (Adam or L-BFGS), the
// loss weights, the previous step's slot losses (causal weighting reads them) and the points
// bound at that moment. Resuming from it gives the same parameters, bit for bit, as not stopping
// (same build and thread count): every later resampling and weight update is a function of the
// step number and the parameters.
struct TrainerState {
  int step = 0;
  int stage = 0;
  int stage_step = 0;
  Eigen::VectorXd theta;
  std::vector<double> term_weights;  // per term
  std::vector<double> slot_weights;  // per slot, as bound (an L-BFGS stage holds them fixed)
  std::vector<double> slot_losses;   // per slot, the last evaluation's
  Bindings inputs;                   // by leaf name
  nn::Adam::State adam;              // when stages[stage] is Adam
  nn::Lbfgs::State lbfgs;            // when it is L-BFGS
  std::string endings;               // how the stages before `stage` ended
  double loss = 0;                   // the last step's
  double seconds = 0;                // training wall time of the whole run up to this state
};

// When to stop before the stages end. Each stop happens after a whole step and checkpoints.
struct StopConditions {
  // Nonzero (a signal handler sets it: async-signal-safe) stops after the current step; not owned.
  const volatile std::sig_atomic_t* interrupt = nullptr;
  double max_seconds = 0;   // > 0: stop after the first step that ends past this many seconds
  double target_error = 0;  // > 0: stop at the first validation with target_metric below it
  std::string target_metric = "rel_l2";
};

struct TrainResult {
  // stopped: by a callback; interrupted, time_limit, target_reached: StopConditions.
  enum class Status { finished, stopped, non_finite, interrupted, time_limit, target_reached };
  Status status = Status::finished;
  int steps = 0;
  double loss = 0;
  std::string message;     // one line: how each stage ended, or why training stopped
  Metrics metrics;         // the last validation, if any
  double seconds = 0;      // this train() call's wall time
  double run_seconds = 0;  // the whole run's training time (resumed parts included)
};

// "finished", "stopped", "non_finite", "interrupted", "time_limit", "target_reached".
const char* status_name(TrainResult::Status status);

class Trainer {
 public:
  // UserError for no stages, a stage with no steps, or weights of the wrong count.
  Trainer(Objective& objective, std::vector<Stage> stages, Weighting weighting = {});

  // Called after every `every`-th step and after the last one; return false to stop.
  using Callback = std::function<bool(const StepInfo&)>;
  void on_step(Callback callback, int every = 1);
  // Every `every` steps and at the end: metrics of the current parameters.
  using Validation = std::function<Metrics(const Eigen::VectorXd& theta)>;
  void validate_every(int every, Validation validation);
  // Every `every` steps of an Adam stage: new inputs (points of the same counts) to bind.
  using Resampler = std::function<Bindings(int step, const Eigen::VectorXd& theta)>;
  void resample_every(int every, Resampler resampler);

  // Interrupt flag, time budget, target error (see StopConditions). UserError for a negative
  // budget or target, or a target without a validation.
  void stop_when(StopConditions conditions);

  // After every `every`-th step and after the last: the state to save (see TrainerState).
  using Checkpointer = std::function<void(const TrainerState& state)>;
  void checkpoint_every(int every, Checkpointer checkpointer);

  // Trains theta in place. When the loss or its gradient stops being finite, theta is the last
  // parameters with a finite loss and the result says at which step and in which terms.
  // With `resume`, continues from that state (theta is replaced by its parameters); UserError
  // when it does not fit these stages and this objective.
  TrainResult train(Eigen::VectorXd& theta, const TrainerState* resume = nullptr);
  const std::vector<StepInfo>& history() const { return history_; }  // one entry per step

 private:
  std::vector<double> slot_weights() const;
  void update_weights(const Eigen::VectorXd& theta, int step);
  enum class Stop { none, callback, interrupted, time_limit, target };
  Stop after_step(StepInfo info, const Eigen::VectorXd& theta, bool last);
  Stop stop_due(const StepInfo& info) const;
  void set_stopped(Stop stop, const Stage& stage, int step, double loss, TrainResult& result) const;
  std::string non_finite_terms() const;
  void restore(const TrainerState& state, Eigen::VectorXd& theta) const;
  TrainerState snapshot(int step, int stage, int stage_step, const Eigen::VectorXd& theta) const;
  bool checkpoint_due(int step, bool last) const;
  // One stage from `start` (steps already done in it); false when training must stop (result set).
  bool run_adam(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta, int& step,
                TrainResult& result);
  bool run_lbfgs(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta, int& step,
                 TrainResult& result);
  StepInfo info_now(int step, const std::string& stage, double loss, double lr) const;

  Objective& objective_;
  std::vector<Stage> stages_;
  Weighting weighting_;
  std::vector<double> term_weights_;
  Callback callback_;
  int callback_every_ = 1;
  Validation validation_;
  int validation_every_ = 0;
  Resampler resampler_;
  int resample_every_ = 0;
  Checkpointer checkpointer_;
  int checkpoint_every_ = 0;
  std::vector<StepInfo> history_;
  std::string endings_;
  Metrics last_metrics_;
  StopConditions stop_;
  double started_ = 0;
  double run_offset_ = 0;  // the resumed state's training seconds
};

// Relative L2 error |a - b| / |b| and largest absolute error max |a - b|, over all entries.
Metrics error_metrics(const MatrixD& prediction, const MatrixD& reference);

}  // namespace jetpde::solvers
