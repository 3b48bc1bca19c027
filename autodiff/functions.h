// The scalar functions of the equation language, one record each (docs/design.md sections 4 and 9).
//
// A record says everything about a function once; the primitive table (primitives.cpp), the
// equation language's parser, printer, constant folder, chain rule (equations/expand.cpp) and
// lowering (equations/lower.cpp) all read it. Adding a function is adding a record to `All`
// (and, when it is a new primitive, its Op in ir.h) and a row in tests/support/primitive_table.h.
//
// Members of a record F:
//   name              the spelling in the language and the primitive's name
//   arity             the number of arguments
//   symbol, level     operators only (comparisons, and/or/not): their spelling, and how tightly
//                     they bind when printed (equations/expr.cpp); callable by name otherwise
//   eval(x...)        the value, generic in the scalar type (double, float)
//   partial<V>(j, a)  ∂F/∂a_j, written with V's arithmetic and call<G>(...) (no F(a) itself:
//                     the Taylor rule builds it from the arguments alone)
//   jvp<V>(a, da)     optional: the derivative along da when it is not Σ_j partial_j da_j
//                     (where() selects its branches' derivatives; comparisons have none)
//   data              optional: a bit per argument that carries no derivative (where()'s
//                     condition, the operands of comparisons): the chain rule does not
//                     differentiate it
// A primitive also has
//   op                its Op; family its Taylor family (Chain: z' = Σ_j partial_j x_j', the
//                     partials built in the graph; Pair: sin/cos, sinh/cosh; UnaryPoly: f' a
//                     quadratic in f, with poly; Step: piecewise constant, no derivative)
//   partner, signs    Pair: F' = signs[0] partner and partner' = signs[1] F
//   c                 the C expression over {0}, {1} ({T}: the value's C type)
// and its transpose rule is ct * partial_j for every family but Step (zero).
// A helper (no op) is build(a): the formula in other functions, over Vars.
//
// V is Var here (the graph) and the equation language's expression builder in expand.cpp; both
// provide + - * / with V and double, unary -, and call<G>(args...), G applied to V's.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/ops.h"
#include "autodiff/primitive.h"

namespace jetpde::functions {

// ---- primitives -------------------------------------------------------------------------------

struct Sin;
struct Cos;
struct Exp;
struct Log;
struct Tanh;
struct Sqrt;
struct Abs;
struct Sinh;
struct Cosh;
struct Less;
struct LessEqual;
struct Equal;
struct NotEqual;
struct Where;

// G(args...) in the graph: G's primitive, or its formula for a helper.
template <class G, class... A>
Var call(Var a, A... rest);

template <class T>
T square_of(const T& x) {
  return x * x;
}

struct Sin {
  static constexpr const char* name = "sin";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Sin;
  static constexpr TaylorFamily family = TaylorFamily::Pair;
  static constexpr Op partner = Op::Cos;
  static constexpr std::array<double, 2> signs{1, -1};  // sin' = cos, cos' = -sin
  static constexpr const char* c = "sin({0})";
  template <class T>
  static T eval(T x) {
    return std::sin(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return call<Cos>(a[0]);
  }
};

struct Cos {
  static constexpr const char* name = "cos";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Cos;
  static constexpr TaylorFamily family = TaylorFamily::Pair;
  static constexpr Op partner = Op::Sin;
  static constexpr std::array<double, 2> signs{-1, 1};  // cos' = -sin, sin' = cos
  static constexpr const char* c = "cos({0})";
  template <class T>
  static T eval(T x) {
    return std::cos(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return -call<Sin>(a[0]);
  }
};

struct Exp {
  static constexpr const char* name = "exp";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Exp;
  static constexpr TaylorFamily family = TaylorFamily::UnaryPoly;
  static constexpr std::array<double, 3> poly{0, 1, 0};  // exp' = exp
  static constexpr const char* c = "exp({0})";
  template <class T>
  static T eval(T x) {
    return std::exp(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return call<Exp>(a[0]);
  }
};

struct Log {
  static constexpr const char* name = "log";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Log;
  static constexpr TaylorFamily family = TaylorFamily::Log;
  static constexpr const char* c = "log({0})";
  template <class T>
  static T eval(T x) {
    return std::log(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / a[0];
  }
  template <class V>
  static V jvp(const std::array<V, 1>& a, const std::array<V, 1>& da) {
    return da[0] / a[0];
  }
};

struct Tanh {
  static constexpr const char* name = "tanh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Tanh;
  static constexpr TaylorFamily family = TaylorFamily::UnaryPoly;
  static constexpr std::array<double, 3> poly{1, 0, -1};  // tanh' = 1 - tanh^2
  static constexpr const char* c = "tanh({0})";
  template <class T>
  static T eval(T x) {
    return std::tanh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 - square_of(call<Tanh>(a[0]));
  }
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Sqrt;
  static constexpr TaylorFamily family = TaylorFamily::Sqrt;
  static constexpr const char* c = "sqrt({0})";
  template <class T>
  static T eval(T x) {
    return std::sqrt(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / (2.0 * call<Sqrt>(a[0]));
  }
  template <class V>
  static V jvp(const std::array<V, 1>& a, const std::array<V, 1>& da) {
    return da[0] / (2.0 * call<Sqrt>(a[0]));
  }
};

// |a| is sqrt(a*a), so its derivatives are undefined where a = 0.
struct Abs {
  static constexpr const char* name = "abs";
  static constexpr int arity = 1;
  template <class T>
  static T eval(T x) {
    return std::abs(x);
  }
  static Var build(const std::array<Var, 1>& a) { return call<Sqrt>(square_of(a[0])); }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return a[0] / call<Abs>(a[0]);  // sign(a), written a/|a|
  }
};

struct Atan {
  static constexpr const char* name = "atan";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Atan;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "atan({0})";
  template <class T>
  static T eval(T x) {
    return std::atan(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / (1.0 + square_of(a[0]));
  }
  template <class V>
  static V jvp(const std::array<V, 1>& a, const std::array<V, 1>& da) {
    return da[0] / (1.0 + square_of(a[0]));
  }
};

// sinh and cosh by the C library (no (e^x - e^-x)/2 cancellation near 0), in pairs like sin/cos.
struct Sinh {
  static constexpr const char* name = "sinh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Sinh;
  static constexpr TaylorFamily family = TaylorFamily::Pair;
  static constexpr Op partner = Op::Cosh;
  static constexpr std::array<double, 2> signs{1, 1};  // sinh' = cosh, cosh' = sinh
  static constexpr const char* c = "sinh({0})";
  template <class T>
  static T eval(T x) {
    return std::sinh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return call<Cosh>(a[0]);
  }
};

struct Cosh {
  static constexpr const char* name = "cosh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Cosh;
  static constexpr TaylorFamily family = TaylorFamily::Pair;
  static constexpr Op partner = Op::Sinh;
  static constexpr std::array<double, 2> signs{1, 1};
  static constexpr const char* c = "cosh({0})";
  template <class T>
  static T eval(T x) {
    return std::cosh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return call<Sinh>(a[0]);
  }
};

// The inverse functions' derivatives factor 1 - x² and x² - 1, exact near |x| = 1 in f32.
struct Asin {
  static constexpr const char* name = "asin";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Asin;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "asin({0})";
  template <class T>
  static T eval(T x) {
    return std::asin(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / call<Sqrt>((1.0 - a[0]) * (1.0 + a[0]));
  }
};

struct Acos {
  static constexpr const char* name = "acos";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Acos;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "acos({0})";
  template <class T>
  static T eval(T x) {
    return std::acos(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return -1.0 / call<Sqrt>((1.0 - a[0]) * (1.0 + a[0]));
  }
};

struct Asinh {
  static constexpr const char* name = "asinh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Asinh;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "asinh({0})";
  template <class T>
  static T eval(T x) {
    return std::asinh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / call<Sqrt>(1.0 + square_of(a[0]));
  }
};

struct Acosh {
  static constexpr const char* name = "acosh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Acosh;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "acosh({0})";
  template <class T>
  static T eval(T x) {
    return std::acosh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / call<Sqrt>((a[0] - 1.0) * (a[0] + 1.0));
  }
};

struct Atanh {
  static constexpr const char* name = "atanh";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Atanh;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "atanh({0})";
  template <class T>
  static T eval(T x) {
    return std::atanh(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return 1.0 / ((1.0 - a[0]) * (1.0 + a[0]));
  }
};

struct Erf {
  static constexpr const char* name = "erf";
  static constexpr int arity = 1;
  static constexpr Op op = Op::Erf;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "erf({0})";
  template <class T>
  static T eval(T x) {
    return std::erf(x);
  }
  template <class V>
  static V partial(int, const std::array<V, 1>& a) {
    return (2.0 / std::sqrt(std::numbers::pi)) * call<Exp>(-square_of(a[0]));
  }
};

// atan2(y, x): the angle of (x, y) in (-pi, pi]; d = (x dy - y dx) / (x² + y²).
struct Atan2 {
  static constexpr const char* name = "atan2";
  static constexpr int arity = 2;
  static constexpr Op op = Op::Atan2;
  static constexpr TaylorFamily family = TaylorFamily::Chain;
  static constexpr const char* c = "atan2({0}, {1})";
  template <class T>
  static T eval(T y, T x) {
    return std::atan2(y, x);
  }
  template <class V>
  static V partial(int j, const std::array<V, 2>& a) {
    const V r2 = square_of(a[0]) + square_of(a[1]);
    return j == 0 ? a[1] / r2 : -a[0] / r2;
  }
};

// ---- comparisons and logic: values 0 and 1, piecewise constant (no derivative) ---------------

template <class V>
V no_derivative(const V& da) {
  return 0.0 * da;
}

// Binding levels for printing: or -3, and -2, not -1, comparisons 0, below sums (1) and the rest
// (equations/expr.cpp).
#define JETPDE_COMPARISON(Record, NAME, SYMBOL, OP, EXPR)               \
  struct Record {                                                       \
    static constexpr const char* name = NAME;                           \
    static constexpr const char* symbol = SYMBOL;                       \
    static constexpr int level = 0;                                     \
    static constexpr int arity = 2;                                     \
    static constexpr Op op = OP;                                        \
    static constexpr TaylorFamily family = TaylorFamily::Step;          \
    static constexpr unsigned data = 0b11;                              \
    static constexpr const char* c = "(({T})({0} " SYMBOL " {1}))";     \
    template <class T>                                                  \
    static T eval(T a, T b) {                                           \
      return EXPR ? T(1) : T(0);                                        \
    }                                                                   \
    template <class V>                                                  \
    static V jvp(const std::array<V, 2>&, const std::array<V, 2>& da) { \
      return no_derivative(da[0]);                                      \
    }                                                                   \
  };
JETPDE_COMPARISON(Less, "less", "<", Op::Less, a < b)
JETPDE_COMPARISON(LessEqual, "less_equal", "<=", Op::LessEqual, a <= b)
JETPDE_COMPARISON(Equal, "equal", "==", Op::Equal, a == b)
JETPDE_COMPARISON(NotEqual, "not_equal", "!=", Op::NotEqual, a != b)
#undef JETPDE_COMPARISON

// a > b and a >= b are b < a and b <= a.
struct Greater {
  static constexpr unsigned data = 0b11;
  static constexpr const char* name = "greater";
  static constexpr const char* symbol = ">";
  static constexpr int level = 0;
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a > b ? T(1) : T(0);
  }
  static Var build(const std::array<Var, 2>& a) { return call<Less>(a[1], a[0]); }
  template <class V>
  static V jvp(const std::array<V, 2>&, const std::array<V, 2>& da) {
    return no_derivative(da[0]);
  }
};

struct GreaterEqual {
  static constexpr unsigned data = 0b11;
  static constexpr const char* name = "greater_equal";
  static constexpr const char* symbol = ">=";
  static constexpr int level = 0;
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a >= b ? T(1) : T(0);
  }
  static Var build(const std::array<Var, 2>& a) { return call<LessEqual>(a[1], a[0]); }
  template <class V>
  static V jvp(const std::array<V, 2>&, const std::array<V, 2>& da) {
    return no_derivative(da[0]);
  }
};

// Logic on conditions: a value is true where it is not 0.
struct Not {
  static constexpr unsigned data = 0b1;
  static constexpr const char* name = "not";
  static constexpr const char* symbol = "not";
  static constexpr int level = -1;
  static constexpr int arity = 1;
  template <class T>
  static T eval(T a) {
    return a == T(0) ? T(1) : T(0);
  }
  static Var build(const std::array<Var, 1>& a) {
    return call<Equal>(a[0], a[0].graph->constant({1, 1}, {0.0}, a[0].dtype()));
  }
  template <class V>
  static V jvp(const std::array<V, 1>&, const std::array<V, 1>& da) {
    return no_derivative(da[0]);
  }
};

struct And {
  static constexpr unsigned data = 0b11;
  static constexpr const char* name = "and";
  static constexpr const char* symbol = "and";
  static constexpr int level = -2;
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a != T(0) && b != T(0) ? T(1) : T(0);
  }
  static Var build(const std::array<Var, 2>& a) {
    const Var zero = a[0].graph->constant({1, 1}, {0.0}, a[1].dtype());
    return select(a[0], call<NotEqual>(a[1], zero), zero);
  }
  template <class V>
  static V jvp(const std::array<V, 2>&, const std::array<V, 2>& da) {
    return no_derivative(da[0]);
  }
};

struct Or {
  static constexpr unsigned data = 0b11;
  static constexpr const char* name = "or";
  static constexpr const char* symbol = "or";
  static constexpr int level = -3;
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a != T(0) || b != T(0) ? T(1) : T(0);
  }
  static Var build(const std::array<Var, 2>& a) {
    const Var zero = a[0].graph->constant({1, 1}, {0.0}, a[1].dtype());
    const Var one = a[0].graph->constant({1, 1}, {1.0}, a[1].dtype());
    return select(a[0], one, call<NotEqual>(a[1], zero));
  }
  template <class V>
  static V jvp(const std::array<V, 2>&, const std::array<V, 2>& da) {
    return no_derivative(da[0]);
  }
};

// ---- piecewise functions (select) -------------------------------------------------------------

// where(c, a, b): a where c is true (not 0), else b; the derivative is the branches', selected.
struct Where {
  static constexpr unsigned data = 0b001;  // the condition
  static constexpr const char* name = "where";
  static constexpr int arity = 3;
  template <class T>
  static T eval(T c, T a, T b) {
    return c != T(0) ? a : b;
  }
  static Var build(const std::array<Var, 3>& a) { return select(a[0], a[1], a[2]); }
  template <class V>
  static V jvp(const std::array<V, 3>& a, const std::array<V, 3>& da) {
    return call<Where>(a[0], da[1], da[2]);
  }
};

struct Min {
  static constexpr const char* name = "min";
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a <= b ? a : b;
  }
  static Var build(const std::array<Var, 2>& a) {
    return select(call<LessEqual>(a[0], a[1]), a[0], a[1]);
  }
  template <class V>
  static V jvp(const std::array<V, 2>& a, const std::array<V, 2>& da) {
    return call<Where>(call<LessEqual>(a[0], a[1]), da[0], da[1]);
  }
};

struct Max {
  static constexpr const char* name = "max";
  static constexpr int arity = 2;
  template <class T>
  static T eval(T a, T b) {
    return a >= b ? a : b;
  }
  static Var build(const std::array<Var, 2>& a) {
    return select(call<LessEqual>(a[1], a[0]), a[0], a[1]);
  }
  template <class V>
  static V jvp(const std::array<V, 2>& a, const std::array<V, 2>& da) {
    return call<Where>(call<LessEqual>(a[1], a[0]), da[0], da[1]);
  }
};

// ---- the list ---------------------------------------------------------------------------------

// In the order the language lists them.
using All = std::tuple<Sin, Cos, Exp, Log, Tanh, Sqrt, Abs, Atan, Sinh, Cosh, Asin, Acos, Asinh,
                       Acosh, Atanh, Erf, Atan2, Min, Max, Where, Less, LessEqual, Greater,
                       GreaterEqual, Equal, NotEqual, Not, And, Or>;
inline constexpr std::size_t kCount = std::tuple_size_v<All>;

template <class F>
concept IsPrimitive = requires {
  F::op;
};
template <class F>
concept IsOperator = requires {
  F::symbol;
};
template <class F, class V>
concept HasJvp = requires(const std::array<V, F::arity>& a) {
  F::template jvp<V>(a, a);
};

// The index of F in All.
template <class F, std::size_t I = 0>
constexpr std::size_t index_of() {
  static_assert(I < kCount, "not a function record");
  if constexpr (std::is_same_v<std::tuple_element_t<I, All>, F>)
    return I;
  else
    return index_of<F, I + 1>();
}

// Calls visitor.template operator()<F>() for the record F at `index`.
template <class Visitor>
decltype(auto) visit(std::size_t index, Visitor&& visitor) {
  using R = decltype(visitor.template operator()<std::tuple_element_t<0, All>>());
  return [&]<std::size_t... I>(std::index_sequence<I...>)->R {
    if constexpr (std::is_void_v<R>) {
      ((index == I ? visitor.template operator()<std::tuple_element_t<I, All>>() : void()), ...);
    } else {
      R out{};
      ((index == I ? void(out = visitor.template operator()<std::tuple_element_t<I, All>>())
                   : void()),
       ...);
      return out;
    }
  }
  (std::make_index_sequence<kCount>{});
}

// Calls visitor.template operator()<F>() for every record.
template <class Visitor>
void for_each(Visitor&& visitor) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (visitor.template operator()<std::tuple_element_t<I, All>>(), ...);
  }
  (std::make_index_sequence<kCount>{});
}

// What the language needs to know of a record without its type.
struct Info {
  const char* name;
  const char* symbol;  // operators; nullptr for functions called by name
  int level;           // operators' binding level
  int arity;
};
inline const std::array<Info, kCount>& infos() {
  static const std::array<Info, kCount> table = [] {
    std::array<Info, kCount> t{};
    std::size_t i = 0;
    for_each([&]<class F>() {
      if constexpr (IsOperator<F>)
        t[i++] = {F::name, F::symbol, F::level, F::arity};
      else
        t[i++] = {F::name, nullptr, 0, F::arity};
    });
    return t;
  }();
  return table;
}

// The value of record `index` at `args` (its arity of them).
inline double eval(std::size_t index, std::span<const double> args) {
  return visit(index, [&]<class F>() {
    return [&]<std::size_t... I>(std::index_sequence<I...>) { return F::eval(args[I]...); }
    (std::make_index_sequence<F::arity>{});
  });
}

// Whether argument j of F carries no derivative (F::data).
template <class F>
constexpr bool is_data(int j) {
  if constexpr (requires { F::data; })
    return ((F::data >> j) & 1u) != 0;
  else
    return false;
}

// The derivative of F(a) along da: F's jvp, or Σ_j partial_j da_j.
template <class F, class V>
V jvp(const std::array<V, F::arity>& a, const std::array<V, F::arity>& da) {
  if constexpr (HasJvp<F, V>) {
    return F::template jvp<V>(a, da);
  } else {
    V sum = F::template partial<V>(0, a) * da[0];
    for (int j = 1; j < F::arity; ++j) sum = sum + F::template partial<V>(j, a) * da[j];
    return sum;
  }
}

template <class G, class... A>
Var call(Var a, A... rest) {
  static_assert(sizeof...(A) + 1 == G::arity, "wrong number of arguments");
  const std::array<Var, G::arity> args{a, rest...};
  for (const Var& v : args)
    if (v.graph == nullptr || v.graph != a.graph)
      throw UserError(std::string(G::name) + ": operands belong to different graphs");
  if constexpr (IsPrimitive<G>) {
    std::array<NodeId, G::arity> ids{};
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = args[i].id;
    return a.graph->make(G::op, ids);
  } else {
    return G::build(args);
  }
}

// G(args) for a run-time count of arguments (the language's lowering).
template <class G>
Var call_span(std::span<const Var> args) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return call<G>(args[I]...); }
  (std::make_index_sequence<G::arity>{});
}

}  // namespace jetpde::functions
