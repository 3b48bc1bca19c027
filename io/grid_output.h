// Fields of a trained problem on a grid over the domain's bounding box, written for ParaView
// (.vti per time level, a .pvd series for time-dependent problems) and as one HDF5 file.
//
// Arrays per grid point: every field, the requested quantities (derivatives like u_x or any
// expression), the equations' residuals, and where an exact solution is known `<field>_exact` and
// `<field>_error`; for a domain that is not its bounding box, `inside` (1 in the domain, 0
// outside: threshold on it in ParaView).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autodiff/primitive.h"
#include "solvers/problem.h"

namespace jetpde::io {

struct GridSpec {
  std::vector<int> counts;  // points per spatial axis (one value: every axis)
  int time_steps = 11;      // time levels, for a time-dependent domain
};

// The grid's spatial points [n, spatial dims], x fastest, and the time levels (empty when the
// problem has no time). `dims` gets the points per axis.
MatrixD spatial_grid(const geometry::Geometry& domain, const GridSpec& spec, bool has_time,
                     std::vector<int>* dims, std::vector<double>* times);

// The points of that grid over all its time levels (what write_grid_output evaluates), counted
// without building it (saturated at 9e18).
long long grid_point_count(const geometry::Geometry& domain, const GridSpec& spec, bool has_time);

struct GridOutputOptions {
  GridSpec grid;
  std::vector<std::string> quantities;
  bool residuals = true, vtk = true, hdf5 = true;
  // Exact solution at points [n, coordinates] -> [n, fields]; empty when none.
  std::function<MatrixD(const MatrixD&)> exact;
};

// Writes `dir`/fields.h5 and `dir`/fields.vti (or fields_NNNN.vti and fields.pvd); returns the
// files written (relative to dir).
std::vector<std::string> write_grid_output(solvers::Problem& problem, const Eigen::VectorXd& theta,
                                           const std::string& dir,
                                           const GridOutputOptions& options);

}  // namespace jetpde::io
