// Fields on a grid over the domain's bounding box (solvers::FieldSource::fields_on_grid), written
// for ParaView (.vti per time level, a .pvd series for time-dependent problems) and as one HDF5
// file.
//
//   io::write_grid_output(solution, "run", {.grid = {.counts = {101}}, .quantities = {"u_x"}});
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
#include "solvers/grid.h"
#include "solvers/solution.h"

namespace jetpde::io {

// The grid itself lives in solvers/grid.h (validation uses it too).
using solvers::grid_point_count;
using solvers::GridSpec;
using solvers::spatial_grid;

struct GridOutputOptions {
  GridSpec grid;
  std::vector<std::string> quantities;
  bool residuals = true, vtk = true, hdf5 = true;
  // Exact solution at points [n, coordinates] -> [n, fields]; empty when none.
  std::function<MatrixD(const MatrixD&)> exact;
};

// Writes `dir`/fields.h5 and `dir`/fields.vti (or fields_NNNN.vti and fields.pvd; no .vti above
// 3 spatial dimensions); returns the files written (relative to dir).
std::vector<std::string> write_grid_output(const solvers::FieldSource& source,
                                           const std::string& dir,
                                           const GridOutputOptions& options);

}  // namespace jetpde::io
