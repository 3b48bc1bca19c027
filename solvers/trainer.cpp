#include "solvers/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "autodiff/errors.h"
#include "nn/detail/names.h"

namespace jetpde::solvers {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string sci(double x) { return nn::detail::short_number(x, 3); }

}  // namespace

Trainer::Trainer(Objective& objective, std::vector<Stage> stages, Weighting weighting)
    : objective_(objective), stages_(std::move(stages)), weighting_(std::move(weighting)) {
  if (stages_.empty()) throw UserError("trainer: no stages");
  for (const Stage& s : stages_)
    if (s.steps < 1) throw UserError("trainer: stage '" + s.name + "' has no steps");
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
  if (every < 1) throw UserError("trainer: resampling every " + std::to_string(every) + " steps");
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
    const double causal =
        t.chunks > 1 ? std::exp(-weighting_.causal_epsilon * cumulative) / t.chunks : 1.0;
    w[s] = term_weights_[static_cast<std::size_t>(term[s])] * causal;
    cumulative += losses[s];
  }
  return w;
}

void Trainer::update_weights(const Eigen::VectorXd& theta, int step) {
  std::vector<double> target(term_weights_.size(), 0.0);
  if (weighting_.kind == Weighting::Kind::annealing) {
    const std::vector<Eigen::VectorXd> g = objective_.term_gradients(theta);
    const double reference = g[0].cwiseAbs().maxCoeff();
    target[0] = term_weights_[0];
    for (std::size_t i = 1; i < g.size(); ++i) target[i] = reference / g[i].cwiseAbs().mean();
  } else {
    const std::vector<double> tr =
        objective_.ntk_traces(theta, weighting_.probes, static_cast<std::uint64_t>(step));
    double total = 0;
    for (double t : tr) total += t;
    for (std::size_t i = 0; i < tr.size(); ++i) target[i] = total / tr[i];
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
  if (callback_ && (info.step % callback_every_ == 0 || last) && !callback_(history_.back()))
    return Stop::callback;
  return last ? Stop::none : stop_due(history_.back());
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
    case Stop::target:
      result.status = TrainResult::Status::target_reached;
      result.message =
          at + stop_.target_metric + " " + sci(history_.back().metrics.at(stop_.target_metric)) +
          " is below the target " + sci(stop_.target_error) + " at step " + std::to_string(step);
      break;
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
  state.inputs = objective_.inputs();
  state.endings = endings_;
  state.seconds = run_offset_ + now_seconds() - started_;
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
  if (state.stage_step < 0 || state.stage_step > stages_[state.stage].steps)
    fail("step " + std::to_string(state.stage_step) + " of stage '" + stages_[state.stage].name +
         "', which has " + std::to_string(stages_[state.stage].steps));
  if (state.theta.size() != objective_.layout().size())
    fail(std::to_string(state.theta.size()) + " parameters for a network with " +
         std::to_string(objective_.layout().size()));
  if (state.term_weights.size() != term_weights_.size() ||
      state.slot_weights.size() != objective_.weights().size() ||
      state.slot_losses.size() != objective_.weights().size())
    fail("its loss terms do not match this problem's");
  theta = state.theta;
}

bool Trainer::run_adam(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta, int& step,
                       TrainResult& result) {
  const Stage& stage = stages_[si];
  const bool final_stage = si + 1 == stages_.size();
  nn::Adam adam(stage.adam);
  if (start) adam.restore(start->adam);
  Eigen::VectorXd g, last_good = theta;
  nn::Adam::State last_good_adam = adam.state();  // kept only when checkpoints are written
  double last_good_loss = start ? start->loss : std::nan("");
  // The state is copied (parameters, moments, point sets) only on the steps that save it.
  const auto checkpoint = [&](int k, bool last) {
    if (!checkpoint_due(step, last)) return;
    TrainerState state = snapshot(step, static_cast<int>(si), k, theta);
    state.adam = adam.state();
    state.loss = last_good_loss;
    checkpointer_(state);
  };
  for (int k = start ? start->stage_step : 0; k < stage.steps; ++k) {
    if (resampler_ && step > 0 && step % resample_every_ == 0)
      objective_.set_inputs(resampler_(step, theta));
    if (weighting_.kind != Weighting::Kind::fixed && k % weighting_.every == 0)
      update_weights(theta, step);
    objective_.set_weights(slot_weights());
    const double loss = objective_.evaluate(theta, &g);
    if (!std::isfinite(loss) || !g.allFinite()) {
      result.status = TrainResult::Status::non_finite;
      result.message = "stage '" + stage.name + "': the loss is not finite after step " +
                       std::to_string(step) + " (" + non_finite_terms() + "); stopped, ";
      if (k == 0 && si == 0) {
        result.message += "the parameters are the initial ones";
      } else if (k == 0) {
        result.message += "the parameters are those the previous stage ended with";
      } else {
        theta = last_good;
        result.message += "kept the parameters of step " + std::to_string(step - 1) + " (loss " +
                          sci(last_good_loss) + ")";
      }
      // The last checkpoint holds the kept parameters (and the optimizer as it was with them),
      // not those of an earlier periodic save.
      if (checkpointer_) {
        TrainerState state =
            snapshot(k == 0 ? step : step - 1, static_cast<int>(si), k == 0 ? 0 : k - 1, theta);
        if (k > 0) state.adam = last_good_adam;
        state.loss = last_good_loss;
        checkpointer_(state);
      }
      result.steps = step;
      result.loss = last_good_loss;
      return false;
    }
    last_good = theta;
    last_good_loss = loss;
    if (checkpointer_) last_good_adam = adam.state();
    const double lr = adam.learning_rate();
    adam.step(theta, g);
    ++step;
    const bool last = final_stage && k + 1 == stage.steps;
    const Stop stop = after_step(info_now(step, stage.name, loss, lr), theta, last);
    checkpoint(k + 1, last || stop != Stop::none);
    if (stop != Stop::none) {
      set_stopped(stop, stage, step, loss, result);
      return false;
    }
  }
  endings_ += (endings_.empty() ? "" : "; ") + stage.name + ": " + std::to_string(stage.steps) +
              " steps, loss " + sci(last_good_loss);
  result.loss = last_good_loss;
  return true;
}

bool Trainer::run_lbfgs(std::size_t si, const TrainerState* start, Eigen::VectorXd& theta,
                        int& step, TrainResult& result) {
  const Stage& stage = stages_[si];
  const bool final_stage = si + 1 == stages_.size();
  // The weights are fixed for the line searches (a resumed stage keeps those it started with).
  objective_.set_weights(start ? start->slot_weights : slot_weights());
  nn::LbfgsOptions options = stage.lbfgs;
  options.max_iterations = stage.steps;
  nn::Lbfgs lbfgs(options);
  if (start) lbfgs.restore(start->lbfgs);
  const nn::Objective fn = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    return objective_.evaluate(x, &g);
  };
  while (lbfgs.stop() == nn::LbfgsStop::running) {
    const int before = lbfgs.iterations();
    lbfgs.run(fn, theta, 1);
    if (lbfgs.stop() == nn::LbfgsStop::non_finite) {
      result.status = TrainResult::Status::non_finite;
      result.message = "stage '" + stage.name + "': the loss is not finite at its start (" +
                       non_finite_terms() + "); stopped";
      if (checkpointer_) checkpointer_(snapshot(step, static_cast<int>(si), 0, theta));
      result.steps = step;
      return false;
    }
    if (lbfgs.iterations() == before) continue;
    ++step;
    // The iteration limit is only noticed at the next call: the last iteration is last already.
    const bool last = final_stage && (lbfgs.stop() != nn::LbfgsStop::running ||
                                      lbfgs.iterations() >= options.max_iterations);
    const Stop stop = after_step(info_now(step, stage.name, lbfgs.value(), 0.0), theta, last);
    if (checkpoint_due(step, last || stop != Stop::none)) {
      TrainerState state = snapshot(step, static_cast<int>(si), lbfgs.iterations(), theta);
      state.lbfgs = lbfgs.state();
      state.loss = lbfgs.value();
      checkpointer_(state);
    }
    if (stop != Stop::none) {
      set_stopped(stop, stage, step, lbfgs.value(), result);
      return false;
    }
  }
  endings_ += (endings_.empty() ? "" : "; ") + stage.name + ": " + lbfgs.stop_message();
  result.loss = lbfgs.value();
  return true;
}

TrainResult Trainer::train(Eigen::VectorXd& theta, const TrainerState* resume) {
  if (stop_.target_error > 0 && !validation_)
    throw UserError("trainer: a target error needs a validation (validate_every)");
  started_ = now_seconds();
  run_offset_ = resume ? resume->seconds : 0.0;
  history_.clear();
  endings_.clear();
  last_metrics_.clear();
  TrainResult result;
  int step = 0;
  std::size_t first = 0;
  if (resume) {
    restore(*resume, theta);
    step = resume->step;
    first = static_cast<std::size_t>(resume->stage);
    term_weights_ = resume->term_weights;
    endings_ = resume->endings;
    objective_.set_inputs(resume->inputs);
    objective_.set_weights(resume->slot_weights);
    objective_.restore_slot_losses(resume->slot_losses);
  }
  for (std::size_t si = first; si < stages_.size(); ++si) {
    const TrainerState* start = resume && si == first ? resume : nullptr;
    const bool go_on = stages_[si].optimizer == Stage::Optimizer::adam
                           ? run_adam(si, start, theta, step, result)
                           : run_lbfgs(si, start, theta, step, result);
    if (!go_on) {
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
