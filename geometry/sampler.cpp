#include "geometry/sampler.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"

namespace jetpde::geometry {

const options::Declaration<SampleOptions>& sample_options() {
  static const options::Declaration<SampleOptions> d = [] {
    options::Declaration<SampleOptions> d;
    d.add_choice("method", &SampleOptions::method, sample_method_names(), "sobol",
                 "Point sequence.");
    return d;
  }();
  return d;
}
namespace {

constexpr std::uint64_t kInteriorSalt = 1, kBoundarySalt = 2;

// Rows accepted so far, grown as needed.
class Accepted {
 public:
  Accepted(int dim, bool with_normals)
      : dim_(dim), with_normals_(with_normals), points_(0, dim), normals_(0, dim) {}
  std::size_t count() const { return count_; }
  void add(const double* point, const double* normal) {
    if (count_ == static_cast<std::size_t>(points_.rows())) grow();
    const auto row = static_cast<Eigen::Index>(count_++);
    for (int j = 0; j < dim_; ++j) {
      points_(row, j) = point[j];
      if (with_normals_) normals_(row, j) = normal[j];
    }
  }
  PointSet finish(double measure, bool exact) {
    PointSet out;
    const auto rows = static_cast<Eigen::Index>(count_);
    out.points = points_.topRows(rows);
    out.normals = with_normals_ ? MatrixD(normals_.topRows(rows)) : MatrixD(0, dim_);
    out.weights = MatrixD::Constant(rows, 1, count_ ? measure / static_cast<double>(count_) : 0.0);
    out.measure = measure;
    out.measure_exact = exact;
    return out;
  }

 private:
  void grow() {
    const Eigen::Index rows = std::max<Eigen::Index>(64, 2 * points_.rows());
    points_.conservativeResize(rows, dim_);
    if (with_normals_) normals_.conservativeResize(rows, dim_);
  }
  int dim_;
  bool with_normals_;
  std::size_t count_ = 0;
  MatrixD points_, normals_;
};

[[noreturn]] void acceptance_error(const std::string& what, double fraction,
                                   const SampleOptions& options) {
  throw UserError(what + ": only a fraction " + format_number(fraction) +
                  " of the candidate points lies in it, below min_acceptance " +
                  format_number(options.min_acceptance) +
                  " of rejection sampling; sample a geometry with a tighter bounding box, or "
                  "lower min_acceptance");
}

// Draws candidates from `stream` until `n` are accepted: `try_row(u, point, normal)` maps one
// row of unit-cube coordinates and says whether to keep it.
template <class TryRow>
void rejection_loop(UnitCubeStream& stream, std::size_t n, double expected_acceptance,
                    const SampleOptions& options, const std::string& what, Accepted& accepted,
                    int dim, TryRow&& try_row) {
  if (expected_acceptance < options.min_acceptance)
    acceptance_error(what, expected_acceptance, options);
  std::vector<double> point(static_cast<std::size_t>(dim)), normal(point.size());
  std::size_t drawn = 0;
  while (accepted.count() < n) {
    const double missing = static_cast<double>(n - accepted.count());
    const auto batch = static_cast<std::size_t>(missing / expected_acceptance * 1.1) + 16;
    const MatrixD unit = stream.next(batch);
    drawn += batch;
    for (Eigen::Index i = 0; i < unit.rows() && accepted.count() < n; ++i)
      if (try_row(&unit(i, 0), point.data(), normal.data()))
        accepted.add(point.data(), normal.data());
    // A safety net for estimates that were too optimistic.
    const double observed = static_cast<double>(accepted.count()) / static_cast<double>(drawn);
    if (accepted.count() < n && drawn >= 4096 && observed < 0.5 * options.min_acceptance)
      acceptance_error(what, observed, options);
  }
}

void check_options(const SampleOptions& options) {
  if (!(options.min_acceptance > 0 && options.min_acceptance <= 1))
    throw UserError("sampling: min_acceptance must be in (0, 1], got " +
                    format_number(options.min_acceptance));
}

}  // namespace

PointSet sample_interior(const Geometry& geometry, std::size_t n, const SampleOptions& options) {
  check_options(options);
  const int dim = geometry.dim();
  const Bounds box = geometry.bounds();
  const double volume = geometry.volume();
  const std::string what = "interior sampling of " + geometry.describe();
  const double acceptance = geometry.is_box() ? 1.0 : volume / box.volume();
  auto to_box = [&](const double* u, double* point) {
    for (int j = 0; j < dim; ++j) {
      const auto k = static_cast<std::size_t>(j);
      point[j] = box.lo[k] + u[j] * (box.hi[k] - box.lo[k]);
    }
  };
  Accepted accepted(dim, false);
  if (n == 0) return accepted.finish(volume, geometry.volume_is_exact());
  if (options.method == SampleMethod::grid) {
    std::vector<double> sides;
    for (int j = 0; j < dim; ++j)
      sides.push_back(box.hi[static_cast<std::size_t>(j)] - box.lo[static_cast<std::size_t>(j)]);
    const MatrixD unit = unit_grid(grid_counts(sides, static_cast<double>(n) / acceptance));
    std::vector<double> point(static_cast<std::size_t>(dim));
    for (Eigen::Index i = 0; i < unit.rows(); ++i) {
      to_box(&unit(i, 0), point.data());
      if (geometry.contains(point)) accepted.add(point.data(), nullptr);
    }
    if (accepted.count() == 0)
      throw UserError(what + ": a grid of " + std::to_string(unit.rows()) +
                      " points has none inside; ask for more points");
    return accepted.finish(volume, geometry.volume_is_exact());
  }
  auto stream = make_unit_cube_stream(options.method, dim, mix_seed(options.seed, kInteriorSalt),
                                      options.scramble);
  rejection_loop(*stream, n, acceptance, options, what, accepted, dim,
                 [&](const double* u, double* point, double*) {
                   to_box(u, point);
                   return geometry.contains(Point(point, static_cast<std::size_t>(dim)));
                 });
  return accepted.finish(volume, geometry.volume_is_exact());
}

namespace {

PointSet sample_boundary_grid(const ResolvedPiece& piece, int dim, std::size_t n) {
  Accepted accepted(dim, true);
  std::vector<double> point(static_cast<std::size_t>(dim)), normal(point.size());
  for (const BoundaryPatch& patch : piece.patches) {
    const double target = static_cast<double>(n) * patch.measure / piece.measure;
    const MatrixD unit = patch.param_dim == 0 ? MatrixD::Constant(1, 1, 0.5)
                                              : unit_grid(grid_counts(patch.extents, target));
    for (Eigen::Index i = 0; i < unit.rows(); ++i) {
      patch.map(&unit(i, 0), point.data(), normal.data());
      if (!patch.keep || patch.keep(point, normal)) accepted.add(point.data(), normal.data());
    }
  }
  if (accepted.count() == 0)
    throw UserError("grid sampling of " + piece.label + " with " + std::to_string(n) +
                    " points kept none; ask for more points");
  return accepted.finish(piece.measure, piece.measure_exact);
}

}  // namespace

PointSet sample_boundary(const Geometry& geometry, std::size_t n, const SampleOptions& options,
                         const BoundaryPiece& piece) {
  check_options(options);
  const ResolvedPiece resolved = resolve_piece(geometry, piece);
  const int dim = geometry.dim();
  if (n == 0) return Accepted(dim, true).finish(resolved.measure, resolved.measure_exact);
  if (options.method == SampleMethod::grid) return sample_boundary_grid(resolved, dim, n);

  // Patch k owns [cumulative[k], cumulative[k + 1]) of the first coordinate.
  const auto& patches = resolved.patches;
  std::vector<double> cumulative{0};
  int param_dim = 1;
  for (const BoundaryPatch& patch : patches) {
    cumulative.push_back(cumulative.back() + patch.measure);
    param_dim = std::max(param_dim, patch.param_dim);
  }
  const double total = cumulative.back();
  for (double& c : cumulative) c /= total;
  auto stream = make_unit_cube_stream(options.method, param_dim,
                                      mix_seed(options.seed, kBoundarySalt), options.scramble);
  std::vector<double> u(static_cast<std::size_t>(param_dim));
  Accepted accepted(dim, true);
  rejection_loop(*stream, n, resolved.measure / total, options, "sampling " + resolved.label,
                 accepted, dim, [&](const double* unit, double* point, double* normal) {
                   const auto k = static_cast<std::size_t>(
                       std::upper_bound(cumulative.begin() + 1, cumulative.end() - 1, unit[0]) -
                       (cumulative.begin() + 1));
                   const double width = cumulative[k + 1] - cumulative[k];
                   u[0] = std::clamp((unit[0] - cumulative[k]) / width, 0x1p-53, 1 - 0x1p-53);
                   std::copy(unit + 1, unit + param_dim, u.begin() + 1);
                   patches[k].map(u.data(), point, normal);
                   const auto d = static_cast<std::size_t>(dim);
                   return !patches[k].keep || patches[k].keep(Point(point, d), Point(normal, d));
                 });
  return accepted.finish(resolved.measure, resolved.measure_exact);
}

PointSet sample_boundary(const Geometry& geometry, std::size_t n, const SampleOptions& options,
                         const std::string& piece) {
  return sample_boundary(geometry, n, options, BoundaryPiece::parse(geometry, piece));
}

}  // namespace jetpde::geometry
