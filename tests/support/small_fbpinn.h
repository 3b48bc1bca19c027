// A small decomposed problem that trains in well under a second: u' = cos(4 x) on [-pi, pi] with
// u(0) = 0 built in (exact sin(4 x) / 4), an FBPINN of 4 subdomains of 2 x 8 tanh networks. The
// decomposition tests train it on one rank (tests/solvers) and over MPI ranks (tests/mpi).
#pragma once

#include <numbers>

#include "geometry/box.h"
#include "solvers/spec.h"

namespace jetpde::testing {

inline solvers::ProblemSpec small_fbpinn() {
  solvers::ProblemSpec spec;
  spec.math.domain = geometry::interval(-std::numbers::pi, std::numbers::pi);
  spec.math.context.fields({"u"}).coordinates({"x"});
  spec.math.equations = {"u_x - cos(4*x)"};
  spec.pinn.hard_constraints = {{.field = "u", .value = "0", .distance = "tanh(4*x)"}};
  spec.pinn.interior_points = 400;
  spec.pinn.network.hidden = {8, 8};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  spec.pinn.decomposition = {.method = solvers::DecompositionMethod::fbpinn,
                             .subdomains = {4},
                             .overlap = 0.5,
                             .output_scale = 0.25};
  return spec;
}

}  // namespace jetpde::testing
