// Taylor mode (docs/design.md section 5): every derivative a PDE needs, in one forward sweep.
//
// A TaylorPlan names the coordinates (columns of input leaves), the partial derivatives wanted
// (multi-indices over those coordinates) and any weighted sums of derivatives wanted only as a
// sum (a Laplacian, a biharmonic). It takes the downward closure C of the partials: every
// multi-index β ≤ some requested α. Each node then carries one stream per β ∈ C holding the
// normalized Taylor coefficient c_β = ∂^β f / β!, plus one stream per collapsed sum
// s = Σ u_α α! c_α (docs/design.md section 5: "forward Laplacian"), which needs only the strictly
// lower coefficients of its terms. Streams are graph nodes built by each primitive's Taylor rule,
// so the result is an ordinary graph that the interpreter, `grad` and the compiler take as it is.
//
// Zero-aware: a stream known to be zero is not a node at all. Streams may keep a broadcastable
// shape: on the first layer, the streams of x W + b are rows of W ([1, width]), not [n, width].
//
// Given leaves: a function f of the coordinates whose streams are computed outside the graph
// (the smooth distance to an STL part, in double once per point set: geometry/mesh_adf.h) and
// fed in as inputs. It is an input named given_leaf_name(coords, tag) = "<coords>#<tag>", [n, 1],
// holding f at the rows of the input `coords`. Every Taylor object whose plan takes columns of
// `coords` as coordinates treats it as f(coords): its streams are inputs too, made on demand and
// named by what they hold, independently of the plan, so that the residuals' and the
// evaluators' Taylor objects share them: "<leaf>@<terms>", holding Σ w c_α over its terms (α
// over all columns of `coords`, c_α = ∂^α f / α!): one term of weight 1 for a multi-index, the
// weighted terms u_α α! of a collapsed sum. given_streams() lists those a graph has, for binding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde {

// Orders of differentiation per coordinate: {2, 0, 1} is ∂³/∂x²∂t for coordinates (x, y, t).
using MultiIndex = std::vector<int>;

std::string multi_index_str(const MultiIndex& alpha);
int degree(const MultiIndex& alpha);

// A coordinate: one column of an input leaf.
struct TaylorVar {
  Var input;
  std::int64_t column = 0;
};

// A weighted sum of derivatives, Σ_k coeff_k ∂^{α_k}, wanted only as a whole.
struct DerivativeSum {
  std::string name;
  std::vector<std::pair<MultiIndex, double>> terms;
};

// The Laplacian Σ_i ∂²/∂x_i² over coordinates `dims` (all `num_vars` when empty).
DerivativeSum laplacian_sum(int num_vars, const std::vector<int>& dims = {});
// The biharmonic Δ² over coordinates `dims` (all when empty).
DerivativeSum biharmonic_sum(int num_vars, const std::vector<int>& dims = {});

class TaylorPlan {
 public:
  // UserError when a coordinate is not a column of an input leaf, a multi-index has the wrong
  // length or a negative entry, or a coordinate repeats.
  TaylorPlan(std::vector<TaylorVar> vars, std::vector<MultiIndex> partials,
             std::vector<DerivativeSum> sums = {});

  int num_vars() const { return static_cast<int>(vars_.size()); }
  const std::vector<TaylorVar>& vars() const { return vars_; }
  // The downward closure C, ordered by degree; closure()[0] is the zero multi-index.
  const std::vector<MultiIndex>& closure() const { return closure_; }
  const std::vector<DerivativeSum>& sums() const { return sums_; }
  // Streams carried by every node: |C| plus one per collapsed sum.
  int stream_count() const { return static_cast<int>(closure_.size()) + num_collapsed(); }
  int num_collapsed() const;
  bool collapsed(std::size_t sum) const { return collapsed_key_[sum] >= 0; }
  // The stream index of α in C, or -1.
  int key_of(const MultiIndex& alpha) const;
  std::string str() const;  // e.g. "4 streams: 00 10 01 20"

  // For the transform: how each stream is built from strictly lower ones.
  struct Term {
    MultiIndex alpha;
    double weight = 1.0;                     // u_α α! for a collapsed term; 1 otherwise
    int axis = 0;                            // an i with α_i > 0, for the recurrences
    std::vector<std::pair<int, int>> inner;  // keys of (β, α - β) for all 0 < β < α
  };
  struct Stream {
    std::vector<Term> terms;  // one for a multi-index; the sum's terms for a collapsed stream
  };
  const std::vector<Stream>& streams() const { return streams_; }
  // The stream of sum k when collapsed, else -1.
  int collapsed_key(std::size_t sum) const { return collapsed_key_[sum]; }

 private:
  Term make_term(const MultiIndex& alpha, double weight) const;
  void check_multi_index(const MultiIndex& alpha, const std::string& what) const;

  std::vector<TaylorVar> vars_;
  std::vector<DerivativeSum> sums_;
  std::vector<MultiIndex> closure_;
  std::map<MultiIndex, int> key_;
  std::vector<int> collapsed_key_;
  std::vector<Stream> streams_;
};

// The name of the given leaf `tag` of the input `coordinates` (tag without '#' or '@').
std::string given_leaf_name(const std::string& coordinates, const std::string& tag);
// That leaf, [rows of coordinates, 1]. UserError for a coordinates node that is not an input or
// a tag with '#' or '@'.
Var given_leaf(Var coordinates, const std::string& tag);

// A stream input of a given leaf: its value is Σ weight c_α over `terms`, α over the columns
// of the leaf's coordinates.
struct GivenStream {
  std::string input;
  std::vector<std::pair<MultiIndex, double>> terms;
};
// The stream inputs that Taylor objects have made for `leaf` so far (in creation order).
std::vector<GivenStream> given_streams(Graph& g, const std::string& leaf);

namespace detail {
class TaylorState;
}

// Propagates a plan's streams through a graph on demand and reads derivatives out as nodes.
class Taylor {
 public:
  explicit Taylor(TaylorPlan plan);
  ~Taylor();
  Taylor(const Taylor&) = delete;
  Taylor& operator=(const Taylor&) = delete;

  const TaylorPlan& plan() const;
  // ∂^α y with y's shape. UserError when α is not in the plan's closure.
  Var derivative(Var y, const MultiIndex& alpha);
  // The plan's sum number k (or by name) applied to y.
  Var sum(Var y, std::size_t k);
  Var sum(Var y, const std::string& name);
  // The raw normalized stream `key` of y (a broadcastable shape), or a Var with id -1 for a
  // symbolic zero.
  Var stream(Var y, int key);

 private:
  std::unique_ptr<detail::TaylorState> state_;
};

}  // namespace jetpde
