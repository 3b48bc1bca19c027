// The model: the fields at points as a function of the parameters, before hard constraints
// (docs/design.md section 9, "Domain decomposition"). Either one network over the whole domain,
// or a finite-basis PINN (FBPINN; Moseley, Markham & Nissen-Meyer 2023): a grid of overlapping
// boxes over the domain's bounding box, one network per box, each network's input normalized to
// its own box (centre 0, half-width 1) and its output multiplied by a common scale, and
//
//   u(x) = sum_j w_j(x) NN_j(x),   w_j = v_j / sum_k v_k,
//   v_j(x) = prod_a ((1 + cos(pi (x_a - mu_ja) / sigma_ja)) / 2)^2 inside box j, 0 outside,
//
// mu and sigma the box's centre and half-width per axis (axes cut into one box only have no
// factor: it would cancel). These are the cosine windows of the FBPINN library and of the
// multilevel FBPINN paper (Dolean, Heinlein, Mishra & Moseley 2024); the 2023 paper's sigmoid
// products never vanish, so every network would act everywhere. v_j is C^3 across its box's
// faces and exactly zero outside, so the partition of unity is exact with only the covering
// networks.
//
// A point set is cut into regions, a region being the set of boxes that cover a point (strictly
// inside). The rows of a point set are grouped by region (RowLayout: contiguous blocks), and a
// block's fields are the sum over its region's networks only: a network's parameters get nothing
// from points outside its box. The windows are graph expressions of the coordinates, so Taylor
// mode gives their derivatives as it does the networks'.
//
//   Model model(network_spec, decomposition, domain.bounds());
//   ModelGraph m = model.build(graph);          // the networks' parameters on `graph`
//   std::vector<int> order;  RowLayout layout = model.arrange(points, order);
//   Var u = m.fields(at, layout);               // at: the points' rows in `order`
#pragma once

#include <Eigen/Core>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/options.h"
#include "geometry/geometry.h"
#include "geometry/sampler.h"
#include "nn/network.h"
#include "solvers/spec.h"

namespace jetpde::solvers {

// The boxes of a point set's region: the subdomains (indices into Model::boxes()) covering it.
using Region = std::vector<int>;

// Rows [first, first + count) of a point set, all in `region`.
struct RowBlock {
  Region region;
  Eigen::Index first = 0, count = 0;
};
using RowLayout = std::vector<RowBlock>;
std::string layout_key(const RowLayout& layout);  // "0,1:12;1:30": a cache key

// XPINN (Jagtap & Karniadakis 2020): the same grid without overlap, each point the network of
// its own cell alone (a region is always one cell, so there are no windows); the cells' networks
// are tied by interface terms on the faces they share (Model::interfaces(), built by Problem).
//
// Pieces (Decomposition::pieces) instead of a grid: the subdomains given as geometries.
//   xpinn: any shapes; a point is the first piece's that contains it (on no piece's inside, as
//     on a shared boundary: the piece nearest by signed distance). Two pieces whose boundaries
//     meet inside the domain share an interface: the points of piece a's boundary (a < b) that
//     lie on b's within the tolerance, inside the domain and off its boundary, with a's outward
//     normals (the flux term is then the jump of n . grad u; a grid face is the case n = its
//     axis). Each network is normalized to its piece's bounding box.
//   fbpinn: boxes only (the windows are products over a box's axes), anywhere, overlapping or
//     not: each grown by overlap / 2 of its own width per axis; the cosine windows as above.
// Checked (UserError naming decomposition.pieces[i] and a point): at least 2 pieces, each of the
// domain's dimension and meeting its bounding box, covering the domain (a quasi-random sample
// of it), and under xpinn no two overlapping (a point inside both by more than the tolerance).
// The tolerance is 1e-6 of the domain's size. Ranks own pieces as they own grid cells: cell_of()
// is the piece of a point, in index order cut into contiguous blocks (owner()).
//
// decomposition.method: fbpinn, xpinn (none is a value only code sets: no decomposition key).
const options::EnumTable<DecompositionMethod>& decomposition_method_names();

class Model;

// The model's networks built on one graph.
class ModelGraph {
 public:
  // The fields [n, outputs] at `at` [n, coordinates], whose rows are laid out as `layout` (one
  // block of everything when the model is one network; its layout is not used).
  Var fields(Var at, const RowLayout& layout) const;
  // The same with the layout of the input `at` is, from `layouts`.
  Var fields(Var at) const;
  // The layouts of the graph's point inputs, by input name (a decomposed model needs one for
  // every point input it is evaluated at).
  std::map<std::string, RowLayout> layouts;
  std::vector<Var> params() const;
  // Every network's initial parameters from `seed` (network j: a seed of its own).
  Bindings init(std::uint64_t seed) const;
  const std::vector<std::unique_ptr<nn::Network>>& networks() const { return networks_; }

 private:
  friend class Model;
  const Model* model_ = nullptr;
  std::vector<std::unique_ptr<nn::Network>> networks_;
};

class Model {
 public:
  // `network` has its inputs and outputs set; `d` is the spec's decomposition (method none: one
  // network); `bounds` the domain's bounding box; `ranks` the run's rank count (for auto).
  // UserError naming the decomposition key for a grid that does not fit the coordinates, an
  // overlap out of range, a per-subdomain network that cannot be built.
  Model(const nn::NetworkSpec& network, const Decomposition& d, const geometry::Bounds& bounds,
        int ranks = 1);
  // The same for a domain: what pieces need (a grid needs only the bounding box).
  Model(const nn::NetworkSpec& network, const Decomposition& d, const geometry::Geometry& domain,
        int ranks = 1);

  bool decomposed() const { return method_ != DecompositionMethod::none; }
  DecompositionMethod method() const { return method_; }
  // The subdomains per axis (coordinate order) and the boxes: with the overlap (the networks'
  // supports) and without (the cells of the grid, which tile the bounding box).
  // Pieces: no grid (empty); cells() are the pieces' bounding boxes (fbpinn: the given boxes).
  const std::vector<int>& grid() const { return grid_; }
  const std::vector<geometry::Bounds>& boxes() const { return boxes_; }
  const std::vector<geometry::Bounds>& cells() const { return cells_; }
  const std::vector<nn::NetworkSpec>& network_specs() const { return specs_; }
  // The pieces' geometries (empty for a grid).
  const std::vector<geometry::GeometryPtr>& pieces() const { return pieces_; }
  bool has_pieces() const { return !pieces_.empty(); }
  // "fbpinn 4 x 1 subdomains (overlap 0.3), one network each, hidden 16 x 16", or with pieces
  // "xpinn 2 pieces: disk, difference, one network each, hidden 16": what was chosen, for the log.
  std::string describe() const;

  ModelGraph build(Graph& graph) const;

  // The grid cell holding `point` (a face's point: the upper cell; outside the bounding box: the
  // nearest; pieces: the first piece containing it, else the nearest by signed distance), and the
  // rank that owns a cell: the cells in index order cut into `ranks` contiguous blocks (several
  // cells per rank; axis 0 fastest, so a block is whole rows of the grid when the counts divide).
  int cell_of(const double* point) const;
  static int owner(int cell, int cells, int ranks);
  // The boxes covering `point` strictly inside, in index order (fbpinn pieces, at a point no box
  // covers, which is outside the domain: the nearest box alone).
  Region region_of(const double* point) const;
  // The rows of `points` grouped by region (regions in increasing order, rows in their order
  // within one): `order` receives the original row of each arranged row. UserError naming
  // `what` for a point that no box covers (outside the bounding box and its overlap).
  RowLayout arrange(const MatrixD& points, std::vector<Eigen::Index>& order,
                    const std::string& what) const;
  // xpinn: the faces two neighbouring cells share (a lower cell `a`, the upper `b` along `axis`,
  // `face` the face's box, flat along the axis); with pieces, the pairs of pieces whose
  // boundaries meet inside the domain (axis -1, `face` the bounding box of the points found);
  // empty for other methods.
  struct Interface {
    int a = 0, b = 0, axis = 0;
    geometry::Bounds face;
  };
  const std::vector<Interface>& interfaces() const { return interfaces_; }
  // Pieces, interface f: up to `count` points on it (piece a's boundary sampled with `seed` in
  // rounds, kept on b's boundary, inside `domain` and off its boundary) and a's outward unit
  // normals there; fewer (none) where rounds of draws found fewer.
  geometry::PointSet interface_points(std::size_t f, const geometry::Geometry& domain, int count,
                                      std::uint64_t seed) const;
  // The tolerance of the pieces' checks and interfaces (1e-6 of the domain's size).
  double tolerance() const { return tolerance_; }
  // The normalized windows w_j at `points` [m, coordinates] -> [m, boxes] (0 outside box j), on
  // a graph of their own: a check of the partition of unity.
  MatrixD windows(const MatrixD& points) const;
  // The window v_j of box j (not normalized) at the rows of `at`, all inside box j.
  Var window(int j, Var at) const;

 private:
  friend class ModelGraph;
  Var region_fields(const ModelGraph& m, Var at, const Region& region) const;
  void init(const nn::NetworkSpec& network, const Decomposition& d, const geometry::Bounds& bounds,
            int ranks, const geometry::Geometry* domain);
  void make_grid(const Decomposition& d, const geometry::Bounds& bounds, int ranks,
                 const nn::NetworkSpec& base);
  void make_pieces(const Decomposition& d, const geometry::Geometry& domain,
                   const nn::NetworkSpec& base);
  bool on_interface(const double* p, int b, const geometry::Geometry& domain) const;

  DecompositionMethod method_ = DecompositionMethod::none;
  double overlap_ = 0;
  double scale_ = 1;
  std::vector<int> grid_;
  std::vector<bool> windowed_;  // the axes whose window factors do not cancel
  std::vector<geometry::GeometryPtr> pieces_;
  double tolerance_ = 0;
  std::vector<geometry::Bounds> boxes_, cells_;
  std::vector<nn::NetworkSpec> specs_;
  geometry::Bounds bounds_;
  std::vector<Interface> interfaces_;
};

// The subdomain grid `decomposition: auto` chooses for `ranks` ranks over `bounds`: the rank
// count rounded up to at least 4 subdomains, split over the axes in proportion to their extents
// (the longest axes get the cuts first).
std::vector<int> automatic_grid(const geometry::Bounds& bounds, int ranks);

}  // namespace jetpde::solvers
