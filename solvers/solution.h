// What a solve leaves: fields that can be evaluated anywhere in the domain (FieldSource), and for
// a trained network the whole record of how it got there (Solution).
//
//   solvers::Solution s = solvers::solve(spec, options);         // solve.h
//   MatrixD u = s.fields(points);                                // [n, fields]
//   MatrixD d = s.evaluate(points, {"u_x", "laplacian(u)"});     // any expression, [n, 2]
//   double nu = s.parameters().at("nu");                         // a trained constant
//   solvers::GridFields g = s.fields_on_grid({.grid = {.counts = {101}}, .quantities = {"u_x"}});
//   std::printf("%s: rel_l2 %g\n", s.result().message.c_str(), s.metrics().at("rel_l2"));
//
// FieldSource is what io's writers (the .vti and fields.h5 files, `jetpde eval`) read, so that a
// result computed another way (a classical solve on a grid) can be written by the same code.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/primitive.h"
#include "compiler/executable.h"
#include "geometry/geometry.h"
#include "solvers/grid.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"

namespace jetpde::solvers {

// An exact solution at points [n, coordinates] -> [n, fields] (field_names() order).
using ExactSolution = std::function<MatrixD(const MatrixD&)>;

struct NamedValues {
  std::string name;
  MatrixD values;  // [points, 1]
};

struct GridFieldOptions {
  GridSpec grid;
  std::vector<std::string> quantities;  // expressions ("u_x", "sqrt(u^2 + v^2)"), named as given
  bool residuals = true;                // the equations' residuals (FieldSource::residuals)
  ExactSolution exact;                  // when given: <field>_exact and <field>_error too
};

// Arrays on a grid over the domain's bounding box (grid.h), per time level: every field, then
// <field>_exact and <field>_error, the quantities, the residuals, and `inside` (1 in the domain, 0
// outside) for a domain that is not its bounding box.
struct GridFields {
  std::vector<int> dims;      // points per spatial axis
  geometry::Bounds bounds;    // the domain's bounding box (the time axis last, when it has one)
  MatrixD space;              // the spatial points [n, spatial dims], x fastest
  std::vector<double> times;  // the time levels; empty without time
  std::vector<std::vector<NamedValues>> levels;  // per time level (one without time)
};

// Fields over a domain, evaluated at any points [n, coordinates] (coordinate_names() order; with
// time, the time coordinate last). Evaluation may compile and cache programs (one per points count
// and list of expressions), so one FieldSource is not for several threads at once.
class FieldSource {
 public:
  virtual ~FieldSource() = default;
  virtual const geometry::Geometry& domain() const = 0;
  virtual const std::vector<std::string>& coordinate_names() const = 0;
  virtual const std::vector<std::string>& field_names() const = 0;
  virtual bool has_time() const = 0;  // the last coordinate is time
  // [n, fields].
  virtual MatrixD fields(const MatrixD& points) const = 0;
  // Expressions of the fields and coordinates (a field's name, a derivative "u_xx", a residual)
  // -> [n, expressions]. UserError naming an expression that does not parse.
  virtual MatrixD evaluate(const MatrixD& points,
                           const std::vector<std::string>& expressions) const = 0;
  // The equations' residuals, (array name, expression for evaluate()): "residual_pde", ...
  virtual std::vector<std::pair<std::string, std::string>> residuals() const { return {}; }
  // The model behind the fields when they come from one (its subdomains: io's .vtm pieces).
  virtual const Model* model() const { return nullptr; }

  // The arrays on a grid (GridFields). UserError for fewer than 2 points on an axis, or an
  // expression that does not parse.
  GridFields fields_on_grid(const GridFieldOptions& options) const;
};

// One window of a time-marched run (solvers/marching.h): its time interval, the steps it trained,
// how it ended, its last loss and its own validation (over its slab of the domain).
struct WindowRecord {
  double t0 = 0, t1 = 0;
  int steps = 0;
  TrainResult::Status status = TrainResult::Status::finished;
  double loss = 0;
  Metrics metrics;
  double seconds = 0;  // its training time
};

// A trained (or loaded) network solution: the Problem and its parameters theta, with what
// training reported. Made by solve() (solve.h), or from a problem and a theta (a run folder's
// checkpoint: io::load_run), then without history or result. Or a solution computed another way
// (a classical solve on a grid, solvers/classical): its fields then come from that FieldSource.
class Solution : public FieldSource {
 public:
  // UserError when theta does not have the problem's parameter count. `exact` (optional) is the
  // reference's exact solution, kept for writers (<field>_exact arrays).
  Solution(std::unique_ptr<Problem> problem, Eigen::VectorXd theta, ExactSolution exact = {});
  // A solution that is not a network: fields, expressions and residuals are `source`'s; `result`
  // says how its solve went (steps: its iterations; run_seconds and seconds: its time). It has no
  // problem (problem() is a UserError), no trained constants and no loss terms; it ran in fp64 on
  // the CPU.
  Solution(std::shared_ptr<const FieldSource> source, TrainResult result, ExactSolution exact = {},
           long long validation_points = 0);
  Solution(Solution&&) noexcept;
  Solution& operator=(Solution&&) noexcept;
  ~Solution() override;

  const geometry::Geometry& domain() const override;
  const std::vector<std::string>& coordinate_names() const override;
  const std::vector<std::string>& field_names() const override;
  bool has_time() const override;
  MatrixD fields(const MatrixD& points) const override;
  MatrixD evaluate(const MatrixD& points,
                   const std::vector<std::string>& expressions) const override;
  std::vector<std::pair<std::string, std::string>> residuals() const override;
  // The network's model; another source's (null for a classical solution's grid).
  const Model* model() const override { return source_ ? source_->model() : &problem_->model(); }

  // UserError for a solution that is not a network's (other_source()).
  Problem& problem() const;
  // The FieldSource of a solution computed another way; null for a network's.
  const FieldSource* other_source() const { return source_.get(); }
  const Eigen::VectorXd& theta() const { return theta_; }
  const ExactSolution& exact() const { return exact_; }

  // How training ended (status, steps of the whole run, loss, message, last validation); a
  // default TrainResult for one made from a problem and a theta.
  const TrainResult& result() const { return result_; }
  // One entry per step trained in this solve (a resumed solve: the steps after the resume).
  const std::vector<StepInfo>& history() const { return history_; }
  // The last validation's metrics against the reference (empty without one).
  const Metrics& metrics() const { return result_.metrics; }
  // Trained constants by name (the problem's params).
  std::map<std::string, double> parameters() const;
  // Each loss slot's unweighted loss at the last evaluation, in Objective::slot_names() order.
  std::vector<std::pair<std::string, double>> losses() const;
  // The precision the compiled programs run in ("fp32", ...; `auto` resolved for this machine and
  // backend), and the one `stage` starts in (stage_start_precision, resolved alike).
  std::string precision() const;
  std::string stage_precision(const Stage& stage) const;
  compiler::Backend backend() const;
  long long validation_points() const { return validation_points_; }  // 0: no validation
  int resumed_from() const { return resumed_from_; }                  // the state's step, or -1
  double setup_seconds() const { return setup_seconds_; }  // from SolveOptions::started_at
  double train_seconds() const { return train_seconds_; }  // this solve's training
  // A time-marched solve's windows, in time order (empty otherwise).
  const std::vector<WindowRecord>& time_windows() const { return windows_; }

 private:
  friend class Solver;
  std::unique_ptr<Problem> problem_;
  std::shared_ptr<const FieldSource> source_;  // instead of a problem
  Eigen::VectorXd theta_;
  ExactSolution exact_;
  TrainResult result_;
  std::vector<StepInfo> history_;
  long long validation_points_ = 0;
  int resumed_from_ = -1;
  double setup_seconds_ = 0, train_seconds_ = 0;
  std::vector<WindowRecord> windows_;
};

}  // namespace jetpde::solvers
