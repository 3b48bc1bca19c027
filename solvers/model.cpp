#include "solvers/model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "nn/detail/names.h"
#include "solvers/communicator.h"

namespace jetpde::solvers {
namespace {

constexpr std::array<options::EnumName<DecompositionMethod>, 3> kMethods{{
    {DecompositionMethod::none, "none", "one network", nullptr, false},
    {DecompositionMethod::fbpinn, "fbpinn",
     "overlapping boxes, the solution the window-weighted sum of their networks (FBPINN)"},
    {DecompositionMethod::xpinn, "xpinn",
     "subdomains without overlap (grid boxes or pieces of any shape), one network each, tied by "
     "interface terms (XPINN)"},
}};

std::string number(double x) { return nn::detail::short_number(x, 6); }

// Network j's parameter names start with this (then the spec's own prefix): unique per network,
// so theta, checkpoints and initial_theta take them as they take one network's.
std::string subdomain_prefix(std::size_t j) { return "sd" + std::to_string(j) + "_"; }

std::string grid_text(const std::vector<int>& grid) {
  std::string out;
  for (int n : grid) out += (out.empty() ? "" : " x ") + std::to_string(n);
  return out;
}

}  // namespace

const options::EnumTable<DecompositionMethod>& decomposition_method_names() {
  static constexpr options::EnumTable<DecompositionMethod> table("decomposition.method", kMethods);
  return table;
}

std::string layout_key(const RowLayout& layout) {
  std::string out;
  for (const RowBlock& b : layout) {
    std::string r;
    for (int j : b.region) r += (r.empty() ? "" : ",") + std::to_string(j);
    out += (out.empty() ? "" : ";") + r + ":" + std::to_string(b.count);
  }
  return out;
}

std::vector<int> automatic_grid(const geometry::Bounds& bounds, int ranks) {
  // At least 4 subdomains (fewer gains little over one network), a whole number per rank.
  ranks = std::max(ranks, 1);
  int total = ranks * ((4 + ranks - 1) / ranks);
  std::vector<int> factors;  // prime factors, largest first
  for (int p = 2; total > 1; ++p)
    while (total % p == 0) {
      factors.push_back(p);
      total /= p;
    }
  std::reverse(factors.begin(), factors.end());
  std::vector<int> grid(static_cast<std::size_t>(bounds.dim()), 1);
  for (int p : factors) {
    // The axis whose boxes are the widest so far gets the cut.
    std::size_t best = 0;
    for (std::size_t a = 1; a < grid.size(); ++a)
      if ((bounds.hi[a] - bounds.lo[a]) / grid[a] >
          (bounds.hi[best] - bounds.lo[best]) / grid[best])
        best = a;
    grid[best] *= p;
  }
  return grid;
}

Model::Model(const nn::NetworkSpec& network, const Decomposition& d, const geometry::Bounds& bounds,
             int ranks) {
  if (!d.pieces.empty())
    throw InternalError("Model: pieces need the domain (the constructor taking the geometry)");
  init(network, d, bounds, ranks, nullptr);
}

Model::Model(const nn::NetworkSpec& network, const Decomposition& d,
             const geometry::Geometry& domain, int ranks) {
  init(network, d, domain.bounds(), ranks, &domain);
}

void Model::init(const nn::NetworkSpec& network, const Decomposition& d,
                 const geometry::Bounds& bounds, int ranks, const geometry::Geometry* domain) {
  method_ = d.method;
  overlap_ = d.overlap;
  scale_ = d.output_scale;
  bounds_ = bounds;
  const std::size_t dim = static_cast<std::size_t>(bounds.dim());
  if (!decomposed()) {
    specs_.push_back(network);
    grid_.assign(dim, 1);
    windowed_.assign(dim, false);
    boxes_ = cells_ = {bounds};
    return;
  }
  if (method_ == DecompositionMethod::xpinn) overlap_ = 0;
  if (method_ == DecompositionMethod::xpinn) {
    if (d.interface_points < 1)
      throw UserError("decomposition.interface.points: must be at least 1, got " +
                      std::to_string(d.interface_points));
  } else if (!(overlap_ > 0) || !(overlap_ < 1))
    throw UserError("decomposition.overlap: " + number(overlap_) +
                    " is not in (0, 1): neighbouring boxes must overlap (an FBPINN's windows "
                    "need it) by less than a box's width");
  if (!(scale_ > 0) || !std::isfinite(scale_))
    throw UserError("decomposition.output_scale: must be a positive number, got " + number(scale_));
  nn::NetworkSpec base = d.network ? *d.network : network;
  base.inputs = network.inputs;
  base.outputs = network.outputs;
  if (!d.pieces.empty()) {
    if (d.automatic || !d.subdomains.empty())
      throw UserError(std::string("decomposition.pieces: give pieces or ") +
                      (d.automatic ? "method auto" : "subdomains") + ", not both");
    if (!domain) throw InternalError("Model: pieces need the domain");
    make_pieces(d, *domain, base);
    return;
  }
  make_grid(d, bounds, ranks, base);
}

void Model::make_grid(const Decomposition& d, const geometry::Bounds& bounds, int ranks,
                      const nn::NetworkSpec& base) {
  const std::size_t dim = static_cast<std::size_t>(bounds.dim());
  if (d.automatic) {
    grid_ = automatic_grid(bounds, ranks);
  } else {
    if (d.subdomains.empty() || d.subdomains.size() > dim)
      throw UserError("decomposition.subdomains: give 1 to " + std::to_string(dim) +
                      " counts (one per coordinate, in coordinate order), got " +
                      std::to_string(d.subdomains.size()));
    grid_ = d.subdomains;
    grid_.resize(dim, 1);
    for (std::size_t a = 0; a < dim; ++a)
      if (grid_[a] < 1)
        throw UserError("decomposition.subdomains[" + std::to_string(a) +
                        "]: must be at least 1, got " + std::to_string(grid_[a]));
  }
  std::size_t total = 1;
  for (int n : grid_) total *= static_cast<std::size_t>(n);
  if (total > 4096)
    throw UserError("decomposition.subdomains: " + grid_text(grid_) + " is " +
                    std::to_string(total) + " subdomains, more than the 4096 supported");
  // Subdomain j's axis indices: axis 0 fastest.
  for (std::size_t j = 0; j < total; ++j) {
    geometry::Bounds cell{std::vector<double>(dim), std::vector<double>(dim)};
    geometry::Bounds box = cell;
    std::size_t rest = j;
    for (std::size_t a = 0; a < dim; ++a) {
      const auto n = static_cast<std::size_t>(grid_[a]);
      const std::size_t k = rest % n;
      rest /= n;
      const double h = (bounds.hi[a] - bounds.lo[a]) / static_cast<double>(n);
      cell.lo[a] = bounds.lo[a] + h * static_cast<double>(k);
      cell.hi[a] = k + 1 == n ? bounds.hi[a] : cell.lo[a] + h;
      // Every box reaches overlap/2 of a width past its cell on both sides, the outer ones past
      // the bounding box too: a point of the domain is then strictly inside some box. An axis of
      // one box still gets the margin, so that faces of the domain are inside.
      box.lo[a] = cell.lo[a] - 0.5 * overlap_ * h;
      box.hi[a] = cell.hi[a] + 0.5 * overlap_ * h;
    }
    nn::NetworkSpec s = base;
    s.prefix = subdomain_prefix(j) + base.prefix;
    s.normalization = nn::InputNormalization{box.lo, box.hi};  // the box to [-1, 1]
    s.fourier.seed = base.fourier.seed + j;
    cells_.push_back(std::move(cell));
    boxes_.push_back(std::move(box));
    specs_.push_back(std::move(s));
  }
  windowed_.resize(dim);
  for (std::size_t a = 0; a < dim; ++a) windowed_[a] = grid_[a] > 1;
  if (method_ != DecompositionMethod::xpinn) return;
  // Each cell's faces towards its upper neighbour along each axis (axis 0 fastest: the
  // neighbour's index is j + stride).
  std::size_t stride = 1;
  for (std::size_t a = 0; a < dim; ++a) {
    const auto n = static_cast<std::size_t>(grid_[a]);
    for (std::size_t j = 0; j < total; ++j)
      if ((j / stride) % n + 1 < n) {
        geometry::Bounds face = cells_[j];
        face.lo[a] = face.hi[a];
        interfaces_.push_back({.a = static_cast<int>(j),
                               .b = static_cast<int>(j + stride),
                               .axis = static_cast<int>(a),
                               .face = std::move(face)});
      }
    stride *= n;
  }
}

namespace {

std::string point_text(std::span<const double> p) {
  std::string out;
  for (double x : p) out += (out.empty() ? "" : ", ") + number(x);
  return "(" + out + ")";
}

std::string piece_key(std::size_t j) { return "decomposition.pieces[" + std::to_string(j) + "]"; }

// "rectangle", "disk", "difference": a geometry's kind, the first word of its description.
std::string kind_of(const geometry::Geometry& g) {
  const std::string text = g.describe();
  return text.substr(0, text.find_first_of(" ("));
}

}  // namespace

void Model::make_pieces(const Decomposition& d, const geometry::Geometry& domain,
                        const nn::NetworkSpec& base) {
  const std::size_t dim = static_cast<std::size_t>(domain.dim());
  const std::size_t n = d.pieces.size();
  // Points closer than this to a boundary count as on it: rounding in the samplers' maps and in
  // the signed distances (CSG's are bounds, not distances) stays far below it.
  tolerance_ = 1e-6 * domain.size();
  const double tol = tolerance_;
  if (n < 2)
    throw UserError("decomposition.pieces: give at least 2 pieces, got " + std::to_string(n) +
                    " (one piece is one network: leave out decomposition)");
  if (n > 4096)
    throw UserError("decomposition.pieces: " + std::to_string(n) +
                    " pieces, more than the 4096 supported");
  for (std::size_t j = 0; j < n; ++j) {
    const geometry::GeometryPtr& piece = d.pieces[j];
    if (!piece) throw InternalError("Model: piece " + std::to_string(j) + " is null");
    if (static_cast<std::size_t>(piece->dim()) != dim)
      throw UserError(piece_key(j) + ": " + piece->describe() + " is " +
                      std::to_string(piece->dim()) + "-D, the domain is " + std::to_string(dim) +
                      "-D");
    const geometry::Bounds pb = piece->bounds();
    bool meets = true;
    for (std::size_t a = 0; a < dim; ++a)
      meets = meets && pb.lo[a] < bounds_.hi[a] && pb.hi[a] > bounds_.lo[a];
    if (!meets)
      throw UserError(piece_key(j) + ": " + piece->describe() +
                      " lies entirely outside the domain's bounding box " +
                      geometry::format_bounds(bounds_));
    if (method_ == DecompositionMethod::fbpinn && !piece->is_box())
      throw UserError(piece_key(j) + ": " + piece->describe() +
                      " is not a box: an FBPINN's windows are products over a box's axes, so "
                      "its pieces must be boxes (interval, rectangle, box, hypercube); method "
                      "xpinn takes any shape");
    // The network's support: the piece's bounding box, grown (fbpinn) by overlap / 2 of its
    // own width on each side per axis, so that neighbouring boxes' windows blend.
    geometry::Bounds box = pb;
    for (std::size_t a = 0; a < dim; ++a) {
      const double h = pb.hi[a] - pb.lo[a];
      box.lo[a] = pb.lo[a] - 0.5 * overlap_ * h;
      box.hi[a] = pb.hi[a] + 0.5 * overlap_ * h;
    }
    nn::NetworkSpec s = base;
    s.prefix = subdomain_prefix(j) + base.prefix;
    s.normalization = nn::InputNormalization{box.lo, box.hi};
    s.fourier.seed = base.fourier.seed + j;
    cells_.push_back(pb);
    boxes_.push_back(std::move(box));
    specs_.push_back(std::move(s));
  }
  pieces_ = d.pieces;
  // An axis along which every box has the same extent gives every box the same factor: it
  // cancels in the normalized windows, so it is left out (as a grid's uncut axes are).
  windowed_.assign(dim, false);
  for (std::size_t a = 0; a < dim; ++a)
    for (const geometry::Bounds& b : boxes_)
      windowed_[a] = windowed_[a] || b.lo[a] != boxes_[0].lo[a] || b.hi[a] != boxes_[0].hi[a];

  // Covering and (xpinn) not overlapping, on a quasi-random sample of the domain.
  const geometry::PointSet inside =
      geometry::sample_interior(domain, 4096, {.method = geometry::SampleMethod::sobol, .seed = 0});
  std::vector<double> p(dim);
  for (Eigen::Index i = 0; i < inside.points.rows(); ++i) {
    for (std::size_t a = 0; a < dim; ++a) p[a] = inside.points(i, static_cast<Eigen::Index>(a));
    int first = -1;
    bool near = false;
    for (std::size_t j = 0; j < n; ++j) {
      const double sd = pieces_[j]->signed_distance(p);
      if (sd < -tol) {
        if (first >= 0 && method_ == DecompositionMethod::xpinn)
          throw UserError(piece_key(j) + ": overlaps " +
                          piece_key(static_cast<std::size_t>(first)) + ", at the domain's point " +
                          point_text(p) +
                          " inside both (xpinn pieces must not overlap: a point is one "
                          "network's; method fbpinn blends overlapping boxes)");
        if (first < 0) first = static_cast<int>(j);
      } else if (sd <= tol)
        near = true;
    }
    if (first < 0 && !near)
      throw UserError(
          "decomposition.pieces: the pieces leave part of the domain uncovered: its "
          "point " +
          point_text(p) + " is in none of them");
  }
  if (method_ != DecompositionMethod::xpinn) return;
  // The pairs whose boundaries meet inside the domain, from a sample of each piece's boundary.
  for (std::size_t a = 0; a < n; ++a) {
    geometry::PointSet s;
    try {
      s = geometry::sample_boundary(*pieces_[a], 2048,
                                    {.method = geometry::SampleMethod::sobol, .seed = 1});
    } catch (const UserError& e) {  // a boundary the sampler cannot draw from
      throw UserError(piece_key(a) + ": its boundary, where interfaces are sought: " + e.what());
    }
    std::map<int, geometry::Bounds> found;
    for (Eigen::Index i = 0; i < s.points.rows(); ++i) {
      for (std::size_t c = 0; c < dim; ++c) p[c] = s.points(i, static_cast<Eigen::Index>(c));
      for (std::size_t b = a + 1; b < n; ++b) {
        if (!on_interface(p.data(), static_cast<int>(b), domain)) continue;
        auto [it, fresh] = found.try_emplace(static_cast<int>(b), geometry::Bounds{p, p});
        for (std::size_t c = 0; c < dim; ++c) {
          it->second.lo[c] = std::min(it->second.lo[c], p[c]);
          it->second.hi[c] = std::max(it->second.hi[c], p[c]);
        }
      }
    }
    for (auto& [b, face] : found)
      interfaces_.push_back(
          {.a = static_cast<int>(a), .b = b, .axis = -1, .face = std::move(face)});
  }
}

bool Model::on_interface(const double* p, int b, const geometry::Geometry& domain) const {
  const geometry::Point x(p, static_cast<std::size_t>(domain.dim()));
  return std::abs(pieces_[static_cast<std::size_t>(b)]->signed_distance(x)) <= tolerance_ &&
         domain.signed_distance(x) < -tolerance_;
}

geometry::PointSet Model::interface_points(std::size_t f, const geometry::Geometry& domain,
                                           int count, std::uint64_t seed) const {
  if (!has_pieces() || f >= interfaces_.size())
    throw InternalError("Model::interface_points: no pieces' interface " + std::to_string(f));
  const Interface& in = interfaces_[f];
  const geometry::Geometry& a = *pieces_[static_cast<std::size_t>(in.a)];
  const Eigen::Index dim = domain.dim();
  geometry::PointSet out;
  out.points.resize(count, dim);
  out.normals.resize(count, dim);
  Eigen::Index have = 0;
  // Rounds of draws on a's whole boundary, each a fresh stream: the interface may be a small
  // part of that boundary.
  const auto batch = static_cast<std::size_t>(std::max(4 * count, 256));
  std::vector<double> p(static_cast<std::size_t>(dim));
  for (std::uint64_t round = 0; round < 16 && have < count; ++round) {
    const geometry::PointSet s = geometry::sample_boundary(
        a, batch, {.method = geometry::SampleMethod::pseudo_random, .seed = seed + round});
    for (Eigen::Index i = 0; i < s.points.rows() && have < count; ++i) {
      for (Eigen::Index c = 0; c < dim; ++c) p[static_cast<std::size_t>(c)] = s.points(i, c);
      if (!on_interface(p.data(), in.b, domain)) continue;
      out.points.row(have) = s.points.row(i);
      out.normals.row(have) = s.normals.row(i);
      ++have;
    }
  }
  out.points.conservativeResize(have, dim);
  out.normals.conservativeResize(have, dim);
  return out;
}

std::string Model::describe() const {
  const nn::NetworkSpec& s = specs_.front();
  std::string hidden;
  for (int h : s.hidden) hidden += (hidden.empty() ? "" : " x ") + std::to_string(h);
  if (!decomposed()) return "one network, hidden " + hidden;
  if (has_pieces()) {
    std::string kinds;
    for (const geometry::GeometryPtr& g : pieces_)
      kinds += (kinds.empty() ? "" : ", ") + kind_of(*g);
    return std::string(decomposition_method_names().name(method_)) + " " +
           std::to_string(pieces_.size()) + " pieces: " + kinds +
           (method_ == DecompositionMethod::fbpinn ? " (overlap " + number(overlap_) + ")" : "") +
           ", one network each, hidden " + hidden;
  }
  return std::string(decomposition_method_names().name(method_)) + " " + grid_text(grid_) +
         " subdomains" +
         (method_ == DecompositionMethod::fbpinn ? " (overlap " + number(overlap_) + ")" : "") +
         ", one network each, hidden " + hidden;
}

ModelGraph Model::build(Graph& graph) const {
  ModelGraph m;
  m.model_ = this;
  try {
    for (const nn::NetworkSpec& s : specs_)
      m.networks_.push_back(std::make_unique<nn::Network>(graph, s));
  } catch (const UserError& e) {
    throw UserError(std::string(decomposed() ? "decomposition.network: " : "") + e.what());
  }
  return m;
}

int Model::cell_of(const double* point) const {
  if (has_pieces()) {
    // The first piece containing the point; on none's inside (a shared boundary, or just off
    // the pieces by rounding), the nearest.
    const geometry::Point x(point, static_cast<std::size_t>(bounds_.dim()));
    int best = 0;
    double best_sd = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < pieces_.size(); ++j) {
      const double sd = pieces_[j]->signed_distance(x);
      if (sd < 0) return static_cast<int>(j);
      if (sd < best_sd) {
        best_sd = sd;
        best = static_cast<int>(j);
      }
    }
    return best;
  }
  int j = 0, stride = 1;
  for (std::size_t a = 0; a < grid_.size(); ++a) {
    const double h = (bounds_.hi[a] - bounds_.lo[a]) / grid_[a];
    const int k =
        std::clamp(static_cast<int>(std::floor((point[a] - bounds_.lo[a]) / h)), 0, grid_[a] - 1);
    j += k * stride;
    stride *= grid_[a];
  }
  return j;
}

int Model::owner(int cell, int cells, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    const Share s = share_of(cells, r, ranks);
    if (cell < s.first + s.count) return r;
  }
  return ranks - 1;
}

Region Model::region_of(const double* point) const {
  if (method_ == DecompositionMethod::xpinn) return {cell_of(point)};  // its own cell alone
  Region out;
  for (std::size_t j = 0; j < boxes_.size(); ++j) {
    const geometry::Bounds& b = boxes_[j];
    bool inside = true;
    for (std::size_t a = 0; a < b.lo.size() && inside; ++a)
      inside = point[a] > b.lo[a] && point[a] < b.hi[a];
    if (inside) out.push_back(static_cast<int>(j));
  }
  if (out.empty() && has_pieces()) {
    // Pieces' boxes cover the domain (checked), not always its bounding box (an L's missing
    // corner, where output grids still evaluate): there, the nearest box's network alone.
    double best = std::numeric_limits<double>::infinity();
    int nearest = 0;
    for (std::size_t j = 0; j < boxes_.size(); ++j) {
      double d2 = 0;
      for (std::size_t a = 0; a < boxes_[j].lo.size(); ++a) {
        const double e = std::max({boxes_[j].lo[a] - point[a], point[a] - boxes_[j].hi[a], 0.0});
        d2 += e * e;
      }
      if (d2 < best) {
        best = d2;
        nearest = static_cast<int>(j);
      }
    }
    out.push_back(nearest);
  }
  return out;
}

RowLayout Model::arrange(const MatrixD& points, std::vector<Eigen::Index>& order,
                         const std::string& what) const {
  order.resize(static_cast<std::size_t>(points.rows()));
  std::iota(order.begin(), order.end(), 0);
  if (!decomposed()) return {{.region = {0}, .first = 0, .count = points.rows()}};
  // Eigen is column-major: a row's coordinates are copied out once.
  std::vector<Region> regions(static_cast<std::size_t>(points.rows()));
  std::vector<double> p(static_cast<std::size_t>(points.cols()));
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    for (Eigen::Index a = 0; a < points.cols(); ++a) p[static_cast<std::size_t>(a)] = points(i, a);
    Region r = region_of(p.data());
    if (r.empty()) {
      std::string at;
      for (double x : p) at += (at.empty() ? "" : ", ") + number(x);
      throw UserError(what + ": point " + std::to_string(i + 1) + " (" + at +
                      ") is outside every subdomain (" +
                      (has_pieces() ? "the pieces' boxes grown by the overlap"
                                    : "the bounding box and its overlap") +
                      ")");
    }
    regions[static_cast<std::size_t>(i)] = std::move(r);
  }
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
    return regions[static_cast<std::size_t>(a)] < regions[static_cast<std::size_t>(b)];
  });
  RowLayout layout;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    const Region& r = regions[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
    if (layout.empty() || layout.back().region != r)
      layout.push_back({.region = r, .first = i, .count = 0});
    ++layout.back().count;
  }
  return layout;
}

Var Model::window(int j, Var at) const {
  const geometry::Bounds& b = boxes_[static_cast<std::size_t>(j)];
  Var v;
  for (std::size_t a = 0; a < windowed_.size(); ++a) {
    if (!windowed_[a]) continue;  // the same factor in every box: it cancels
    const double mu = 0.5 * (b.lo[a] + b.hi[a]), sigma = 0.5 * (b.hi[a] - b.lo[a]);
    const Var s = (col(at, static_cast<std::int64_t>(a)) - mu) * (std::numbers::pi / sigma);
    const Var f = square((1.0 + cos(s)) * 0.5);
    v = (v.graph != nullptr) ? v * f : f;
  }
  if (!(v.graph != nullptr)) v = zeros(*at.graph, {at.shape().rows, 1}, at.dtype()) + 1.0;
  return v;
}

Var Model::region_fields(const ModelGraph& m, Var at, const Region& region) const {
  const auto net = [&](int j) {
    const Var y = (*m.networks_[static_cast<std::size_t>(j)])(at);
    return scale_ == 1 ? y : y * scale_;
  };
  // One box: its window is 1 after normalization.
  if (region.size() == 1) return net(region[0]);
  Var sum, weights;
  for (int j : region) {
    const Var v = window(j, at);
    sum = (sum.graph != nullptr) ? sum + v * net(j) : v * net(j);
    weights = (weights.graph != nullptr) ? weights + v : v;
  }
  return sum / weights;
}

Var ModelGraph::fields(Var at, const RowLayout& layout) const {
  // No rows: any network gives the right (empty) shape.
  if (!model_->decomposed() || at.shape().rows == 0) return (*networks_.front())(at);
  if (layout.empty()) throw InternalError("ModelGraph::fields: a decomposed model needs a layout");
  Eigen::Index rows = 0;
  for (const RowBlock& b : layout) rows += b.count;
  if (rows != at.shape().rows)
    throw InternalError("ModelGraph::fields: the layout has " + std::to_string(rows) +
                        " rows, the points " + std::to_string(at.shape().rows));
  if (layout.size() == 1) return model_->region_fields(*this, at, layout[0].region);
  // Each network once, on the rows of all the blocks its box covers (one MLP in the graph per
  // network, not one per region: a smaller graph to differentiate and compile), then each
  // block's share of its output.
  std::vector<Var> blocks;
  for (const RowBlock& b : layout) blocks.push_back(slice_rows(at, b.first, b.count));
  const std::size_t boxes = networks_.size();
  std::vector<Var> outputs(boxes);
  std::vector<std::vector<Eigen::Index>> offset(boxes, std::vector<Eigen::Index>(layout.size(), 0));
  for (std::size_t j = 0; j < boxes; ++j) {
    std::vector<Var> mine;
    Eigen::Index at_row = 0;
    for (std::size_t k = 0; k < layout.size(); ++k)
      if (std::binary_search(layout[k].region.begin(), layout[k].region.end(),
                             static_cast<int>(j))) {
        offset[j][k] = at_row;
        at_row += layout[k].count;
        mine.push_back(blocks[k]);
      }
    if (mine.empty()) continue;
    const Var y = (*networks_[j])(mine.size() == 1 ? mine[0] : concat_rows(mine));
    outputs[j] = model_->scale_ == 1 ? y : y * model_->scale_;
  }
  std::vector<Var> parts;
  for (std::size_t k = 0; k < layout.size(); ++k) {
    const RowBlock& b = layout[k];
    const auto share = [&](int j) {
      const Var y = outputs[static_cast<std::size_t>(j)];
      return y.shape().rows == b.count
                 ? y
                 : slice_rows(y, offset[static_cast<std::size_t>(j)][k], b.count);
    };
    if (b.region.size() == 1) {
      parts.push_back(share(b.region[0]));
      continue;
    }
    Var sum, weights;
    for (int j : b.region) {
      const Var v = model_->window(j, blocks[k]);
      sum = sum.graph != nullptr ? sum + v * share(j) : v * share(j);
      weights = weights.graph != nullptr ? weights + v : v;
    }
    parts.push_back(sum / weights);
  }
  return concat_rows(parts);
}

Var ModelGraph::fields(Var at) const {
  if (!model_->decomposed()) return (*networks_.front())(at);
  const auto it = layouts.find(at.node().attrs.name);
  if (at.op() != Op::Input || it == layouts.end())
    throw InternalError("ModelGraph::fields: no layout for the points '" + at.node().attrs.name +
                        "'");
  return fields(at, it->second);
}

std::vector<Var> ModelGraph::params() const {
  std::vector<Var> out;
  for (const auto& n : networks_)
    for (const Var& p : n->params()) out.push_back(p);
  return out;
}

Bindings ModelGraph::init(std::uint64_t seed) const {
  Bindings out;
  for (std::size_t j = 0; j < networks_.size(); ++j)
    for (auto& [name, value] : networks_[j]->init(seed + 7919 * j)) out[name] = std::move(value);
  return out;
}

MatrixD Model::windows(const MatrixD& points) const {
  MatrixD out = MatrixD::Zero(points.rows(), static_cast<Eigen::Index>(boxes_.size()));
  std::vector<Eigen::Index> order;
  const RowLayout layout = arrange(points, order, "windows");
  Graph g(DType::f64);
  const Var at = g.input("points", {points.rows(), points.cols()});
  std::vector<Var> outputs;
  std::vector<std::pair<const RowBlock*, int>> where;
  for (const RowBlock& b : layout) {
    const Var block = slice_rows(at, b.first, b.count);
    Var total;
    std::vector<Var> v;
    for (int j : b.region) {
      v.push_back(b.region.size() == 1 ? zeros(g, {b.count, 1}, DType::f64) + 1.0
                                       : window(j, block));
      total = (total.graph != nullptr) ? total + v.back() : v.back();
    }
    for (std::size_t k = 0; k < v.size(); ++k) {
      outputs.push_back(v[k] / total);
      where.push_back({&b, b.region[k]});
    }
  }
  MatrixD arranged(points.rows(), points.cols());
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    arranged.row(i) = points.row(order[static_cast<std::size_t>(i)]);
  const std::vector<MatrixD> values = evaluate(outputs, {{"points", arranged}});
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const RowBlock& b = *where[o].first;
    for (Eigen::Index i = 0; i < b.count; ++i)
      out(order[static_cast<std::size_t>(b.first + i)], where[o].second) =
          values[o](values[o].rows() == 1 ? 0 : i, 0);
  }
  return out;
}

}  // namespace jetpde::solvers
