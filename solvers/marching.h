// Time marching for long horizons (training.time_windows; Wang, Sankaran & Perdikaris 2022,
// "Respecting causality", and JAX-PI's time marching): the time interval [t0, T] cut into K equal
// windows, trained one after the other. Window k is its own problem on the slab
// [t_k, t_{k+1}] x space, with one network; its initial conditions are the previous window's
// solution at t_k (each initial_value condition becomes a data condition on points of the face
// t = t_k, an initial_rate condition one on u_t there, and a field under a hard initial
// constraint gets one too), and it starts from the previous window's trained parameters. Causal
// weighting (sampling.time_chunks) works inside each window, and each window runs all the
// stages.
//
// The result is one Solution: an XPINN model whose grid cuts only the time axis into the K
// windows (marched_spec), whose network k is window k's, parameter for parameter (window k's
// network is the XPINN model's network_specs()[k]: the same names, the same normalization to the
// cell), so that the combined solution at a point of window k is window k's solution there. Its
// interface terms are never trained. Hard constraints' distances are measured over the whole
// run's interval in every window (PinnOptions::hard_constraint_bounds), as the combined model
// applies them.
//
//   solvers::SolveOptions options;  // solve.h
//   options.time_windows = 4;
//   solvers::Solution s = solvers::solve(spec, options);  // the combined solution
//   for (const solvers::WindowRecord& w : s.time_windows()) ...
//
// Solver::run does the marching (solvers/marching.cpp); these are its parts, public so that
// tests and drivers can rebuild a window.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "solvers/problem.h"
#include "solvers/spec.h"

namespace jetpde::solvers {

// UserError, under the key training.time_windows, unless `spec` can be marched over `windows`
// windows: at least 1, a time product domain, no decomposition (not yet), no trainable constants
// (not yet: each window would fit its own), no condition on a time face by name (`on: final`:
// each window would take its own face).
void check_time_windows(const ProblemSpec& spec, int windows);

// The combined solution's spec: `spec` with an xpinn decomposition whose grid is 1 on every
// spatial axis and `windows` on the time axis, and no time chunks (it is not trained; its loss
// terms are evaluated once at the end, the interface terms then measuring the jumps at the
// windows' edges).
ProblemSpec marched_spec(ProblemSpec spec, int windows);

// The time interval of window k (0-based) of `windows`: the combined model's cell k.
std::pair<double, double> window_interval(const ProblemSpec& spec, int windows, int k);

// Expressions of the previous window's fields at points [n, coordinates] -> [n, expressions].
using WindowHandover =
    std::function<MatrixD(const MatrixD& points, const std::vector<std::string>& expressions)>;

// Window k's problem spec: the domain cut to its interval, the combined model's network k, hard
// constraints measured over the whole interval, and for k > 0 the initial conditions handed over
// from `previous` (which is then needed) at the condition's point count on the face t = t_k
// (sampled with the spec's sampling options and a seed of the window's own). Data conditions and
// fixed points keep their rows inside the window (UserError when a window has none).
ProblemSpec window_spec(const ProblemSpec& spec, int windows, int k,
                        const WindowHandover& previous = {});

// training.window_shares: each time window's part of the time budget left when it starts.
enum class WindowShares { equal, growing };
const options::EnumTable<WindowShares>& window_shares_names();

// The fraction of the time budget left when window k (0-based) of `windows` starts that it may
// spend: equal, 1 / (windows - k) (so equal shares of the budget when every window spends its
// own); growing, (k + 1) / ((k + 1) + ... + windows) (so 1 : 2 : ... : windows), for problems
// whose later windows are the harder ones (on Allen-Cahn it measured worse than equal: the error
// an early window hands on weighs more than the later windows' extra steps; bench/README.md).
double window_share(WindowShares shares, int windows, int k);

// Copies the parameters of `from` (theta_from) into `to` (theta_to) by name, a name of `to` that
// starts with `to_prefix` taking the one of `from` with `from_prefix` in its place; the others
// kept. Window k's network has the prefix of the combined model's network k (Model's
// network_specs()[k].prefix). UserError for a name that `from` lacks.
void copy_parameters(Problem& from, const Eigen::VectorXd& theta_from,
                     const std::string& from_prefix, Problem& to, Eigen::VectorXd& theta_to,
                     const std::string& to_prefix);

}  // namespace jetpde::solvers
