// Jets: truncated multivariate Taylor polynomials in double, for functions of the coordinates
// whose derivatives are computed once on the CPU rather than in the training graph (the smooth
// distance to an STL part, geometry/mesh_adf.h, fed to the graph as given Taylor streams).
//
// A jet of f at a point x0 over `vars` variables to total degree `order` holds the normalized
// coefficients c_β = ∂^β f(x0) / β! for every multi-index |β| <= order: the same convention as
// the streams of autodiff/taylor.h, so a jet's coefficients are those streams as they are.
// Arithmetic is the truncated polynomial arithmetic; a function f of a jet u is its univariate
// Taylor series at u0 composed with u - u0 (exact to the order, as the composition of Taylor
// polynomials is).
//
//   JetAlgebra J(3, 2);                     // x, y, z to second order
//   Jet x = J.variable(0, 0.3), y = J.variable(1, -0.2);
//   Jet r = J.sqrt(J.add(J.mul(x, x), J.mul(y, y)));
//   double r_xy = r.c[J.key_of({1, 1, 0})];  // ∂²r/∂x∂y (β! = 1)
//
// Fixed capacity (no allocation per operation): at most kJetCapacity coefficients, e.g. three
// variables to order 4 (35), two to order 7 (36 is too many: 2 to order 6 gives 28).
#pragma once

#include <array>
#include <span>
#include <vector>

#include "autodiff/taylor.h"

namespace jetpde {

inline constexpr int kJetCapacity = 35;

// The coefficients by key; entries past the algebra's size() are left unset (not zeroed: the
// operations touch only the algebra's keys, which keeps low orders cheap).
struct Jet {
  std::array<double, kJetCapacity> c;
  double value() const { return c[0]; }
};

class JetAlgebra {
 public:
  // UserError when vars < 1, order < 0 or the jet would need more than kJetCapacity
  // coefficients.
  JetAlgebra(int vars, int order);

  int vars() const { return vars_; }
  int order() const { return order_; }
  int size() const { return static_cast<int>(indices_.size()); }
  // The multi-indices by key, ordered by degree: key 0 is the value, keys 1..vars the first
  // partials in variable order.
  const std::vector<MultiIndex>& indices() const { return indices_; }
  // The key of β, or -1 when |β| > order or β has the wrong length.
  int key_of(const MultiIndex& beta) const;

  Jet zero() const;
  Jet constant(double value) const;
  Jet variable(int i, double value) const;  // the coordinate x_i at x0_i = value
  // (x - P) . (x - Q) for points P, Q given by p = x0 - P and q = x0 - Q: value p.q, gradient
  // p + q, second-order coefficients 1 on the diagonal. Built directly: squared distances and
  // the dot products of the mean-value potential have this form.
  Jet dot_offsets(std::span<const double> p, std::span<const double> q) const;

  Jet add(const Jet& a, const Jet& b) const;
  Jet sub(const Jet& a, const Jet& b) const;
  Jet scale(const Jet& a, double s) const;
  Jet add_constant(const Jet& a, double s) const;
  Jet mul(const Jet& a, const Jet& b) const;
  Jet div(const Jet& a, const Jet& b) const;  // b0 != 0
  Jet recip(const Jet& a) const;              // a0 != 0
  Jet sqrt(const Jet& a) const;               // a0 > 0
  Jet atan(const Jet& a) const;
  // atan(a) / a, analytic at a0 = 0 (a series there, no 0/0).
  Jet atan_over(const Jet& a) const;
  // f(a) for f's univariate Taylor coefficients at a0: f[k] = f^(k)(a0) / k!, k = 0..order.
  Jet compose(const Jet& a, std::span<const double> f) const;

 private:
  int vars_, order_;
  int fixed_;  // 1..4: three variables to this order, by the compiled kernels; 0: the tables
  std::vector<MultiIndex> indices_;
  std::vector<int> degree_;
  struct Product {
    int i, j, k;  // c_k += a_i b_j
  };
  std::vector<Product> products_;  // sorted by k
  void multiply(const std::vector<Product>& table, const Jet& a, const Jet& b, Jet& r) const;
  std::vector<int> square_key_;                       // the keys of x_v^2 (order >= 2)
  std::vector<std::vector<Product>> power_products_;  // [m]: degree(i) >= m, degree(j) >= 1
  std::vector<int> first_of_degree_;                  // [d]: the first key of degree d
};

}  // namespace jetpde
