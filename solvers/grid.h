// A uniform grid over a domain's bounding box (its spatial axes), with time levels for a
// time-dependent domain: what fields are shown on (io's .vti and fields.h5 files) and what an
// exact solution is validated on in up to 3 dimensions.
//
//   solvers::GridSpec grid{.counts = {101}, .time_steps = 11};
//   std::vector<int> dims;
//   std::vector<double> times;
//   MatrixD xy = solvers::spatial_grid(*spec.math.domain, grid, /*has_time=*/false, &dims, &times);
#pragma once

#include <string>
#include <vector>

#include "autodiff/primitive.h"
#include "geometry/geometry.h"

namespace jetpde::solvers {

struct GridSpec {
  std::vector<int> counts;  // points per spatial axis (one value: every axis; none: 101)
  int time_steps = 11;      // time levels, for a time-dependent domain
};

// The grid's spatial points [n, spatial dims], x fastest, and the time levels (empty when the
// problem has no time: the time coordinate is the domain's last). `dims` gets the points per
// axis. UserError (under output.grid, the key that sets it) for fewer than 2 points on an axis.
MatrixD spatial_grid(const geometry::Geometry& domain, const GridSpec& spec, bool has_time,
                     std::vector<int>* dims, std::vector<double>* times);

// The points of that grid over all its time levels, counted without building it (saturated at
// 9e18).
long long grid_point_count(const geometry::Geometry& domain, const GridSpec& spec, bool has_time);

// The spatial points repeated for every time level, the level's time as the last column (the
// points themselves without time levels).
MatrixD with_times(const MatrixD& space, const std::vector<double>& times);

}  // namespace jetpde::solvers
