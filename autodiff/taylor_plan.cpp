// TaylorPlan: the downward closure of the requested multi-indices, collapsed sums, and for every
// stream the splits (β, α - β) that the product and recurrence rules sum over.
#include <algorithm>
#include <numeric>
#include <set>

#include "autodiff/errors.h"
#include "autodiff/taylor.h"

namespace jetpde {

std::string multi_index_str(const MultiIndex& alpha) {
  std::string s;
  for (int a : alpha) s += std::to_string(a);
  return s.empty() ? "()" : s;
}

int degree(const MultiIndex& alpha) { return std::accumulate(alpha.begin(), alpha.end(), 0); }

namespace {

double factorial(const MultiIndex& alpha) {
  double f = 1.0;
  for (int a : alpha)
    for (int k = 2; k <= a; ++k) f *= k;
  return f;
}

std::vector<int> all_dims(int num_vars, const std::vector<int>& dims) {
  if (!dims.empty()) return dims;
  std::vector<int> out(static_cast<std::size_t>(num_vars));
  std::iota(out.begin(), out.end(), 0);
  return out;
}

MultiIndex unit(int num_vars, std::initializer_list<std::pair<int, int>> entries) {
  MultiIndex m(static_cast<std::size_t>(num_vars), 0);
  for (auto [i, k] : entries) m[static_cast<std::size_t>(i)] += k;
  return m;
}

// Orders multi-indices by degree, then lexicographically from the first coordinate down.
bool by_degree(const MultiIndex& a, const MultiIndex& b) {
  const int da = degree(a), db = degree(b);
  return da != db ? da < db : a > b;
}

// Adds α and everything below it to `out`.
void close_downward(const MultiIndex& alpha, std::set<MultiIndex>& out) {
  if (!out.insert(alpha).second) return;
  for (std::size_t i = 0; i < alpha.size(); ++i)
    if (alpha[i] > 0) {
      MultiIndex lower = alpha;
      --lower[i];
      close_downward(lower, out);
    }
}

}  // namespace

DerivativeSum laplacian_sum(int num_vars, const std::vector<int>& dims) {
  DerivativeSum s{"laplacian", {}};
  for (int i : all_dims(num_vars, dims)) s.terms.push_back({unit(num_vars, {{i, 2}}), 1.0});
  return s;
}

DerivativeSum biharmonic_sum(int num_vars, const std::vector<int>& dims) {
  DerivativeSum s{"biharmonic", {}};
  const std::vector<int> d = all_dims(num_vars, dims);
  for (std::size_t a = 0; a < d.size(); ++a) {
    s.terms.push_back({unit(num_vars, {{d[a], 4}}), 1.0});
    for (std::size_t b = a + 1; b < d.size(); ++b)
      s.terms.push_back({unit(num_vars, {{d[a], 2}, {d[b], 2}}), 2.0});
  }
  return s;
}

void TaylorPlan::check_multi_index(const MultiIndex& alpha, const std::string& what) const {
  if (alpha.size() != vars_.size())
    throw UserError(what + " " + multi_index_str(alpha) + " has " + std::to_string(alpha.size()) +
                    " entries; the plan has " + std::to_string(vars_.size()) + " coordinates");
  for (int a : alpha)
    if (a < 0) throw UserError(what + " has a negative order");
}

TaylorPlan::TaylorPlan(std::vector<TaylorVar> vars, std::vector<MultiIndex> partials,
                       std::vector<DerivativeSum> sums)
    : vars_(std::move(vars)), sums_(std::move(sums)) {
  if (vars_.empty()) throw UserError("taylor: a plan needs at least one coordinate");
  for (std::size_t v = 0; v < vars_.size(); ++v) {
    const TaylorVar& var = vars_[v];
    if (var.input.graph == nullptr || var.input.graph != vars_[0].input.graph)
      throw UserError("taylor: coordinate " + std::to_string(v) + " is not a node of the graph");
    if (var.input.op() != Op::Input)
      throw UserError("taylor: coordinate " + std::to_string(v) + " is " +
                      var.input.graph->describe(var.input.id) +
                      ", not an input; derivatives are taken with respect to input columns");
    if (var.column < 0 || var.column >= var.input.shape().cols)
      throw UserError("taylor: coordinate " + std::to_string(v) + " is column " +
                      std::to_string(var.column) + " of " +
                      var.input.graph->describe(var.input.id) + ", out of range");
    for (std::size_t w = 0; w < v; ++w)
      if (vars_[w].input == var.input && vars_[w].column == var.column)
        throw UserError("taylor: coordinates " + std::to_string(w) + " and " + std::to_string(v) +
                        " are the same column");
  }
  std::set<MultiIndex> closed;
  close_downward(MultiIndex(vars_.size(), 0), closed);
  for (const MultiIndex& alpha : partials) {
    check_multi_index(alpha, "taylor: derivative");
    close_downward(alpha, closed);
  }
  for (const DerivativeSum& s : sums_) {
    if (s.terms.empty()) throw UserError("taylor: the sum '" + s.name + "' has no terms");
    for (const auto& [alpha, coeff] : s.terms) {
      check_multi_index(alpha, "taylor: term of '" + s.name + "'");
      for (std::size_t i = 0; i < alpha.size(); ++i)  // strictly lower coefficients only
        if (alpha[i] > 0) {
          MultiIndex lower = alpha;
          --lower[i];
          close_downward(lower, closed);
        }
    }
  }
  closure_.assign(closed.begin(), closed.end());
  std::sort(closure_.begin(), closure_.end(), by_degree);
  for (std::size_t k = 0; k < closure_.size(); ++k) key_[closure_[k]] = static_cast<int>(k);
  for (const MultiIndex& alpha : closure_) streams_.push_back({{make_term(alpha, 1.0)}});
  for (const DerivativeSum& s : sums_) {
    const bool covered = std::all_of(s.terms.begin(), s.terms.end(),
                                     [&](const auto& t) { return key_.count(t.first) > 0; });
    collapsed_key_.push_back(covered ? -1 : static_cast<int>(streams_.size()));
    if (covered) continue;
    Stream stream;
    for (const auto& [alpha, coeff] : s.terms)
      stream.terms.push_back(make_term(alpha, coeff * factorial(alpha)));
    streams_.push_back(std::move(stream));
  }
}

TaylorPlan::Term TaylorPlan::make_term(const MultiIndex& alpha, double weight) const {
  Term t{alpha, weight, 0, {}};
  t.axis = static_cast<int>(std::find_if(alpha.begin(), alpha.end(), [](int a) { return a > 0; }) -
                            alpha.begin());
  // Enumerate every β ≤ α with 0 < β < α, odometer style.
  MultiIndex beta(alpha.size(), 0);
  const int d = degree(alpha);
  while (true) {
    std::size_t i = 0;
    while (i < beta.size() && beta[i] == alpha[i]) beta[i++] = 0;
    if (i == beta.size()) break;
    ++beta[i];
    const int db = degree(beta);
    if (db == 0 || db == d) continue;
    MultiIndex rest(alpha.size());
    for (std::size_t j = 0; j < alpha.size(); ++j) rest[j] = alpha[j] - beta[j];
    t.inner.emplace_back(key_.at(beta), key_.at(rest));
  }
  return t;
}

int TaylorPlan::num_collapsed() const {
  return static_cast<int>(
      std::count_if(collapsed_key_.begin(), collapsed_key_.end(), [](int k) { return k >= 0; }));
}

int TaylorPlan::key_of(const MultiIndex& alpha) const {
  auto it = key_.find(alpha);
  return it == key_.end() ? -1 : it->second;
}

std::string TaylorPlan::str() const {
  std::string s = std::to_string(stream_count()) + " streams:";
  for (const MultiIndex& alpha : closure_) s += " " + multi_index_str(alpha);
  for (std::size_t k = 0; k < sums_.size(); ++k)
    if (collapsed(k)) s += " [" + sums_[k].name + "]";
  return s;
}

}  // namespace jetpde
