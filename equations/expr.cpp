// Expr nodes: factories, structural equality, printing back to the language, constant values.
#include "equations/expr.h"

#include <algorithm>
#include <cmath>

#include "autodiff/errors.h"
#include "autodiff/text.h"
#include "equations/limits.h"

namespace jetpde::equations {

const char* function_name(Function f) {
  return functions::infos().at(static_cast<std::size_t>(f)).name;
}

Expr Expr::make(ExprNode node) {
  node.depth = 1;
  node.size = 1;
  for (const Expr& a : node.args) {
    node.depth = std::max(node.depth, a->depth + 1);
    node.size = std::min(node.size + a->size, ExprNode::kSizeSaturation);
  }
  return Expr(std::make_shared<const ExprNode>(std::move(node)));
}

Expr Expr::number(double value, int column) {
  ExprNode n;
  n.kind = ExprKind::number;
  n.value = value;
  n.column = column;
  return make(std::move(n));
}

namespace {
ExprNode symbol(ExprKind kind, std::string name, double value, int index, int column) {
  ExprNode n;
  n.kind = kind;
  n.name = std::move(name);
  n.value = value;
  n.index = index;
  n.column = column;
  return n;
}
}  // namespace

Expr Expr::constant(std::string name, double value, int column) {
  return make(symbol(ExprKind::constant, std::move(name), value, -1, column));
}

Expr Expr::param(std::string name, double initial, int column) {
  return make(symbol(ExprKind::param, std::move(name), initial, -1, column));
}

Expr Expr::coordinate(std::string name, int index, int column) {
  return make(symbol(ExprKind::coordinate, std::move(name), 0.0, index, column));
}

Expr Expr::field(std::string name, int index, int column) {
  return make(symbol(ExprKind::field, std::move(name), 0.0, index, column));
}

Expr Expr::derivative(std::string field, int index, MultiIndex alpha,
                      std::vector<std::string> coordinates, int column) {
  if (degree(alpha) == 0) return Expr::field(std::move(field), index, column);
  ExprNode n = symbol(ExprKind::derivative, std::move(field), 0.0, index, column);
  n.alpha = std::move(alpha);
  n.coordinates = std::move(coordinates);
  return make(std::move(n));
}

Expr Expr::normal(int column) {
  ExprNode n = symbol(ExprKind::normal, "n", 0.0, -1, column);
  n.vector = true;
  return make(std::move(n));
}

Expr Expr::normal_component(std::string coordinate, int component, int column) {
  return make(symbol(ExprKind::normal_component, std::move(coordinate), 0.0, component, column));
}

Expr Expr::unary(ExprKind kind, Expr operand, int column) {
  check_internal(kind == ExprKind::neg || kind == ExprKind::grad || kind == ExprKind::divergence,
                 "Expr::unary: not a unary kind");
  ExprNode n;
  n.kind = kind;
  n.column = column;
  n.vector = kind == ExprKind::grad || (kind == ExprKind::neg && operand->vector);
  n.args = {std::move(operand)};
  return make(std::move(n));
}

Expr Expr::binary(ExprKind kind, Expr a, Expr b, int column) {
  ExprNode n;
  n.kind = kind;
  n.column = column;
  switch (kind) {
    case ExprKind::add:
    case ExprKind::sub:
    case ExprKind::div:
      n.vector = a->vector;
      break;
    case ExprKind::mul:
      n.vector = a->vector || b->vector;
      break;
    case ExprKind::pow:
    case ExprKind::dot:
      break;
    default:
      throw InternalError("Expr::binary: not a binary kind");
  }
  n.args = {std::move(a), std::move(b)};
  return make(std::move(n));
}

Expr Expr::call(Function function, std::vector<Expr> args, int column) {
  ExprNode n;
  n.kind = ExprKind::call;
  n.function = function;
  n.column = column;
  n.args = std::move(args);
  return make(std::move(n));
}

Expr Expr::call(Function function, Expr operand, int column) {
  return call(function, std::vector<Expr>{std::move(operand)}, column);
}

Expr Expr::diff(Expr operand, MultiIndex alpha, std::vector<std::string> coordinates, int column) {
  ExprNode n;
  n.kind = ExprKind::diff;
  n.alpha = std::move(alpha);
  n.coordinates = std::move(coordinates);
  n.column = column;
  n.args = {std::move(operand)};
  return make(std::move(n));
}

Expr Expr::laplacian(Expr operand, int order, int column) {
  ExprNode n;
  n.kind = ExprKind::laplacian;
  n.order = order;
  n.column = column;
  n.args = {std::move(operand)};
  return make(std::move(n));
}

Expr Expr::vec(std::vector<Expr> components, int column) {
  ExprNode n;
  n.kind = ExprKind::vec;
  n.column = column;
  n.vector = true;
  n.args = std::move(components);
  return make(std::move(n));
}

Expr Expr::relocated(int column) const {
  ExprNode n = *node_;
  n.column = column;
  for (Expr& a : n.args) a = a.relocated(column);
  return make(std::move(n));
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.node_ == b.node_) return true;
  if (!a || !b) return false;
  const ExprNode &x = *a, &y = *b;
  if (x.kind != y.kind || x.name != y.name || x.index != y.index || x.order != y.order ||
      x.alpha != y.alpha || x.args.size() != y.args.size())
    return false;
  if (x.kind == ExprKind::call && x.function != y.function) return false;
  if ((x.kind == ExprKind::number || x.kind == ExprKind::constant || x.kind == ExprKind::param) &&
      x.value != y.value)
    return false;
  for (std::size_t i = 0; i < x.args.size(); ++i)
    if (!(x.args[i] == y.args[i])) return false;
  return true;
}

// ---- printing ---------------------------------------------------------------------------------

namespace {

// Binding strength, as in the grammar: or -3 < and -2 < not -1 < comparisons 0 (the operators'
// levels in their records) < sums 1 < products 2 < unary minus 3 < powers 4 < atoms 5.
const functions::Info& info(Function f) {
  return functions::infos().at(static_cast<std::size_t>(f));
}

int precedence(const Expr& e) {
  switch (e->kind) {
    case ExprKind::call:
      return info(e->function).symbol ? info(e->function).level : 5;
    case ExprKind::add:
    case ExprKind::sub:
      return 1;
    case ExprKind::mul:
    case ExprKind::div:
      return 2;
    case ExprKind::neg:
      return 3;
    case ExprKind::pow:
      return 4;
    case ExprKind::number:
      return e->value < 0 || std::signbit(e->value) ? 3 : 5;
    default:
      return 5;
  }
}

std::string wrap(const Expr& e, bool parens) { return parens ? "(" + e.str() + ")" : e.str(); }

// An operator call: `not a`, `a < b` (comparisons do not chain), `a and b`, `a or b`.
std::string operator_text(const ExprNode& n) {
  const functions::Info& f = info(n.function);
  if (n.args.size() == 1)
    return std::string(f.symbol) + " " + wrap(n.args[0], precedence(n.args[0]) < f.level);
  const Expr &a = n.args[0], &b = n.args[1];
  const bool chainless = f.level == 0;  // a < b < c is not in the language
  return wrap(a, precedence(a) < f.level || (chainless && precedence(a) == f.level)) + " " +
         f.symbol + " " + wrap(b, precedence(b) <= f.level);
}

// "u_xt" when every coordinate involved has a one-letter name and the order is at most 3;
// otherwise the d() form, "d(u, x, 4)", "d(u, x, 2, y)".
std::string derivative_text(const std::string& operand, const ExprNode& n, bool allow_shorthand) {
  bool shorthand = allow_shorthand && degree(n.alpha) <= 3;
  for (std::size_t i = 0; i < n.alpha.size(); ++i)
    if (n.alpha[i] > 0 && n.coordinates.at(i).size() != 1) shorthand = false;
  std::string s;
  if (shorthand) {
    s = operand + "_";
    for (std::size_t i = 0; i < n.alpha.size(); ++i) s.append(n.alpha[i], n.coordinates[i][0]);
    return s;
  }
  s = "d(" + operand;
  for (std::size_t i = 0; i < n.alpha.size(); ++i) {
    if (n.alpha[i] == 0) continue;
    s += ", " + n.coordinates.at(i);
    if (n.alpha[i] > 1) s += ", " + std::to_string(n.alpha[i]);
  }
  return s + ")";
}

std::string call_text(const std::string& name, const std::vector<Expr>& args) {
  std::string s = name + "(";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i].str();
  return s + ")";
}

// The operators down the left side of a chain of one precedence: 2 for (a + b) - c.
int left_run(const Expr& e, int prec) {
  int n = 0;
  for (const Expr* x = &e; precedence(*x) == prec; x = &(*x)->args[0]) ++n;
  return n;
}

// The parser combines a chain of more than limits::kChainRun operands as a balanced tree of runs
// (equations/limits.h); a left operand whose own chain is that long is put in parentheses, so
// that the text parses back to the same tree.
bool run_ends(const Expr& a, int prec) { return left_run(a, prec) >= limits::kChainRun; }

std::string binary_text(const ExprNode& n) {
  const Expr &a = n.args[0], &b = n.args[1];
  const int pa = precedence(a), pb = precedence(b);
  switch (n.kind) {
    case ExprKind::add:
      return wrap(a, pa < 1 || run_ends(a, 1)) + " + " + wrap(b, pb <= 1);
    case ExprKind::sub:
      return wrap(a, pa < 1 || run_ends(a, 1)) + " - " + wrap(b, pb <= 1);
    case ExprKind::mul:
      return wrap(a, pa < 2 || run_ends(a, 2)) + "*" + wrap(b, pb <= 2);
    case ExprKind::div:
      return wrap(a, pa < 2 || run_ends(a, 2)) + "/" + wrap(b, pb <= 2);
    case ExprKind::pow:  // right-associative; the exponent may carry a unary minus
      return wrap(a, pa <= 4) + "^" + wrap(b, pb < 3);
    default:
      throw InternalError("binary_text: not a binary operator");
  }
}

}  // namespace

std::string Expr::str() const {
  if (!node_) return "<null>";
  const ExprNode& n = *node_;
  switch (n.kind) {
    case ExprKind::number:
      return exact_text(n.value);
    case ExprKind::constant:
    case ExprKind::param:
    case ExprKind::coordinate:
    case ExprKind::field:
    case ExprKind::normal:
      return n.name;
    case ExprKind::derivative:
      return derivative_text(n.name, n, true);
    case ExprKind::normal_component:
      return "n_" + n.name;
    case ExprKind::neg:
      return "-" + wrap(n.args[0], precedence(n.args[0]) < 3);
    case ExprKind::add:
    case ExprKind::sub:
    case ExprKind::mul:
    case ExprKind::div:
    case ExprKind::pow:
      return binary_text(n);
    case ExprKind::call:
      if (info(n.function).symbol) return operator_text(n);
      return call_text(function_name(n.function), n.args);
    case ExprKind::diff:
      return derivative_text(n.args[0].str(), n, false);
    case ExprKind::laplacian: {
      std::string s = n.args[0].str();
      for (int k = 0; k < n.order; ++k) s = "laplacian(" + s + ")";
      return s;
    }
    case ExprKind::grad:
      return call_text("grad", n.args);
    case ExprKind::divergence:
      return call_text("div", n.args);
    case ExprKind::dot:
      return call_text("dot", n.args);
    case ExprKind::vec:
      return call_text("vec", n.args);
  }
  return "?";
}

// ---- constant values --------------------------------------------------------------------------

bool constant_value(const Expr& e, double* value) {
  double a = 0.0, b = 0.0;
  switch (e->kind) {
    case ExprKind::number:
    case ExprKind::constant:
      *value = e->value;
      return true;
    case ExprKind::neg:
      if (!constant_value(e->args[0], &a)) return false;
      *value = -a;
      return true;
    case ExprKind::call: {
      std::vector<double> args(e->args.size());
      for (std::size_t i = 0; i < args.size(); ++i)
        if (!constant_value(e->args[i], &args[i])) return false;
      *value = functions::eval(static_cast<std::size_t>(e->function), args);
      return true;
    }
    case ExprKind::add:
    case ExprKind::sub:
    case ExprKind::mul:
    case ExprKind::div:
    case ExprKind::pow:
      if (e->vector || !constant_value(e->args[0], &a) || !constant_value(e->args[1], &b))
        return false;
      *value = e->kind == ExprKind::add   ? a + b
               : e->kind == ExprKind::sub ? a - b
               : e->kind == ExprKind::mul ? a * b
               : e->kind == ExprKind::div ? a / b
                                          : std::pow(a, b);
      return true;
    default:
      return false;
  }
}

}  // namespace jetpde::equations
