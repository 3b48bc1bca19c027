// Unit-cube sequences: known first points, Latin hypercube strata, the net property of scrambled
// Sobol points, discrepancy and integration error against pseudo-random points, seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "geometry/sequences.h"
#include "tests/support/user_error.h"

namespace jetpde::geometry {
namespace {

// Warnock's closed form of the L2-star discrepancy of the rows of `x` (in [0, 1]^d).
double l2_star_discrepancy(const MatrixD& x) {
  const auto n = static_cast<double>(x.rows());
  const int d = static_cast<int>(x.cols());
  double single = 0, pairs = 0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double prod = 1;
    for (int k = 0; k < d; ++k) prod *= (1 - x(i, k) * x(i, k)) / 2;
    single += prod;
    for (Eigen::Index j = 0; j < x.rows(); ++j) {
      double p = 1;
      for (int k = 0; k < d; ++k) p *= 1 - std::max(x(i, k), x(j, k));
      pairs += p;
    }
  }
  return std::sqrt(std::pow(3.0, -d) - 2 * single / n + pairs / (n * n));
}

// Integration error of f(u) = prod_k (pi/2) sin(pi u_k) (or, `additive`, the mean of the
// factors), whose integral over the cube is 1.
double integration_error(const MatrixD& x, bool additive = false) {
  double sum = 0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double f = additive ? 0 : 1;
    for (Eigen::Index k = 0; k < x.cols(); ++k) {
      const double factor = std::numbers::pi / 2 * std::sin(std::numbers::pi * x(i, k));
      f = additive ? f + factor / static_cast<double>(x.cols()) : f * factor;
    }
    sum += f;
  }
  return std::abs(sum / static_cast<double>(x.rows()) - 1);
}

MatrixD draw(SampleMethod method, int dim, std::size_t n, std::uint64_t seed,
             bool scramble = true) {
  return make_unit_cube_stream(method, dim, seed, scramble)->next(n);
}

TEST(Sequences, UnscrambledSobolAndHaltonStartWithTheKnownPoints) {
  const MatrixD sobol = draw(SampleMethod::sobol, 2, 3, 0, false);
  const double expected_sobol[3][2] = {{0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}};
  const MatrixD halton = draw(SampleMethod::halton, 2, 3, 0, false);
  const double expected_halton[3][2] = {{0.5, 1.0 / 3}, {0.25, 2.0 / 3}, {0.75, 1.0 / 9}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      EXPECT_NEAR(sobol(i, j), expected_sobol[i][j], 1e-15);
      EXPECT_NEAR(halton(i, j), expected_halton[i][j], 1e-15);
    }
}

TEST(Sequences, AllPointsLieInTheOpenCube) {
  for (auto method : {SampleMethod::pseudo_random, SampleMethod::latin_hypercube,
                      SampleMethod::halton, SampleMethod::sobol}) {
    const MatrixD x = draw(method, 4, 4096, 3);
    EXPECT_GT(x.minCoeff(), 0.0) << sample_method_name(method);
    EXPECT_LT(x.maxCoeff(), 1.0) << sample_method_name(method);
  }
}

TEST(Sequences, LatinHypercubeHasOnePointInEveryStratumOfEveryCoordinate) {
  auto stream = make_unit_cube_stream(SampleMethod::latin_hypercube, 5, 11);
  for (std::size_t n : {1u, 7u, 100u, 1000u}) {
    const MatrixD x = stream->next(n);  // each call is a fresh hypercube
    for (int k = 0; k < 5; ++k) {
      std::vector<int> hits(n, 0);
      for (Eigen::Index i = 0; i < x.rows(); ++i)
        ++hits[static_cast<std::size_t>(x(i, k) * static_cast<double>(n))];
      EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }))
          << "n = " << n << ", coordinate " << k;
    }
  }
}

TEST(Sequences, ScrambledSobolKeepsTheNetProperty) {
  // 2^10 points: every coordinate has one point in each interval [a 2^-10, (a + 1) 2^-10), and
  // the first two coordinates (a (0, m, 2)-net) one point in each box 2^-k x 2^-(10-k).
  const int m = 10;
  const std::size_t n = std::size_t{1} << m;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const MatrixD x = draw(SampleMethod::sobol, 6, n, seed);
    for (int j = 0; j < 6; ++j) {
      std::vector<int> hits(n, 0);
      for (Eigen::Index i = 0; i < x.rows(); ++i)
        ++hits[static_cast<std::size_t>(std::ldexp(x(i, j), m))];
      EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << "coordinate " << j;
    }
    for (int k = 0; k <= m; ++k) {
      std::vector<int> hits(n, 0);
      for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const auto a = static_cast<std::size_t>(std::ldexp(x(i, 0), k));
        const auto b = static_cast<std::size_t>(std::ldexp(x(i, 1), m - k));
        ++hits[(a << (m - k)) + b];
      }
      EXPECT_EQ(*std::max_element(hits.begin(), hits.end()), 1) << "k = " << k;
    }
  }
}

TEST(Sequences, LowDiscrepancyBeatsPseudoRandom) {
  // Averages over 8 seeds of 1024 points. Measured (d = 2; d = 4): L2-star discrepancy random
  // 0.0094, 0.0064; halton 0.0009, 0.0017; sobol 0.0006, 0.0011.
  const std::size_t n = 1024;
  const int seeds = 8;
  auto average = [&](SampleMethod method, int dim, auto&& measure) {
    double sum = 0;
    for (int s = 0; s < seeds; ++s)
      sum += measure(draw(method, dim, n, static_cast<std::uint64_t>(s)));
    return sum / seeds;
  };
  auto discrepancy = [](const MatrixD& x) { return l2_star_discrepancy(x); };
  auto product_error = [](const MatrixD& x) { return integration_error(x); };
  auto additive_error = [](const MatrixD& x) { return integration_error(x, true); };
  for (int dim : {2, 4}) {
    const double random_discrepancy = average(SampleMethod::pseudo_random, dim, discrepancy);
    const double random_error = average(SampleMethod::pseudo_random, dim, product_error);
    for (auto method : {SampleMethod::halton, SampleMethod::sobol}) {
      const double d = average(method, dim, discrepancy), e = average(method, dim, product_error);
      std::printf("d=%d %s: discrepancy %.4g (random %.4g), error %.3g (random %.3g)\n", dim,
                  sample_method_name(method).c_str(), d, random_discrepancy, e, random_error);
      EXPECT_LT(d, 0.35 * random_discrepancy) << sample_method_name(method) << " d=" << dim;
      EXPECT_LT(e, 0.1 * random_error) << sample_method_name(method) << " d=" << dim;
    }
    // Latin hypercubes stratify the margins: additive functions integrate far better.
    EXPECT_LT(average(SampleMethod::latin_hypercube, dim, additive_error),
              0.05 * average(SampleMethod::pseudo_random, dim, additive_error))
        << "lhs d=" << dim;
  }
}

TEST(Sequences, SeedsReproduceAndDifferentSeedsDiffer) {
  for (auto method : {SampleMethod::pseudo_random, SampleMethod::latin_hypercube,
                      SampleMethod::halton, SampleMethod::sobol}) {
    const MatrixD a = draw(method, 3, 256, 42), b = draw(method, 3, 256, 42),
                  c = draw(method, 3, 256, 43);
    EXPECT_TRUE((a == b).all()) << sample_method_name(method);
    EXPECT_GT((a - c).abs().maxCoeff(), 0.1) << sample_method_name(method);
  }
}

TEST(Sequences, StreamsContinue) {
  auto one = make_unit_cube_stream(SampleMethod::sobol, 3, 5);
  auto two = make_unit_cube_stream(SampleMethod::sobol, 3, 5);
  MatrixD whole = one->next(100);
  MatrixD first = two->next(40), rest = two->next(60);
  EXPECT_TRUE((whole.topRows(40) == first).all());
  EXPECT_TRUE((whole.bottomRows(60) == rest).all());
}

TEST(Sequences, GridHasMidpointsAndCellsCloseToCubes) {
  const auto counts = grid_counts({2.0, 1.0}, 200);
  EXPECT_EQ(counts, (std::vector<std::size_t>{20, 10}));
  const MatrixD g = unit_grid({2, 3});
  ASSERT_EQ(g.rows(), 6);
  EXPECT_DOUBLE_EQ(g(0, 0), 0.25);
  EXPECT_DOUBLE_EQ(g(0, 1), 1.0 / 6);
  EXPECT_DOUBLE_EQ(g(5, 0), 0.75);
  EXPECT_DOUBLE_EQ(g(5, 1), 5.0 / 6);
}

TEST(Sequences, MethodNamesAndErrors) {
  EXPECT_EQ(sample_method_from_name("lhs"), SampleMethod::latin_hypercube);
  EXPECT_EQ(sample_method_from_name("random"), SampleMethod::pseudo_random);
  for (auto method : {SampleMethod::pseudo_random, SampleMethod::latin_hypercube,
                      SampleMethod::halton, SampleMethod::sobol, SampleMethod::grid})
    EXPECT_EQ(sample_method_from_name(sample_method_name(method)), method);
  testing::expect_user_error(
      [] { sample_method_from_name("qmc"); },
      "unknown sampling method 'qmc' (known: random, lhs, halton, sobol, grid)");
  testing::expect_user_error([] { make_unit_cube_stream(SampleMethod::sobol, 4000, 0); },
                             "sobol: at most 3667 dimensions (Boost's Joe-Kuo table), got 4000");
}

}  // namespace
}  // namespace jetpde::geometry
