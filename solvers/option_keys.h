// The config keys of solvers' structs, declared once (autodiff/options.h): the conditions and hard
// constraints, the loss weighting, the reference, resampling, the training budgets and the run's
// seed and device. io/config_schema.cpp mounts them at their paths (conditions[],
// training.weighting, reference, sampling, training, the top level); io/config.cpp reads the values
// into the structs through the same declarations. Keys without a setter are declared here and read
// by hand where they need more than their own value (a data file, the domain's coordinates).
#pragma once

#include "autodiff/options.h"
#include "solvers/problem.h"
#include "solvers/solve.h"
#include "solvers/trainer.h"

namespace jetpde::solvers {

// conditions[]: kind, name, field, on, at, value, alpha, beta, coordinate, derivatives,
// expression, points, weight, data. `at` (points) is read by hand; `data` is declared without its
// keys, which are the data file's (io mounts them).
const options::Declaration<Condition>& condition_options();
// hard_constraints[]: field, value, on, distance.
const options::Declaration<HardConstraint>& hard_constraint_options();
// training.weighting: kind, every, momentum, causal_epsilon.
const options::Declaration<Weighting>& weighting_options();
// training.precision_check: every, tolerance (precision: auto).
const options::Declaration<PrecisionCheck>& precision_check_options();
// reference: exact, expressions, data, every, points, metrics; the tables and `data` are read by
// hand (they are parsed against the problem's context, or read from a file).
const options::Declaration<Reference>& reference_options();
// sampling: method (geometry::sample_options), interior_points, resample_every, adaptive,
// adaptive_candidates, time_chunks. The point counts belong to the problem's spec and are read by
// hand; the resampling keys set SolveOptions.
const options::Declaration<SolveOptions>& sampling_options();
// training's budgets: max_time, target_error, and time_windows (time marching,
// solvers/marching.h); the stages are stage_keys(), the weighting above.
const options::Declaration<SolveOptions>& training_options();
// decomposition: method (fbpinn, or auto: an FBPINN grid chosen from the rank count and the
// domain's extent), subdomains, overlap, output_scale, network (the subdomains' network, the
// keys of nn::network_options(); read by hand, over the top-level network's).
const options::Declaration<Decomposition>& decomposition_options();
// The run's top-level keys of solvers: seed, device, require_device.
const options::Declaration<SolveOptions>& run_options();
// parallel: points (how MPI ranks share the point sets: PinnOptions::rank_points) and exchange
// (how they sum a decomposed model's gradient: PinnOptions::exchange).
const options::Declaration<PinnOptions>& parallel_options();

}  // namespace jetpde::solvers
