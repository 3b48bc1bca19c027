// PySolution: a trained problem as the Python module holds it. Every call into jetpde's C++ API
// that a Solution makes is in this class (solution.cpp) and in solve.cpp, so that moving them to
// solvers::Solution (when that lands) changes these two files only.
//
// Today's C++ API keeps a trained problem as io::LoadedRun (the problem and its parameters, read
// back from a run folder): solve() runs io::run and then loads the folder it wrote, so a solution
// and `jetpde eval` on that folder evaluate the same parameters with the same code.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/run.h"
#include "solvers/trainer.h"

namespace jetpde::python {

class PySolution {
 public:
  PySolution(io::LoadedRun run, std::string dir);

  // Expressions of the fields ("u", "u_x", "d(u, x, 2)", the equations' residuals) at points
  // [n, coordinates] -> [n, expressions]; empty: the fields. Serialized (one Problem).
  MatrixD evaluate(const MatrixD& points, std::vector<std::string> expressions);
  // The fields and `quantities` on a uniform grid over the domain's bounding box, time included
  // as an axis (at most 3 axes), written to a .vti file. `grid`: points per axis, one value for
  // every axis, empty: the config's output.grid and output.time_steps.
  void write_vti(const std::string& path, std::vector<int> grid,
                 const std::vector<std::string>& quantities);
  // What `jetpde export` writes (fields.vti or a .pvd series, fields.h5) into `dir`; empty
  // arguments take the config's output settings. Returns the files written.
  std::vector<std::string> export_fields(const std::string& dir, const std::vector<int>& grid,
                                         int time_steps,
                                         const std::vector<std::string>& quantities);

  std::map<std::string, double> parameters() const;  // trained constants by name
  const io::RunConfig& config() const { return run_.config; }
  std::shared_ptr<io::RunConfig> config_copy() const;
  const std::string& dir() const { return dir_; }
  int step() const { return run_.step; }
  const Eigen::VectorXd& theta() const { return run_.solution.theta(); }
  const std::vector<std::string>& coordinates() const;
  const std::vector<std::string>& fields() const;
  std::vector<std::string> loss_terms() const;

  // Filled by solve(): how training ended and every step's losses (empty after load_run, whose
  // history is the run folder's history.csv).
  std::string status, message;
  std::map<std::string, double> metrics;
  std::vector<solvers::StepInfo> steps;
  std::vector<std::string> files;
  double train_seconds = 0;
  std::string history_header;  // history.csv's first line (empty: read the file)
  int rank = 0;                // this process's rank in solve()'s communicator

 private:
  MatrixD evaluate_locked(const MatrixD& points, const std::vector<std::string>& expressions);

  std::mutex mutex_;  // a Problem evaluates one call at a time (its compiled programs)
  io::LoadedRun run_;
  std::string dir_;
};

}  // namespace jetpde::python
