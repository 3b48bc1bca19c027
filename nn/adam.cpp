#include "nn/adam.h"

#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::nn {

const options::Declaration<AdamOptions>& adam_options() {
  using options::above;
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  using V = const options::Value&;
  static const options::Declaration<AdamOptions> d = [] {
    options::Declaration<AdamOptions> d;
    d.add(above(0, key("learning_rate", T::number, "1e-3",
                       "Adam, SOAP: the (initial) learning rate.")),
          [](AdamOptions& o, V v) { o.schedule.lr = options::as<double>(v); });
    d.add(options::choice(
              "schedule", schedule_kind_names(), "constant",
              "Adam, SOAP: learning-rate schedule at step k (lr: learning_rate, gamma: decay_rate, "
              "min_lr: min_learning_rate, total: the stage's steps)."),
          [](AdamOptions& o, V v) {
            o.schedule.kind = schedule_kind_names().from_name(options::as<std::string>(v));
          });
    d.add(above(0, key("decay_rate", T::number, "0.9",
                       "exponential, step: factor per `decay_steps`.")),
          [](AdamOptions& o, V v) { o.schedule.gamma = options::as<double>(v); });
    d.add(
        at_least(1, key("decay_steps", T::integer, "1000", "exponential, step: steps per decay.")),
        [](AdamOptions& o, V v) { o.schedule.decay_steps = options::as<int>(v); });
    d.add(at_least(0, key("min_learning_rate", T::number, "0", "cosine: the final rate.")),
          [](AdamOptions& o, V v) { o.schedule.min_lr = options::as<double>(v); });
    d.add(at_least(0, key("warmup_steps", T::integer, "0",
                          "Linear warm-up from 0 over this many steps.")),
          [](AdamOptions& o, V v) { o.schedule.warmup_steps = options::as<int>(v); });
    d.add(at_least(0, key("weight_decay", T::number, "0",
                          "Adam: L2 penalty; AdamW, SOAP: decoupled decay.")),
          &AdamOptions::weight_decay);
    return d;
  }();
  return d;
}

Adam::Adam(AdamOptions options) : options_(options) {
  options_.schedule.validate();
  if (!(options_.beta1 >= 0 && options_.beta1 < 1) || !(options_.beta2 >= 0 && options_.beta2 < 1))
    throw UserError("adam: beta1 and beta2 must be in [0, 1)");
  if (!(options_.epsilon > 0)) throw UserError("adam: epsilon must be positive");
  if (!(options_.weight_decay >= 0)) throw UserError("adam: weight_decay must not be negative");
}

void Adam::step(Eigen::VectorXd& theta, const Eigen::VectorXd& g) {
  if (g.size() != theta.size())
    throw UserError("adam: gradient has " + std::to_string(g.size()) + " entries, parameters " +
                    std::to_string(theta.size()));
  if (m_.size() != theta.size()) {
    if (t_ != 0) throw UserError("adam: the parameter count changed between steps");
    m_ = Eigen::VectorXd::Zero(theta.size());
    v_ = Eigen::VectorXd::Zero(theta.size());
  }
  const double lr = options_.schedule(t_);
  ++t_;
  const double wd = options_.weight_decay;
  Eigen::VectorXd grad = g;
  if (wd > 0 && !options_.decoupled) grad += wd * theta;
  const double b1 = options_.beta1, b2 = options_.beta2;
  m_ = b1 * m_ + (1 - b1) * grad;
  v_ = b2 * v_ + (1 - b2) * grad.cwiseProduct(grad);
  const double c1 = 1 - std::pow(b1, t_), c2 = 1 - std::pow(b2, t_);
  if (wd > 0 && options_.decoupled) theta *= 1 - lr * wd;
  theta.array() -= lr * (m_.array() / c1) / ((v_.array() / c2).sqrt() + options_.epsilon);
}

void Adam::restore(const State& state) {
  if (state.m.size() != state.v.size() || state.t < 0)
    throw UserError("adam: inconsistent optimizer state");
  m_ = state.m;
  v_ = state.v;
  t_ = state.t;
}

}  // namespace jetpde::nn
