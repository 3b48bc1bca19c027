// Point sequences in the open unit cube (0, 1)^d: the raw material of every sampler.
//
// A geometry maps these points onto its interior (from its bounding box) or onto its boundary
// (through the boundary patches' parametrizations); see sampler.h. The methods:
//
//   pseudo_random    std::mt19937_64 seeded with `seed`; u = (k + 1/2) 2^-52 from the top 52 bits
//                    of each draw (no std::uniform_real_distribution, whose output differs between
//                    standard libraries), so a seed gives the same points on every platform.
//   latin_hypercube  each call to next(m) returns an independent Latin hypercube of m points: in
//                    every coordinate each of the m strata [k/m, (k+1)/m) holds exactly one point
//                    (McKay, Beckman and Conover 1979), placed uniformly inside its stratum.
//   halton           radical inverses in the first d primes. Scrambled (the default) with
//                    independent random permutations of the digits 0..b-1 at every digit position
//                    (Owen 2017, "A randomized Halton algorithm"); unscrambled it starts at index 1
//                    (skipping the origin).
//   sobol            Sobol points in Gray-code order from Boost.Random's sobol engine (Joe-Kuo
//                    direction numbers, up to 3667 dimensions), index 0 (the origin) included.
//                    Scrambled (the default) by a random linear matrix scramble plus a digital
//                    shift (Matousek 1998; the scramble of scipy.stats.qmc.Sobol): both keep the
//                    (t, m, d)-net property, so the first 2^m points stay balanced in every
//                    dyadic box of volume 2^-m that fits the net. Unscrambled, the origin is
//                    skipped. Prefer n a power of two.
//   grid             midpoints of a regular grid, k_1 x ... x k_d cells (see grid_counts).
//
// Streams continue: a second next() call returns the following points of the sequence (a fresh
// independent hypercube for latin_hypercube), which is what rejection sampling needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "autodiff/primitive.h"

namespace jetpde::geometry {

enum class SampleMethod { pseudo_random, latin_hypercube, halton, sobol, grid };

// Names: "random" (or "pseudo_random"), "lhs" (or "latin_hypercube"), "halton", "sobol", "grid".
// UserError for any other name, listing the valid ones.
const options::EnumTable<SampleMethod>& sample_method_names();  // sampling.method
SampleMethod sample_method_from_name(const std::string& name);
std::string sample_method_name(SampleMethod method);

// A stream of points in (0, 1)^dim.
class UnitCubeStream {
 public:
  virtual ~UnitCubeStream() = default;
  int dim() const { return dim_; }
  // The next `count` points as rows of a [count, dim] matrix.
  virtual MatrixD next(std::size_t count) = 0;

 protected:
  explicit UnitCubeStream(int dim) : dim_(dim) {}

 private:
  int dim_;
};

// A stream for `method` (not grid: a grid is not a stream; use unit_grid). `scramble` applies to
// halton and sobol. UserError for dim < 1 and for sobol above 3667 dimensions.
std::unique_ptr<UnitCubeStream> make_unit_cube_stream(SampleMethod method, int dim,
                                                      std::uint64_t seed, bool scramble = true);

// Cell counts k_i for a grid of about `target` cells over a box whose sides are `extents`, with
// cells as close to cubes as integer counts allow (k_i >= 1, prod k_i close to target).
std::vector<std::size_t> grid_counts(const std::vector<double>& extents, double target);

// The midpoints of the k_1 x ... x k_d grid of (0, 1)^d, first coordinate varying slowest.
MatrixD unit_grid(const std::vector<std::size_t>& counts);

// SplitMix64 (Steele, Lea, Flood 2014): derives independent seeds from one seed.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t salt);

}  // namespace jetpde::geometry
