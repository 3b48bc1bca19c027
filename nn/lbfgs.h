// L-BFGS (Nocedal & Wright, Algorithm 7.4/7.5) on a flat f64 parameter vector, with a strong-Wolfe
// line search (LBFGSpp's Nocedal–Wright bracketing and zoom, cubic interpolation). The whole state
// is f64 and public, so that a trainer can checkpoint it and resume bit for bit.
//
//   nn::Lbfgs lbfgs({.max_iterations = 5000, .gradient_tolerance = 1e-8});
//   nn::LbfgsStop why = lbfgs.run(objective, theta);      // until a stopping rule holds
//   std::cout << lbfgs.stop_message();                    // which rule, with the figures
//   lbfgs.run(objective, theta, 100);                     // or 100 iterations at a time
//
// The objective returns f(x) and writes its gradient. A non-finite value inside a line search
// counts as "too far" (the search shortens the step); a non-finite value at the starting point
// stops with LbfgsStop::non_finite.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/options.h"

namespace jetpde::nn {

using Objective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd& gradient)>;

struct LbfgsOptions {
  int history = 50;                   // stored (s, y) pairs
  int max_iterations = 1000;          // stop after this many iterations in all
  int max_evaluations = 0;            // stop after this many objective calls in all (0: no limit)
  double gradient_tolerance = 1e-9;   // stop when max_i |g_i| <= this
  double function_tolerance = 1e-12;  // stop when |f_prev - f| <= this * max(1, |f|, |f_prev|)
  int max_line_search = 25;           // objective calls per line search
  double c1 = 1e-4, c2 = 0.9;         // strong-Wolfe constants, 0 < c1 < c2 < 1
};

// The keys of an L-BFGS training stage (training.stages[]: history, tolerances, evaluations),
// read into LbfgsOptions. max_iterations is the stage's steps; the line search's constants are not
// config keys.
const options::Declaration<LbfgsOptions>& lbfgs_options();

enum class LbfgsStop {
  running,  // run() returned after the iterations it was asked for
  gradient_tolerance,
  function_tolerance,
  iteration_limit,
  evaluation_limit,
  line_search_failed,  // no step along -g decreased the objective (a failed search along a
                       // direction of the history forgets the history and tries -g first)
  non_finite,          // the objective is not finite at the starting point
};
std::string lbfgs_stop_name(LbfgsStop stop);

class Lbfgs {
 public:
  explicit Lbfgs(LbfgsOptions options);  // UserError naming a bad option

  // Iterates from x (updated in place) until a stopping rule holds, or for `iterations` more
  // iterations when positive (then LbfgsStop::running unless a rule held first).
  LbfgsStop run(const Objective& objective, Eigen::VectorXd& x, int iterations = 0);

  LbfgsStop stop() const { return state_.stop; }
  // Which rule stopped it, with the figures, e.g. "gradient tolerance: max |g| = 7.1e-10 <= 1e-09
  // after 38 iterations, 47 evaluations, f = 3.2e-21".
  std::string stop_message() const;
  int iterations() const { return state_.iterations; }
  int evaluations() const { return state_.evaluations; }
  double value() const { return state_.f; }
  const Eigen::VectorXd& gradient() const { return state_.g; }
  const LbfgsOptions& options() const { return options_; }

  struct State {
    std::vector<Eigen::VectorXd> s, y;  // oldest first
    Eigen::VectorXd g;                  // at the current point
    double f = 0.0;
    int iterations = 0, evaluations = 0;
    bool started = false;  // f and g hold the current point's values
    LbfgsStop stop = LbfgsStop::running;
    std::string detail;  // the line search's complaint, for line_search_failed
  };
  const State& state() const { return state_; }
  void restore(State state);

 private:
  Eigen::VectorXd direction() const;
  LbfgsOptions options_;
  State state_;
};

}  // namespace jetpde::nn
