// Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019) on a flat f64 parameter vector.
//
//   nn::Adam adam({.schedule = {.kind = nn::Schedule::Kind::exponential, .lr = 1e-3}});
//   for (...) { g = gradient(theta); adam.step(theta, g); }
//
// With weight_decay > 0, Adam adds weight_decay * theta to the gradient (L2 regularization) and
// AdamW (decoupled = true) shrinks theta by lr * weight_decay directly, outside the moments.
// The state (moments and step count) is public for checkpoints.
#pragma once

#include <Eigen/Core>

#include "autodiff/options.h"
#include "nn/schedule.h"

namespace jetpde::nn {

struct AdamOptions {
  Schedule schedule;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weight_decay = 0.0;
  bool decoupled = false;  // true: AdamW
};

// The keys of an Adam or AdamW training stage (training.stages[]: learning_rate, schedule, ...),
// read into AdamOptions. The schedule's total_steps (the stage's steps) and `decoupled` (the kind)
// are the stage's to set; beta1, beta2 and epsilon are not config keys.
const options::Declaration<AdamOptions>& adam_options();

class Adam {
 public:
  explicit Adam(AdamOptions options);  // UserError naming a bad option
  // One update of theta from its gradient g; the rate is the schedule's at step().
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& g);
  int steps() const { return t_; }
  double learning_rate() const { return options_.schedule(t_); }  // of the next step
  const AdamOptions& options() const { return options_; }

  struct State {
    Eigen::VectorXd m, v;
    int t = 0;
  };
  State state() const { return {m_, v_, t_}; }
  void restore(const State& state);

 private:
  AdamOptions options_;
  Eigen::VectorXd m_, v_;
  int t_ = 0;
};

}  // namespace jetpde::nn
