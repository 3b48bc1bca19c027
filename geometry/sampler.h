// Sampling a geometry: interior points with quadrature weights, boundary points with outward unit
// normals and quadrature weights.
//
//   using namespace jetpde::geometry;
//   auto domain = subtract(rectangle({0, 0}, {1, 1}), disk({0.5, 0.5}, 0.2));
//   SampleOptions options{.method = SampleMethod::sobol, .seed = 7};
//   PointSet inside = sample_interior(*domain, 4096, options);
//   PointSet wall = sample_boundary(*domain, 1024, options, BoundaryPiece::named("circle"));
//   PointSet inlet = sample_boundary(*domain, 256, options, "x == 0");  // name or predicate
//
// Interior: points of the unit-cube sequence (sequences.h) mapped onto the bounding box, kept
// where the signed distance is negative (rejection; nothing is rejected for boxes). Boundary:
// the piece's patches (boundary.h); one coordinate of the sequence picks a patch in proportion to
// its measure and, rescaled, becomes the patch's first parameter, so the points are uniform over
// the piece by its length/area; points a patch's `keep` refuses (CSG, predicates, the initial
// face of a non-box space) are rejected. Streams continue after rejections, so low-discrepancy
// sequences stay low-discrepancy on what is kept.
//
// Grid: interior, the midpoints of a grid over the bounding box with about n / (volume fraction)
// cells, kept where inside; boundary, a grid on each patch with about n x (patch share) cells
// (one point for each end of an interval). A grid returns about n points, not exactly n.
//
// Weights: every point gets measure / (number of points), so the weights sum to the volume (or
// the piece's measure) and sum(w f(p)) is the Monte Carlo / quasi-Monte Carlo / midpoint-rule
// estimate of the integral of f. The measure is exact or a deterministic estimate (PointSet says
// which).
//
// Rejection gives up with a UserError when less than min_acceptance of the candidates would be
// kept: the domain (or piece) is then too small a part of its bounding box (or patches).
#pragma once

#include <cstdint>
#include <string>

#include "autodiff/options.h"
#include "geometry/boundary.h"
#include "geometry/geometry.h"
#include "geometry/sequences.h"

namespace jetpde::geometry {

struct SampleOptions {
  SampleMethod method = SampleMethod::pseudo_random;
  std::uint64_t seed = 0;        // the same seed gives the same points, on every platform
  bool scramble = true;          // halton and sobol: randomized by the seed (sequences.h)
  double min_acceptance = 1e-3;  // rejection sampling's smallest accepted fraction
};

// The keys of sampling options a config sets (sampling.method); the seed is the run's, the rest
// are not config keys.
const options::Declaration<SampleOptions>& sample_options();

struct PointSet {
  MatrixD points;      // [n, dim]
  MatrixD normals;     // [n, dim]: outward unit normals (boundary); [0, dim] for interior points
  MatrixD weights;     // [n, 1]: measure / n
  double measure = 0;  // volume of the domain or measure of the boundary piece
  bool measure_exact = false;
  std::size_t size() const { return static_cast<std::size_t>(points.rows()); }
};

PointSet sample_interior(const Geometry& geometry, std::size_t n,
                         const SampleOptions& options = {});

PointSet sample_boundary(const Geometry& geometry, std::size_t n, const SampleOptions& options = {},
                         const BoundaryPiece& piece = {});
// `piece` is a piece name or a predicate (BoundaryPiece::parse).
PointSet sample_boundary(const Geometry& geometry, std::size_t n, const SampleOptions& options,
                         const std::string& piece);

}  // namespace jetpde::geometry
