// nested_dual.h - independent quad-precision reference for MLP derivatives.
//
// Test oracle for jetpde's Taylor-mode autodiff. It computes
// d^|alpha| y_k / dx^alpha of a small MLP exactly up to __float128 rounding,
// by forward-mode differentiation with nested dual numbers: one dual level per
// derivative order, level l seeded in one input coordinate, so the coefficient
// of eps_1 eps_2 ... eps_n of y(x0 + sum_l eps_l e_{c_l}) is the mixed partial
// d^n y / dx_{c_1} ... dx_{c_n}.
//
// Why it is independent of the code under test: it includes nothing from
// jetpde, shares no data structures with it, uses a different algorithm
// (nested first-order duals, 2^n components, rather than truncated Taylor
// series with Faa di Bruno / jet-composition rules), a different scalar type
// (__float128 via libquadmath, ~34 digits) and it takes the weights as plain
// std::vectors of doubles. A bug would have to be made twice, in two
// unrelated formulations, to go unnoticed.
//
// Header-only; needs GNU extensions (-std=gnu++20) and -lquadmath.
#pragma once

#include <quadmath.h>

#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace jetpde::testref {

using Quad = __float128;  // IEEE binary128, ~34 significant digits

// ---------------------------------------------------------------------------
// Base scalar functions (declared before the Dual templates so that the
// unqualified calls inside them find these for the innermost level).
inline Quad tanh(Quad x) { return tanhq(x); }
inline Quad sin(Quad x) { return sinq(x); }
inline Quad cos(Quad x) { return cosq(x); }
inline Quad exp(Quad x) { return expq(x); }

inline double to_double(Quad x) { return static_cast<double>(x); }

// 34 significant digits in scientific notation, e.g. "1.234...e-01".
inline std::string to_string(Quad x) {
  char buf[64];
  quadmath_snprintf(buf, sizeof buf, "%.33Qe", x);
  return buf;
}

// ---------------------------------------------------------------------------
// Dual numbers a + b eps, eps^2 = 0. T is Quad or another Dual.
template <class T>
struct Dual {
  T a{}, b{};
};

// Plain (non-dual) scalars that may be mixed with a Dual of any depth.
template <class S>
concept Scalar = std::is_arithmetic_v<S> || std::is_same_v<S, Quad>;

// Dual (+-*/) Dual
template <class T>
Dual<T> operator+(const Dual<T>& x, const Dual<T>& y) {
  return {x.a + y.a, x.b + y.b};
}
template <class T>
Dual<T> operator-(const Dual<T>& x, const Dual<T>& y) {
  return {x.a - y.a, x.b - y.b};
}
template <class T>
Dual<T> operator-(const Dual<T>& x) {
  return {-x.a, -x.b};
}
template <class T>
Dual<T> operator*(const Dual<T>& x, const Dual<T>& y) {
  return {x.a * y.a, x.a * y.b + x.b * y.a};
}
template <class T>
Dual<T> operator/(const Dual<T>& x, const Dual<T>& y) {
  T q = x.a / y.a;
  return {q, (x.b - q * y.b) / y.a};
}

// Dual (+-*/) scalar and scalar (+-*/) Dual
template <class T, Scalar S>
Dual<T> operator+(const Dual<T>& x, S s) {
  return {x.a + s, x.b};
}
template <class T, Scalar S>
Dual<T> operator+(S s, const Dual<T>& x) {
  return {s + x.a, x.b};
}
template <class T, Scalar S>
Dual<T> operator-(const Dual<T>& x, S s) {
  return {x.a - s, x.b};
}
template <class T, Scalar S>
Dual<T> operator-(S s, const Dual<T>& x) {
  return {s - x.a, -x.b};
}
template <class T, Scalar S>
Dual<T> operator*(const Dual<T>& x, S s) {
  return {x.a * s, x.b * s};
}
template <class T, Scalar S>
Dual<T> operator*(S s, const Dual<T>& x) {
  return {s * x.a, s * x.b};
}
template <class T, Scalar S>
Dual<T> operator/(const Dual<T>& x, S s) {
  return {x.a / s, x.b / s};
}
template <class T, Scalar S>
Dual<T> operator/(S s, const Dual<T>& x) {
  T q = s / x.a;
  return {q, -(q * x.b) / x.a};
}

// f(a + b eps) = f(a) + f'(a) b eps, with f' written through the same
// generic functions so that any nesting depth works.
template <class T>
Dual<T> tanh(const Dual<T>& x) {
  T t = tanh(x.a);
  return {t, (1 - t * t) * x.b};
}
template <class T>
Dual<T> sin(const Dual<T>& x) {
  return {sin(x.a), cos(x.a) * x.b};
}
template <class T>
Dual<T> cos(const Dual<T>& x) {
  return {cos(x.a), -(sin(x.a) * x.b)};
}
template <class T>
Dual<T> exp(const Dual<T>& x) {
  T e = exp(x.a);
  return {e, e * x.b};
}

// DualN<n>: Quad nested n times (DualN<0> = Quad).
template <int N>
struct DualNest {
  using Type = Dual<typename DualNest<N - 1>::Type>;
};
template <>
struct DualNest<0> {
  using Type = Quad;
};
template <int N>
using DualN = typename DualNest<N>::Type;

// The constant s (all epsilon parts zero) at nesting depth N.
template <int N>
DualN<N> constant(Quad s) {
  if constexpr (N == 0)
    return s;
  else
    return {constant<N - 1>(s), DualN<N - 1>{}};
}

// Coefficient of eps_1 eps_2 ... eps_N (the top-order mixed part).
template <int N>
Quad top_coefficient(const DualN<N>& v) {
  if constexpr (N == 0)
    return v;
  else
    return top_coefficient<N - 1>(v.b);
}

// ---------------------------------------------------------------------------
// MLP: y = x W + b per layer, x a row vector; activation after every layer
// except the last.
struct MlpWeights {
  std::vector<std::vector<double>> W;  // W[l][i * sizes[l+1] + j]: input i -> output j
  std::vector<std::vector<double>> b;  // b[l][j], length sizes[l+1]
  std::vector<int> sizes;              // layer widths, input first
};

enum class Activation { tanh, sin };

inline void check_weights(const MlpWeights& net) {
  const std::size_t n_sizes = net.sizes.size();
  if (n_sizes < 2 || net.W.size() != n_sizes - 1 || net.b.size() != n_sizes - 1)
    throw std::invalid_argument("nested_dual: inconsistent number of layers");
  for (std::size_t l = 0; l + 1 < n_sizes; ++l) {
    if (net.sizes[l] <= 0 || net.sizes[l + 1] <= 0 ||
        net.W[l].size() != std::size_t(net.sizes[l]) * std::size_t(net.sizes[l + 1]) ||
        net.b[l].size() != std::size_t(net.sizes[l + 1]))
      throw std::invalid_argument("nested_dual: layer shape mismatch");
  }
}

// Forward pass at any scalar type V (Quad or nested Dual).
template <class V>
std::vector<V> mlp_forward(const MlpWeights& net, Activation act, std::vector<V> x) {
  const std::size_t layers = net.W.size();
  for (std::size_t l = 0; l < layers; ++l) {
    const int n_in = net.sizes[l], n_out = net.sizes[l + 1];
    std::vector<V> y(n_out);
    for (int j = 0; j < n_out; ++j) {
      V acc = x[0] * Quad(net.W[l][j]);  // double -> quad is exact
      for (int i = 1; i < n_in; ++i) acc = acc + x[i] * Quad(net.W[l][std::size_t(i) * n_out + j]);
      acc = acc + Quad(net.b[l][j]);
      if (l + 1 < layers) acc = (act == Activation::tanh) ? tanh(acc) : sin(acc);
      y[j] = acc;
    }
    x = std::move(y);
  }
  return x;
}

// Input coordinate i at depth N: x_i + sum of eps_l over the levels l <= N
// with coord_per_level[l-1] == i (level 1 is the innermost nesting).
template <int N>
DualN<N> seed_input(Quad x_i, int i, const std::vector<int>& coord_per_level) {
  if constexpr (N == 0)
    return x_i;
  else
    return {seed_input<N - 1>(x_i, i, coord_per_level),  //
            constant<N - 1>(coord_per_level[N - 1] == i ? 1 : 0)};
}

template <int N>
std::vector<Quad> mlp_derivative_depth(const MlpWeights& net, Activation act,
                                       const std::vector<Quad>& point,
                                       const std::vector<int>& coord_per_level) {
  std::vector<DualN<N>> x(point.size());
  for (std::size_t i = 0; i < point.size(); ++i)
    x[i] = seed_input<N>(point[i], int(i), coord_per_level);
  std::vector<DualN<N>> y = mlp_forward(net, act, std::move(x));
  std::vector<Quad> out(y.size());
  for (std::size_t k = 0; k < y.size(); ++k) out[k] = top_coefficient<N>(y[k]);
  return out;
}

inline constexpr int kMaxOrder = 6;

// d^n y_k / dx_{c_1} ... dx_{c_n} for all outputs k, c = coord_per_level,
// n = c.size() in [0, 6]. The *_quad variants take the point in quad (e.g.
// for finite differences); the others take doubles (converted exactly).
inline std::vector<Quad> mlp_derivative_seq_quad(const MlpWeights& net, Activation act,
                                                 const std::vector<Quad>& point,
                                                 const std::vector<int>& coord_per_level) {
  check_weights(net);
  if (point.size() != std::size_t(net.sizes[0]))
    throw std::invalid_argument("nested_dual: point dimension != sizes[0]");
  for (int c : coord_per_level)
    if (c < 0 || c >= net.sizes[0])
      throw std::invalid_argument("nested_dual: coordinate out of range");
  const auto& p = point;
  const auto& c = coord_per_level;
  switch (coord_per_level.size()) {  // NOLINT(bugprone-branch-clone): one depth per case
    case 0:
      return mlp_derivative_depth<0>(net, act, p, c);
    case 1:
      return mlp_derivative_depth<1>(net, act, p, c);
    case 2:
      return mlp_derivative_depth<2>(net, act, p, c);
    case 3:
      return mlp_derivative_depth<3>(net, act, p, c);
    case 4:
      return mlp_derivative_depth<4>(net, act, p, c);
    case 5:
      return mlp_derivative_depth<5>(net, act, p, c);
    case 6:
      return mlp_derivative_depth<6>(net, act, p, c);
    default:
      throw std::invalid_argument("nested_dual: derivative order > 6");
  }
}

inline std::vector<Quad> mlp_derivative_seq(const MlpWeights& net, Activation act,
                                            const std::vector<double>& point,
                                            const std::vector<int>& coord_per_level) {
  return mlp_derivative_seq_quad(net, act, std::vector<Quad>(point.begin(), point.end()),
                                 coord_per_level);
}

// d^|alpha| y_k / dx^alpha for all outputs k; multi_index[i] = alpha_i
// (length sizes[0]). Coordinates are seeded in increasing order.
inline std::vector<Quad> mlp_derivative_quad(const MlpWeights& net, Activation act,
                                             const std::vector<Quad>& point,
                                             const std::vector<int>& multi_index) {
  if (multi_index.size() != point.size())
    throw std::invalid_argument("nested_dual: multi_index dimension != point dimension");
  std::vector<int> coords;
  for (std::size_t i = 0; i < multi_index.size(); ++i) {
    if (multi_index[i] < 0) throw std::invalid_argument("nested_dual: negative multi-index entry");
    if (coords.size() + std::size_t(multi_index[i]) > std::size_t(kMaxOrder))
      throw std::invalid_argument("nested_dual: derivative order > 6");
    coords.insert(coords.end(), std::size_t(multi_index[i]), int(i));
  }
  return mlp_derivative_seq_quad(net, act, point, coords);
}

inline std::vector<Quad> mlp_derivative(const MlpWeights& net, Activation act,
                                        const std::vector<double>& point,
                                        const std::vector<int>& multi_index) {
  return mlp_derivative_quad(net, act, std::vector<Quad>(point.begin(), point.end()), multi_index);
}

}  // namespace jetpde::testref
