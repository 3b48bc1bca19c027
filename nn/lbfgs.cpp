#include "nn/lbfgs.h"

// LineSearchNocedalWright.h needs Param.h first (the library's headers are not self-contained).
#include <LBFGSpp/Param.h>
// (keep this order)
#include <LBFGSpp/LineSearchNocedalWright.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "autodiff/errors.h"
#include "nn/detail/names.h"

namespace jetpde::nn {
namespace {

std::string sci(double x) { return detail::short_number(x, 2); }

}  // namespace

const options::Declaration<LbfgsOptions>& lbfgs_options() {
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  static const options::Declaration<LbfgsOptions> d = [] {
    options::Declaration<LbfgsOptions> d;
    d.add(at_least(1, key("history", T::integer, "50", "L-BFGS: stored correction pairs.")),
          &LbfgsOptions::history);
    d.add(at_least(0, key("gradient_tolerance", T::number, "1e-9",
                          "L-BFGS: stop when max |g| is below.")),
          &LbfgsOptions::gradient_tolerance);
    d.add(at_least(0, key("function_tolerance", T::number, "1e-12",
                          "L-BFGS: stop when the relative change of the loss is below.")),
          &LbfgsOptions::function_tolerance);
    d.add(at_least(0, key("max_evaluations", T::integer, "0",
                          "L-BFGS: loss evaluations in all (0: no limit).")),
          &LbfgsOptions::max_evaluations);
    return d;
  }();
  return d;
}

std::string lbfgs_stop_name(LbfgsStop stop) {
  switch (stop) {
    case LbfgsStop::running:
      return "running";
    case LbfgsStop::gradient_tolerance:
      return "gradient tolerance";
    case LbfgsStop::function_tolerance:
      return "function tolerance";
    case LbfgsStop::iteration_limit:
      return "iteration limit";
    case LbfgsStop::evaluation_limit:
      return "evaluation limit";
    case LbfgsStop::line_search_failed:
      return "line search failed";
    case LbfgsStop::non_finite:
      return "non-finite objective";
  }
  return "?";
}

Lbfgs::Lbfgs(LbfgsOptions options) : options_(options) {
  if (options_.history < 1) throw UserError("lbfgs: history must be at least 1");
  if (options_.max_iterations < 1) throw UserError("lbfgs: max_iterations must be at least 1");
  if (options_.max_evaluations < 0) throw UserError("lbfgs: max_evaluations must not be negative");
  if (!(options_.gradient_tolerance >= 0) || !(options_.function_tolerance >= 0))
    throw UserError("lbfgs: tolerances must not be negative");
  if (options_.max_line_search < 1) throw UserError("lbfgs: max_line_search must be at least 1");
  if (!(0 < options_.c1 && options_.c1 < options_.c2 && options_.c2 < 1))
    throw UserError("lbfgs: the Wolfe constants need 0 < c1 < c2 < 1");
}

// The two-loop recursion: -H g with H the L-BFGS inverse-Hessian approximation, scaled by
// s'y / y'y of the newest pair.
Eigen::VectorXd Lbfgs::direction() const {
  const auto& s = state_.s;
  const auto& y = state_.y;
  Eigen::VectorXd q = -state_.g;
  std::vector<double> alpha(s.size()), rho(s.size());
  for (std::size_t i = s.size(); i-- > 0;) {
    rho[i] = 1.0 / y[i].dot(s[i]);
    alpha[i] = rho[i] * s[i].dot(q);
    q -= alpha[i] * y[i];
  }
  if (!s.empty()) q *= s.back().dot(y.back()) / y.back().squaredNorm();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double beta = rho[i] * y[i].dot(q);
    q += (alpha[i] - beta) * s[i];
  }
  return q;
}

LbfgsStop Lbfgs::run(const Objective& objective, Eigen::VectorXd& x, int iterations) {
  State& st = state_;
  const auto finish = [&](LbfgsStop why) {
    st.stop = why;
    return why;
  };
  if (st.stop != LbfgsStop::running) return st.stop;
  if (!st.started) {
    st.g.resize(x.size());
    st.f = objective(x, st.g);
    ++st.evaluations;
    if (!std::isfinite(st.f) || !st.g.allFinite()) return finish(LbfgsStop::non_finite);
    st.started = true;
    if (st.g.lpNorm<Eigen::Infinity>() <= options_.gradient_tolerance)
      return finish(LbfgsStop::gradient_tolerance);
  }
  if (st.g.size() != x.size()) throw UserError("lbfgs: the parameter count changed between runs");

  LBFGSpp::LBFGSParam<double> param;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  param.max_linesearch = options_.max_line_search;
  param.ftol = options_.c1;
  param.wolfe = options_.c2;

  for (int done = 0; iterations <= 0 || done < iterations; ++done) {
    if (st.iterations >= options_.max_iterations) return finish(LbfgsStop::iteration_limit);
    if (options_.max_evaluations > 0 && st.evaluations >= options_.max_evaluations)
      return finish(LbfgsStop::evaluation_limit);
    Eigen::VectorXd d = direction();
    if (!(st.g.dot(d) < 0)) {  // not a descent direction: forget the history
      st.s.clear();
      st.y.clear();
      d = -st.g;
    }
    const Eigen::VectorXd xp = x, gp = st.g;
    const double fp = st.f;
    double step = st.s.empty() ? std::min(1.0, 1.0 / d.norm()) : 1.0;
    // Inside the search a non-finite value means "too far": a large finite one makes the
    // bracketing shorten the step instead of propagating NaN.
    const auto guarded = [&](const Eigen::VectorXd& at, Eigen::VectorXd& grad) {
      ++st.evaluations;
      const double f = objective(at, grad);
      if (std::isfinite(f) && grad.allFinite()) return f;
      grad = gp;
      return fp + 1e30 * (1.0 + std::abs(fp));
    };
    double f = fp;
    try {
      LBFGSpp::LineSearchNocedalWright<double>::LineSearch(guarded, f, x, st.g, step, d, xp, param);
    } catch (const std::exception& e) {
      st.detail = e.what();
      f = fp + 1.0;  // restored below
    }
    // No decrease beyond the function tolerance along a direction the history shaped (a search
    // that gave up, or one that shrank the step until f no longer changed, as f32 losses often do
    // right after Adam): the history is forgotten and the iteration tried again along -g. Only a
    // search along -g that does no better stops the run.
    const bool stalled =
        !(fp - f > options_.function_tolerance * std::max({1.0, std::abs(f), std::abs(fp)}));
    if ((stalled || !std::isfinite(f)) && !st.s.empty()) {
      x = xp;
      st.g = gp;
      st.f = fp;
      st.s.clear();
      st.y.clear();
      st.detail.clear();
      --done;  // the same iteration again
      continue;
    }
    if (!(f <= fp) || !std::isfinite(f)) {
      x = xp;
      st.g = gp;
      st.f = fp;
      if (st.detail.empty())
        st.detail = "no decrease within " + std::to_string(param.max_linesearch) + " evaluations";
      return finish(LbfgsStop::line_search_failed);
    }
    st.f = f;
    ++st.iterations;
    Eigen::VectorXd s = x - xp, y = st.g - gp;
    if (s.dot(y) > 1e-10 * y.squaredNorm()) {
      st.s.push_back(std::move(s));
      st.y.push_back(std::move(y));
      if (static_cast<int>(st.s.size()) > options_.history) {
        st.s.erase(st.s.begin());
        st.y.erase(st.y.begin());
      }
    }
    if (st.g.lpNorm<Eigen::Infinity>() <= options_.gradient_tolerance)
      return finish(LbfgsStop::gradient_tolerance);
    if (std::abs(fp - f) <=
        options_.function_tolerance * std::max({1.0, std::abs(f), std::abs(fp)}))
      return finish(LbfgsStop::function_tolerance);
  }
  return LbfgsStop::running;
}

std::string Lbfgs::stop_message() const {
  const State& st = state_;
  const std::string counts = " after " + std::to_string(st.iterations) + " iterations, " +
                             std::to_string(st.evaluations) + " evaluations, f = " + sci(st.f);
  const double gmax = st.g.size() ? st.g.lpNorm<Eigen::Infinity>() : 0.0;
  switch (st.stop) {
    case LbfgsStop::running:
      return "running:" + counts.substr(6);
    case LbfgsStop::gradient_tolerance:
      return "gradient tolerance: max |g| = " + sci(gmax) +
             " <= " + sci(options_.gradient_tolerance) + counts;
    case LbfgsStop::function_tolerance:
      return "function tolerance: relative change of f <= " + sci(options_.function_tolerance) +
             counts;
    case LbfgsStop::iteration_limit:
      return "iteration limit (" + std::to_string(options_.max_iterations) +
             ") reached:" + counts.substr(6) + ", max |g| = " + sci(gmax);
    case LbfgsStop::evaluation_limit:
      return "evaluation limit (" + std::to_string(options_.max_evaluations) +
             ") reached:" + counts.substr(6) + ", max |g| = " + sci(gmax);
    case LbfgsStop::line_search_failed:
      return "line search failed (" + st.detail + "):" + counts.substr(6) +
             ", max |g| = " + sci(gmax);
    case LbfgsStop::non_finite:
      return "non-finite objective at the starting point (f = " + sci(st.f) + ")";
  }
  return "?";
}

void Lbfgs::restore(State state) {
  if (state.s.size() != state.y.size()) throw UserError("lbfgs: inconsistent saved history");
  state_ = std::move(state);
}

}  // namespace jetpde::nn
