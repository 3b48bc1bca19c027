// The trainer: runs an Objective through stages of optimizers (registered by name: Adam, AdamW,
// L-BFGS, ...; solvers/optimizer.h) in one loop, with loss weighting, causal weighting,
// resampling, validation, callbacks, checkpoints and stop conditions, and stops cleanly when the
// loss stops being finite.
//
//   solvers::Trainer trainer(objective, {
//       {.name = "adam", .optimizer = "adam", .steps = 20000,
//        .options = nn::AdamOptions{.schedule = {.kind = nn::Schedule::Kind::exponential,
//                                                .lr = 1e-3}}},
//       {.name = "lbfgs", .optimizer = "lbfgs", .steps = 5000}});
//   trainer.validate_every(500, [&](const Eigen::VectorXd& theta) { return metrics(theta); });
//   solvers::TrainResult r = trainer.train(theta);
//   std::cout << r.message << "\n";
//
// The loop, the same for every optimizer: before a step, unless the stage's optimizer has a line
// search (which needs one fixed objective), the points are resampled and the loss weights
// updated (a line-search stage draws new points only where it says so, Stage::resample_every,
// and then runs its optimizer afresh on them); then the optimizer takes one step (however many
// evaluations that needs); then come the history, validation, the callback, the stop conditions and
// the checkpoint. A stage ends after its steps, or earlier when its optimizer ends it (L-BFGS
// converged). A stage with a precision of its own (Stage::precision) switches the objective to it
// before its first step (Objective::use_precision; a stage resumed into too: the precision is the
// stage's config, not state), and its ending in the message says so ("polish (fp64): ..."); train()
// leaves the objective in the run's precision, however it returns.
//
// Loss weights, per term (LossTerm order), updated every `every` steps and held fixed in
// line-search stages:
//   fixed      the initial weights.
//   annealing  learning-rate annealing (Wang, Teng & Perdikaris 2021): the first term keeps its
//              weight; term i's target is max|grad L_0| / mean|grad L_i|.
//   ntk        NTK weighting (Wang, Yu & Perdikaris 2022): term i's target is sum_j tr_j / tr_i
//              with tr_i the mean diagonal of its NTK block (Objective::ntk_traces).
//   gradnorm   grad-norm balancing (Wang et al. 2023, "An expert's guide to training PINNs",
//              Algorithm 1; JAX-PI's grad_norm): term i's target is sum_j |grad L_j| / |grad L_i|
//              with |.| the Euclidean norm of the term's unweighted gradient, so that every
//              weighted term pulls on the parameters equally hard.
// A target enters as w <- momentum w + (1 - momentum) target. A term whose measure (its gradient's
// size, its NTK trace) is at most 1e-6 of the largest term's keeps its weight: it is satisfied by
// construction or to rounding (a periodic condition on an exactly periodic network), and its
// ratio would give it a huge weight and make its rounding noise pull as hard as the real terms.
// A term whose weight is 0 is off under every kind: it stays 0 and its measure enters no sum.
// Stop conditions (StopConditions), checked after every step but the last: an interrupt flag (a
// signal handler sets it), a wall-time budget and a target validation error. Each ends the run
// as a finished one ends (a checkpoint, the result), with its own status. With several ranks
// (the objective's communicator) the ranks agree on them, so that all stop after the same step.
// Causal weighting (Wang, Sankaran & Perdikaris 2022), for terms split into time chunks (rows
// ordered by time): chunk k's weight is the term's weight times exp(-epsilon sum_{l<k} L_l / S) /
// M, from the previous step's chunk losses (so epsilon = 0 gives the plain mean). The scale S is 1
// (causal_scale absolute, the paper's), or (causal_scale initial) the term's mean chunk loss at the
// parameters training starts from when that is above 1 (else 1: losses that start small are
// taken as they are, as the paper's epsilon assumes), measured by one evaluation before the first
// step (or given:
// Weighting::causal_scales): the weights then do not depend on the residual's units (u_t + 30 u_x
// starts with chunk losses near 150, u_t/30 + u_x near 0.2, and epsilon 1 silences the later
// chunks of the first for good).
#pragma once

#include <Eigen/Core>
#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "nn/adam.h"  // the options of the built-in kinds (Stage::options)
#include "nn/lbfgs.h"
#include "solvers/objective.h"
#include "solvers/optimizer.h"

namespace jetpde::solvers {

struct Weighting {
  enum class Kind { fixed, annealing, ntk, gradnorm };  // names: weighting_kind_names()
  enum class CausalScale { absolute, initial };         // names: causal_scale_names()
  Kind kind = Kind::fixed;
  std::vector<double> initial;  // per term; empty: the objective's weights when training starts
  int every = 100;
  double momentum = 0.9;
  int probes = 4;               // ntk
  double causal_epsilon = 0.0;  // chunked terms only
  CausalScale causal_scale = CausalScale::absolute;
  // causal_scale initial: scales given by term name, used instead of measuring (time marching
  // hands the first window's to the later ones, whose warm start would measure small ones).
  std::map<std::string, double> causal_scales;
};
const options::EnumTable<Weighting::Kind>& weighting_kind_names();  // training.weighting.kind
// training.weighting.causal_scale
const options::EnumTable<Weighting::CausalScale>& causal_scale_names();

using Metrics = std::map<std::string, double>;

// precision: auto where it stands for 16-bit GEMM operands (bf16_wgrad on a CPU with AMX;
// Objective::resolved): every `every` steps of a stage without a line search (and without a
// precision of its own), the loss and gradient at the current parameters are evaluated in that
// precision and in fp32 on the same points; when either differs from fp32's by more than
// `tolerance` (relative: |L16 - L32| / |L32|, |g16 - g32| / |g32|), the run goes on in fp32 for
// good. Line-search stages (L-BFGS) run in fp32 under auto: a line search needs a loss exact to far
// below bf16's 3 digits. every = 0: no checks (auto stays 16-bit in the stages without a line
// search).
struct PrecisionCheck {
  int every = 500;
  double tolerance = 0.05;
  bool switched = false;  // start in fp32, as switched (a later time window of a run that did)
};

// The precision a stage starts in, without a switch: its own; else under `run` = auto standing for
// 16-bit operands (`auto_as`, Objective::resolved) fp32 for a line search (L-BFGS); else `run`.
// The trainer and summary.json use it.
compiler::PrecisionPolicy stage_start_precision(const Stage& stage, compiler::PrecisionPolicy run,
                                                compiler::PrecisionPolicy auto_as);

struct StepInfo {
  int step = 0;  // counted over all stages, from 1
  std::string stage;
  double loss = 0;                  // weighted
  std::vector<double> slot_losses;  // unweighted, per slot (Objective::slot_names)
  std::vector<double> weights;      // per slot
  double learning_rate = 0;         // of optimizers that have one (Adam); else 0
  double seconds = 0;               // since train() began (this part of a resumed run)
  double run_seconds = 0;           // training time of the whole run, resumed parts included
  Metrics metrics;                  // filled on validation steps
};

// Everything a trainer needs to continue exactly where it was (a checkpoint): after `step` steps,
// `stage_step` of them in stage `stage`; the state of that stage's optimizer (named values), the
// loss weights, the previous step's slot losses (causal weighting reads them) and the points
// bound at that moment. Resuming from it gives the same parameters, bit for bit, as not stopping
// (same build and thread count): every later resampling and weight update is a function of the
// step number and the parameters.
struct TrainerState {
  int step = 0;
  int stage = 0;
  int stage_step = 0;
  Eigen::VectorXd theta;
  std::vector<double> term_weights;   // per term
  std::vector<double> slot_weights;   // per slot, as bound (a line-search stage holds them fixed)
  std::vector<double> slot_losses;    // per slot, the last evaluation's
  std::vector<double> causal_scales;  // per term (causal_scale initial); empty: all 1
  int precision_switched_at = -1;     // precision auto: the step it went to fp32 at (-1: not)
  Bindings inputs;                    // by leaf name
  OptimizerState optimizer;           // of stages[stage]'s optimizer; empty: as constructed
  // Stage::average: the sum of the parameters the stage's finished runs ended with, and their
  // count (0: none yet).
  Eigen::VectorXd run_sum;
  int runs_summed = 0;
  // With Stage::average_last: the ends of the last finished runs instead (one row each, oldest
  // first, at most average_last - 1 of them).
  MatrixD run_ends;
  int handed_steps = 0;  // steps stages[stage] has beyond its own, from the stage before (hand_on)
  std::string endings;   // how the stages before `stage` ended
  double loss = 0;       // the last step's
  double seconds = 0;    // training wall time of the whole run up to this state
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
  std::map<std::string, double> causal_scales;  // causal_scale initial: the scales, by term
  // precision auto (PrecisionCheck): each check's step and drift (the larger of the loss's and the
  // gradient's relative difference from fp32), and the step the run went to fp32 at (-1: never).
  std::vector<std::pair<int, double>> precision_checks;
  int precision_switched_at = -1;
};

// "finished", "stopped", "non_finite", "interrupted", "time_limit", "target_reached".
const char* status_name(TrainResult::Status status);

class Trainer {
 public:
  // UserError for no stages, a stage with no steps, an unknown optimizer or options that do not
  // fit it, or weights of the wrong count. The trainer works with the objective's communicator.
  Trainer(Objective& objective, std::vector<Stage> stages, Weighting weighting = {});

  // Called after every `every`-th step and after the last one; return false to stop.
  using Callback = std::function<bool(const StepInfo&)>;
  void on_step(Callback callback, int every = 1);
  // Every `every` steps and at the end: metrics of the current parameters.
  using Validation = std::function<Metrics(const Eigen::VectorXd& theta)>;
  void validate_every(int every, Validation validation);
  // Every `every` steps, in stages without a line search (Adam), and every Stage::resample_every
  // steps of a stage that has one: new inputs (points of the same counts) to bind. every = 0:
  // only in the stages that have a rule of their own.
  using Resampler = std::function<Bindings(int step, const Eigen::VectorXd& theta)>;
  void resample_every(int every, Resampler resampler);

  // Interrupt flag, time budget, target error (see StopConditions). UserError for a negative
  // budget or target, or a target without a validation.
  void stop_when(StopConditions conditions);

  // After every `every`-th step and after the last: the state to save (see TrainerState).
  using Checkpointer = std::function<void(const TrainerState& state)>;
  void checkpoint_every(int every, Checkpointer checkpointer);

  // precision: auto: the check of 16-bit against fp32 (PrecisionCheck); `note` hears of a switch
  // to fp32 when it happens (one line). UserError for a negative `every` or tolerance.
  void check_precision(PrecisionCheck check, std::function<void(const std::string&)> note = {});

  // Trains theta in place. When the loss or its gradient stops being finite, theta is the last
  // parameters with a finite loss and the result says at which step and in which terms.
  // With `resume`, continues from that state (theta is replaced by its parameters); UserError
  // when it does not fit these stages and this objective.
  TrainResult train(Eigen::VectorXd& theta, const TrainerState* resume = nullptr);
  const std::vector<StepInfo>& history() const { return history_; }  // one entry per step

 private:
  std::vector<double> slot_weights() const;
  void update_weights(const Eigen::VectorXd& theta, int step);
  void measure_causal_scales(const Eigen::VectorXd& theta);
  std::map<std::string, double> causal_scales_by_term() const;
  // The precision stage `stage` runs in (its own; else under auto fp32 for a line search or after
  // a switch; else the run's).
  compiler::PrecisionPolicy stage_precision(const Stage& stage) const;
  // Whether the run's precision is auto resolved to 16-bit operands and not yet switched.
  bool checking_precision(const Stage& stage) const;
  // One check (PrecisionCheck) before step `step`; switches to fp32 when it drifted.
  void compare_precisions(const Eigen::VectorXd& theta, int step, TrainResult& result);
  enum class Stop { none, callback, interrupted, time_limit, target };
  Stop after_step(StepInfo info, const Eigen::VectorXd& theta, bool last);
  Stop stop_due(const StepInfo& info) const;
  Stop agreed(Stop stop) const;
  void set_stopped(Stop stop, const Stage& stage, int step, double loss, TrainResult& result) const;
  std::string non_finite_terms() const;
  std::string non_finite_message(const Stage& stage, int step, int kept_step, double kept_loss,
                                 std::size_t si, bool resumed, bool kept) const;
  void restore(const TrainerState& state, Eigen::VectorXd& theta) const;
  TrainerState snapshot(int step, int stage, int stage_step, const Eigen::VectorXd& theta) const;
  bool checkpoint_due(int step, bool last) const;
  // Stage::average: holds a finished run's end (summed; with average_last > 0 kept among the last).
  void hold_run_end(const Eigen::VectorXd& theta, int last);
  // One stage from `start` (steps already done in it); false when training must stop (result set).
  bool run_stage(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta, int& step,
                 TrainResult& result);
  StepInfo info_now(int step, const std::string& stage, double loss, double lr) const;

  Objective& objective_;
  std::vector<Stage> stages_;
  Weighting weighting_;
  std::vector<double> term_weights_;
  std::vector<double> causal_scales_;  // per term; empty: all 1
  PrecisionCheck precision_check_;
  std::function<void(const std::string&)> precision_note_;
  int precision_switched_at_ = -1;
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
  // Stage::average in the stage that runs: the finished runs' parameters summed, their count.
  Eigen::VectorXd run_sum_;
  int runs_summed_ = 0;
  MatrixD run_ends_;  // with Stage::average_last: the last runs' ends (TrainerState)
  // Stage::hand_on: the steps the running stage has beyond its own, from the stage before.
  int handed_ = 0;
  StopConditions stop_;
  double started_ = 0;
  double run_offset_ = 0;  // the resumed state's training seconds
};

// Relative L2 error |a - b| / |b| and largest absolute error max |a - b|, over all entries.
Metrics error_metrics(const MatrixD& prediction, const MatrixD& reference);

}  // namespace jetpde::solvers
