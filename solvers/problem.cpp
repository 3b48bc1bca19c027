#include "solvers/problem.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "autodiff/errors.h"
#include "autodiff/jet.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "equations/analysis.h"
#include "equations/lower.h"
#include "equations/parser.h"
#include "geometry/ball.h"
#include "geometry/boundary.h"
#include "geometry/stl.h"
#include "geometry/time_product.h"
#include "nn/detail/names.h"

namespace jetpde::solvers {
namespace {

std::string number(double x) { return nn::detail::short_number(x, 17); }

std::string joined(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

// Input leaf names of condition k.
std::string points_name(std::size_t k) { return "condition" + std::to_string(k); }
std::string normals_name(std::size_t k) { return points_name(k) + "_normals"; }
std::string part_name(std::size_t k, const std::string& what) {  // "upper", "values"
  return points_name(k) + "_" + what;
}
constexpr const char* kInterior = "interior";
// An evaluation program's inputs.
constexpr const char* kPoints = "points";
constexpr const char* kValues = "values";

// hard_distance_ of a field whose D is the STL part's smooth distance: a given leaf (its streams
// computed on the CPU per point set, autodiff/taylor.h), not an expression.
constexpr const char* kMeshDistance = "#mesh";
constexpr const char* kMeshTag = "adf";

std::uint64_t term_seed(std::uint64_t seed, std::size_t term) {
  return seed * 0x9e3779b97f4a7c15ULL + 1000003ULL * (term + 1);
}

// Rank `rank`'s rows of `all` (of `size` ranks): its share (share_of) of each of `chunks` equal
// blocks, the blocks' order kept. A set with fewer rows per block than ranks is kept whole on
// every rank (the objective's shares then weight each copy 1 / size).
MatrixD rank_rows(const MatrixD& all, int chunks, int rank, int size) {
  if (size == 1) return all;
  const Eigen::Index block = all.rows() / chunks;
  if (block < size) return all;
  const Share mine = share_of(block, rank, size);
  MatrixD out(mine.count * chunks, all.cols());
  for (int c = 0; c < chunks; ++c)
    out.middleRows(c * mine.count, mine.count) = all.middleRows(c * block + mine.first, mine.count);
  return out;
}

// The STL part of a domain that is one, or the space of a time product of one; else null.
const geometry::StlMesh* mesh_of(const geometry::Geometry& g) {
  if (const auto* tp = dynamic_cast<const geometry::TimeProduct*>(&g))
    return dynamic_cast<const geometry::StlMesh*>(tp->space().get());
  return dynamic_cast<const geometry::StlMesh*>(&g);
}

// A D that is the mesh distance, or that times an expression ("#mesh*(t/1)"): the expression.
bool uses_mesh(const std::string& distance) { return distance.rfind(kMeshDistance, 0) == 0; }
std::string mesh_factor(const std::string& distance) {
  return distance.size() > std::string(kMeshDistance).size() + 1
             ? distance.substr(std::string(kMeshDistance).size() + 1)
             : "1";
}

// The comma-separated pieces of a hard constraint's `on`, trimmed ("" is one empty piece: the
// whole boundary).
std::vector<std::string> pieces_of(const std::string& on) {
  std::vector<std::string> out;
  std::string rest = on;
  do {
    const std::size_t comma = rest.find(',');
    std::string piece = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    piece.erase(0, piece.find_first_not_of(' '));
    piece.erase(piece.find_last_not_of(' ') + 1);
    out.push_back(piece);
  } while (!rest.empty());
  return out;
}

// D for a hard constraint on the pieces `on` (comma-separated; see HardConstraint).
// An STL part's piece given by a predicate goes to `mesh_piece` (D is then that piece's mesh
// distance).
std::string automatic_distance(const geometry::Geometry& g, const geometry::Bounds& b,
                               const equations::Context& ctx, const std::string& on,
                               std::string& mesh_piece) {
  const std::vector<std::string>& names = ctx.coordinate_names();
  const auto face = [&](std::size_t c, bool upper) {
    const std::string x = names[c], lo = number(b.lo[c]), hi = number(b.hi[c]),
                      len = number(b.hi[c] - b.lo[c]);
    return upper ? "((" + hi + " - " + x + ")/" + len + ")"
                 : "((" + x + " - " + lo + ")/" + len + ")";
  };
  const auto slab = [&](std::size_t c) {  // (x - lo)(hi - x) / (L/2)^2: 1 at the middle
    const double half = 0.5 * (b.hi[c] - b.lo[c]);
    return "((" + names[c] + " - " + number(b.lo[c]) + ")*(" + number(b.hi[c]) + " - " + names[c] +
           ")/" + number(half * half) + ")";
  };
  std::string product;
  const auto times = [&](const std::string& factor) {
    product += (product.empty() ? "" : "*") + factor;
  };
  if (mesh_of(g)) {
    // The smooth distance is to the whole surface of the part; a part of it would need the
    // potential of its triangles alone, trimmed (Sukumar & Srivastava's R-functions): not done
    // yet. In a time product, the time faces are factors as for boxes.
    const int time = ctx.time_index();
    bool surface = false, whole = false;  // the mesh distance; to the whole surface
    for (const std::string& piece : pieces_of(on)) {
      if (piece.empty() || piece == "surface" || (piece == "spatial" && time >= 0)) {
        surface = whole = true;
        if (piece.empty() && time >= 0) times(slab(static_cast<std::size_t>(time)));
      } else if ((piece == "initial" || piece == "final") && time >= 0) {
        times(face(static_cast<std::size_t>(time), piece == "final"));
      } else if (piece == "spatial" || piece == "initial" || piece == "final") {
        throw UserError("no piece '" + piece + "' on " + g.describe() + ", which has no time");
      } else {
        // A predicate: the triangles where it holds (checked when the distance is built).
        if (!mesh_piece.empty())
          throw UserError("an STL part's automatic distance takes one predicate piece, not '" +
                          mesh_piece + "' and '" + piece + "'");
        mesh_piece = piece;
        surface = true;
      }
    }
    if (whole) mesh_piece.clear();  // the product is zero on the union: the whole surface
    if (!surface) return product;
    return product.empty() ? kMeshDistance : std::string(kMeshDistance) + "*" + product;
  }
  for (const std::string& piece : pieces_of(on)) {
    if (const auto* ball = dynamic_cast<const geometry::Ball*>(&g); ball && piece.empty()) {
      std::string r2;
      for (std::size_t c = 0; c < names.size(); ++c)
        r2 += " - (" + names[c] + " - " + number(ball->center()[c]) + ")^2";
      times("((" + number(ball->radius() * ball->radius()) + r2 + ")/" +
            number(ball->radius() * ball->radius()) + ")");
      continue;
    }
    if (!g.is_box())
      throw UserError(
          "no automatic distance on " + g.describe() +
          " (boxes, time products of boxes, disks, spheres and STL parts have one): give "
          "`distance`");
    const int time = ctx.time_index();
    if (piece.empty() || piece == "spatial") {
      for (std::size_t c = 0; c < names.size(); ++c)
        if (piece.empty() || static_cast<int>(c) != time) times(slab(c));
      continue;
    }
    if (piece == "initial" || piece == "final") {
      if (time < 0) throw UserError("no time coordinate for the piece '" + piece + "'");
      times(face(static_cast<std::size_t>(time), piece == "final"));
      continue;
    }
    // A face by name: the patch that answers to it also answers to <coordinate>_min or _max.
    bool found = false;
    for (const geometry::BoundaryPatch& patch : g.boundary_patches()) {
      if (std::find(patch.names.begin(), patch.names.end(), piece) == patch.names.end()) continue;
      for (std::size_t c = 0; c < names.size() && !found; ++c)
        for (const bool upper : {false, true})
          if (std::find(patch.names.begin(), patch.names.end(),
                        names[c] + (upper ? "_max" : "_min")) != patch.names.end()) {
            times(face(c, upper));
            found = true;
            break;
          }
      if (found) break;
    }
    if (!found)
      throw UserError("no boundary piece '" + piece + "' on " + g.describe() +
                      " (pieces: " + joined(g.piece_names()) + ")");
  }
  return product;
}

// The number of coordinates; UserError when the points [n, d] have another number of columns.
Eigen::Index checked_points(const equations::Context& ctx, const MatrixD& at) {
  const auto dim = static_cast<Eigen::Index>(ctx.coordinate_names().size());
  if (at.cols() != dim)
    throw UserError("problem: evaluate wants points with " + std::to_string(dim) + " columns (" +
                    joined(ctx.coordinate_names()) + "), got " + std::to_string(at.cols()));
  return dim;
}

// Points of the shapes one of `batches` batches binds (build_graph reads only the shapes).
Bindings batch_shapes(const Bindings& points, int batches) {
  Bindings out;
  for (const auto& [name, value] : points)
    out[name] = MatrixD::Zero(value.rows() / batches, value.cols());
  return out;
}

// Constant expressions lower to [1,1] nodes: one value per point.
void broadcast_rows(std::vector<Var>& out, Eigen::Index rows) {
  for (Var& v : out)
    if (v.shape().rows != rows) v = broadcast(v, {rows, 1});
}

}  // namespace

Problem::~Problem() = default;

Problem::Problem(ProblemSpec spec, const Communicator& communicator)
    : spec_(std::move(spec)), communicator_(&communicator) {
  check();
  prepare_hard_constraints();
  const equations::Context& ctx = spec_.math.context;
  network_spec_ = spec_.pinn.network;
  network_spec_.inputs = static_cast<int>(ctx.coordinate_names().size());
  network_spec_.outputs = static_cast<int>(ctx.field_names().size());
  model_ = std::make_unique<Model>(network_spec_, spec_.pinn.decomposition, *spec_.math.domain,
                                   communicator_->size());
  if (spec_.pinn.decomposition.automatic && communicator_->rank() == 0)
    std::cout << "decomposition: auto chose " << model_->describe() << " for "
              << communicator_->size() << (communicator_->size() == 1 ? " rank" : " ranks")
              << std::endl;
  // Pieces: what was made of them (the kinds, in index order: the ranks' blocks).
  if (model_->has_pieces() && communicator_->rank() == 0)
    std::cout << "decomposition: " << model_->describe() << std::endl;
  // The point sets are sampled once now: their counts fix the graph's shapes (and, decomposed,
  // the rows of each region).
  Bindings points = sample(spec_.pinn.sampling.seed, /*with_data=*/true);
  arrange(points);
  sample_interfaces(spec_.pinn.sampling.seed, points);
  note_by_construction();
  // Each rank plans its own share; one that cannot fit stops every rank (they would otherwise
  // wait for it in the objective's first collective).
  int batches = 1;
  std::string refused;
  try {
    batches = plan_batches(points);
  } catch (const UserError& e) {
    if (communicator_->size() == 1) throw;
    refused = e.what();
  }
  if (communicator_->size() > 1) {
    std::vector<double> failed{refused.empty() ? 0.0 : 1.0};
    communicator_->allreduce_sum(failed);
    if (!refused.empty()) throw UserError(refused);
    if (failed[0] > 0)
      throw UserError(
          "memory_budget: the training programs of another rank do not fit (its "
          "message says why)");
  }
  std::vector<LossTerm> terms =
      build_graph(batches > 1 ? batch_shapes(points, batches) : points, batches);
  build_objective(std::move(terms), std::move(points), batches);
}

void Problem::check() const {
  check_mathematics(spec_.math);
  const Mathematics& m = spec_.math;
  const PinnOptions& o = spec_.pinn;
  if (!o.equation_weights.empty() && o.equation_weights.size() != m.equations.size())
    throw UserError("problem: " + std::to_string(o.equation_weights.size()) +
                    " equation weights for " + std::to_string(m.equations.size()) + " equations");
  if (!o.conditions.empty() && o.conditions.size() != m.conditions.size())
    throw UserError("problem: " + std::to_string(o.conditions.size()) +
                    " condition options (points, weight) for " +
                    std::to_string(m.conditions.size()) + " conditions");
  if (o.interior_points < 1) throw UserError("problem: interior_points must be positive");
  if (o.time_chunks < 1) throw UserError("problem: time_chunks must be at least 1");
  if (o.time_chunks > 1 && m.context.time_index() < 0)
    throw UserError("problem: time_chunks needs a time coordinate");
  // Chunks are blocks of rows in time order; a decomposition orders the rows by region.
  if (o.time_chunks > 1 && o.decomposition.method != DecompositionMethod::none)
    throw UserError("problem: time_chunks and a decomposition do not go together yet");
  for (std::size_t k = 0; k < m.conditions.size(); ++k) {
    const Condition& c = m.conditions[k];
    if (condition_kind(c.kind).points != ConditionPoints::data && o.condition(k).points < 1)
      throw SpecError("conditions[" + std::to_string(k) + "]", condition_label(c, k),
                      "points must be positive");
  }
}

void Problem::prepare_hard_constraints() {
  const equations::Context& ctx = spec_.math.context;
  hard_value_.assign(ctx.field_names().size(), "");
  hard_distance_.assign(ctx.field_names().size(), "");
  hard_mesh_piece_.assign(ctx.field_names().size(), "");
  for (std::size_t h = 0; h < spec_.pinn.hard_constraints.size(); ++h) {
    const HardConstraint& hc = spec_.pinn.hard_constraints[h];
    const std::string label = "hard constraint " + std::to_string(h + 1) + " on '" + hc.field + "'";
    const std::string entry = "hard_constraints[" + std::to_string(h) + "]";
    const int f = ctx.field_index(hc.field);
    if (f < 0)
      throw SpecError(entry, label, "unknown field (fields: " + joined(ctx.field_names()) + ")");
    if (!hard_value_[static_cast<std::size_t>(f)].empty())
      throw SpecError(entry, label, "the field has a hard constraint already");
    try {
      const geometry::Geometry& domain = *spec_.math.domain;
      std::string& d = hard_distance_[static_cast<std::size_t>(f)];
      std::string& piece = hard_mesh_piece_[static_cast<std::size_t>(f)];
      const geometry::Bounds box = spec_.pinn.hard_constraint_bounds.value_or(domain.bounds());
      d = hc.distance.empty() ? automatic_distance(domain, box, ctx, hc.on, piece) : hc.distance;
      // The piece's distance now, so that a predicate that selects no triangle is this entry's
      // error (and the cost of the scale's search is setup's).
      if (hc.distance.empty() && uses_mesh(d)) mesh_of(domain)->smooth_distance(piece);
      // Both must parse as field-free expressions (of an automatic mesh distance, its factor; a
      // given distance as it is, so "#mesh" there is no way to ask for the mesh's).
      const std::string d_text = hc.distance.empty() && uses_mesh(d) ? mesh_factor(d) : d;
      for (const std::string& text : {hc.value, d_text}) {
        const equations::Equation e = equations::parse(text, ctx);
        if (!equations::analyze(e, ctx).fields.empty())
          throw UserError("'" + text + "' uses a field: g and D depend on coordinates only");
      }
    } catch (const UserError& e) {
      throw SpecError(entry, label, e.what());
    }
    hard_value_[static_cast<std::size_t>(f)] = "(" + hc.value + ")";
  }
}

bool Problem::by_construction(std::size_t k) const {
  const Condition& c = spec_.math.conditions[k];
  if (c.kind != Condition::Kind::periodic || model_->decomposed()) return false;
  const equations::Context& ctx = spec_.math.context;
  const int column = ctx.coordinate_index(c.coordinate);
  const geometry::Bounds b = spec_.math.domain->bounds();
  const double extent =
      b.hi[static_cast<std::size_t>(column)] - b.lo[static_cast<std::size_t>(column)];
  const bool periodic_input =
      std::any_of(network_spec_.periodic.begin(), network_spec_.periodic.end(),
                  [&](const nn::PeriodicInput& p) {
                    const double turns = extent / p.period;
                    // An input periodic in value only holds the values, not the slopes.
                    return p.column == column && turns >= 0.5 &&
                           std::abs(turns - std::round(turns)) <= 1e-9 * turns &&
                           (!p.slope_jump || c.derivatives == 0);
                  });
  if (!periodic_input) return false;
  // A hard constraint g + D N keeps it when D is periodic too: the initial face's distance is one
  // of time only. (g is parameter-free: what it breaks, no parameter mends.)
  const auto f = static_cast<std::size_t>(ctx.field_index(c.field));
  if (hard_value_[f].empty()) return true;
  const HardConstraint* hc = nullptr;
  for (const HardConstraint& h : spec_.pinn.hard_constraints)
    if (h.field == c.field) hc = &h;
  return hc != nullptr && hc->distance.empty() && hc->on == "initial";
}

int Problem::draw_count(int total) const {
  const int size = communicator_->size();
  if (spec_.pinn.rank_points == RankPoints::global || size == 1 || total < size) return total;
  return static_cast<int>(share_of(total, communicator_->rank(), size).count);
}

std::uint64_t Problem::draw_seed(std::uint64_t seed) const {
  return spec_.pinn.rank_points == RankPoints::global ? seed
                                                      : rank_seed(seed, communicator_->rank());
}

MatrixD Problem::rank_share(const MatrixD& all, int chunks) const {
  return rank_rows(all, chunks, communicator_->rank(), communicator_->size());
}

MatrixD Problem::interior_points(std::uint64_t seed) const {
  MatrixD p = draw_interior(seed);
  interior_rows_ = p.rows();
  return spec_.pinn.rank_points == RankPoints::global ? rank_share(p, spec_.pinn.time_chunks) : p;
}

MatrixD Problem::draw_interior(std::uint64_t seed) const {
  geometry::SampleOptions o = spec_.pinn.sampling;
  o.seed = term_seed(draw_seed(seed), 0);
  MatrixD p =
      geometry::sample_interior(*spec_.math.domain,
                                static_cast<std::size_t>(draw_count(spec_.pinn.interior_points)), o)
          .points;
  const int chunks = spec_.pinn.time_chunks;
  if (chunks > 1) {
    // Ordered by time, and cut to a multiple of the chunk count (a grid gives about n points).
    const int t = spec_.math.context.time_index();
    std::vector<Eigen::Index> order(static_cast<std::size_t>(p.rows()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](Eigen::Index a, Eigen::Index b) { return p(a, t) < p(b, t); });
    const Eigen::Index rows = p.rows() - p.rows() % chunks;
    MatrixD sorted(rows, p.cols());
    for (Eigen::Index i = 0; i < rows; ++i)
      sorted.row(i) = p.row(order[static_cast<std::size_t>(i)]);
    p = std::move(sorted);
  }
  return p;
}

void Problem::sample_condition(std::size_t k, std::uint64_t seed, Bindings& out) const {
  const Condition& c = spec_.math.conditions[k];
  const ConditionKind& kind = condition_kind(c.kind);
  const geometry::Geometry& domain = *spec_.math.domain;
  geometry::SampleOptions o = spec_.pinn.sampling;
  o.seed = term_seed(draw_seed(seed), k + 1);
  const auto n = static_cast<std::size_t>(draw_count(spec_.pinn.condition(k).points));
  geometry::PointSet s;
  switch (kind.points) {
    case ConditionPoints::data:  // split over the ranks
      out[points_name(k)] = rank_share(c.data_points, 1);
      out[part_name(k, "values")] = rank_share(c.data_values, 1);
      return;
    case ConditionPoints::periodic_pairs: {
      const int ci = domain.coordinate_index(c.coordinate);
      const geometry::Bounds b = domain.bounds();
      const geometry::PointSet lo = geometry::sample_boundary(
          domain, n, o, c.coordinate + " == " + number(b.lo[static_cast<std::size_t>(ci)]));
      MatrixD hi = lo.points;
      hi.col(ci).setConstant(b.hi[static_cast<std::size_t>(ci)]);
      out[points_name(k)] = drawn_share(lo.points);
      out[part_name(k, "upper")] = drawn_share(hi);
      return;
    }
    case ConditionPoints::initial_face:
      s = geometry::sample_boundary(domain, n, o,
                                    geometry::BoundaryPiece::parse(domain, "initial"));
      break;
    case ConditionPoints::piece:
      if (c.at.rows() > 0) {  // fixed points: the same at every resampling, split over the ranks
        s.points = rank_share(c.at, 1);
        s.normals = domain.outward_normals(s.points);
        out[points_name(k)] = s.points;
        if (kind.needs_normals) out[normals_name(k)] = spatial_normals(s.normals);
        return;
      }
      try {
        s = geometry::sample_boundary(domain, n, o,
                                      c.on.empty() ? geometry::BoundaryPiece::whole()
                                                   : geometry::BoundaryPiece::parse(domain, c.on));
      } catch (const geometry::EmptyPieceError& e) {
        throw UserError(std::string(e.what()) +
                        "; for a condition at single points (a corner, 'x == 0 and y == 0') give "
                        "the points as `at: [[x, y], ...]` instead of `on`");
      }
      break;
  }
  out[points_name(k)] = drawn_share(s.points);
  if (kind.needs_normals) out[normals_name(k)] = drawn_share(spatial_normals(s.normals));
}

MatrixD Problem::spatial_normals(const MatrixD& normals) const {
  // Normals over the spatial coordinates (time products add a time component: dropped).
  const std::vector<int> spatial = spec_.math.context.spatial();
  MatrixD out(normals.rows(), static_cast<Eigen::Index>(spatial.size()));
  for (std::size_t j = 0; j < spatial.size(); ++j)
    out.col(static_cast<Eigen::Index>(j)) = normals.col(spatial[j]);
  return out;
}

MatrixD Problem::drawn_share(const MatrixD& drawn) const {
  return spec_.pinn.rank_points == RankPoints::global ? rank_share(drawn, 1) : drawn;
}

Bindings Problem::sample(std::uint64_t seed, bool with_data) const {
  Bindings out;
  out[kInterior] = interior_points(seed);
  for (std::size_t k = 0; k < spec_.math.conditions.size(); ++k) {
    const Condition& c = spec_.math.conditions[k];
    if (!with_data && condition_kind(c.kind).points == ConditionPoints::data) continue;
    try {
      sample_condition(k, seed, out);
    } catch (const SpecError&) {
      throw;
    } catch (const UserError& e) {
      throw SpecError("conditions[" + std::to_string(k) + "]", condition_label(c, k), e.what());
    }
  }
  return out;
}

void Problem::arrange(Bindings& points) const {
  if (!model_->decomposed()) return;
  // The point sets: the interior and each condition's points; their other inputs
  // (condition<k>_normals, _upper, _values) share their rows.
  std::vector<std::string> sets;
  for (const auto& [name, value] : points)
    if (name == kInterior ||
        (name.rfind("condition", 0) == 0 && name.find('_') == std::string::npos))
      sets.push_back(name);
  std::vector<double> row;
  const auto region = [&](const MatrixD& m, Eigen::Index i, const std::string& what) {
    row.resize(static_cast<std::size_t>(m.cols()));
    for (Eigen::Index a = 0; a < m.cols(); ++a) row[static_cast<std::size_t>(a)] = m(i, a);
    Region r = model_->region_of(row.data());
    if (r.empty()) throw UserError("problem: a point of '" + what + "' is outside every subdomain");
    return r;
  };
  for (const std::string& set : sets) {
    std::vector<std::string> parts{set};  // the set's inputs, the point inputs first
    const std::string upper = set + "_upper";
    if (points.count(upper)) parts.push_back(upper);
    for (const auto& [name, value] : points)
      if (name.rfind(set + "_", 0) == 0 && name != upper) parts.push_back(name);
    own_rows(points, parts);
    const MatrixD& at = points.at(set);
    // Each row's key: the regions of its points (and of its upper points).
    std::map<RegionKey, std::vector<Eigen::Index>> rows;
    for (Eigen::Index i = 0; i < at.rows(); ++i) {
      RegionKey key{region(at, i, set)};
      if (parts.size() > 1 && parts[1] == upper) key.push_back(region(points.at(upper), i, upper));
      rows[key].push_back(i);
    }
    auto& quota = quotas_[set];
    if (quota.empty())  // the first arrangement fixes the counts (regions in key order)
      for (const auto& [key, list] : rows)
        quota.push_back({key, static_cast<Eigen::Index>(list.size())});
    const Bindings* last = arranged_.count(set) ? &arranged_.at(set) : nullptr;
    // The graph's rows: the first arrangement's (a rank's own cells hold more or fewer of a
    // new draw).
    Eigen::Index rows_fixed = 0;
    for (const auto& entry : quota) rows_fixed += entry.second;
    Bindings out;
    for (const std::string& part : parts) {
      const MatrixD& from = points.at(part);
      MatrixD to(rows_fixed, from.cols());
      Eigen::Index first = 0;
      for (const auto& [key, count] : quota) {
        const auto it = rows.find(key);
        const Eigen::Index have =
            it == rows.end()
                ? 0
                : std::min<Eigen::Index>(count, static_cast<Eigen::Index>(it->second.size()));
        for (Eigen::Index i = 0; i < have; ++i)
          to.row(first + i) = from.row(it->second[static_cast<std::size_t>(i)]);
        // Short this time: the rest from the last arrangement's rows of this region (which sit
        // at the same rows); the first has every count it fixed.
        if (have < count) {
          if (!last) throw InternalError("arrange: a region short of points at the first draw");
          to.middleRows(first + have, count - have) =
              last->at(part).middleRows(first + have, count - have);
        }
        first += count;
      }
      out[part] = std::move(to);
    }
    for (auto& [name, value] : out) points[name] = value;
    arranged_[set] = std::move(out);
  }
}

void Problem::own_rows(Bindings& points, const std::vector<std::string>& parts) const {
  const int size = communicator_->size(), rank = communicator_->rank();
  const auto cells = static_cast<int>(model_->cells().size());
  if (size == 1 || cells < size) return;
  // Every rank's rows of the set (its points and the inputs that share their rows, side by
  // side), then the rows whose point lies in this rank's cells.
  Eigen::Index cols = 0;
  const Eigen::Index n = points.at(parts[0]).rows();
  for (const std::string& part : parts) cols += points.at(part).cols();
  std::vector<double> flat(static_cast<std::size_t>(n * cols));
  for (Eigen::Index i = 0, c0 = 0; i < n; ++i, c0 = 0)
    for (const std::string& part : parts) {
      const MatrixD& m = points.at(part);
      for (Eigen::Index a = 0; a < m.cols(); ++a)
        flat[static_cast<std::size_t>(i * cols + c0++)] = m(i, a);
    }
  std::vector<double> counts(static_cast<std::size_t>(size), 0.0);
  counts[static_cast<std::size_t>(rank)] = static_cast<double>(n);
  communicator_->allreduce_sum(counts);
  const std::vector<double> all = communicator_->allgather(flat);
  const auto rows = static_cast<Eigen::Index>(all.size()) / std::max<Eigen::Index>(cols, 1);
  // A set every rank holds whole (fewer rows than ranks: a point condition) stays as it is.
  bool whole = true;
  for (int r = 1; r < size && whole; ++r)
    whole = counts[static_cast<std::size_t>(r)] == counts[0] &&
            std::equal(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n * cols),
                       all.begin() + static_cast<std::ptrdiff_t>(r * n * cols));
  std::vector<Eigen::Index> owned;
  if (!whole)
    for (Eigen::Index i = 0; i < rows; ++i)
      if (Model::owner(model_->cell_of(&all[static_cast<std::size_t>(i * cols)]), cells, size) ==
          rank)
        owned.push_back(i);
  // A rank whose cells hold no row of the set (a condition on a face of other ranks' cells, a
  // cell in a hole of the domain) would have an empty set: then every rank keeps the share it
  // drew (decided by all).
  std::vector<double> none{whole || owned.empty() ? 1.0 : 0.0};
  communicator_->allreduce_max(none);
  if (none[0] > 0) return;
  Eigen::Index c0 = 0;
  for (const std::string& part : parts) {
    const Eigen::Index width = points.at(part).cols();
    MatrixD out(static_cast<Eigen::Index>(owned.size()), width);
    for (std::size_t k = 0; k < owned.size(); ++k)
      for (Eigen::Index a = 0; a < width; ++a)
        out(static_cast<Eigen::Index>(k), a) =
            all[static_cast<std::size_t>(owned[k] * cols + c0 + a)];
    points[part] = std::move(out);
    c0 += width;
  }
}

void Problem::sample_interfaces(std::uint64_t seed, Bindings& out) const {
  if (model_->method() != DecompositionMethod::xpinn) return;
  const geometry::Geometry& domain = *spec_.math.domain;
  const auto& faces = model_->interfaces();
  const int count = draw_count(spec_.pinn.decomposition.interface_points);
  const bool first = !graph_;  // the constructor's draw decides which interfaces have points
  std::vector<std::size_t> kept;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    if (!first && std::find(interfaces_.begin(), interfaces_.end(), f) == interfaces_.end())
      continue;
    const std::string name = "interface" + std::to_string(f);
    const std::uint64_t s = term_seed(draw_seed(seed), 1000 + f);
    MatrixD p, n;
    Eigen::Index have = 0;
    if (model_->has_pieces()) {
      // Pieces: on piece a's boundary where it meets b's (Model::interface_points), with a's
      // outward normals.
      geometry::PointSet on = model_->interface_points(f, domain, count, s);
      have = on.points.rows();
      p = std::move(on.points);
      n = std::move(on.normals);
      p.conservativeResize(count, Eigen::NoChange);
      n.conservativeResize(count, Eigen::NoChange);
    } else {
      // Uniform on the face, kept where the domain is (a face of the grid may leave it): rounds
      // of draws until the count is reached; a face with no point of the domain in its first
      // rounds has no interface. The normal is the face's axis (towards the upper cell b).
      const geometry::Bounds& b = faces[f].face;
      std::mt19937_64 rng(s);
      std::uniform_real_distribution<double> unit(0.0, 1.0);
      p.resize(count, b.dim());
      n = MatrixD::Zero(count, b.dim());
      n.col(faces[f].axis).setOnes();
      std::vector<double> x(static_cast<std::size_t>(b.dim()));
      for (int tries = 0; have < count && tries < 64 * count; ++tries) {
        for (std::size_t a = 0; a < x.size(); ++a) x[a] = b.lo[a] + (b.hi[a] - b.lo[a]) * unit(rng);
        if (!domain.contains(x)) continue;
        for (std::size_t a = 0; a < x.size(); ++a) p(have, static_cast<Eigen::Index>(a)) = x[a];
        ++have;
      }
    }
    if (have == 0) {
      if (first) continue;
      p = last_interfaces_.at(f).first;  // none this time: the last ones again
      n = last_interfaces_.at(f).second;
      have = count;
    }
    // Short of points (a sliver of the face in the domain): the ones found, repeated.
    for (Eigen::Index i = have; i < count; ++i) {
      p.row(i) = p.row(i % have);
      n.row(i) = n.row(i % have);
    }
    last_interfaces_[f] = {p, n};
    out[name + "_a"] = p;
    out[name + "_b"] = p;
    out[name + "_normals"] = n;
    kept.push_back(f);
  }
  if (first) interfaces_ = kept;
  own_interfaces(out);
}

void Problem::own_interfaces(Bindings& out) const {
  const int size = communicator_->size(), rank = communicator_->rank();
  const auto cells = static_cast<int>(model_->cells().size());
  const bool first = !graph_;
  if (first) {
    // Decided once (the graph's shapes follow): only when every rank kept the same interfaces
    // and every rank would keep some interface rows.
    interfaces_owned_ = size > 1 && cells >= size && !interfaces_.empty();
    if (interfaces_owned_) {
      std::vector<double> kept(model_->interfaces().size(), 0.0);
      for (std::size_t f : interfaces_) kept[f] = 1;
      std::vector<double> sum = kept;
      communicator_->allreduce_sum(sum);
      for (double k : sum) interfaces_owned_ = interfaces_owned_ && (k == 0 || k == size);
      std::vector<double> none{1.0};
      for (std::size_t f : interfaces_) {
        const auto& face = model_->interfaces()[f];
        if (Model::owner(face.a, cells, size) == rank || Model::owner(face.b, cells, size) == rank)
          none[0] = 0;
      }
      communicator_->allreduce_max(none);
      interfaces_owned_ = interfaces_owned_ && none[0] == 0;
    }
    // Every rank the same decision (the first test is the same everywhere, the rest agreed).
  }
  if (!interfaces_owned_) return;
  // Each interface's rows of all ranks, dealt alternately to the ranks of its two sides (all to
  // one rank that owns both): the rows reach the two networks on those ranks only. The other
  // ranks keep the inputs with no rows, so that every rank has the same inputs.
  for (std::size_t f : interfaces_) {
    const auto& face = model_->interfaces()[f];
    const int ra = Model::owner(face.a, cells, size), rb = Model::owner(face.b, cells, size);
    const std::string name = "interface" + std::to_string(f);
    const MatrixD& p = out.at(name + "_a");
    const MatrixD& n = out.at(name + "_normals");
    const Eigen::Index dp = p.cols(), dn = n.cols(), width = dp + dn;
    std::vector<double> flat(static_cast<std::size_t>(p.rows() * width));
    for (Eigen::Index i = 0; i < p.rows(); ++i)
      for (Eigen::Index a = 0; a < width; ++a)
        flat[static_cast<std::size_t>(i * width + a)] = a < dp ? p(i, a) : n(i, a - dp);
    const std::vector<double> all = communicator_->allgather(flat);
    const auto rows = static_cast<Eigen::Index>(all.size()) / width;
    std::vector<Eigen::Index> mine;
    for (Eigen::Index i = 0; i < rows; ++i)
      if ((ra == rb ? ra : (i % 2 == 0 ? ra : rb)) == rank) mine.push_back(i);
    MatrixD q(static_cast<Eigen::Index>(mine.size()), dp), m(q.rows(), dn);
    for (std::size_t k = 0; k < mine.size(); ++k)
      for (Eigen::Index a = 0; a < width; ++a) {
        const double v = all[static_cast<std::size_t>(mine[k] * width + a)];
        if (a < dp)
          q(static_cast<Eigen::Index>(k), a) = v;
        else
          m(static_cast<Eigen::Index>(k), a - dp) = v;
      }
    if (q.rows() == 0) {  // not this rank's: not in its graph (a graph has no empty inputs)
      for (const char* part : {"_a", "_b", "_normals"}) out.erase(name + part);
      continue;
    }
    out[name + "_a"] = q;
    out[name + "_b"] = q;
    out[name + "_normals"] = m;
  }
}

void Problem::interface_terms(const Bindings& points, std::vector<LossTerm>& terms) {
  if (model_->method() != DecompositionMethod::xpinn || interfaces_.empty()) return;
  const equations::Context& ctx = spec_.math.context;
  const auto& faces = model_->interfaces();
  const std::vector<std::string>& fields = ctx.field_names();
  const std::vector<std::string>& coords = ctx.coordinate_names();
  std::vector<Var> solution, flux, residual;
  for (std::size_t f : interfaces_) {
    const std::string name = "interface" + std::to_string(f);
    if (!points.count(name + "_a")) continue;  // another rank's (own_interfaces)
    const Var a = input_like(points, name + "_a"), b = input_like(points, name + "_b");
    const auto rows = points.at(name + "_a").rows();
    model_graph_->layouts[name + "_a"] = {{.region = {faces[f].a}, .first = 0, .count = rows}};
    model_graph_->layouts[name + "_b"] = {{.region = {faces[f].b}, .first = 0, .count = rows}};
    // Jumps across the face: of each field, of its derivative along the face's normal n (from
    // a towards b), of each equation's residual (Jagtap & Karniadakis 2020; the jump u_a - u_b
    // rather than each side against the mean, which is the same up to a factor 2). The normal
    // derivative is sum_c n_c du/dc over the coordinates c along which the normals are not all
    // zero: a grid face's axis alone (n = 1 there, so its term is the axis derivative's jump
    // exactly), every coordinate a piece's boundary turns in (time too, in space-time).
    const MatrixD& nv = points.at(name + "_normals");
    const Var normals = input_like(points, name + "_normals");
    std::vector<std::size_t> along;
    for (Eigen::Index c = 0; c < nv.cols(); ++c)
      if ((nv.col(c).array() != 0).any()) along.push_back(static_cast<std::size_t>(c));
    if (faces[f].axis >= 0) along = {static_cast<std::size_t>(faces[f].axis)};
    std::vector<std::string> derivatives;
    for (const std::string& u : fields)
      for (std::size_t c : along) derivatives.push_back("d(" + u + ", " + coords[c] + ", 1)");
    const Var ua = fields_at(*model_graph_, a), ub = fields_at(*model_graph_, b);
    for (std::int64_t c = 0; c < ua.shape().cols; ++c)
      solution.push_back(ua.shape().cols == 1 ? ua - ub : col(ua, c) - col(ub, c));
    const std::vector<Var> da = lower_at(*model_graph_, a, equations::parse_all(derivatives, ctx)),
                           db = lower_at(*model_graph_, b, equations::parse_all(derivatives, ctx));
    for (std::size_t u = 0; u < fields.size(); ++u) {
      Var jump;
      for (std::size_t k = 0; k < along.size(); ++k) {
        const std::size_t i = u * along.size() + k;
        const Var term = col(normals, static_cast<std::int64_t>(along[k])) * (da[i] - db[i]);
        jump = jump.graph != nullptr ? jump + term : term;
      }
      if (jump.graph == nullptr) jump = zeros(*graph_, {rows, 1}, DType::f64);
      flux.push_back(jump);
    }
    const std::vector<Var> ra = lower_at(*model_graph_, a,
                                         equations::parse_all(spec_.math.equations, ctx)),
                           rb = lower_at(*model_graph_, b,
                                         equations::parse_all(spec_.math.equations, ctx));
    for (std::size_t k = 0; k < ra.size(); ++k) {
      Var r = ra[k] - rb[k];
      if (r.shape().rows != rows) r = broadcast(r, {rows, 1});
      residual.push_back(r);
    }
  }
  const Decomposition& d = spec_.pinn.decomposition;
  terms.push_back({"interface_solution", concat_rows(solution), 1});
  term_weights_.push_back(d.solution_weight);
  terms.push_back({"interface_flux", concat_rows(flux), 1});
  term_weights_.push_back(d.flux_weight);
  terms.push_back({"interface_residual", concat_rows(residual), 1});
  term_weights_.push_back(d.residual_weight);
}

std::vector<Var> Problem::lower_at(const ModelGraph& net, Var at,
                                   const std::vector<equations::Equation>& eqs, Var normal) const {
  const equations::Context& ctx = spec_.math.context;
  Taylor taylor(equations::plan_for(eqs, ctx, at));  // its own plan: only what these need
  return equations::lower(eqs, ctx,
                          {.coordinates = at,
                           .outputs = fields_at(net, at),
                           .normal = normal,
                           .param_prefix = spec_.pinn.param_prefix},
                          taylor);
}

std::vector<LossTerm> Problem::build_graph(const Bindings& points, int batches) {
  const equations::Context& ctx = spec_.math.context;
  graph_ = std::make_unique<Graph>(DType::f64);
  model_graph_ = std::make_unique<ModelGraph>(model_->build(*graph_));
  // The layouts of the point inputs, from the first arrangement's counts (a batch's share:
  // every count is a multiple of the batches, round_quotas).
  for (const auto& [set, quota] : quotas_)
    for (std::size_t part = 0; part < quota.front().first.size(); ++part) {
      RowLayout& layout = model_graph_->layouts[part == 0 ? set : set + "_upper"];
      Eigen::Index first = 0;
      for (const auto& [key, count] : quota) {
        if (layout.empty() || layout.back().region != key[part])
          layout.push_back({.region = key[part], .first = first, .count = 0});
        layout.back().count += count / batches;
        first += count / batches;
      }
    }
  std::vector<LossTerm> terms;
  term_weights_.clear();
  const std::vector<std::string>& names = spec_.math.equation_names;
  const std::vector<Var> r = lower_at(*model_graph_, input_like(points, kInterior),
                                      equations::parse_all(spec_.math.equations, ctx));
  for (std::size_t e = 0; e < r.size(); ++e) {
    terms.push_back({!names.empty()  ? names[e]
                     : r.size() == 1 ? "pde"
                                     : "pde" + std::to_string(e + 1),
                     r[e], spec_.pinn.time_chunks});
    term_weights_.push_back(spec_.pinn.equation_weights.empty() ? 1.0
                                                                : spec_.pinn.equation_weights[e]);
  }
  for (std::size_t k = 0; k < spec_.math.conditions.size(); ++k) {
    terms.push_back(condition_term(k, points));
    // Off (weight 0, which no weighting changes) where the network holds it by construction: its
    // loss does not depend on the parameters, and a constant there (a hard constraint's value
    // that breaks it) would only cost the f32 loss its last digits.
    term_weights_.push_back(by_construction(k) ? 0.0 : spec_.pinn.condition(k).weight);
  }
  interface_terms(points, terms);
  return terms;
}

void Problem::note_by_construction() const {
  if (spec_.pinn.quiet || communicator_->rank() != 0) return;
  const equations::Context& ctx = spec_.math.context;
  for (std::size_t k = 0; k < spec_.math.conditions.size(); ++k) {
    if (!by_construction(k)) continue;
    const Condition& c = spec_.math.conditions[k];
    std::cout << "conditions[" << k << "] (periodic in " << c.coordinate << "): the network is "
              << "periodic in " << c.coordinate << ", so it holds by construction and is left "
              << "out of the loss (weight 0)";
    if (!hard_value_[static_cast<std::size_t>(ctx.field_index(c.field))].empty())
      std::cout << "; with the hard constraint on " << c.field << ", only as far as its value "
                << hard_value_[static_cast<std::size_t>(ctx.field_index(c.field))]
                << " is periodic (its loss in history.csv says how far)";
    std::cout << std::endl;
  }
}

Var Problem::input_like(const Bindings& points, const std::string& name) {
  const MatrixD& v = points.at(name);
  return graph_->input(name, {v.rows(), v.cols()});
}

LossTerm Problem::condition_term(std::size_t k, const Bindings& points) {
  const equations::Context& ctx = spec_.math.context;
  const Condition& c = spec_.math.conditions[k];
  const ConditionKind& kind = condition_kind(c.kind);
  const std::string name = c.name.empty() ? std::string(kind.name) + "_" +
                                                (kind.takes_field ? c.field : std::to_string(k + 1))
                                          : c.name;
  const Var at = input_like(points, points_name(k));
  const Var normal = kind.needs_normals ? input_like(points, normals_name(k)) : Var{};
  const ConditionGraph graph{
      .condition = c,
      .index = k,
      .context = ctx,
      .points = at,
      .normals = normal,
      .input = [&](const std::string& what) { return input_like(points, part_name(k, what)); },
      .fields = [&](Var x) { return fields_at(*model_graph_, x); },
      .lower =
          [&](Var x, const std::vector<std::string>& texts, Var n) {
            return lower_at(*model_graph_, x, equations::parse_all(texts, ctx), n);
          },
      .lower_here =
          [&](const std::string& text) {
            return lower_at(*model_graph_, at, {equations::parse(text, ctx, name)}, normal)[0];
          }};
  try {
    return {name, kind.residual(graph), 1};
  } catch (const UserError& e) {
    throw SpecError("conditions[" + std::to_string(k) + "]",
                    "condition " + std::to_string(k + 1) + " ('" + name + "')", e.what());
  }
}

std::vector<Var> Problem::training_params() {
  std::vector<Var> params = model_graph_->params();
  for (const equations::Symbol* s : spec_.math.context.symbols(equations::SymbolKind::param))
    params.push_back(graph_->param(spec_.pinn.param_prefix + s->name, {1, 1}));
  return params;
}

std::int64_t Problem::planned_bytes(const Bindings& points, int batches, double fraction) {
  const MemoryOptions& m = spec_.pinn.memory;
  const std::vector<LossTerm> terms =
      build_graph(batches > 1 ? batch_shapes(points, batches) : points, batches);
  const std::vector<Var> params = training_params();
  LossPrograms programs = build_loss_programs(terms, params);
  if (m.term_gradients) add_term_gradients(programs, params);
  if (m.probes) add_probes(programs, terms, params);
  std::vector<compiler::PrecisionPolicy> precisions{spec_.compile.pipeline.precision};
  for (compiler::PrecisionPolicy p : m.precisions)
    if (std::find(precisions.begin(), precisions.end(), p) == precisions.end())
      precisions.push_back(p);
  std::int64_t bytes = 0;
  for (compiler::PrecisionPolicy p : precisions) {
    compiler::CompileOptions o = spec_.compile;
    o.pipeline.precision = p;
    o.memory_fraction = fraction;
    o.pipeline.log = false;
    o.pipeline.dump_ir.clear();
    for (const std::vector<Var>* outputs :
         {&programs.step, &programs.term_gradients, &programs.probes})
      if (!outputs->empty()) bytes += compiler::estimate_memory(*outputs, o).arena_bytes;
  }
  return bytes;
}

Eigen::Index Problem::round_quotas(const Quotas& whole, int batches, Bindings& points) const {
  // `points` are arranged to `whole`: each set's rows grouped by region in quota order, so each
  // region keeps the first rows of its block.
  Eigen::Index left_out = 0;
  quotas_ = whole;
  for (auto& [set, quota] : quotas_) {
    std::vector<std::pair<Eigen::Index, Eigen::Index>> keep;  // (first row, rows) per region
    Eigen::Index first = 0, rows = 0;
    for (auto& entry : quota) {
      const Eigen::Index kept = entry.second - entry.second % batches;
      keep.emplace_back(first, kept);
      left_out += entry.second - kept;
      first += entry.second;
      rows += kept;
      entry.second = kept;
    }
    Bindings arranged;
    for (auto& [name, value] : points) {
      if (name != set && name.rfind(set + "_", 0) != 0) continue;
      MatrixD to(rows, value.cols());
      Eigen::Index at = 0;
      for (const auto& [from, kept] : keep) {
        to.middleRows(at, kept) = value.middleRows(from, kept);
        at += kept;
      }
      value = to;
      arranged[name] = std::move(to);
    }
    arranged_[set] = std::move(arranged);
  }
  return left_out;
}

int Problem::plan_batches(Bindings& points) {
  const MemoryOptions& m = spec_.pinn.memory;
  // Every point set's rows, and every causal chunk's, must divide into the batches; a decomposed
  // model's sets arranged by region (quotas_) instead have each region's rows rounded down to a
  // multiple of them (round_quotas), and no region may be left without rows.
  const Quotas whole_quotas = quotas_;
  const auto arranged = [&](const std::string& name) {
    for (const auto& entry : whole_quotas)
      if (name == entry.first || name.rfind(entry.first + "_", 0) == 0) return true;
    return false;
  };
  Eigen::Index common = 0, fewest = std::numeric_limits<Eigen::Index>::max();
  for (const auto& [name, value] : points)
    if (!arranged(name)) common = std::gcd(common, value.rows());
  for (const auto& entry : whole_quotas)
    for (const auto& region : entry.second) fewest = std::min(fewest, region.second);
  const Eigen::Index interior = points.at(kInterior).rows();
  if (spec_.pinn.time_chunks > 1) common = std::gcd(common, interior / spec_.pinn.time_chunks);
  const bool rounding = !whole_quotas.empty();
  const auto possible = [&](Eigen::Index b) {
    return (common == 0 || common % b == 0) && (!rounding || b <= fewest);
  };
  const Eigen::Index most = !rounding ? common : common == 0 ? fewest : std::min(common, fewest);
  const auto interior_rows = [&](int batches) {
    if (!whole_quotas.count(kInterior)) return interior;
    Eigen::Index rows = 0;
    for (const auto& region : whole_quotas.at(kInterior))
      rows += region.second - region.second % batches;
    return rows;
  };
  const auto describe = [&](int batches) {
    return std::to_string(batches) + " batches of " +
           std::to_string(interior_rows(batches) / batches) + " interior points";
  };
  // The rows a decomposed model leaves out in `batches` batches, said after the choice.
  const auto apply = [&](int batches) {
    if (!rounding || batches == 1) return std::string();
    const Eigen::Index total = [&] {
      Eigen::Index rows = 0;
      for (const auto& entry : whole_quotas)
        for (const auto& region : entry.second) rows += region.second;
      return rows;
    }();
    memory_.left_out = round_quotas(whole_quotas, batches, points);
    return " (each subdomain's rows of a point set rounded down to a multiple of " +
           std::to_string(batches) + ": " + std::to_string(memory_.left_out) + " of " +
           std::to_string(total) + " points left out)";
  };
  if (m.batches > 0) {
    if (rounding && m.batches > 1 && !possible(m.batches))
      throw UserError("memory: " + std::to_string(m.batches) +
                      " batches of a decomposed model need at least as many rows of every "
                      "subdomain in every point set (the fewest: " +
                      std::to_string(fewest) + ")" +
                      (common > 0
                           ? " and to divide its other point sets (their counts have " +
                                 std::to_string(common) + " as their greatest common divisor)"
                           : ""));
    if (!possible(m.batches))
      throw UserError("memory: " + std::to_string(m.batches) +
                      " batches do not divide every point set (" + std::to_string(interior) +
                      " interior points; the counts have " + std::to_string(common) +
                      " as their greatest common divisor" +
                      (spec_.pinn.time_chunks > 1 ? ", a causal chunk's included" : "") + ")");
    memory_ = {.batches = m.batches};
    const std::string note = apply(m.batches);
    if (!note.empty() && !spec_.pinn.quiet && communicator_->rank() == 0)
      std::cout << "memory: " << describe(m.batches) << note << std::endl;
    return m.batches;
  }
  const std::int64_t budget =
      m.budget > 0
          ? m.budget
          : static_cast<std::int64_t>(
                m.share * static_cast<double>(compiler::available_memory(spec_.compile.backend)));
  memory_.budget = budget;
  memory_.whole_bytes = memory_.planned_bytes = planned_bytes(points, 1);
  if (budget <= 0 || memory_.whole_bytes <= budget) return 1;
  const auto gb = [](std::int64_t bytes) {  // "512 kB", "3.1 MB", "2.5 GB"
    const auto b = static_cast<double>(bytes);
    const auto [scale, unit] = b >= 1e9   ? std::pair{1e9, " GB"}
                               : b >= 1e6 ? std::pair{1e6, " MB"}
                                          : std::pair{1e3, " kB"};
    return nn::detail::short_number(b / scale, 3) + unit;
  };
  const std::string need = "the training programs need " + gb(memory_.whole_bytes) + " at " +
                           std::to_string(interior) + " interior points";
  // First resort: values of the backward pass computed again instead of kept, every program
  // asked for the budget's share of its own plan; then batches of the points.
  const double fraction = static_cast<double>(budget) / static_cast<double>(memory_.whole_bytes);
  const std::int64_t recomputing = planned_bytes(points, 1, fraction);
  if (recomputing <= budget) {
    memory_.planned_bytes = recomputing;
    memory_.fraction = fraction;
    if (!spec_.pinn.quiet && communicator_->rank() == 0)
      std::cout << "memory: " << need << ", more than memory_budget (" << gb(budget)
                << "): values of the backward pass are computed again instead of kept ("
                << gb(recomputing) << ")" << std::endl;
    return 1;
  }
  std::vector<int> counts;
  for (Eigen::Index d = 2; d <= most; ++d)
    if (possible(d)) counts.push_back(static_cast<int>(d));
  if (counts.empty())
    throw UserError("memory_budget: " + need + ", more than the budget of " + gb(budget) +
                    ", and the point counts have no common divisor to split them into batches "
                    "(" +
                    std::to_string(interior) + " interior points" +
                    (spec_.pinn.time_chunks > 1
                         ? " in " + std::to_string(spec_.pinn.time_chunks) + " causal chunks"
                         : "") +
                    "): give point counts with common factors (powers of 2)");
  // A decomposed model's plan for b batches: on its points with the quotas rounded for them.
  const auto plan = [&](int b, double f) {
    if (!rounding) return planned_bytes(points, b, f);
    Bindings rounded = points;
    round_quotas(whole_quotas, b, rounded);
    return planned_bytes(rounded, b, f);
  };
  BatchChoice choice =
      choose_batches(counts, budget, memory_.whole_bytes, [&](int b) { return plan(b, 1.0); });
  // Last resort: the most batches, each computing values of its backward pass again.
  std::string how = "";
  if (!choice.fits) {
    const double f = static_cast<double>(budget) / static_cast<double>(choice.bytes);
    const std::int64_t both = plan(choice.batches, f);
    if (both > budget)
      throw UserError("memory_budget: " + need + ", more than the budget of " + gb(budget) +
                      "; in " + describe(choice.batches) +
                      (rounding ? " (the most the subdomains' rows allow)"
                                : " (the most that divide every point set)") +
                      " still " + gb(choice.bytes) + " (" + gb(both) +
                      " with values of the backward pass computed again)" +
                      ": give fewer points, a smaller network or a larger budget");
    choice.bytes = both;
    memory_.fraction = f;
    how = ", values of its backward pass computed again";
  }
  memory_.batches = choice.batches;
  memory_.planned_bytes = choice.bytes;
  const std::string note = apply(choice.batches);
  if (!spec_.pinn.quiet && communicator_->rank() == 0)
    std::cout << "memory: " << need << ", more than memory_budget (" << gb(budget)
              << "): each step runs in " << describe(choice.batches) << how << " ("
              << gb(choice.bytes) << ")" << note << std::endl;
  return choice.batches;
}

void Problem::build_objective(std::vector<LossTerm> terms, Bindings points, int batches) {
  std::vector<Var> params = training_params();
  for (const equations::Symbol* s : spec_.math.context.symbols(equations::SymbolKind::param))
    pde_params_.push_back(s->name);
  compiler::CompileOptions options = spec_.compile;
  options.memory_fraction = memory_.fraction;
  objective_ =
      std::make_unique<Objective>(std::move(terms), params, options, *communicator_, batches);
  set_exchange();
  add_distances(points);
  objective_->set_inputs(points);
  // A chunked term's weight is shared by its chunks.
  std::vector<double> slot_weights;
  for (int s = 0; s < objective_->slots(); ++s) {
    const int t = objective_->slot_term()[static_cast<std::size_t>(s)];
    const int chunks = objective_->terms()[static_cast<std::size_t>(t)].chunks;
    slot_weights.push_back(term_weights_[static_cast<std::size_t>(t)] / chunks);
  }
  objective_->set_weights(slot_weights);
}

void Problem::set_exchange() {
  const int size = communicator_->size(), rank = communicator_->rank();
  if (!model_->decomposed() || size == 1 || spec_.pinn.exchange != GradientExchange::neighbours)
    return;
  // Which networks this rank's rows reach (every point input's layout), then every rank's.
  const std::size_t boxes = model_->boxes().size();
  std::vector<double> reach(boxes * static_cast<std::size_t>(size), 0.0);
  for (const auto& [input, layout] : model_graph_->layouts)
    for (const RowBlock& b : layout)
      if (b.count > 0)
        for (int j : b.region)
          reach[static_cast<std::size_t>(rank) * boxes + static_cast<std::size_t>(j)] = 1;
  communicator_->allreduce_sum(reach);
  std::map<std::string, const nn::ParameterLayout::Entry*> entries;
  for (const auto& e : objective_->layout().entries()) entries[e.name] = &e;
  std::vector<ParameterBlock> blocks;
  const auto cells = static_cast<int>(model_->cells().size());
  for (std::size_t j = 0; j < boxes; ++j) {
    ParameterBlock block{.name = "sd" + std::to_string(j)};
    for (int r = 0; r < size; ++r)
      if (reach[static_cast<std::size_t>(r) * boxes + j] > 0) block.holders.push_back(r);
    // A network no point reaches (a box over a hole of the domain) keeps its initial values
    // with its cell's owner.
    if (block.holders.empty())
      block.holders.push_back(Model::owner(static_cast<int>(j), cells, size));
    for (const Var& p : model_graph_->networks()[j]->params()) {
      const nn::ParameterLayout::Entry& e = *entries.at(p.node().attrs.name);
      block.ranges.push_back({e.offset, e.shape.size()});
      entries.erase(p.node().attrs.name);
    }
    blocks.push_back(std::move(block));
  }
  // The rest (the PDE's trainable constants) every rank holds.
  if (!entries.empty()) {
    ParameterBlock rest{.name = "shared"};
    for (int r = 0; r < size; ++r) rest.holders.push_back(r);
    for (const auto& [name, e] : entries) rest.ranges.push_back({e->offset, e->shape.size()});
    blocks.push_back(std::move(rest));
  }
  objective_->set_exchange(std::make_unique<ParameterExchange>(
      std::move(blocks), objective_->layout().size(), *communicator_));
}

Var Problem::fields_at(const ModelGraph& net, Var at) const {
  const Var raw = net.fields(at);
  const equations::Context& ctx = spec_.math.context;
  std::vector<std::string> texts;
  for (std::size_t f = 0; f < hard_value_.size(); ++f)
    if (!hard_value_[f].empty()) {
      texts.push_back(hard_value_[f]);
      texts.push_back(uses_mesh(hard_distance_[f]) ? mesh_factor(hard_distance_[f])
                                                   : hard_distance_[f]);
    }
  if (texts.empty()) return raw;
  const std::vector<equations::Equation> eqs = equations::parse_all(texts, ctx);
  Taylor none(equations::plan_for(eqs, ctx, at));  // g and D: values only, no derivatives
  const std::vector<Var> gd = equations::lower(
      eqs, ctx, {.coordinates = at, .outputs = raw, .param_prefix = spec_.pinn.param_prefix}, none);
  std::vector<Var> columns;
  std::size_t k = 0;
  for (std::size_t f = 0; f < hard_value_.size(); ++f) {
    const Var n = raw.shape().cols == 1 ? raw : col(raw, static_cast<std::int64_t>(f));
    if (hard_value_[f].empty()) {
      columns.push_back(n);
      continue;
    }
    // The mesh distance is a given leaf of the points: bound by distance_bindings() wherever
    // these points are bound.
    const Var d =
        uses_mesh(hard_distance_[f]) ? given_leaf(at, mesh_tag(f)) * gd[k + 1] : gd[k + 1];
    columns.push_back(gd[k] + d * n);
    k += 2;
  }
  return columns.size() == 1 ? columns[0] : concat_cols(columns);
}

void Problem::add_distances(Bindings& points) const {
  Bindings more;
  for (const auto& [name, value] : points)
    for (auto& [n, v] : distance_bindings(*graph_, name, value, distance_cache_))
      more[n] = std::move(v);
  for (auto& [n, v] : more) points[n] = std::move(v);
}

std::string Problem::mesh_tag(std::size_t field) const {
  // Fields on the whole surface share one leaf; a piece's is its field's own.
  return hard_mesh_piece_[field].empty() ? kMeshTag : kMeshTag + std::to_string(field);
}

Bindings Problem::distance_bindings(Graph& graph, const std::string& name, const MatrixD& points,
                                    DistanceCaches& cache) const {
  Bindings out;
  const geometry::StlMesh* mesh = mesh_of(*spec_.math.domain);
  if (!mesh) return out;
  const std::vector<Var> inputs = graph.inputs();
  std::set<std::string> done;
  for (std::size_t f = 0; f < hard_distance_.size(); ++f) {
    if (!uses_mesh(hard_distance_[f]) || !done.insert(mesh_tag(f)).second) continue;
    const std::string leaf = given_leaf_name(name, mesh_tag(f));
    if (std::none_of(inputs.begin(), inputs.end(),
                     [&](const Var& v) { return v.node().attrs.name == leaf; }))
      continue;  // these points' graph does not use D (a data term's points, say)
    const std::vector<GivenStream> streams = given_streams(graph, leaf);
    // The same points again (an evaluator's grid at every validation): the values of last time.
    DistanceCache& cached = cache[leaf];
    if (cached.streams == streams.size() && cached.points.rows() == points.rows() &&
        cached.points.cols() == points.cols() && (cached.points == points).all()) {
      for (const auto& [n, v] : cached.bindings) out[n] = v;
      continue;
    }
    // The jets to the highest order any stream asks for (4 at most: the jet capacity in 3D),
    // over the spatial columns: D does not depend on a time product's time (the last column),
    // so a term with a time derivative is zero.
    int order = 0;
    for (const GivenStream& s : streams)
      for (const auto& [alpha, w] : s.terms)
        if (alpha.size() == 3 || alpha[3] == 0) order = std::max(order, degree(alpha));
    if (order > 4)
      throw UserError("hard constraint on " + mesh->describe() + ": the equations need order " +
                      std::to_string(order) +
                      " derivatives of the smooth distance, which has them to order 4");
    const JetAlgebra jets(3, order);
    const MatrixD c = mesh->smooth_distance(hard_mesh_piece_[f]).jets(points.leftCols(3), order);
    Bindings mine;
    mine[leaf] = c.col(0);
    for (const GivenStream& s : streams) {
      MatrixD v = MatrixD::Zero(points.rows(), 1);
      for (const auto& [alpha, w] : s.terms)
        if (alpha.size() == 3 || alpha[3] == 0)
          v.col(0) += w * c.col(jets.key_of({alpha[0], alpha[1], alpha[2]}));
      mine[s.input] = std::move(v);
    }
    for (const auto& [n, v] : mine) out[n] = v;
    cached = {points, streams.size(), std::move(mine)};
  }
  return out;
}

Eigen::VectorXd Problem::initial_theta(std::uint64_t seed) const {
  Bindings b = model_graph_->init(seed);
  for (const auto& [name, value] :
       equations::initial_params(spec_.math.context, spec_.pinn.param_prefix))
    b[name] = value;
  return objective_->layout().flatten(b);
}

int Problem::fit_output_layer(Eigen::VectorXd& theta) {
  if (network_spec_.architecture != nn::Architecture::pirate || model_->decomposed()) return 0;
  const equations::Context& ctx = spec_.math.context;
  std::vector<nn::OutputData> data;
  int rows = 0;
  for (std::size_t k = 0; k < spec_.math.conditions.size(); ++k) {
    const Condition& c = spec_.math.conditions[k];
    if (c.kind != Condition::Kind::dirichlet && c.kind != Condition::Kind::initial_value) continue;
    const Eigen::Index f = ctx.field_index(c.field);
    // A field with a hard constraint is not the network's output there.
    if (!hard_value_[static_cast<std::size_t>(f)].empty()) continue;
    const auto it = objective_->inputs().find(points_name(k));
    if (it == objective_->inputs().end() || it->second.rows() == 0) continue;
    // Every rank's points, so that every rank fits the same data (the same parameters).
    const MatrixD& mine = it->second;
    std::vector<double> flat(static_cast<std::size_t>(mine.size()));
    for (Eigen::Index i = 0; i < mine.rows(); ++i)
      for (Eigen::Index a = 0; a < mine.cols(); ++a)
        flat[static_cast<std::size_t>(i * mine.cols() + a)] = mine(i, a);
    const std::vector<double> all = communicator_->allgather(flat);
    MatrixD points(static_cast<Eigen::Index>(all.size()) / mine.cols(), mine.cols());
    for (Eigen::Index i = 0; i < points.rows(); ++i)
      for (Eigen::Index a = 0; a < points.cols(); ++a)
        points(i, a) = all[static_cast<std::size_t>(i * mine.cols() + a)];
    const MatrixD values = evaluate_expressions_given(theta, points, {c.value}, {}, {}, {});
    data.push_back({.output = static_cast<int>(f), .points = points, .values = values});
    rows += static_cast<int>(points.rows());
  }
  if (data.empty()) return 0;
  Bindings params = objective_->layout().unflatten(theta);
  Bindings fitted;
  try {
    fitted = nn::fit_output_layer(model_->network_specs().front(), params, data);
  } catch (const UserError& e) {
    throw UserError(
        "network.architecture pirate: fitting the last layer to the initial and "
        "boundary values: " +
        std::string(e.what()));
  }
  for (auto& [name, value] : fitted) params[name] = std::move(value);
  theta = objective_->layout().flatten(params);
  return rows;
}

double Problem::param(const Eigen::VectorXd& theta, const std::string& name) const {
  for (const auto& e : objective_->layout().entries())
    if (e.name == spec_.pinn.param_prefix + name) return theta[e.offset];
  throw UserError("problem: no trainable constant '" + name + "' (trainable: " +
                  (pde_params_.empty() ? std::string("none") : joined(pde_params_)) + ")");
}

compiler::CompileOptions Problem::evaluation_options() const {
  compiler::CompileOptions o = spec_.compile;
  o.cpu.measure_tiles = false;
  return o;
}

Problem::Program& Problem::program(const std::string& what, const MatrixD& at,
                                   Eigen::Index value_columns, const ProgramBuilder& build) {
  const Eigen::Index rows = at.rows();
  std::vector<Eigen::Index> order;
  const RowLayout layout = model_->arrange(at, order, "problem: evaluate");
  const std::string key = model_->decomposed() ? what + "\n" + layout_key(layout) : what;
  for (auto it = programs_.begin(); it != programs_.end(); ++it)
    if (it->first == key) {
      programs_.splice(programs_.begin(), programs_, it);  // now the most recently used
      programs_.front().second.order = std::move(order);
      return programs_.front().second;
    }
  Program p;
  p.graph = std::make_unique<Graph>(DType::f64);
  p.order = std::move(order);
  p.values = value_columns > 0;
  const std::vector<Var> out = program_graph(*p.graph, layout, rows, value_columns, build);
  p.outputs = out.size();
  p.exe = std::make_unique<compiler::Executable>(out, evaluation_options());
  programs_.emplace_front(key, std::move(p));
  if (programs_.size() > kCachedPrograms) programs_.pop_back();
  return programs_.front().second;
}

std::vector<Var> Problem::program_graph(Graph& g, const RowLayout& layout, Eigen::Index rows,
                                        Eigen::Index value_columns,
                                        const ProgramBuilder& build) const {
  // The network again on a graph of its own: the same spec gives the same parameter names, so
  // theta binds as it does to the training graph, which stays as it was.
  ModelGraph net = model_->build(g);
  net.layouts[kPoints] = layout;
  // Every trainable constant, used or not, so that all of theta binds.
  for (const std::string& name : pde_params_) g.param(spec_.pinn.param_prefix + name, {1, 1});
  const Var points = g.input(kPoints, {rows, network_spec_.inputs});
  if (value_columns > 0) g.input(kValues, {rows, value_columns});
  return build(net, points);
}

void Problem::run(Program& p, const Eigen::VectorXd& theta, const MatrixD& points,
                  const MatrixD* values) const {
  for (const auto& [n, value] : objective_->layout().unflatten(theta)) p.exe->set(n, value);
  if (!model_->decomposed()) {
    p.exe->set(kPoints, points);
    p.exe->set(distance_bindings(*p.graph, kPoints, points, p.distances));
    if (p.values) p.exe->set(kValues, *values);
    p.exe->run();
    return;
  }
  const auto rows = static_cast<Eigen::Index>(p.order.size());
  MatrixD arranged(rows, points.cols());
  for (Eigen::Index i = 0; i < rows; ++i)
    arranged.row(i) = points.row(p.order[static_cast<std::size_t>(i)]);
  p.exe->set(kPoints, arranged);
  p.exe->set(distance_bindings(*p.graph, kPoints, arranged, p.distances));
  if (p.values) {
    MatrixD v(rows, values->cols());
    for (Eigen::Index i = 0; i < rows; ++i)
      v.row(i) = values->row(p.order[static_cast<std::size_t>(i)]);
    p.exe->set(kValues, v);
  }
  p.exe->run();
}

MatrixD Problem::output(const Program& p, std::size_t i) const {
  MatrixD out = p.exe->output(i);
  if (!model_->decomposed() || out.rows() == 1) return out;
  MatrixD back(out.rows(), out.cols());
  for (Eigen::Index r = 0; r < out.rows(); ++r)
    back.row(p.order[static_cast<std::size_t>(r)]) = out.row(r);
  return back;
}

Eigen::Index Problem::evaluation_rows(const std::string& what, const MatrixD& at,
                                      Eigen::Index value_columns, const ProgramBuilder& build) {
  const Eigen::Index rows = at.rows();
  if (rows <= kEvaluationProbeRows || memory_.budget <= 0) return rows;
  const auto bytes_per_row = [&](const MatrixD& probe) {
    std::vector<Eigen::Index> order;
    const RowLayout layout = model_->arrange(probe, order, "problem: evaluate");
    Graph g(DType::f64);
    const std::vector<Var> out =
        program_graph(g, layout, kEvaluationProbeRows, value_columns, build);
    return static_cast<double>(compiler::estimate_memory(out, evaluation_options()).arena_bytes) /
           kEvaluationProbeRows;
  };
  double per_row = 0;
  if (model_->decomposed()) {  // the regions' mix of these points: networks per row
    MatrixD probe(kEvaluationProbeRows, at.cols());
    for (Eigen::Index i = 0; i < kEvaluationProbeRows; ++i)
      probe.row(i) = at.row(i * rows / kEvaluationProbeRows);
    per_row = bytes_per_row(probe);
  } else {
    auto it = evaluation_bytes_per_row_.find(what);
    if (it == evaluation_bytes_per_row_.end())
      it = evaluation_bytes_per_row_
               .emplace(what, bytes_per_row(MatrixD::Zero(kEvaluationProbeRows, at.cols())))
               .first;
    per_row = it->second;
  }
  // What the budget leaves beside the training programs, and at least a quarter of it.
  const std::int64_t left = std::max(memory_.budget - memory_.planned_bytes, memory_.budget / 4);
  const auto fit = static_cast<Eigen::Index>(static_cast<double>(left) / per_row);
  return std::clamp(fit / kEvaluationProbeRows * kEvaluationProbeRows, kEvaluationProbeRows, rows);
}

namespace {

// A decomposed model's evaluation blocks, `blocks` of one layout: each region's rows (`layout`
// over the arranged rows, `order` their rows of the points) cut into shares of
// ceil(rows / blocks), block b taking share b, a short share made up by repeating the region's
// last row. Per block, the point row of each of its rows (regions in the layout's order, so the
// block is arranged as it stands) and whether its value is kept (not a repeat).
struct EvaluationBlock {
  std::vector<Eigen::Index> rows;
  std::vector<bool> kept;
};
std::vector<EvaluationBlock> region_shares(const RowLayout& layout,
                                           const std::vector<Eigen::Index>& order,
                                           Eigen::Index blocks) {
  std::vector<EvaluationBlock> out(static_cast<std::size_t>(blocks));
  for (const RowBlock& region : layout) {
    const Eigen::Index share = (region.count + blocks - 1) / blocks;
    for (Eigen::Index b = 0; b < blocks; ++b)
      for (Eigen::Index i = b * share; i < (b + 1) * share; ++i) {
        const bool kept = i < region.count;
        EvaluationBlock& block = out[static_cast<std::size_t>(b)];
        block.rows.push_back(order[static_cast<std::size_t>(region.first) +
                                   static_cast<std::size_t>(kept ? i : region.count - 1)]);
        block.kept.push_back(kept);
      }
  }
  return out;
}

}  // namespace

MatrixD Problem::evaluate_program(const Eigen::VectorXd& theta, const std::string& what,
                                  const MatrixD& at, const MatrixD* values,
                                  const ProgramBuilder& build) {
  const Eigen::Index value_columns = values ? values->cols() : 0;
  const Eigen::Index rows = at.rows();
  // A decomposed model's arrangement first: a point outside every subdomain is named by its row
  // of `at`.
  std::vector<Eigen::Index> order;
  const RowLayout layout =
      model_->decomposed() ? model_->arrange(at, order, "problem: evaluate") : RowLayout{};
  const Eigen::Index block = evaluation_rows(what, at, value_columns, build);
  // The outputs of one block's program, side by side; the first sizes `result`.
  MatrixD result;
  const auto evaluate_block = [&](const MatrixD& points, const MatrixD* part) {
    Program& p = program(what + "\n" + std::to_string(points.rows()), points, value_columns, build);
    run(p, theta, points, part);
    std::vector<MatrixD> outputs;
    Eigen::Index columns = 0;
    for (std::size_t k = 0; k < p.outputs; ++k) {
      outputs.push_back(output(p, k));
      columns += outputs.back().cols();
    }
    MatrixD out(points.rows(), columns);
    Eigen::Index column = 0;
    for (const MatrixD& o : outputs) {
      out.middleCols(column, o.cols()) = o;
      column += o.cols();
    }
    if (result.size() == 0) result.resize(rows, columns);
    return out;
  };
  if (model_->decomposed() && block < rows) {
    for (const EvaluationBlock& b : region_shares(layout, order, (rows + block - 1) / block)) {
      const auto n = static_cast<Eigen::Index>(b.rows.size());
      MatrixD points(n, at.cols()), part(n, value_columns);
      for (Eigen::Index i = 0; i < n; ++i) {
        points.row(i) = at.row(b.rows[static_cast<std::size_t>(i)]);
        if (values) part.row(i) = values->row(b.rows[static_cast<std::size_t>(i)]);
      }
      const MatrixD out = evaluate_block(points, values ? &part : nullptr);
      for (Eigen::Index i = 0; i < n; ++i)
        if (b.kept[static_cast<std::size_t>(i)])
          result.row(b.rows[static_cast<std::size_t>(i)]) = out.row(i);
    }
    return result;
  }
  Eigen::Index first = 0;
  do {  // once for no points: a program of none, as for any count
    const Eigen::Index n = std::min(block, rows - first);
    const MatrixD part = values ? MatrixD(values->middleRows(first, n)) : MatrixD();
    const MatrixD out = evaluate_block(at.middleRows(first, n), values ? &part : nullptr);
    result.middleRows(first, n) = out;
    first += n;
  } while (first < rows);
  return result;
}

MatrixD Problem::evaluate(const Eigen::VectorXd& theta, const MatrixD& at) {
  checked_points(spec_.math.context, at);
  return evaluate_program(theta, "fields", at, nullptr, [&](const ModelGraph& net, Var points) {
    return std::vector<Var>{fields_at(net, points)};
  });
}

Problem::ProgramBuilder Problem::expressions_builder(
    const std::vector<std::string>& expressions) const {
  return [this, expressions](const ModelGraph& net, Var points) {
    std::vector<Var> out =
        lower_at(net, points, equations::parse_all(expressions, spec_.math.context));
    broadcast_rows(out, points.shape().rows);
    return out;
  };
}

Problem::ExportedProgram Problem::exported_program(const Eigen::VectorXd& theta, Eigen::Index rows,
                                                   const std::vector<std::string>& expressions,
                                                   compiler::Backend backend) {
  if (model_->decomposed())
    throw UserError("a decomposed model (" + model_->describe() +
                    ") cannot be exported as a library yet: one network only");
  for (const std::string& d : hard_distance_)
    if (uses_mesh(d))
      throw UserError("a hard constraint on a mesh's distance cannot be exported as a library yet");
  if (expressions.empty()) throw UserError("nothing to export: no fields or expressions");
  const equations::Context& ctx = spec_.math.context;
  const MatrixD at = MatrixD::Zero(rows, static_cast<Eigen::Index>(ctx.coordinate_names().size()));
  std::vector<Eigen::Index> order;
  const RowLayout layout = model_->arrange(at, order, "export");
  // evaluate_expressions' graph (expressions_builder), planned for `backend`.
  Graph g(DType::f64);
  const std::vector<Var> out = program_graph(g, layout, rows, 0, expressions_builder(expressions));
  compiler::CompileOptions options = spec_.compile;
  options.backend = backend;
  options.cpu.tile_rows = -1;  // the library runs every step whole: no tiled regions
  const Bindings values = objective_->layout().unflatten(theta);
  return {.program = compiler::plan_program(out, options),
          .values = {values.begin(), values.end()}};
}

MatrixD Problem::evaluate_expressions(const Eigen::VectorXd& theta, const MatrixD& at,
                                      const std::vector<std::string>& expressions) {
  checked_points(spec_.math.context, at);
  if (expressions.empty()) return MatrixD(at.rows(), 0);
  return evaluate_program(theta, "expressions\n" + joined(expressions, "\n"), at, nullptr,
                          expressions_builder(expressions));
}

MatrixD Problem::evaluate_expressions_given(
    const Eigen::VectorXd& theta, const MatrixD& at, const std::vector<std::string>& expressions,
    const std::map<std::string, std::string>& field_expressions,
    const std::map<std::string, Eigen::Index>& field_columns, const MatrixD& field_values) {
  const equations::Context& ctx = spec_.math.context;
  checked_points(ctx, at);
  if (expressions.empty()) return MatrixD(at.rows(), 0);
  const auto value_columns = std::max<Eigen::Index>(1, field_values.cols());
  std::string key = "given\n" + std::to_string(value_columns) + "\n" + joined(expressions, "\n");
  for (const auto& [f, e] : field_expressions) key += "\n" + f + "=" + e;
  for (const auto& [f, c] : field_columns) key += "\n" + f + "@" + std::to_string(c);
  const auto build = [&](const ModelGraph& net, Var points) {
    const std::vector<equations::Equation> eqs = equations::parse_all(expressions, ctx);
    for (std::size_t e = 0; e < eqs.size(); ++e)
      for (const auto& [field, needs] : equations::analyze(eqs[e], ctx).fields) {
        if (field_expressions.count(field)) continue;
        if (!field_columns.count(field))
          throw UserError("'" + expressions[e] + "': the reference does not give field '" + field +
                          "'");
        const bool derivative =
            needs.laplacian || needs.biharmonic ||
            std::any_of(needs.partials.begin(), needs.partials.end(), [](const MultiIndex& m) {
              return std::any_of(m.begin(), m.end(), [](int k) { return k != 0; });
            });
        if (derivative)
          throw UserError("'" + expressions[e] + "': a derivative of '" + field +
                          "', which the reference gives as values only (an exact solution as "
                          "expressions has derivatives)");
      }
    const Eigen::Index rows = points.shape().rows;
    const Var values = points.graph->input(kValues, {rows, value_columns});
    equations::LowerInputs inputs{.coordinates = points,
                                  .outputs = fields_at(net, points),
                                  .param_prefix = spec_.pinn.param_prefix};
    for (const auto& [field, column] : field_columns) inputs.fields[field] = col(values, column);
    std::vector<std::string> exact_texts, exact_fields;
    for (const auto& [field, text] : field_expressions) {
      exact_fields.push_back(field);
      exact_texts.push_back(text);
    }
    if (!exact_texts.empty()) {
      const std::vector<equations::Equation> exact = equations::parse_all(exact_texts, ctx);
      Taylor values_only(equations::plan_for(exact, ctx, points));
      std::vector<Var> lowered = equations::lower(exact, ctx, inputs, values_only);
      broadcast_rows(lowered, rows);
      for (std::size_t k = 0; k < exact_fields.size(); ++k)
        inputs.fields[exact_fields[k]] = lowered[k];
    }
    Taylor taylor(equations::plan_for(eqs, ctx, points));
    std::vector<Var> out = equations::lower(eqs, ctx, inputs, taylor);
    broadcast_rows(out, rows);
    return out;
  };
  const MatrixD values = field_values.cols() > 0 ? field_values : MatrixD::Zero(at.rows(), 1);
  return evaluate_program(theta, key, at, &values, build);
}

Bindings Problem::resample(std::uint64_t seed) const {
  Bindings out = sample(seed, /*with_data=*/false);
  arrange(out);
  sample_interfaces(seed, out);
  add_distances(out);
  return out;
}

Bindings Problem::adaptive_interior(const Eigen::VectorXd& theta, int candidates,
                                    std::uint64_t seed, double k, double c) {
  // The interior points of all ranks; with global points every rank draws the whole pool, takes
  // the residual at its share of it, and all make the same choice from all residuals.
  const bool global = spec_.pinn.rank_points == RankPoints::global && communicator_->size() > 1;
  const auto local_rows = static_cast<double>(objective_->rows(0));
  std::vector<double> rows{local_rows};
  if (global) communicator_->allreduce_sum(rows);
  const auto n = static_cast<Eigen::Index>(global ? interior_rows_ : rows[0]);
  const int pool_size = global ? candidates : draw_count(candidates);
  if (pool_size < n)
    throw UserError("problem: adaptive sampling needs at least as many candidates (" +
                    std::to_string(candidates) + ") as interior points (" +
                    std::to_string(global ? interior_rows_ : spec_.pinn.interior_points) + ")");
  const Mathematics& m = spec_.math;
  geometry::SampleOptions o = spec_.pinn.sampling;
  o.seed = term_seed(draw_seed(seed), 0) ^ 0x5bd1e995ULL;
  const MatrixD pool =
      geometry::sample_interior(*m.domain, static_cast<std::size_t>(pool_size), o).points;
  const MatrixD mine = global ? rank_share(pool, 1) : pool;
  MatrixD r =
      evaluate_program(theta, "candidates", mine, nullptr,
                       [&](const ModelGraph& net, Var at) {
                         return lower_at(net, at, {equations::parse(m.equations[0], m.context)});
                       })
          .abs()
          .pow(k);
  if (global && mine.rows() != pool.rows()) {
    const std::vector<double> all =
        communicator_->allgather({r.data(), static_cast<std::size_t>(r.size())});
    r = Eigen::Map<const MatrixD>(all.data(), pool.rows(), 1);
  }
  const double mean = r.mean();
  // Weighted sampling without replacement (Efraimidis & Spirakis): the n largest u^(1/w).
  std::mt19937_64 rng(o.seed + 1);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::pair<double, Eigen::Index>> keys;
  for (Eigen::Index i = 0; i < pool.rows(); ++i) {
    const double w = (mean > 0 ? r(i, 0) / mean : 0.0) + c;
    keys.push_back({std::log(uniform(rng)) / std::max(w, 1e-300), i});
  }
  std::partial_sort(keys.begin(), keys.begin() + n, keys.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Eigen::Index> chosen;
  for (Eigen::Index i = 0; i < n; ++i) chosen.push_back(keys[static_cast<std::size_t>(i)].second);
  const int t = m.context.time_index();
  if (spec_.pinn.time_chunks > 1)
    std::stable_sort(chosen.begin(), chosen.end(),
                     [&](Eigen::Index a, Eigen::Index b) { return pool(a, t) < pool(b, t); });
  MatrixD picked(n, pool.cols());
  for (Eigen::Index i = 0; i < n; ++i)
    picked.row(i) = pool.row(chosen[static_cast<std::size_t>(i)]);
  Bindings out{{kInterior, global ? rank_share(picked, spec_.pinn.time_chunks) : picked}};
  arrange(out);
  add_distances(out);
  return out;
}

}  // namespace jetpde::solvers
