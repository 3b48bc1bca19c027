#include "autodiff/jet.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <utility>

#include "autodiff/errors.h"

namespace jetpde {

namespace {
// Every multi-index of `vars` entries with total degree exactly d, in lexicographic order from
// the first variable's highest power.
void multi_indices(int vars, int d, MultiIndex& cur, int at, std::vector<MultiIndex>& out) {
  if (at == vars - 1) {
    cur[static_cast<std::size_t>(at)] = d;
    out.push_back(cur);
    return;
  }
  for (int k = d; k >= 0; --k) {
    cur[static_cast<std::size_t>(at)] = k;
    multi_indices(vars, d - k, cur, at + 1, out);
  }
}

double binomial(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

// Three variables to orders 1..4 (the smooth mesh distance's case) take kernels with their
// product tables built at compile time and unrolled: the same products as the runtime tables,
// in the same key order, without the indexing (3-4x faster).
constexpr int count3(int order) { return (order + 1) * (order + 2) * (order + 3) / 6; }

template <int K>
struct Fixed3 {
  static constexpr int N = count3(K);
  struct Index {
    int a[3];
    int degree;
  };
  // By degree, then from the first variable's highest power: the order of multi_indices().
  static constexpr std::array<Index, N> index = [] {
    std::array<Index, N> out{};
    int n = 0;
    for (int d = 0; d <= K; ++d)
      for (int a = d; a >= 0; --a)
        for (int b = d - a; b >= 0; --b)
          out[static_cast<std::size_t>(n++)] = {{a, b, d - a - b}, d};
    return out;
  }();
  struct Product {
    int i, j, k;
  };
  // The products a_i b_j -> c_k with degree(i) >= MI and degree(j) >= MJ, sorted by k.
  template <int MI, int MJ>
  static constexpr int count() {
    int n = 0;
    for (const Index& i : index)
      for (const Index& j : index)
        if (i.degree >= MI && j.degree >= MJ && i.degree + j.degree <= K) ++n;
    return n;
  }
  template <int MI, int MJ>
  static constexpr std::array<Product, count<MI, MJ>()> table() {
    std::array<Product, count<MI, MJ>()> out{};
    int n = 0;
    for (int k = 0; k < N; ++k)
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
          const Index &x = index[static_cast<std::size_t>(i)],
                      &y = index[static_cast<std::size_t>(j)],
                      &z = index[static_cast<std::size_t>(k)];
          if (x.degree < MI || y.degree < MJ) continue;
          if (x.a[0] + y.a[0] == z.a[0] && x.a[1] + y.a[1] == z.a[1] && x.a[2] + y.a[2] == z.a[2])
            out[static_cast<std::size_t>(n++)] = {i, j, k};
        }
    return out;
  }
};

template <int K, int MI, int MJ>
void multiply_fixed(const double* a, const double* b, double* r) {
  static constexpr auto table = Fixed3<K>::template table<MI, MJ>();
  [&]<std::size_t... I>(std::index_sequence<I...>) { ((r[I] = 0.0), ...); }
  (std::make_index_sequence<Fixed3<K>::N>{});
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((r[table[I].k] += a[table[I].i] * b[table[I].j]), ...);
  }
  (std::make_index_sequence<table.size()>{});
}

// d^(m+1) from d^m (its terms of degree >= m) and d (degree >= 1).
template <int K, int M = 1>
void power_fixed(int m, const double* power, const double* d, double* r) {
  if constexpr (M < K) {
    if (m == M) return multiply_fixed<K, M, 1>(power, d, r);
    power_fixed<K, M + 1>(m, power, d, r);
  }
}
}  // namespace

JetAlgebra::JetAlgebra(int vars, int order)
    : vars_(vars), order_(order), fixed_(vars == 3 && order >= 1 && order <= 4 ? order : 0) {
  if (vars < 1 || order < 0)
    throw UserError("jet: need at least one variable and a non-negative order (got " +
                    std::to_string(vars) + " variables, order " + std::to_string(order) + ")");
  // C(vars + order, order) coefficients, checked before building them.
  if (binomial(vars + order, order) > kJetCapacity)
    throw UserError("jet: " + std::to_string(vars) + " variables to order " +
                    std::to_string(order) + " need more than " + std::to_string(kJetCapacity) +
                    " coefficients");
  MultiIndex cur(static_cast<std::size_t>(vars), 0);
  for (int d = 0; d <= order; ++d) {
    const std::size_t before = indices_.size();
    multi_indices(vars, d, cur, 0, indices_);
    degree_.insert(degree_.end(), indices_.size() - before, d);
  }
  std::map<MultiIndex, int> key;
  for (std::size_t k = 0; k < indices_.size(); ++k) key[indices_[k]] = static_cast<int>(k);
  const auto same_keys = [&](const auto& fixed) {
    for (std::size_t k = 0; k < indices_.size(); ++k)
      for (std::size_t v = 0; v < 3; ++v)
        if (fixed[k].a[v] != indices_[k][v]) return false;
    return true;
  };
  if ((fixed_ == 1 && !same_keys(Fixed3<1>::index)) ||
      (fixed_ == 2 && !same_keys(Fixed3<2>::index)) ||
      (fixed_ == 3 && !same_keys(Fixed3<3>::index)) ||
      (fixed_ == 4 && !same_keys(Fixed3<4>::index)))
    throw InternalError("jet: the compiled kernels' keys differ from the algebra's");
  for (std::size_t i = 0; i < indices_.size(); ++i)
    for (std::size_t j = 0; j < indices_.size(); ++j) {
      if (degree_[i] + degree_[j] > order) continue;
      MultiIndex sum = indices_[i];
      for (std::size_t v = 0; v < sum.size(); ++v) sum[v] += indices_[j][v];
      products_.push_back({static_cast<int>(i), static_cast<int>(j), key.at(sum)});
    }
  std::stable_sort(products_.begin(), products_.end(),
                   [](const Product& x, const Product& y) { return x.k < y.k; });
  // For compose: products of a term of degree >= m with one of degree >= 1, per m.
  power_products_.resize(static_cast<std::size_t>(order + 1));
  for (int m = 1; m <= order; ++m)
    for (const Product& p : products_)
      if (degree_[static_cast<std::size_t>(p.i)] >= m &&
          degree_[static_cast<std::size_t>(p.j)] >= 1)
        power_products_[static_cast<std::size_t>(m)].push_back(p);
  for (int d = 0; d <= order; ++d)
    first_of_degree_.push_back(
        static_cast<int>(std::find(degree_.begin(), degree_.end(), d) - degree_.begin()));
  if (order >= 2)
    for (int v = 0; v < vars; ++v) {
      MultiIndex sq(static_cast<std::size_t>(vars), 0);
      sq[static_cast<std::size_t>(v)] = 2;
      square_key_.push_back(key.at(sq));
    }
}

int JetAlgebra::key_of(const MultiIndex& beta) const {
  if (static_cast<int>(beta.size()) != vars_) return -1;
  for (std::size_t k = 0; k < indices_.size(); ++k)
    if (indices_[k] == beta) return static_cast<int>(k);
  return -1;
}

Jet JetAlgebra::zero() const {
  Jet j;
  std::fill_n(j.c.begin(), size(), 0.0);
  return j;
}

Jet JetAlgebra::constant(double value) const {
  Jet j = zero();
  j.c[0] = value;
  return j;
}

Jet JetAlgebra::variable(int i, double value) const {
  Jet j = zero();
  j.c[0] = value;
  if (order_ >= 1) j.c[static_cast<std::size_t>(1 + i)] = 1.0;
  return j;
}

Jet JetAlgebra::dot_offsets(std::span<const double> p, std::span<const double> q) const {
  Jet j = zero();
  for (int v = 0; v < vars_; ++v) {
    const auto s = static_cast<std::size_t>(v);
    j.c[0] += p[s] * q[s];
    if (order_ >= 1) j.c[1 + s] = p[s] + q[s];
  }
  for (int key : square_key_) j.c[static_cast<std::size_t>(key)] = 1.0;
  return j;
}

Jet JetAlgebra::add(const Jet& a, const Jet& b) const {
  Jet r;  // every key written below
  for (int k = 0; k < size(); ++k) r.c[k] = a.c[k] + b.c[k];
  return r;
}

Jet JetAlgebra::sub(const Jet& a, const Jet& b) const {
  Jet r;
  for (int k = 0; k < size(); ++k) r.c[k] = a.c[k] - b.c[k];
  return r;
}

Jet JetAlgebra::scale(const Jet& a, double s) const {
  Jet r;
  for (int k = 0; k < size(); ++k) r.c[k] = a.c[k] * s;
  return r;
}

Jet JetAlgebra::add_constant(const Jet& a, double s) const {
  Jet r = a;
  r.c[0] += s;
  return r;
}

// The products are sorted by target key, so each coefficient is summed in a register.
void JetAlgebra::multiply(const std::vector<Product>& table, const Jet& a, const Jet& b,
                          Jet& r) const {
  auto p = table.begin();
  for (int k = 0; k < size(); ++k) {
    double acc = 0;
    for (; p != table.end() && p->k == k; ++p) acc += a.c[p->i] * b.c[p->j];
    r.c[k] = acc;
  }
}

Jet JetAlgebra::mul(const Jet& a, const Jet& b) const {
  Jet r;
  switch (fixed_) {
    case 1:
      multiply_fixed<1, 0, 0>(a.c.data(), b.c.data(), r.c.data());
      break;
    case 2:
      multiply_fixed<2, 0, 0>(a.c.data(), b.c.data(), r.c.data());
      break;
    case 3:
      multiply_fixed<3, 0, 0>(a.c.data(), b.c.data(), r.c.data());
      break;
    case 4:
      multiply_fixed<4, 0, 0>(a.c.data(), b.c.data(), r.c.data());
      break;
    default:
      multiply(products_, a, b, r);
  }
  return r;
}

Jet JetAlgebra::compose(const Jet& a, std::span<const double> f) const {
  // Σ f_k d^k with d = a - a0. d has no constant term, so d^k starts at degree k: each power
  // takes only the products of d^(k-1)'s terms of degree >= k-1 with d's of degree >= 1.
  Jet d = a;
  d.c[0] = 0.0;
  Jet r = scale(d, f[1 <= order_ ? 1 : 0]);
  r.c[0] = f[0];
  if (order_ == 0) return r;
  Jet power = d;
  for (int k = 2; k <= order_; ++k) {
    Jet next;
    switch (fixed_) {
      case 2:
        power_fixed<2>(k - 1, power.c.data(), d.c.data(), next.c.data());
        break;
      case 3:
        power_fixed<3>(k - 1, power.c.data(), d.c.data(), next.c.data());
        break;
      case 4:
        power_fixed<4>(k - 1, power.c.data(), d.c.data(), next.c.data());
        break;
      default:
        multiply(power_products_[static_cast<std::size_t>(k - 1)], power, d, next);
    }
    const double fk = f[static_cast<std::size_t>(k)];
    for (int key = first_of_degree_[static_cast<std::size_t>(k)]; key < size(); ++key)
      r.c[key] += fk * next.c[key];
    power = next;
  }
  return r;
}

Jet JetAlgebra::recip(const Jet& a) const {
  // 1/(a0 + s) = Σ (-1)^k s^k / a0^(k+1)
  std::array<double, kJetCapacity> f;
  const double inv = 1.0 / a.c[0];
  double t = inv;
  for (int k = 0; k <= order_; ++k, t *= -inv) f[static_cast<std::size_t>(k)] = t;
  return compose(a, std::span<const double>(f.data(), static_cast<std::size_t>(order_ + 1)));
}

Jet JetAlgebra::div(const Jet& a, const Jet& b) const { return mul(a, recip(b)); }

Jet JetAlgebra::sqrt(const Jet& a) const {
  // sqrt(a0 + s) = sqrt(a0) Σ binom(1/2, k) (s/a0)^k
  std::array<double, kJetCapacity> f;
  const double r0 = std::sqrt(a.c[0]), inv = 1.0 / a.c[0];
  double coeff = 1.0, t = r0;
  for (int k = 0; k <= order_; ++k) {
    f[static_cast<std::size_t>(k)] = coeff * t;
    coeff *= (0.5 - k) / (k + 1);
    t *= inv;
  }
  return compose(a, std::span<const double>(f.data(), static_cast<std::size_t>(order_ + 1)));
}

namespace {
// The univariate series of atan at u0 to degree n: atan' = 1/(1 + u^2), whose series g in s is
// found from (1 + (u0 + s)^2) g = 1 term by term, then integrated.
void atan_series(double u0, int n, std::array<double, kJetCapacity>& f) {
  const double q0 = 1 + u0 * u0, q1 = 2 * u0;  // 1 + (u0 + s)^2 = q0 + q1 s + s^2
  std::array<double, kJetCapacity> g;          // keys 0..n-1 written in order
  for (int k = 0; k < n; ++k) {
    double rhs = k == 0 ? 1.0 : 0.0;
    if (k >= 1) rhs -= q1 * g[static_cast<std::size_t>(k - 1)];
    if (k >= 2) rhs -= g[static_cast<std::size_t>(k - 2)];
    g[static_cast<std::size_t>(k)] = rhs / q0;
  }
  f[0] = std::atan(u0);
  for (int k = 1; k <= n; ++k)
    f[static_cast<std::size_t>(k)] = g[static_cast<std::size_t>(k - 1)] / k;
}
}  // namespace

Jet JetAlgebra::atan(const Jet& a) const {
  std::array<double, kJetCapacity> f;
  atan_series(a.c[0], order_, f);
  return compose(a, std::span<const double>(f.data(), static_cast<std::size_t>(order_ + 1)));
}

Jet JetAlgebra::atan_over(const Jet& a) const {
  const double z0 = a.c[0];
  std::array<double, kJetCapacity> f;
  if (std::abs(z0) < 0.25) {
    // atan(z)/z = Σ_m (-1)^m q^m / (2m+1) with q = z^2 = z0^2 + 2 z0 s + s^2, summed by Horner
    // in truncated univariate series of s. The coefficient of s^k in q^m is C(2m, k) z0^(2m-k),
    // so terms stop once C(2m, order) |z0|^(2m-order) < 1e-18 (|z0| < 1/4: 20 terms at most;
    // a far triangle, z0 ~ 1e-3, needs a handful).
    int kTerms = (order_ + 1) / 2 + 1;
    // |z0|^(2m - order) by repeated multiplication (pow is a tenth of the whole jet's time).
    double a_power = 1;
    for (int e = 0; e < 2 * kTerms - order_; ++e) a_power *= std::abs(z0);
    for (; kTerms < 20; ++kTerms, a_power *= z0 * z0)
      if (binomial(2 * kTerms, order_) * a_power < 1e-18) break;
    const double q[3] = {z0 * z0, 2 * z0, 1.0};
    std::fill_n(f.begin(), order_ + 1, 0.0);
    f[0] = (kTerms - 1) % 2 ? -1.0 / (2 * kTerms - 1) : 1.0 / (2 * kTerms - 1);
    for (int m = kTerms - 2; m >= 0; --m) {
      std::array<double, kJetCapacity> next;  // keys 0..order written below
      for (int k = order_; k >= 0; --k) {
        double sum = 0;
        for (int j = 0; j < 3 && j <= k; ++j) sum += q[j] * f[static_cast<std::size_t>(k - j)];
        next[static_cast<std::size_t>(k)] = sum;
      }
      next[0] += m % 2 ? -1.0 / (2 * m + 1) : 1.0 / (2 * m + 1);
      std::copy_n(next.begin(), order_ + 1, f.begin());
    }
  } else {
    // atan(z0 + s) / (z0 + s): the atan series divided by the linear z0 + s term by term.
    std::array<double, kJetCapacity> t;
    atan_series(z0, order_, t);
    for (int k = 0; k <= order_; ++k) {
      const double prev = k > 0 ? f[static_cast<std::size_t>(k - 1)] : 0.0;
      f[static_cast<std::size_t>(k)] = (t[static_cast<std::size_t>(k)] - prev) / z0;
    }
  }
  return compose(a, std::span<const double>(f.data(), static_cast<std::size_t>(order_ + 1)));
}

}  // namespace jetpde
