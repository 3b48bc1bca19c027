#include "solvers/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <variant>

#include "autodiff/errors.h"
#include "compiler/passes.h"
#include "nn/detail/names.h"

namespace jetpde::solvers {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string sci(double x) { return nn::detail::short_number(x, 3); }

// The sizes of one term's gradient that the weighting methods read.
struct GradientSize {
  double squared_norm = 0;  // sum_k g_k^2
  double abs_sum = 0;       // sum_k |g_k|
  double abs_max = 0;       // max_k |g_k|
  double count = 0;         // entries
  double norm() const { return std::sqrt(squared_norm); }
  double abs_mean() const { return abs_sum / count; }
};

// Every reduction of a gradient over the parameters happens here and nowhere else in the
// trainer. Objective::term_gradients sums the whole vectors over all ranks (also with the
// neighbour exchange, which only the step's gradient takes), so every rank holds them whole and
// this is local; were the term gradients split over the ranks, this is the one place that would
// add the partial sums (and take the largest maximum) across them.
GradientSize gradient_size(const Objective& /*objective*/, const Eigen::VectorXd& g) {
  GradientSize s;
  s.squared_norm = g.squaredNorm();
  s.abs_sum = g.cwiseAbs().sum();
  s.abs_max = g.size() > 0 ? g.cwiseAbs().maxCoeff() : 0.0;
  s.count = static_cast<double>(g.size());
  return s;
}

// Stage::average's ending: the mean of `averaged` of the stage's `runs` runs' ends.
std::string mean_of(int averaged, int runs) {
  return averaged < runs ? "the last " + std::to_string(averaged) + " of " + std::to_string(runs) +
                               " runs' ends"
                         : "the " + std::to_string(averaged) + " runs' ends";
}

}  // namespace

Trainer::Trainer(Objective& objective, std::vector<Stage> stages, Weighting weighting)
    : objective_(objective), stages_(std::move(stages)), weighting_(std::move(weighting)) {
  if (stages_.empty()) throw UserError("trainer: no stages");
  for (const Stage& s : stages_) {
    if (s.steps < 1) throw UserError("trainer: stage '" + s.name + "' has no steps");
    if (s.resample_every < 0)
      throw UserError("trainer: stage '" + s.name + "': resampling every " +
                      std::to_string(s.resample_every) + " steps");
    if (s.average && (s.resample_every == 0 || !s.line_search()))
      throw UserError("trainer: stage '" + s.name +
                      "': average needs resample_every on an L-BFGS stage (it averages the "
                      "runs on the draws)");
    if (s.average_last < 0 || (s.average_last > 0 && !s.average))
      throw UserError("trainer: stage '" + s.name + "': average_last " +
                      std::to_string(s.average_last) +
                      (s.average_last < 0 ? " runs" : " needs average: true"));
    if (s.hand_on && &s == &stages_.back())
      throw UserError("trainer: stage '" + s.name +
                      "' hands its unused steps on, but it is the last stage");
    // Made now too (cheap: no state yet), so that a bad name or option fails before training.
    try {
      make_optimizer(s, objective_.layout());
    } catch (const UserError& e) {
      throw UserError(std::string("trainer: ") + e.what());
    }
  }
  const std::size_t terms = objective_.terms().size();
  term_weights_ = weighting_.initial;
  if (term_weights_.empty()) {
    // The objective's own weights (a Problem sets its terms' weights): per term, the sum over
    // its slots (a chunked term's M chunks each carry w / M).
    term_weights_.assign(terms, 0.0);
    for (int s = 0; s < objective_.slots(); ++s)
      term_weights_[static_cast<std::size_t>(
          objective_.slot_term()[static_cast<std::size_t>(s)])] +=
          objective_.weights()[static_cast<std::size_t>(s)];
  }
  if (term_weights_.size() != terms)
    throw UserError("trainer: " + std::to_string(term_weights_.size()) + " initial weights for " +
                    std::to_string(terms) + " loss terms");
  for (double w : term_weights_)
    if (!(w >= 0) || !std::isfinite(w)) throw UserError("trainer: weights must be finite and >= 0");
  if (weighting_.kind != Weighting::Kind::fixed && weighting_.every < 1)
    throw UserError("trainer: weighting.every must be at least 1");
  if (!(weighting_.momentum >= 0 && weighting_.momentum < 1))
    throw UserError("trainer: weighting.momentum must be in [0, 1)");
  if (!(weighting_.causal_epsilon >= 0))
    throw UserError("trainer: weighting.causal_epsilon must not be negative");
}

void Trainer::on_step(Callback callback, int every) {
  callback_ = std::move(callback);
  callback_every_ = std::max(1, every);
}

void Trainer::validate_every(int every, Validation validation) {
  if (every < 1) throw UserError("trainer: validation every " + std::to_string(every) + " steps");
  validation_ = std::move(validation);
  validation_every_ = every;
}

void Trainer::resample_every(int every, Resampler resampler) {
  if (every < 0) throw UserError("trainer: resampling every " + std::to_string(every) + " steps");
  resampler_ = std::move(resampler);
  resample_every_ = every;
}

std::vector<double> Trainer::slot_weights() const {
  const std::vector<int>& term = objective_.slot_term();
  const std::vector<double>& losses = objective_.slot_losses();
  std::vector<double> w(term.size());
  double cumulative = 0;
  for (std::size_t s = 0; s < term.size(); ++s) {
    const LossTerm& t = objective_.terms()[static_cast<std::size_t>(term[s])];
    if (s == 0 || term[s] != term[s - 1]) cumulative = 0;
    const double scale =
        causal_scales_.empty() ? 1.0 : causal_scales_[static_cast<std::size_t>(term[s])];
    const double causal =
        t.chunks > 1 ? std::exp(-weighting_.causal_epsilon * cumulative / scale) / t.chunks : 1.0;
    w[s] = term_weights_[static_cast<std::size_t>(term[s])] * causal;
    cumulative += losses[s];
  }
  return w;
}

void Trainer::measure_causal_scales(const Eigen::VectorXd& theta) {
  causal_scales_.clear();
  if (weighting_.causal_scale != Weighting::CausalScale::initial) return;
  const std::vector<LossTerm>& terms = objective_.terms();
  if (!(weighting_.causal_epsilon > 0) ||
      std::none_of(terms.begin(), terms.end(), [](const LossTerm& t) { return t.chunks > 1; }))
    return;
  // One evaluation at the starting parameters (collective, like every evaluation); its chunk
  // losses are also the first step's causal weights' (they would be all equal otherwise).
  objective_.evaluate(theta);
  const std::vector<int>& term = objective_.slot_term();
  const std::vector<double>& losses = objective_.slot_losses();
  std::vector<double> sum(terms.size(), 0.0);
  for (std::size_t s = 0; s < term.size(); ++s) sum[static_cast<std::size_t>(term[s])] += losses[s];
  causal_scales_.assign(terms.size(), 1.0);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].chunks < 2) continue;
    const auto given = weighting_.causal_scales.find(terms[i].name);
    const double mean = sum[i] / terms[i].chunks;
    // Losses that start below 1 are taken as they are: epsilon 1 (the paper's) suits them, and
    // measured against a small start (a wave equation's 0.06) it would silence every later chunk
    // for good. A term not finite at the start (the first step reports it) keeps 1 too.
    if (given != weighting_.causal_scales.end())
      causal_scales_[i] = given->second;
    else if (std::isfinite(mean))
      causal_scales_[i] = std::max(1.0, mean);
  }
}

std::map<std::string, double> Trainer::causal_scales_by_term() const {
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < causal_scales_.size(); ++i)
    if (objective_.terms()[i].chunks > 1) out[objective_.terms()[i].name] = causal_scales_[i];
  return out;
}

void Trainer::check_precision(PrecisionCheck check, std::function<void(const std::string&)> note) {
  if (check.every < 0) throw UserError("trainer: the precision check's every must not be negative");
  if (!(check.tolerance >= 0))
    throw UserError("trainer: the precision check's tolerance must not be negative");
  precision_check_ = check;
  precision_note_ = std::move(note);
}

compiler::PrecisionPolicy stage_start_precision(const Stage& stage, compiler::PrecisionPolicy run,
                                                compiler::PrecisionPolicy auto_as) {
  using P = compiler::PrecisionPolicy;
  if (stage.precision) return *stage.precision;
  if (run != P::automatic || auto_as == P::fp32) return run;
  return stage.line_search() ? P::fp32 : run;
}

compiler::PrecisionPolicy Trainer::stage_precision(const Stage& stage) const {
  const compiler::PrecisionPolicy run = objective_.run_precision();
  if (!stage.precision && precision_switched_at_ >= 0 &&
      run == compiler::PrecisionPolicy::automatic)
    return compiler::PrecisionPolicy::fp32;
  return stage_start_precision(stage, run, objective_.resolved(run));
}

bool Trainer::checking_precision(const Stage& stage) const {
  return precision_check_.every > 0 && precision_switched_at_ < 0 && !stage.precision &&
         !stage.line_search() &&
         objective_.run_precision() == compiler::PrecisionPolicy::automatic &&
         objective_.resolved(compiler::PrecisionPolicy::automatic) !=
             compiler::PrecisionPolicy::fp32;
}

void Trainer::compare_precisions(const Eigen::VectorXd& theta, int step, TrainResult& result) {
  using P = compiler::PrecisionPolicy;
  Eigen::VectorXd g32, g16;
  objective_.use_precision(P::fp32);
  const double l32 = objective_.evaluate(theta, &g32);
  objective_.use_precision(P::automatic);
  // Last, so that the slot losses the next step's causal weights read are the run's precision's.
  const double l16 = objective_.evaluate(theta, &g16);
  const auto relative = [](double difference, double size) {
    return size > 0 ? difference / size : (difference > 0 ? INFINITY : 0.0);
  };
  double drift = std::max(relative(std::abs(l16 - l32), std::abs(l32)),
                          relative((g16 - g32).norm(), g32.norm()));
  if (std::isnan(drift)) drift = INFINITY;
  // Every rank decides alike (their parts of a neighbour-exchanged gradient differ).
  objective_.communicator().allreduce_max({&drift, 1});
  result.precision_checks.emplace_back(step, drift);
  if (drift <= precision_check_.tolerance) return;
  precision_switched_at_ = step;
  result.precision_switched_at = step;
  objective_.use_precision(P::fp32);
  if (precision_note_) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "precision auto: %s differs from fp32 by %.3g at step %d (tolerance %.3g); "
                  "the run goes on in fp32",
                  compiler::precision_name(objective_.resolved(P::automatic)).c_str(), drift, step,
                  precision_check_.tolerance);
    precision_note_(line);
  }
}

void Trainer::update_weights(const Eigen::VectorXd& theta, int step) {
  std::vector<double> target(term_weights_.size(), 0.0);
  // A term whose weight is 0 is off: no weighting turns it on, and its measure enters no sum (a
  // condition the network satisfies by construction, Problem::by_construction, is set off so).
  const auto off = [&](std::size_t i) { return term_weights_[i] == 0.0; };
  // A term whose measure (gradient or NTK trace) is below kSatisfied of the largest term's is one
  // the model satisfies by construction or to rounding (a periodic condition on an exactly
  // periodic network): it keeps its weight, where the ratio would blow up the weight and make its
  // rounding noise pull as hard as the real terms.
  constexpr double kSatisfied = 1e-6;
  const auto satisfied = [&](double measure, double largest) {
    return !(measure > kSatisfied * largest);
  };
  if (weighting_.kind == Weighting::Kind::annealing) {
    const std::vector<Eigen::VectorXd> g = objective_.term_gradients(theta);
    const double reference = gradient_size(objective_, g[0]).abs_max;
    std::vector<double> mean(g.size());
    double largest = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      mean[i] = gradient_size(objective_, g[i]).abs_mean();
      if (!off(i)) largest = std::max(largest, mean[i]);
    }
    target[0] = term_weights_[0];
    for (std::size_t i = 1; i < g.size(); ++i)
      target[i] = off(i) || satisfied(mean[i], largest) ? 0.0 : reference / mean[i];
  } else if (weighting_.kind == Weighting::Kind::gradnorm) {
    const std::vector<Eigen::VectorXd> g = objective_.term_gradients(theta);
    std::vector<double> norm(g.size());
    double total = 0, largest = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (off(i)) continue;
      norm[i] = gradient_size(objective_, g[i]).norm();
      total += norm[i];
      largest = std::max(largest, norm[i]);
    }
    for (std::size_t i = 0; i < g.size(); ++i)
      target[i] = off(i) || satisfied(norm[i], largest) ? 0.0 : total / norm[i];
  } else {
    const std::vector<double> tr =
        objective_.ntk_traces(theta, weighting_.probes, static_cast<std::uint64_t>(step));
    double total = 0, largest = 0;
    for (std::size_t i = 0; i < tr.size(); ++i) {
      if (off(i)) continue;
      total += tr[i];
      largest = std::max(largest, tr[i]);
    }
    for (std::size_t i = 0; i < tr.size(); ++i)
      target[i] = off(i) || satisfied(tr[i], largest) ? 0.0 : total / tr[i];
  }
  const double m = weighting_.momentum;
  for (std::size_t i = 0; i < target.size(); ++i)
    if (std::isfinite(target[i]) && target[i] > 0)
      term_weights_[i] = m * term_weights_[i] + (1 - m) * target[i];
}

Trainer::Stop Trainer::after_step(StepInfo info, const Eigen::VectorXd& theta, bool last) {
  if (validation_ && (info.step % validation_every_ == 0 || last)) {
    info.metrics = validation_(theta);
    last_metrics_ = info.metrics;
  }
  history_.push_back(info);
  Stop stop = Stop::none;
  if (callback_ && (info.step % callback_every_ == 0 || last) && !callback_(history_.back()))
    stop = Stop::callback;
  else if (!last)
    stop = stop_due(history_.back());
  // Every rank asks after every step (whatever it found), so that the collective always meets.
  return agreed(stop);
}

// With several ranks each decides on its own clock, flag and callback: the largest reason on any
// rank (target > time_limit > interrupted > callback > none) is every rank's, so that all stop
// after the same step.
Trainer::Stop Trainer::agreed(Stop stop) const {
  const Communicator& comm = objective_.communicator();
  if (comm.size() == 1) return stop;
  double code = static_cast<double>(stop);
  comm.allreduce_max({&code, 1});
  return static_cast<Stop>(static_cast<int>(code));
}

Trainer::Stop Trainer::stop_due(const StepInfo& info) const {
  if (stop_.interrupt && *stop_.interrupt) return Stop::interrupted;
  if (stop_.target_error > 0) {
    const auto it = info.metrics.find(stop_.target_metric);
    if (it != info.metrics.end() && it->second < stop_.target_error) return Stop::target;
  }
  if (stop_.max_seconds > 0 && info.seconds >= stop_.max_seconds) return Stop::time_limit;
  return Stop::none;
}

void Trainer::set_stopped(Stop stop, const Stage& stage, int step, double loss,
                          TrainResult& result) const {
  const std::string at = "stage '" + stage.name + "': ";
  switch (stop) {
    case Stop::callback:
      result.status = TrainResult::Status::stopped;
      result.message = "stopped by a callback at step " + std::to_string(step);
      break;
    case Stop::interrupted:
      result.status = TrainResult::Status::interrupted;
      result.message = at + "interrupted after step " + std::to_string(step);
      break;
    case Stop::time_limit:
      result.status = TrainResult::Status::time_limit;
      result.message = at + "the time budget is spent after step " + std::to_string(step);
      break;
    case Stop::target: {
      result.status = TrainResult::Status::target_reached;
      // Another rank's validation may have reached it (the ranks agree on stops).
      const auto it = history_.back().metrics.find(stop_.target_metric);
      result.message = at + stop_.target_metric + " " +
                       (it != history_.back().metrics.end() ? sci(it->second) : "(another rank)") +
                       " is below the target " + sci(stop_.target_error) + " at step " +
                       std::to_string(step);
      break;
    }
    case Stop::none:
      break;
  }
  result.steps = step;
  result.loss = loss;
}

std::string Trainer::non_finite_terms() const {
  std::string out;
  const auto& names = objective_.slot_names();
  const auto& losses = objective_.slot_losses();
  for (std::size_t s = 0; s < names.size(); ++s)
    if (!std::isfinite(losses[s]))
      out += (out.empty() ? "" : ", ") + names[s] + " = " + sci(losses[s]);
  return out.empty() ? "the gradient, all terms finite" : out;
}

void Trainer::stop_when(StopConditions conditions) {
  if (!(conditions.max_seconds >= 0))
    throw UserError("trainer: the time budget must not be negative");
  if (!(conditions.target_error >= 0))
    throw UserError("trainer: the target error must not be negative");
  stop_ = std::move(conditions);
}

void Trainer::checkpoint_every(int every, Checkpointer checkpointer) {
  if (every < 1) throw UserError("trainer: checkpoints every " + std::to_string(every) + " steps");
  checkpointer_ = std::move(checkpointer);
  checkpoint_every_ = every;
}

StepInfo Trainer::info_now(int step, const std::string& stage, double loss, double lr) const {
  StepInfo info;
  info.step = step;
  info.stage = stage;
  info.loss = loss;
  info.slot_losses = objective_.slot_losses();
  info.weights = objective_.weights();
  info.learning_rate = lr;
  info.seconds = now_seconds() - started_;
  info.run_seconds = run_offset_ + info.seconds;
  return info;
}

TrainerState Trainer::snapshot(int step, int stage, int stage_step,
                               const Eigen::VectorXd& theta) const {
  TrainerState state;
  state.step = step;
  state.stage = stage;
  state.stage_step = stage_step;
  state.theta = theta;
  state.term_weights = term_weights_;
  state.slot_weights = objective_.weights();
  state.slot_losses = objective_.slot_losses();
  state.causal_scales = causal_scales_;
  state.precision_switched_at = precision_switched_at_;
  state.inputs = objective_.inputs();
  state.endings = endings_;
  state.seconds = run_offset_ + now_seconds() - started_;
  state.run_sum = run_sum_;
  state.runs_summed = runs_summed_;
  state.run_ends = run_ends_;
  state.handed_steps = handed_;
  return state;
}

bool Trainer::checkpoint_due(int step, bool last) const {
  return checkpointer_ && (step % checkpoint_every_ == 0 || last);
}

void Trainer::restore(const TrainerState& state, Eigen::VectorXd& theta) const {
  const auto fail = [](const std::string& what) {
    throw UserError("trainer: cannot resume from this checkpoint: " + what);
  };
  if (state.stage < 0 || state.stage >= static_cast<int>(stages_.size()))
    fail("it is in stage " + std::to_string(state.stage + 1) + " of " +
         std::to_string(stages_.size()));
  if (state.handed_steps < 0 || (state.handed_steps > 0 && state.stage == 0))
    fail(std::to_string(state.handed_steps) + " steps handed on to the first stage");
  const int steps = stages_[state.stage].steps + state.handed_steps;
  if (state.stage_step < 0 || state.stage_step > steps)
    fail("step " + std::to_string(state.stage_step) + " of stage '" + stages_[state.stage].name +
         "', which has " + std::to_string(steps));
  if (state.theta.size() != objective_.layout().size())
    fail(std::to_string(state.theta.size()) + " parameters for a network with " +
         std::to_string(objective_.layout().size()));
  if (state.runs_summed < 0 ||
      (state.runs_summed > 0 && state.run_sum.size() != state.theta.size()))
    fail("its sum of the runs' parameters (average) has " + std::to_string(state.run_sum.size()) +
         " values for " + std::to_string(state.theta.size()) + " parameters");
  const int keep = stages_[state.stage].average_last;
  if (state.run_ends.rows() > 0 &&
      (state.run_ends.cols() != state.theta.size() || state.run_ends.rows() >= std::max(keep, 1)))
    fail("it holds " + std::to_string(state.run_ends.rows()) + " runs' parameters of " +
         std::to_string(state.run_ends.cols()) + " values (average_last) where stage '" +
         stages_[state.stage].name + "' keeps " + std::to_string(std::max(keep - 1, 0)) + " of " +
         std::to_string(state.theta.size()));
  if (state.term_weights.size() != term_weights_.size() ||
      state.slot_weights.size() != objective_.weights().size() ||
      state.slot_losses.size() != objective_.weights().size())
    fail("its loss terms do not match this problem's");
  // causal_scale initial measures the scales when training starts; a resumed run takes them from
  // the checkpoint, which has them only when it was written with that setting.
  const bool scaled =
      weighting_.causal_scale == Weighting::CausalScale::initial && weighting_.causal_epsilon > 0;
  if (!state.causal_scales.empty() && state.causal_scales.size() != term_weights_.size())
    fail("its causal scales do not match this problem's loss terms");
  if (scaled != !state.causal_scales.empty() &&
      std::any_of(objective_.terms().begin(), objective_.terms().end(),
                  [](const LossTerm& t) { return t.chunks > 1; }))
    fail(scaled ? "it has no causal scales (written without training.weighting.causal_scale: "
                  "initial)"
                : "it was written with training.weighting.causal_scale: initial");
  theta = state.theta;
}

std::string Trainer::non_finite_message(const Stage& stage, int step, int kept_step,
                                        double kept_loss, std::size_t si, bool resumed,
                                        bool kept) const {
  std::string m = "stage '" + stage.name + "': the loss is not finite after step " +
                  std::to_string(step) + " (" + non_finite_terms() + "); stopped, ";
  if (kept)
    return m + "kept the parameters of step " + std::to_string(kept_step) + " (loss " +
           sci(kept_loss) + ")";
  if (resumed)
    return m + "the parameters are those it resumed with (step " + std::to_string(step) + ")";
  if (si == 0) return m + "the parameters are the initial ones";
  return m + "the parameters are those the previous stage ended with";
}

void Trainer::hold_run_end(const Eigen::VectorXd& theta, int last) {
  if (last == 0) {  // every run's: their sum
    if (runs_summed_ == 0)
      run_sum_ = theta;
    else
      run_sum_ += theta;
    ++runs_summed_;
    return;
  }
  // The last `last` - 1 ends, oldest first (the current run's end makes `last`).
  const Eigen::Index kept = last - 1;
  if (kept == 0) return;
  if (run_ends_.rows() < kept) {
    run_ends_.conservativeResize(run_ends_.rows() + 1, theta.size());
  } else {
    for (Eigen::Index j = 0; j + 1 < kept; ++j) run_ends_.row(j) = run_ends_.row(j + 1);
  }
  run_ends_.row(run_ends_.rows() - 1) = theta.transpose().array();
}

bool Trainer::run_stage(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta,
                        int& step, TrainResult& result) {
  // Its own steps and those the stage before handed on (Stage::hand_on).
  const int handed = handed_;
  const Stage stage = [&] {
    Stage s = stages_[si];
    s.steps += handed;
    return s;
  }();
  const bool final_stage = si + 1 == stages_.size();
  // The stage's arithmetic (config, not state: a stage resumed into switches the same way), set
  // before anything is bound for the stage so that its weights land in that step.
  objective_.use_precision(stage_precision(stage));
  const int first = start ? start->stage_step : 0;
  // A line search needs one objective: no weight updates in its stage, the weights fixed at its
  // start (a resumed stage keeps those it started with), and no resampling unless the stage asks
  // for it (Stage::resample_every). Each draw is then a new objective: the optimizer runs afresh
  // from it for the steps the stage has left (an L-BFGS iteration limit stays the stage's), the
  // weights fixed again from the latest losses. The run in progress began at stage step `began`.
  const bool fixed_objective = stage.line_search();
  const int every = fixed_objective ? stage.resample_every : 0;
  int began = every > 0 && first > 0 ? (first - 1) / every * every : 0;
  const auto make_run = [&] {
    Stage rest = stage;
    rest.steps = stage.steps - began;
    return make_optimizer(rest, objective_.layout());
  };
  std::unique_ptr<Optimizer> optimizer = make_run();
  if (start) optimizer->restore(start->optimizer);
  if (fixed_objective) objective_.set_weights(start ? start->slot_weights : slot_weights());
  // Whether the points are drawn again before step k of the stage (`step` overall): the stage's
  // own rule, counted in its steps, else the run's in stages without a line search. A function
  // of the step numbers, so a resumed stage draws at the same steps.
  const auto resample_due = [&](int k) {
    if (stage.resample_every > 0) return k > 0 && k % stage.resample_every == 0;
    return !fixed_objective && resample_every_ > 0 && step > 0 && step % resample_every_ == 0;
  };
  const Evaluate evaluate = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    return objective_.evaluate(x, &g);
  };
  // A decomposed model on several ranks: stages without a line search sum the gradient among
  // neighbours (Objective::use_exchange); whatever reads the whole parameter vector (resampling,
  // validation, a checkpoint, the next stage) makes it whole first. Every rank does so at the
  // same steps: the conditions are the step's, the same everywhere.
  objective_.use_exchange(!fixed_objective);
  const auto whole = [&](OptimizerState* state) {
    if (!objective_.exchanging()) return;
    objective_.synchronize(theta);
    if (state)  // Adam's moments: a vector per parameter (std::map: the same order everywhere)
      for (auto& [name, value] : state->values)
        if (auto* v = std::get_if<Eigen::VectorXd>(&value); v && v->size() == theta.size())
          objective_.synchronize(*v);
  };
  const auto end_exchange = [&] {
    whole(nullptr);
    objective_.use_exchange(false);
  };
  // The fallback when the loss stops being finite. An optimizer whose step reports the loss at
  // the parameters it started from (Adam) learns that they were finite only then: the last
  // finite ones are those before its previous step, and so is the state that goes with them
  // (copied only when checkpoints are written). For one that reports the loss where it ended
  // (L-BFGS), the current parameters are the last finite ones.
  const bool before_update = optimizer->loss_before_update();
  Eigen::VectorXd last_good, previous;
  OptimizerState last_good_state, previous_state;
  double loss = start ? start->loss : std::nan("");  // the last step's
  // Stage::time_share: the stage's own deadline, a share of the budget left when it starts (on
  // the clock stop_due reads).
  double deadline = INFINITY;
  if (stage.time_share > 0 && stop_.max_seconds > 0) {
    const double now = now_seconds() - started_;
    deadline = now + stage.time_share * std::max(0.0, stop_.max_seconds - now);
  }
  int done = stage.steps;  // steps the stage took (fewer when its time share ends it)
  // Stage::average: each run's end is held when the next draw begins (summed, or with
  // average_last the last ones kept); where the stage ends, its parameters become the mean over
  // the runs held and the current one (its end being theta), validated again when the step's
  // metrics were of the last run's.
  const bool averaging = every > 0 && stage.average;
  run_sum_ = start ? start->run_sum : Eigen::VectorXd();
  runs_summed_ = start ? start->runs_summed : 0;
  run_ends_ = start ? start->run_ends : MatrixD();
  int averaged = 0;  // the runs the stage's parameters are the mean of (0: not averaged)
  const auto average_runs = [&](bool revalidate) {
    const Eigen::Index held = stage.average_last > 0 ? run_ends_.rows() : runs_summed_;
    if (!averaging || held == 0) return;
    averaged = static_cast<int>(held) + 1;
    const Eigen::VectorXd sum =
        stage.average_last > 0 ? Eigen::VectorXd(run_ends_.colwise().sum().transpose()) : run_sum_;
    theta = (sum + theta) / static_cast<double>(averaged);
    run_sum_.resize(0);
    runs_summed_ = 0;
    run_ends_.resize(0, 0);
    if (revalidate && validation_ && !history_.empty() && !history_.back().metrics.empty()) {
      last_metrics_ = validation_(theta);
      history_.back().metrics = last_metrics_;
    }
  };
  bool broke = false;  // the optimizer was done before a step (step `taken` of the stage)
  int taken = stage.steps;
  for (int k = first; k < stage.steps; ++k) {
    if (resample_due(k)) {
      whole(nullptr);
      if (averaging) hold_run_end(theta, stage.average_last);
      objective_.set_inputs(resampler_(step, theta));
      if (fixed_objective) {
        began = k;
        optimizer = make_run();
        objective_.set_weights(slot_weights());
      }
    }
    if (!fixed_objective) {
      if (weighting_.kind != Weighting::Kind::fixed && k % weighting_.every == 0)
        update_weights(theta, step);
      objective_.set_weights(slot_weights());
      if (step > 0 && step % std::max(1, precision_check_.every) == 0 && checking_precision(stage))
        compare_precisions(theta, step, result);
    }
    if (before_update) {
      previous = theta;
      if (checkpointer_) previous_state = optimizer->state();
    }
    const Optimizer::Step s = optimizer->step(evaluate, theta);
    if (s.kind == Optimizer::Step::Kind::non_finite) {
      const bool fall_back = before_update && k > first;
      if (fall_back) theta = last_good;
      const int kept_step = fall_back ? step - 1 : step;
      result.status = TrainResult::Status::non_finite;
      result.message =
          non_finite_message(stage, step, kept_step, loss, si, start && first > 0, k > first);
      // The last checkpoint holds the kept parameters (and the optimizer as it was with them),
      // not those of an earlier periodic save.
      if (checkpointer_) {
        OptimizerState kept_state = fall_back ? last_good_state : optimizer->state();
        whole(&kept_state);
        TrainerState state =
            snapshot(kept_step, static_cast<int>(si), fall_back ? k - 1 : k, theta);
        state.optimizer = std::move(kept_state);
        state.loss = loss;
        checkpointer_(state);
      }
      end_exchange();
      result.steps = step;
      result.loss = loss;
      return false;
    }
    loss = s.loss;
    if (s.kind == Optimizer::Step::Kind::done) {
      broke = true;
      taken = k;
      break;
    }
    if (before_update) {
      std::swap(last_good, previous);
      std::swap(last_good_state, previous_state);
    }
    ++step;
    const bool share_spent =
        deadline < INFINITY && k + 1 < stage.steps && now_seconds() - started_ >= deadline;
    const bool stage_ends = k + 1 == stage.steps || optimizer->finished() || share_spent;
    const bool last = final_stage && stage_ends;
    if (stage_ends) average_runs(false);
    if (validation_ && (step % validation_every_ == 0 || last)) whole(nullptr);
    const Stop stop = after_step(info_now(step, stage.name, s.loss, s.learning_rate), theta, last);
    // A spent budget ends the run (a resumed one goes on from the mean); an interrupt pauses it,
    // and its resumption goes on averaging.
    if (stop == Stop::time_limit) average_runs(true);
    // The state is copied (parameters, optimizer, point sets) only on the steps that save it.
    if (checkpoint_due(step, last || stop != Stop::none)) {
      OptimizerState optimizer_state = optimizer->state();
      whole(&optimizer_state);
      TrainerState state = snapshot(step, static_cast<int>(si), k + 1, theta);
      state.optimizer = std::move(optimizer_state);
      state.loss = s.loss;
      checkpointer_(state);
    }
    if (stop != Stop::none) {
      end_exchange();
      set_stopped(stop, stage, step, s.loss, result);
      if (averaged > 0)
        result.message +=
            " (the parameters the mean of " + mean_of(averaged, began / every + 1) + ")";
      return false;
    }
    if (share_spent) {
      done = k + 1;
      break;
    }
  }
  if (broke && averaging && (runs_summed_ > 0 || run_ends_.rows() > 0)) {
    average_runs(true);
    if (checkpointer_) {
      TrainerState state = snapshot(step, static_cast<int>(si), stage.steps, theta);
      state.optimizer = optimizer->state();
      state.loss = loss;
      checkpointer_(state);
    }
  }
  end_exchange();
  endings_ +=
      (endings_.empty() ? "" : "; ") + stage.name +
      (stage.precision ? " (" + compiler::precision_name(*stage.precision) + ")" : "") + ": " +
      optimizer->ending(done - began, loss) +
      (began > 0 ? " in the last of " + std::to_string(began / every + 1) +
                       " runs, each on points drawn anew"
                 : "") +
      (averaged > 0 ? "; the parameters the mean of " + mean_of(averaged, began / every + 1) : "") +
      (done < stage.steps ? " (its time share spent)" : "");
  handed_ = stage.hand_on && broke ? stage.steps - taken : 0;
  if (handed_ > 0)
    endings_ += " (" + std::to_string(handed_) + " steps unused, handed on to '" +
                stages_[si + 1].name + "')";
  result.loss = loss;
  return true;
}

TrainResult Trainer::train(Eigen::VectorXd& theta, const TrainerState* resume) {
  if (stop_.target_error > 0 && !validation_)
    throw UserError("trainer: a target error needs a validation (validate_every)");
  for (const Stage& s : stages_)
    if (s.resample_every > 0 && !resampler_)
      throw UserError("trainer: stage '" + s.name + "' draws new points every " +
                      std::to_string(s.resample_every) + " steps, but there is no resampler");
  // Whatever happens in the stages (an early stop, an error), the objective is left in the run's
  // precision: what evaluates it after training (losses, later training) gets what it was
  // built with.
  struct RunPrecision {
    Objective& objective;
    ~RunPrecision() { objective.use_precision(objective.run_precision()); }
  } run_precision{objective_};
  started_ = now_seconds();
  run_offset_ = resume ? resume->seconds : 0.0;
  history_.clear();
  endings_.clear();
  handed_ = 0;
  last_metrics_.clear();
  TrainResult result;
  int step = 0;
  std::size_t first = 0;
  if (resume) {
    restore(*resume, theta);
    step = resume->step;
    first = static_cast<std::size_t>(resume->stage);
    term_weights_ = resume->term_weights;
    causal_scales_ = resume->causal_scales;
    precision_switched_at_ = resume->precision_switched_at;
    handed_ = resume->handed_steps;
    endings_ = resume->endings;
    objective_.set_inputs(resume->inputs);
    objective_.set_weights(resume->slot_weights);
    objective_.restore_slot_losses(resume->slot_losses);
  }
  if (!resume) measure_causal_scales(theta);
  result.causal_scales = causal_scales_by_term();
  if (!resume) precision_switched_at_ = precision_check_.switched ? 0 : -1;
  result.precision_switched_at = precision_switched_at_;
  for (std::size_t si = first; si < stages_.size(); ++si) {
    const TrainerState* start = resume && si == first ? resume : nullptr;
    if (!run_stage(si, start, theta, step, result)) {
      result.metrics = last_metrics_;
      result.seconds = now_seconds() - started_;
      result.run_seconds = run_offset_ + result.seconds;
      return result;
    }
  }
  if (validation_ && (history_.empty() || history_.back().metrics.empty())) {
    last_metrics_ = validation_(theta);
    if (!history_.empty()) history_.back().metrics = last_metrics_;
  }
  result.steps = step;
  result.metrics = last_metrics_;
  result.message = endings_;
  result.seconds = now_seconds() - started_;
  result.run_seconds = run_offset_ + result.seconds;
  return result;
}

namespace {
constexpr std::array<options::EnumName<Weighting::Kind>, 4> kWeightings{{
    {Weighting::Kind::fixed, "fixed", "the initial weights throughout"},
    {Weighting::Kind::annealing, "annealing",
     "learning-rate annealing: weights from the terms' gradient magnitudes"},
    {Weighting::Kind::ntk, "ntk", "weights from the traces of the terms' neural tangent kernels"},
    {Weighting::Kind::gradnorm, "gradnorm",
     "grad-norm balancing: weights from the ratio of the terms' gradient norms"},
}};
}  // namespace

const options::EnumTable<Weighting::Kind>& weighting_kind_names() {
  static constexpr options::EnumTable<Weighting::Kind> table("weighting", kWeightings);
  return table;
}

namespace {
constexpr std::array<options::EnumName<Weighting::CausalScale>, 2> kCausalScales{{
    {Weighting::CausalScale::absolute, "absolute",
     "epsilon times the chunk losses as they are (Wang, Sankaran & Perdikaris 2022)"},
    {Weighting::CausalScale::initial, "initial",
     "the chunk losses divided by the term's mean chunk loss at the start of training when "
     "that is above 1, so that a residual in large units does not silence the later chunks"},
}};
}  // namespace

const options::EnumTable<Weighting::CausalScale>& causal_scale_names() {
  static constexpr options::EnumTable<Weighting::CausalScale> table("causal scale", kCausalScales);
  return table;
}

const char* status_name(TrainResult::Status status) {
  switch (status) {
    case TrainResult::Status::finished:
      return "finished";
    case TrainResult::Status::stopped:
      return "stopped";
    case TrainResult::Status::non_finite:
      return "non_finite";
    case TrainResult::Status::interrupted:
      return "interrupted";
    case TrainResult::Status::time_limit:
      return "time_limit";
    case TrainResult::Status::target_reached:
      return "target_reached";
  }
  return "?";
}

Metrics error_metrics(const MatrixD& prediction, const MatrixD& reference) {
  if (prediction.rows() != reference.rows() || prediction.cols() != reference.cols())
    throw UserError("error metrics: prediction [" + std::to_string(prediction.rows()) + "," +
                    std::to_string(prediction.cols()) + "] against reference [" +
                    std::to_string(reference.rows()) + "," + std::to_string(reference.cols()) +
                    "]");
  const double diff = (prediction - reference).matrix().norm();
  return {{"rel_l2", diff / reference.matrix().norm()},
          {"max_abs", (prediction - reference).abs().maxCoeff()}};
}

}  // namespace jetpde::solvers
