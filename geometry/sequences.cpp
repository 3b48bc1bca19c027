#include "geometry/sequences.h"

#include <algorithm>
#include <array>
#include <boost/random/sobol.hpp>
#include <cmath>
#include <numeric>
#include <random>

#include "autodiff/errors.h"
#include "autodiff/options.h"

namespace jetpde::geometry {
namespace {

constexpr double kTwoPowMinus52 = 0x1p-52;

// A 64-bit integer to a double in (0, 1): the midpoint of its top-52-bit dyadic cell, which is
// never 0 or 1 (the largest value, 1 - 2^-53, is a double).
double unit_from_bits(std::uint64_t bits) {
  return (static_cast<double>(bits >> 12) + 0.5) * kTwoPowMinus52;
}

class PseudoRandomStream final : public UnitCubeStream {
 public:
  PseudoRandomStream(int dim, std::uint64_t seed) : UnitCubeStream(dim), rng_(seed) {}
  MatrixD next(std::size_t count) override {
    MatrixD out(static_cast<Eigen::Index>(count), dim());
    for (double& u : out.reshaped<Eigen::RowMajor>()) u = unit_from_bits(rng_());
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

class LatinHypercubeStream final : public UnitCubeStream {
 public:
  LatinHypercubeStream(int dim, std::uint64_t seed) : UnitCubeStream(dim), rng_(seed) {}
  MatrixD next(std::size_t count) override {
    MatrixD out(static_cast<Eigen::Index>(count), dim());
    std::vector<std::size_t> strata(count);
    for (int j = 0; j < dim(); ++j) {
      std::iota(strata.begin(), strata.end(), std::size_t{0});
      shuffle(strata);
      for (std::size_t i = 0; i < count; ++i) {
        const double u = unit_from_bits(rng_());
        out(static_cast<Eigen::Index>(i), j) =
            (static_cast<double>(strata[i]) + u) / static_cast<double>(count);
      }
    }
    return out;
  }

 private:
  // Fisher-Yates with our own bounded draws (std::shuffle's output is library-specific).
  void shuffle(std::vector<std::size_t>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng_() % i]);
  }
  std::mt19937_64 rng_;
};

std::vector<std::uint32_t> first_primes(int count) {
  std::vector<std::uint32_t> primes;
  for (std::uint32_t candidate = 2; static_cast<int>(primes.size()) < count; ++candidate) {
    bool prime = true;
    for (std::uint32_t p : primes) {
      if (p * p > candidate) break;
      if (candidate % p == 0) {
        prime = false;
        break;
      }
    }
    if (prime) primes.push_back(candidate);
  }
  return primes;
}

class HaltonStream final : public UnitCubeStream {
 public:
  HaltonStream(int dim, std::uint64_t seed, bool scramble)
      : UnitCubeStream(dim), bases_(first_primes(dim)), index_(scramble ? 0 : 1) {
    if (!scramble) return;
    std::mt19937_64 rng(seed);
    permutations_.resize(static_cast<std::size_t>(dim));
    for (int j = 0; j < dim; ++j) {
      const std::uint32_t base = bases_[static_cast<std::size_t>(j)];
      // Enough digits that base^-digits is below the double resolution.
      const int digits = static_cast<int>(std::ceil(53.0 / std::log2(base)));
      auto& perms = permutations_[static_cast<std::size_t>(j)];
      perms.assign(static_cast<std::size_t>(digits), std::vector<std::uint32_t>(base));
      for (auto& perm : perms) {
        std::iota(perm.begin(), perm.end(), 0u);
        for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng() % i]);
      }
    }
  }

  MatrixD next(std::size_t count) override {
    MatrixD out(static_cast<Eigen::Index>(count), dim());
    for (std::size_t i = 0; i < count; ++i, ++index_)
      for (int j = 0; j < dim(); ++j)
        out(static_cast<Eigen::Index>(i), j) = radical_inverse(index_, j);
    return out;
  }

 private:
  double radical_inverse(std::uint64_t index, int j) const {
    const std::uint64_t base = bases_[static_cast<std::size_t>(j)];
    std::array<std::uint32_t, 64> digits{};
    int used = 0;
    if (permutations_.empty()) {
      for (; index > 0; index /= base)
        digits[static_cast<std::size_t>(used++)] = static_cast<std::uint32_t>(index % base);
    } else {
      const auto& perms = permutations_[static_cast<std::size_t>(j)];
      for (; used < static_cast<int>(perms.size()); ++used, index /= base)
        digits[static_cast<std::size_t>(used)] =
            perms[static_cast<std::size_t>(used)][index % base];
    }
    double value = 0;  // Horner from the least significant digit, for accuracy
    for (int k = used - 1; k >= 0; --k)
      value = (value + digits[static_cast<std::size_t>(k)]) / static_cast<double>(base);
    return std::clamp(value, 0x1p-53, 1.0 - 0x1p-53);
  }

  std::vector<std::uint32_t> bases_;
  std::vector<std::vector<std::vector<std::uint32_t>>> permutations_;  // [dim][digit][b]
  std::uint64_t index_;
};

class SobolStream final : public UnitCubeStream {
 public:
  static constexpr int kMaxDim = 3667;  // Boost's default_sobol_table

  SobolStream(int dim, std::uint64_t seed, bool scramble)
      : UnitCubeStream(dim), engine_(static_cast<std::size_t>(dim)), origin_pending_(scramble) {
    if (!scramble) return;
    std::mt19937_64 rng(seed);
    columns_.resize(static_cast<std::size_t>(dim));
    shifts_.resize(static_cast<std::size_t>(dim));
    for (int j = 0; j < dim; ++j) {
      // Column l acts on input digit l (bit 63 - l, most significant first): it has that bit set
      // (unit diagonal) and random bits below it (the lower triangle).
      auto& cols = columns_[static_cast<std::size_t>(j)];
      for (int l = 0; l < 64; ++l) {
        const std::uint64_t diagonal = std::uint64_t{1} << (63 - l);
        cols[static_cast<std::size_t>(l)] = diagonal | (rng() & (diagonal - 1));
      }
      shifts_[static_cast<std::size_t>(j)] = rng();
    }
  }

  MatrixD next(std::size_t count) override {
    MatrixD out(static_cast<Eigen::Index>(count), dim());
    for (std::size_t i = 0; i < count; ++i) {
      for (int j = 0; j < dim(); ++j) {
        // Boost skips the origin; a scrambled sequence starts with it (index 0).
        const std::uint64_t raw = origin_pending_ ? 0 : engine_();
        out(static_cast<Eigen::Index>(i), j) = unit_from_bits(scrambled(raw, j));
      }
      origin_pending_ = false;
    }
    return out;
  }

 private:
  std::uint64_t scrambled(std::uint64_t x, int j) const {
    if (columns_.empty()) return x;
    const auto& cols = columns_[static_cast<std::size_t>(j)];
    std::uint64_t y = 0;
    for (int l = 0; l < 64; ++l)
      if ((x >> (63 - l)) & 1u) y ^= cols[static_cast<std::size_t>(l)];
    return y ^ shifts_[static_cast<std::size_t>(j)];
  }

  boost::random::sobol engine_;
  bool origin_pending_;
  std::vector<std::array<std::uint64_t, 64>> columns_;
  std::vector<std::uint64_t> shifts_;
};

}  // namespace

namespace {
constexpr std::array<options::EnumName<SampleMethod>, 5> kMethods{{
    {SampleMethod::pseudo_random, "random", "independent uniform points", "pseudo_random"},
    {SampleMethod::latin_hypercube, "lhs", "Latin hypercube: one point per stratum of each axis",
     "latin_hypercube"},
    {SampleMethod::halton, "halton", "the Halton sequence (scrambled by the seed)"},
    {SampleMethod::sobol, "sobol", "the Sobol sequence (scrambled by the seed)"},
    {SampleMethod::grid, "grid", "a regular grid"},
}};
}  // namespace

const options::EnumTable<SampleMethod>& sample_method_names() {
  static constexpr options::EnumTable<SampleMethod> table("sampling method", kMethods);
  return table;
}

SampleMethod sample_method_from_name(const std::string& name) {
  return sample_method_names().from_name(name);
}

std::string sample_method_name(SampleMethod method) { return sample_method_names().name(method); }

std::unique_ptr<UnitCubeStream> make_unit_cube_stream(SampleMethod method, int dim,
                                                      std::uint64_t seed, bool scramble) {
  if (dim < 1)
    throw UserError("point sequence: dimension must be at least 1, got " + std::to_string(dim));
  switch (method) {
    case SampleMethod::pseudo_random:
      return std::make_unique<PseudoRandomStream>(dim, seed);
    case SampleMethod::latin_hypercube:
      return std::make_unique<LatinHypercubeStream>(dim, seed);
    case SampleMethod::halton:
      return std::make_unique<HaltonStream>(dim, seed, scramble);
    case SampleMethod::sobol:
      if (dim > SobolStream::kMaxDim)
        throw UserError("sobol: at most " + std::to_string(SobolStream::kMaxDim) +
                        " dimensions (Boost's Joe-Kuo table), got " + std::to_string(dim));
      return std::make_unique<SobolStream>(dim, seed, scramble);
    case SampleMethod::grid:
      break;
  }
  throw InternalError("make_unit_cube_stream: grid is not a stream");
}

std::vector<std::size_t> grid_counts(const std::vector<double>& extents, double target) {
  const double dim = static_cast<double>(extents.size());
  target = std::max(target, 1.0);
  double volume = 1;
  for (double e : extents) volume *= e;
  const double spacing = std::pow(volume / target, 1.0 / dim);
  std::vector<std::size_t> counts;
  double total = 1;
  for (double e : extents) {
    counts.push_back(static_cast<std::size_t>(std::max(1.0, std::floor(e / spacing))));
    total *= static_cast<double>(counts.back());
  }
  // Refine the coarsest axis while that brings the total closer to the target.
  while (true) {
    std::size_t coarsest = 0;
    for (std::size_t i = 1; i < counts.size(); ++i)
      if (extents[i] / static_cast<double>(counts[i]) >
          extents[coarsest] / static_cast<double>(counts[coarsest]))
        coarsest = i;
    const double k = static_cast<double>(counts[coarsest]);
    const double refined = total / k * (k + 1);
    if (std::abs(refined - target) >= std::abs(total - target)) break;
    ++counts[coarsest];
    total = refined;
  }
  return counts;
}

MatrixD unit_grid(const std::vector<std::size_t>& counts) {
  std::size_t total = 1;
  for (std::size_t k : counts) total *= k;
  const int dim = static_cast<int>(counts.size());
  MatrixD out(static_cast<Eigen::Index>(total), dim);
  for (std::size_t i = 0; i < total; ++i) {
    std::size_t rest = i;
    for (int j = dim - 1; j >= 0; --j) {
      const std::size_t k = counts[static_cast<std::size_t>(j)];
      out(static_cast<Eigen::Index>(i), j) =
          (static_cast<double>(rest % k) + 0.5) / static_cast<double>(k);
      rest /= k;
    }
  }
  return out;
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace jetpde::geometry
