// Solving a problem from start to finish, without files: the device, the trainer's stages and
// weighting, resampling (plain or residual-based adaptive), validation against a reference,
// stop conditions, callbacks and checkpoints; the result is a Solution (solution.h). io::run
// (`jetpde run`) is this plus the run folder; the Python bindings call it directly.
//
//   solvers::SolveOptions options;
//   options.stages = {{.name = "adam", .steps = 5000,
//                      .options = nn::AdamOptions{.schedule = {.lr = 1e-3}}}};
//   options.resample_every = 500;                                  // seed + step each time
//   options.reference.expressions = {{"u", "sin(pi*x)*exp(-t)"}};  // or .function, or .data
//   options.reference.every = 500;
//   options.on_step = [](const solvers::StepInfo& info) { return info.loss > 1e-6; };
//   solvers::Solution s = solvers::solve(spec, options);
//   std::printf("%s, rel_l2 %g\n", s.result().message.c_str(), s.metrics().at("rel_l2"));
//
// A driver that has work to do between building the problem and training (io::run: the run
// folder, the checkpoint to resume from) uses Solver: its constructor checks everything and builds
// the validation set, run() trains.
//
// Reproducibility: the network's initial parameters, the sampled validation points and every
// resampling are functions of `seed` (resampling at step k draws with seed + k), so a solve
// resumed from a TrainerState continues bit for bit (same build, same thread count).
#pragma once

#include <Eigen/Core>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solvers/marching.h"
#include "solvers/problem.h"
#include "solvers/solution.h"
#include "solvers/trainer.h"

namespace jetpde::solvers {

// Values known at points (reference data, or measurements for a data condition): points
// [n, coordinates] in the problem's coordinate order and values [n, fields] of `fields`.
struct PointData {
  MatrixD points, values;
  std::vector<std::string> fields;
};

// What a solution is validated against: a built-in exact solution, an exact solution as code, as
// expressions per field, or values at points (`data`: then validation compares with those, at
// those points, and an exact solution given too only feeds the <field>_exact output arrays; of
// several exact solutions, `function` wins, then `exact`). Validation runs every `every` steps (0:
// at the end only) and measures rel_l2 and max_abs over the compared fields (and rel_l2_<field>
// for each of several), plus the derived `metrics`.
struct Reference {
  // A built-in exact solution by name: "burgers_sine" (viscous Burgers with u0 = -sin(pi x);
  // takes the constant nu); "none": none.
  std::string exact = "none";
  ExactSolution function;                          // points -> [n, fields]
  std::map<std::string, std::string> expressions;  // field -> exact solution, one per field
  std::optional<PointData> data;                   // validated at its own points
  int every = 0;
  // Points of an exact-solution validation: 0, a grid in up to 3 dimensions (time included:
  // 256, 101 x 101 or 31^3 spatial points over the bounding box, 101 time levels; of a domain
  // that is not a box only the points in it), else 100000 sampled ones; > 0 that many sampled
  // (Sobol, from the seed).
  int points = 0;
  // name -> an expression of the fields: NAME_rel_l2 and NAME_max_abs of it against the same
  // expression of the reference (an exact solution's expressions substituted, derivatives
  // included; otherwise the reference's values, so values only).
  std::map<std::string, std::string> metrics;
  bool any() const {
    return exact != "none" || function || !expressions.empty() || data.has_value();
  }
};

// The reference's exact solution (the built-in one, `function`, or `expressions`) for `problem`;
// empty when it has none. An expressions one holds a reference to `problem`. UserError for a
// field without an expression, or burgers_sine without the constant nu.
ExactSolution exact_solution(const Reference& reference, Problem& problem);

enum class Device { automatic, cpu, cuda };
// "auto", "cpu", "cuda"; UserError naming the known ones.
const options::EnumTable<Device>& device_names();
Device device_from_name(const std::string& name);

// Where the compiled programs run: the spec's compile.backend (and whether it must run there).
// automatic: cuda where it can run, else the CPU; cuda: cuda, UserError where it cannot and
// `required`, else the CPU with a warning (to `warn`; empty: to stderr).
void choose_device(Device device, bool required, ProblemSpec& spec,
                   const std::function<void(const std::string&)>& warn = {});

// Where training states go (io's checkpoint.h5 file is one); solve() knows no files.
class CheckpointSink {
 public:
  virtual ~CheckpointSink() = default;
  virtual void save(const TrainerState& state) = 0;
};

struct SolveOptions {
  std::vector<Stage> stages;  // at least one (Trainer's checks)
  Weighting weighting;
  PrecisionCheck precision_check;  // precision: auto (Trainer::check_precision)
  std::uint64_t seed = 0;  // the network's initial parameters, validation points, resampling
  // > 0: every point set drawn again every this many steps of the stages without a line search
  // (Adam), with seed + step (a stage's own Stage::resample_every counts its steps); `adaptive`
  // draws the interior points by residual (RAD, Problem::adaptive_interior) from
  // `adaptive_candidates` candidates (0: 8 x the interior points).
  int resample_every = 0;
  bool adaptive = false;
  int adaptive_candidates = 0;
  Reference reference;
  // solve(spec, ...) only (a Solver gets its problem built): see choose_device.
  Device device = Device::automatic;
  bool require_device = false;
  std::function<void(const std::string&)> warn;  // warnings (device fallback); empty: stderr
  // Stop conditions (each ends the solve as a finished one ends, with its status): an interrupt
  // flag a signal handler sets (not owned), a time budget counted from `started_at`, a target
  // validation error (rel_l2; needs a reference).
  const volatile std::sig_atomic_t* interrupt = nullptr;
  double max_time = 0;      // seconds, > 0
  double target_error = 0;  // > 0
  // steady_clock seconds (solvers::clock_seconds()) that the time budget and
  // Solution::setup_seconds count from; < 0: when the solve (the Solver) starts.
  double started_at = -1;
  // After every step (with the validation's metrics on validation steps); false stops training
  // with status "stopped".
  std::function<bool(const StepInfo&)> on_step;
  // Every checkpoint_every steps and after the last: the state to `checkpoint` (not owned).
  CheckpointSink* checkpoint = nullptr;
  int checkpoint_every = 1000;
  // The ranks that solve together (data parallelism, docs/design.md section 14; not owned): solve()
  // builds the problem on it; a Solver takes its problem's. Null: serial.
  const Communicator* communicator = nullptr;
  // A state to continue from (solve() only; Solver::run takes it): its step, parameters and
  // optimizer state replace the initial ones. Not owned.
  const TrainerState* resume = nullptr;
  // > 1: time marching (solvers/marching.h): the time interval cut into this many windows,
  // trained one after the other (all the stages in each), each from the previous one's end.
  int time_windows = 1;
  // How max_time is shared among the windows (window_share()).
  WindowShares window_shares = WindowShares::equal;
};

// The programs the trainer of `options` will compile besides the step in the run's precision,
// into `spec.pinn.memory` (the memory plan counts them): each stage's start precision (an fp64
// polish, fp32 under precision auto), the per-term gradients for annealing and grad-norm, the NTK
// probes. solve() does it; a caller that builds its Problem itself does it first.
void count_training_programs(const SolveOptions& options, ProblemSpec& spec);

// The steady clock in seconds (SolveOptions::started_at).
double clock_seconds();

// Builds the problem of `spec` (on the chosen device) and solves it. UserError for anything the
// problem, the trainer or the reference rejects, before training starts.
Solution solve(ProblemSpec spec, const SolveOptions& options);

// solve() in two steps, for a driver with work in between. Not copyable; run() once.
class Solver {
 public:
  // Checks the stages and weighting against the problem, builds the validation set (UserError
  // under reference.* for a set too large for the memory available, a bad derived metric) and
  // attaches resampling, validation, callbacks and checkpoints. `problem` is built by the caller
  // (on its device: choose_device).
  Solver(std::unique_ptr<Problem> problem, SolveOptions options);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  Problem& problem() { return *problem_; }
  // The validation metrics' names in order (rel_l2, max_abs, rel_l2_<field>..., NAME_rel_l2,
  // NAME_max_abs...); empty without a reference.
  const std::vector<std::string>& metric_names() const { return metric_names_; }
  long long validation_points() const { return validation_points_; }
  // Trains (from `resume` when given: UserError when it does not fit the stages and problem) and
  // returns the Solution, which takes the problem over. With time_windows > 1 it marches
  // (solvers/marching.h): the Solution is then the combined one, and `resume` a UserError.
  Solution run(const TrainerState* resume = nullptr);
  // run() from the parameters `theta` (a warm start: no draw from the seed, no PirateNet fit).
  Solution run_from(Eigen::VectorXd theta);
  // The reference's metrics at theta, as a validation step measures them (empty without one;
  // time marching: theta is the combined solution's, measured over the whole domain).
  Metrics validate(const Eigen::VectorXd& theta) const;

 private:
  Solution train(Eigen::VectorXd theta, const TrainerState* resume);
  Solution march();  // solvers/marching.cpp

  std::unique_ptr<Problem> problem_;
  SolveOptions options_;
  double started_ = 0;
  int total_steps_ = 0;
  std::unique_ptr<Trainer> trainer_;
  ExactSolution exact_;
  Trainer::Validation validation_;
  std::vector<std::string> metric_names_;
  long long validation_points_ = 0;
  // Time marching: the combined solution's solver (its validation is the run's).
  std::unique_ptr<Solver> combined_;
};

}  // namespace jetpde::solvers
