// Expansion to the core form (see expand.h): vector forms by components, Laplacians kept whole
// where possible, derivatives of expressions by the chain rule.
#include "equations/expand.h"

#include <bit>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "autodiff/errors.h"
#include "equations/limits.h"

namespace jetpde::equations {

namespace {

bool is_number(const Expr& e, double value) {
  return e->kind == ExprKind::number && e->value == value;
}

class Expander;

// An expression in a record's derivative formula (autodiff/functions.h), made by the Expander's
// constructors: arithmetic folds zeros and ones, call<F>() folds when every argument is a number.
struct Term {
  Expander* x = nullptr;
  Expr e;
  int col = 0;
};
Term operator+(const Term& a, const Term& b);
Term operator-(const Term& a, const Term& b);
Term operator*(const Term& a, const Term& b);
Term operator/(const Term& a, const Term& b);
Term operator-(const Term& a);
Term operator+(double a, const Term& b);
Term operator+(const Term& a, double b);
Term operator-(double a, const Term& b);
Term operator-(const Term& a, double b);
Term operator*(double a, const Term& b);
Term operator*(const Term& a, double b);
Term operator/(double a, const Term& b);
Term operator/(const Term& a, double b);
template <class F, class... A>
Term call(const Term& first, const A&... rest);

// Whether e varies with the coordinates (or is per-point data, like the normal); `memo` holds
// the answers for the nodes seen (the core form is a DAG).
bool depends(const Expr& e, std::unordered_map<const ExprNode*, bool>& memo) {
  switch (e->kind) {
    case ExprKind::coordinate:
    case ExprKind::field:
    case ExprKind::derivative:
    case ExprKind::laplacian:
    case ExprKind::normal:
    case ExprKind::normal_component:
    case ExprKind::grad:
      return true;
    case ExprKind::number:
    case ExprKind::constant:
    case ExprKind::param:
      return false;
    default:
      break;
  }
  if (auto it = memo.find(&*e); it != memo.end()) return it->second;
  bool result = false;
  for (const Expr& a : e->args)
    if (depends(a, memo)) {
      result = true;
      break;
    }
  memo.emplace(&*e, result);
  return result;
}

// The terms Σ c_α ∂^α of the Laplacian to the power `order` over the coordinates `dims`.
std::map<MultiIndex, double> laplacian_terms(int order, const std::vector<int>& dims,
                                             std::size_t num_coords) {
  std::map<MultiIndex, double> terms{{MultiIndex(num_coords, 0), 1.0}};
  for (int k = 0; k < order; ++k) {
    std::map<MultiIndex, double> next;
    for (const auto& [alpha, c] : terms)
      for (int i : dims) {
        MultiIndex beta = alpha;
        beta[static_cast<std::size_t>(i)] += 2;
        next[beta] += c;
      }
    terms = std::move(next);
  }
  return terms;
}

// Everything expand() builds goes through intern(): equal nodes (same kind, payload, column and
// operands) are one node, so the core form is a DAG in which a repeated subexpression is shared,
// and d() is computed once per (node, coordinate). Leibniz-like expansions stay polynomial:
// d(u*u, x, 40) has 901 distinct nodes, not 2^40 terms. The distinct nodes are counted against
// limits::kMaxCoreNodes and the depth against limits::kMaxCoreDepth.
class Expander {
 public:
  Expander(const Context& ctx, const detail::Source& source)
      : ctx_(ctx), source_(source), spatial_(ctx.spatial()) {}

  std::size_t nodes() const { return interned_.size(); }

  Expr scalar(const Expr& e) {
    const int col = e->column;
    switch (e->kind) {
      case ExprKind::neg:
        return neg(scalar(e->args[0]), col);
      case ExprKind::add:
        return add(scalar(e->args[0]), scalar(e->args[1]), col);
      case ExprKind::sub:
        return sub(scalar(e->args[0]), scalar(e->args[1]), col);
      case ExprKind::mul:
        return mul(scalar(e->args[0]), scalar(e->args[1]), col);
      case ExprKind::div:
        return quot(scalar(e->args[0]), scalar(e->args[1]), col);
      case ExprKind::pow:
        return power(scalar(e->args[0]), scalar(e->args[1]), col);
      case ExprKind::call: {
        std::vector<Expr> args;
        for (const Expr& a : e->args) args.push_back(scalar(a));
        return make_call(e->function, std::move(args), col);
      }
      case ExprKind::diff: {
        const Focus focus(*this, col);
        Expr r = scalar(e->args[0]);
        for (std::size_t i = 0; i < e->alpha.size(); ++i)
          for (int k = 0; k < e->alpha[i]; ++k) r = d(r, static_cast<int>(i));
        return r;
      }
      case ExprKind::laplacian: {
        const Focus focus(*this, col);
        Expr r = scalar(e->args[0]);
        for (int k = 0; k < e->order; ++k) r = laplacian(r, col);
        return r;
      }
      case ExprKind::divergence: {
        const Focus focus(*this, col);
        return divergence(e->args[0], col);
      }
      case ExprKind::dot: {
        const std::vector<Expr> a = components(e->args[0]), b = components(e->args[1]);
        Expr sum = num(0, col);
        for (std::size_t i = 0; i < a.size(); ++i) sum = add(sum, mul(a[i], b[i], col), col);
        return sum;
      }
      case ExprKind::normal:
      case ExprKind::grad:
      case ExprKind::vec:
        throw InternalError("expand: a vector where the parser let through only scalars");
      default:
        return e;  // leaves: numbers, symbols, fields, derivatives, normal components
    }
  }

 private:
  // Constructors that fold the zeros and ones the rules create.
  Expr num(double v, int col) { return intern(Expr::number(v, col)); }

  Expr neg(const Expr& a, int col) {
    if (a->kind == ExprKind::number) return num(-a->value, col);
    if (a->kind == ExprKind::neg) return a->args[0];
    return intern(Expr::unary(ExprKind::neg, a, col));
  }

  Expr add(const Expr& a, const Expr& b, int col) {
    if (is_number(a, 0)) return b;
    if (is_number(b, 0)) return a;
    if (a->kind == ExprKind::number && b->kind == ExprKind::number)
      return num(a->value + b->value, col);
    return intern(Expr::binary(ExprKind::add, a, b, col));
  }

  Expr sub(const Expr& a, const Expr& b, int col) {
    if (is_number(b, 0)) return a;
    if (is_number(a, 0)) return neg(b, col);
    if (a->kind == ExprKind::number && b->kind == ExprKind::number)
      return num(a->value - b->value, col);
    return intern(Expr::binary(ExprKind::sub, a, b, col));
  }

  Expr mul(const Expr& a, const Expr& b, int col) {
    if (is_number(a, 0) || is_number(b, 0)) return num(0, col);
    if (is_number(a, 1)) return b;
    if (is_number(b, 1)) return a;
    if (is_number(a, -1)) return neg(b, col);
    if (is_number(b, -1)) return neg(a, col);
    if (a->kind == ExprKind::number && b->kind == ExprKind::number)
      return num(a->value * b->value, col);
    return intern(Expr::binary(ExprKind::mul, a, b, col));
  }

  Expr quot(const Expr& a, const Expr& b, int col) {
    if (is_number(a, 0)) return num(0, col);
    if (is_number(b, 1)) return a;
    return intern(Expr::binary(ExprKind::div, a, b, col));
  }

  Expr power(const Expr& a, const Expr& b, int col) {
    if (is_number(b, 1)) return a;
    if (is_number(b, 0)) return num(1, col);
    return intern(Expr::binary(ExprKind::pow, a, b, col));
  }

  Expr make_call(Function f, std::vector<Expr> args, int col) {
    return intern(Expr::call(f, std::move(args), col));
  }

  // ∂^alpha of a field, within limits::kMaxDerivativeOrder.
  Expr derivative(const Expr& f, MultiIndex alpha, int col) {
    if (degree(alpha) > limits::kMaxDerivativeOrder)
      detail::fail(source_, focus_ > 0 ? focus_ : col,
                   "the chain rule here asks for the derivative " + f->name + " of total order " +
                       std::to_string(degree(alpha)) + " (multi-index " + multi_index_str(alpha) +
                       " over " + detail::join(ctx_.coordinate_names()) +
                       "); the highest order is " + std::to_string(limits::kMaxDerivativeOrder));
    return intern(
        Expr::derivative(f->name, f->index, std::move(alpha), ctx_.coordinate_names(), col));
  }

  // The one node equal to `e`, counted against the limits.
  Expr intern(Expr e) {
    Key key{e->kind,  e->function, e->name,  std::bit_cast<std::uint64_t>(e->value),
            e->index, e->order,    e->alpha, e->column,
            {}};
    for (const Expr& a : e->args) key.args.push_back(reinterpret_cast<std::uintptr_t>(&*a));
    const auto [it, inserted] = interned_.emplace(std::move(key), e);
    if (!inserted) return it->second;
    if (interned_.size() > static_cast<std::size_t>(limits::kMaxCoreNodes))
      detail::fail(source_, focus_ > 0 ? focus_ : e->column,
                   "expanding this expression (the chain and product rules of its derivatives) "
                   "takes more than " +
                       std::to_string(limits::kMaxCoreNodes) + " distinct terms; the limit is " +
                       std::to_string(limits::kMaxCoreNodes) +
                       " (lower the order of the derivatives, or write them as fields)");
    if (e->depth > limits::kMaxCoreDepth)
      detail::fail(source_, focus_ > 0 ? focus_ : e->column,
                   "expanding this expression nests its core form more than " +
                       std::to_string(limits::kMaxCoreDepth) + " levels deep; the limit is " +
                       std::to_string(limits::kMaxCoreDepth));
    return e;
  }

  // The column errors of the expansion point at: the derivative or operator being expanded.
  class Focus {
   public:
    Focus(Expander& x, int column) : x_(x), saved_(x.focus_) {
      if (column > 0) x_.focus_ = column;
    }
    ~Focus() { x_.focus_ = saved_; }
    Focus(const Focus&) = delete;
    Focus& operator=(const Focus&) = delete;

   private:
    Expander& x_;
    int saved_;
  };

  struct Key {
    ExprKind kind;
    Function function;
    std::string name;
    std::uint64_t value;
    int index;
    int order;
    MultiIndex alpha;
    int column;
    std::vector<std::uintptr_t> args;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::size_t h = std::hash<std::string>()(k.name);
      auto mix = [&](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      mix(static_cast<std::uint64_t>(k.kind));
      mix(static_cast<std::uint64_t>(k.function));
      mix(k.value);
      mix(static_cast<std::uint64_t>(k.index));
      mix(static_cast<std::uint64_t>(k.order));
      mix(static_cast<std::uint64_t>(k.column));
      for (const int a : k.alpha) mix(static_cast<std::uint64_t>(a));
      for (const std::uintptr_t a : k.args) mix(a);
      return h;
    }
  };

  // The spatial components of a vector expression, each in core form.
  std::vector<Expr> components(const Expr& v) {
    const int col = v->column;
    std::vector<Expr> out;
    const std::vector<std::string> names = ctx_.spatial_names();
    auto each = [&](auto&& f) {
      for (std::size_t i = 0; i < spatial_.size(); ++i) out.push_back(f(i));
      return out;
    };
    switch (v->kind) {
      case ExprKind::normal:
        return each([&](std::size_t i) {
          return intern(Expr::normal_component(names[i], static_cast<int>(i), col));
        });
      case ExprKind::grad: {
        const Focus focus(*this, col);
        const Expr s = scalar(v->args[0]);
        return each([&](std::size_t i) { return d(s, spatial_[i]); });
      }
      case ExprKind::vec:
        return each([&](std::size_t i) { return scalar(v->args[i]); });
      case ExprKind::neg: {
        const std::vector<Expr> a = components(v->args[0]);
        return each([&](std::size_t i) { return neg(a[i], col); });
      }
      case ExprKind::add:
      case ExprKind::sub: {
        const std::vector<Expr> a = components(v->args[0]), b = components(v->args[1]);
        const bool plus = v->kind == ExprKind::add;
        return each(
            [&](std::size_t i) { return plus ? add(a[i], b[i], col) : sub(a[i], b[i], col); });
      }
      case ExprKind::mul: {
        const bool left_vector = v->args[0]->vector;
        const std::vector<Expr> a = components(v->args[left_vector ? 0 : 1]);
        const Expr s = scalar(v->args[left_vector ? 1 : 0]);
        return each([&](std::size_t i) { return mul(s, a[i], col); });
      }
      case ExprKind::div: {
        const std::vector<Expr> a = components(v->args[0]);
        const Expr s = scalar(v->args[1]);
        return each([&](std::size_t i) { return quot(a[i], s, col); });
      }
      default:
        throw InternalError("expand: components of a scalar");
    }
  }

  Expr divergence(const Expr& v, int col) {
    switch (v->kind) {
      case ExprKind::grad:
        return laplacian(scalar(v->args[0]), col);
      case ExprKind::neg:
        return neg(divergence(v->args[0], col), col);
      case ExprKind::add:
        return add(divergence(v->args[0], col), divergence(v->args[1], col), col);
      case ExprKind::sub:
        return sub(divergence(v->args[0], col), divergence(v->args[1], col), col);
      case ExprKind::mul: {
        const bool left_vector = v->args[0]->vector;
        const Expr s = scalar(v->args[left_vector ? 1 : 0]);
        if (!depends(s)) return mul(s, divergence(v->args[left_vector ? 0 : 1], col), col);
        break;
      }
      case ExprKind::div: {
        const Expr s = scalar(v->args[1]);
        if (!depends(s)) return quot(divergence(v->args[0], col), s, col);
        break;
      }
      default:
        break;
    }
    const std::vector<Expr> c = components(v);
    Expr sum = num(0, col);
    for (std::size_t i = 0; i < c.size(); ++i) sum = add(sum, d(c[i], spatial_[i]), col);
    return sum;
  }

  // The Laplacian of a core expression.
  Expr laplacian(const Expr& e, int col) {
    switch (e->kind) {
      case ExprKind::field:
        return intern(Expr::laplacian(e, 1, col));
      case ExprKind::laplacian:
        if (e->order == 1) return intern(Expr::laplacian(e->args[0], 2, col));
        break;
      case ExprKind::neg:
        return neg(laplacian(e->args[0], col), col);
      case ExprKind::add:
        return add(laplacian(e->args[0], col), laplacian(e->args[1], col), col);
      case ExprKind::sub:
        return sub(laplacian(e->args[0], col), laplacian(e->args[1], col), col);
      case ExprKind::mul:
        if (!depends(e->args[0])) return mul(e->args[0], laplacian(e->args[1], col), col);
        if (!depends(e->args[1])) return mul(laplacian(e->args[0], col), e->args[1], col);
        break;
      case ExprKind::div:
        if (!depends(e->args[1])) return quot(laplacian(e->args[0], col), e->args[1], col);
        break;
      default:
        break;
    }
    Expr sum = num(0, col);
    for (int i : spatial_) sum = add(sum, d(d(e, i), i), col);
    return sum;
  }

  // ∂e/∂x_i of a core expression: the chain and product rules, once per (node, coordinate).
  Expr d(const Expr& e, int i) {
    const auto key = std::make_pair(&*e, i);
    if (auto it = derivatives_.find(key); it != derivatives_.end()) return it->second;
    Expr r = d_uncached(e, i);
    derivatives_.emplace(key, r);
    return r;
  }

  Expr d_uncached(const Expr& e, int i) {
    const int col = e->column;
    if (e->kind == ExprKind::normal_component)
      detail::fail(source_, col,
                   "the normal n has no derivative: it is data given per boundary point");
    if (!depends(e)) return num(0, col);
    const std::size_t num_coords = ctx_.coordinate_names().size();
    switch (e->kind) {
      case ExprKind::coordinate:
        return num(e->index == i ? 1 : 0, col);
      case ExprKind::field:
      case ExprKind::derivative: {
        MultiIndex alpha = e->alpha.empty() ? MultiIndex(num_coords, 0) : e->alpha;
        ++alpha[static_cast<std::size_t>(i)];
        return derivative(e, std::move(alpha), col);
      }
      case ExprKind::laplacian: {  // of a field: its terms, each one order higher
        const Expr& f = e->args[0];
        Expr sum = num(0, col);
        for (const auto& [term_alpha, c] : laplacian_terms(e->order, spatial_, num_coords)) {
          MultiIndex alpha = term_alpha;
          ++alpha[static_cast<std::size_t>(i)];
          const Expr term = derivative(f, std::move(alpha), col);
          sum = add(sum, mul(num(c, col), term, col), col);
        }
        return sum;
      }
      case ExprKind::neg:
        return neg(d(e->args[0], i), col);
      case ExprKind::add:
        return add(d(e->args[0], i), d(e->args[1], i), col);
      case ExprKind::sub:
        return sub(d(e->args[0], i), d(e->args[1], i), col);
      case ExprKind::mul: {
        const Expr &a = e->args[0], &b = e->args[1];
        return add(mul(d(a, i), b, col), mul(a, d(b, i), col), col);
      }
      case ExprKind::div: {
        const Expr &a = e->args[0], &b = e->args[1];
        return sub(quot(d(a, i), b, col), quot(mul(a, d(b, i), col), mul(b, b, col), col), col);
      }
      case ExprKind::pow:
        return d_pow(e, i);
      case ExprKind::call:
        return d_call(e, i);
      default:
        throw InternalError("expand: derivative of a node outside the core form");
    }
  }

  Expr d_pow(const Expr& e, int i) {
    const int col = e->column;
    const Expr &a = e->args[0], &b = e->args[1];
    double c = 0.0;
    if (constant_value(b, &c))  // (a^c)' = c a^(c-1) a'
      return mul(mul(num(c, col), power(a, num(c - 1, col), col), col), d(a, i), col);
    // (a^b)' = a^b (b' log a + b a'/a)
    const Expr rate = add(mul(d(b, i), make_call(function_of<functions::Log>(), {a}, col), col),
                          quot(mul(b, d(a, i), col), a, col), col);
    return mul(e, rate, col);
  }

  // The record's derivative along the arguments' derivatives (autodiff/functions.h); defined
  // below call<F>(), which the records' formulas instantiate (clang needs its definition first).
  Expr d_call(const Expr& e, int i);

 public:
  // The constructors of Term's arithmetic and calls.
  Expr term_number(double v, int col) { return num(v, col); }
  Expr term_neg(const Expr& a, int col) { return neg(a, col); }
  Expr term_binary(ExprKind kind, const Expr& a, const Expr& b, int col) {
    switch (kind) {
      case ExprKind::add:
        return add(a, b, col);
      case ExprKind::sub:
        return sub(a, b, col);
      case ExprKind::mul:
        return mul(a, b, col);
      default:
        return quot(a, b, col);
    }
  }
  Expr term_call(Function f, std::vector<Expr> args, int col) {
    return make_call(f, std::move(args), col);
  }

 private:
  bool depends(const Expr& e) { return equations::depends(e, depends_); }

  const Context& ctx_;
  const detail::Source& source_;
  std::vector<int> spatial_;
  std::unordered_map<Key, Expr, KeyHash> interned_;
  std::map<std::pair<const ExprNode*, int>, Expr> derivatives_;
  std::unordered_map<const ExprNode*, bool> depends_;
  int focus_ = 0;
};

Term binary(ExprKind kind, const Term& a, const Term& b) {
  return {a.x, a.x->term_binary(kind, a.e, b.e, a.col), a.col};
}
Term number(const Term& like, double v) {
  return {like.x, like.x->term_number(v, like.col), like.col};
}
Term operator+(const Term& a, const Term& b) { return binary(ExprKind::add, a, b); }
Term operator-(const Term& a, const Term& b) { return binary(ExprKind::sub, a, b); }
Term operator*(const Term& a, const Term& b) { return binary(ExprKind::mul, a, b); }
Term operator/(const Term& a, const Term& b) { return binary(ExprKind::div, a, b); }
Term operator-(const Term& a) { return {a.x, a.x->term_neg(a.e, a.col), a.col}; }
Term operator+(double a, const Term& b) { return number(b, a) + b; }
Term operator+(const Term& a, double b) { return a + number(a, b); }
Term operator-(double a, const Term& b) { return number(b, a) - b; }
Term operator-(const Term& a, double b) { return a - number(a, b); }
Term operator*(double a, const Term& b) { return number(b, a) * b; }
[[maybe_unused]] Term operator*(const Term& a, double b) { return a * number(a, b); }
Term operator/(double a, const Term& b) { return number(b, a) / b; }
[[maybe_unused]] Term operator/(const Term& a, double b) { return a / number(a, b); }

template <class F, class... A>
Term call(const Term& first, const A&... rest) {
  const std::array<const Term*, sizeof...(A) + 1> args{&first, &rest...};
  std::vector<Expr> exprs;
  std::array<double, sizeof...(A) + 1> values{};
  bool numbers = true;
  for (std::size_t j = 0; j < args.size(); ++j) {
    exprs.push_back(args[j]->e);
    numbers = numbers && args[j]->e->kind == ExprKind::number;
    if (numbers) values[j] = args[j]->e->value;
  }
  if (numbers) return number(first, functions::eval(functions::index_of<F>(), values));
  if constexpr (std::is_same_v<F, functions::Where>)  // where(c, a, a) is a
    if (exprs[1] == exprs[2]) return {first.x, exprs[1], first.col};
  return {first.x, first.x->term_call(function_of<F>(), std::move(exprs), first.col), first.col};
}

Expr Expander::d_call(const Expr& e, int i) {
  const int col = e->column;
  return functions::visit(static_cast<std::size_t>(e->function), [&]<class F>() {
    std::array<Term, F::arity> a, da;
    for (std::size_t j = 0; j < a.size(); ++j) {
      a[j] = Term{this, e->args[j], col};
      // A condition is not differentiated (where(n_x > 0, u, 0) has a derivative).
      const bool data = functions::is_data<F>(static_cast<int>(j));
      da[j] = Term{this, data ? num(0, col) : d(e->args[j], i), col};
    }
    return functions::jvp<F, Term>(a, da).e;
  });
}

}  // namespace

Expr expand(const Expr& e, const Context& ctx, const detail::Source& source) {
  return Expander(ctx, source).scalar(e);
}

}  // namespace jetpde::equations
