// Recursive-descent parser: one function per grammar rule (see parser.h), name resolution, and
// the rank (scalar or vector) checks of every operator and call.
#include "equations/parser.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

#include "autodiff/errors.h"
#include "equations/expand.h"
#include "equations/lexer.h"
#include "equations/limits.h"

namespace jetpde::equations {

namespace {

using detail::fail;
using detail::join;
using detail::Source;

struct FunctionInfo {
  std::string name;
  std::optional<Function> function;  // the scalar functions (autodiff/functions.h)
  int arity = 1;
};

// The scalar functions, from their records, then the calls the parser builds itself.
const std::vector<FunctionInfo>& function_table() {
  static const std::vector<FunctionInfo> table = [] {
    std::vector<FunctionInfo> t;
    const auto& records = functions::infos();
    for (std::size_t i = 0; i < records.size(); ++i)
      if (!records[i].symbol)
        t.push_back({records[i].name, static_cast<Function>(i), records[i].arity});
    for (const char* special : {"d", "laplacian", "grad", "div", "dot", "vec"})
      t.push_back({special, std::nullopt, 1});
    return t;
  }();
  return table;
}

const FunctionInfo* find_function(const std::string& name) {
  for (const FunctionInfo& f : function_table())
    if (name == f.name) return &f;
  return nullptr;
}

std::string function_list() {
  std::vector<std::string> names;
  for (const FunctionInfo& f : function_table()) names.push_back(f.name);
  return join(names);
}

// The operator record spelled `symbol` (< <= > >= == != not and or).
Function operator_function(const std::string& symbol) {
  const auto& records = functions::infos();
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].symbol && symbol == records[i].symbol) return static_cast<Function>(i);
  throw InternalError("no operator '" + symbol + "'");
}

bool is_keyword(const Token& t, const char* word) {
  return t.kind == TokenKind::name && t.text == word;
}

std::vector<std::string> names_of(const Context& ctx, SymbolKind kind) {
  std::vector<std::string> out;
  for (const Symbol* s : ctx.symbols(kind)) out.push_back(s->name);
  return out;
}

// "fields: u; coordinates: x, t; constants: nu", empty categories after the first two left out.
std::string symbol_listing(const Context& ctx) {
  std::string s =
      "fields: " + join(ctx.field_names()) + "; coordinates: " + join(ctx.coordinate_names());
  for (SymbolKind kind : {SymbolKind::constant, SymbolKind::param, SymbolKind::definition}) {
    const std::vector<std::string> names = names_of(ctx, kind);
    if (!names.empty()) s += "; " + std::string(symbol_kind_name(kind)) + "s: " + join(names);
  }
  return s;
}

std::string plural(std::size_t count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

// An expression quoted in a message: its text, cut after 100 characters.
std::string shown(const Expr& e) {
  std::string s = e.str();
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

std::string depth_message() {
  return "the expression is nested more than " + std::to_string(limits::kMaxDepth) +
         " levels deep here (parentheses, function calls, signs, powers and definitions each add "
         "levels); the limit is " +
         std::to_string(limits::kMaxDepth);
}

std::string size_message() {
  return "the expression has more than " + std::to_string(limits::kMaxNodes) +
         " nodes here (definitions count where they are used); the limit is " +
         std::to_string(limits::kMaxNodes);
}

using limits::kChainRun;

// The inverse of a chain operator: '-' for '+', '/' for '*' and back.
ExprKind inverse(ExprKind k) {
  switch (k) {
    case ExprKind::add:
      return ExprKind::sub;
    case ExprKind::sub:
      return ExprKind::add;
    case ExprKind::mul:
      return ExprKind::div;
    default:
      return ExprKind::mul;
  }
}
bool inverting(ExprKind k) { return k == ExprKind::sub || k == ExprKind::div; }

// A chain of runs: runs[0] op[1] runs[1] op[2] runs[2] ..., where each run is a left-to-right
// chain whose operators are relative to its first operand (a - (b - c) for a - b + c).
struct Chain {
  std::vector<Expr> runs;
  std::vector<ExprKind> ops;  // ops[i] joins runs[i] to what precedes it (ops[0] unused)
  std::vector<int> columns;   // the operator's column
  Expr run;                   // the run being built
  ExprKind run_op = ExprKind::add;
  int run_column = 0;
  int run_length = 0;
  std::int64_t size = 0;  // nodes of the whole chain

  // Combines runs [lo, hi) as a balanced tree; `flip` inverts the operators between them.
  Expr build(std::size_t lo, std::size_t hi, bool flip) const {
    if (hi - lo == 1) return runs[lo];
    const std::size_t mid = lo + (hi - lo) / 2;
    const ExprKind op = flip ? inverse(ops[mid]) : ops[mid];
    return Expr::binary(op, build(lo, mid, flip), build(mid, hi, flip != inverting(op)),
                        columns[mid]);
  }
};

class Parser {
 public:
  Parser(const Source& source, const Context& ctx)
      : source_(source), ctx_(ctx), tokens_(lex(source)) {}

  // equation := expr [ '=' expr ], then the end.
  Expr equation(bool allow_equals) {
    Expr e = expression();
    if (allow_equals && peek().kind == TokenKind::equals) {
      const Token eq = next();
      Expr rhs = expression();
      check_same_rank(e, rhs, eq.column, "equate", "=");
      e = Expr::binary(ExprKind::sub, std::move(e), std::move(rhs), eq.column);
    }
    expect_end(allow_equals);
    return e;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  Token next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    ++pos_;
    return true;
  }

  void expect_end(bool allow_equals) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::end:
        return;
      case TokenKind::rparen:
        fail(source_, t.column, "unmatched ')'");
      case TokenKind::equals:
        fail(source_, t.column,
             allow_equals ? "a second '=' (one equation per expression)"
                          : "a definition is an expression, not an equation: '=' is not allowed");
      case TokenKind::number:
      case TokenKind::name:
      case TokenKind::lparen:
        fail(source_, t.column,
             "unexpected " + describe(t) + " after a complete expression (a product needs '*')");
      default:
        fail(source_, t.column, "unexpected " + describe(t));
    }
  }

  // expr := conjunction { 'or' conjunction }
  Expr expression() {
    Expr e = conjunction();
    while (is_keyword(peek(), "or")) {
      const Token op = next();
      e = logical(op, std::move(e), conjunction());
    }
    return e;
  }

  // conjunction := negation { 'and' negation }
  Expr conjunction() {
    Expr e = negation();
    while (is_keyword(peek(), "and")) {
      const Token op = next();
      e = logical(op, std::move(e), negation());
    }
    return e;
  }

  // negation := 'not' negation | comparison
  Expr negation() {
    if (!is_keyword(peek(), "not")) return comparison();
    const DepthGuard guard(*this);
    const Token op = next();
    const int column = peek().column;
    Expr a = negation();
    want_scalar(op, a, column);
    return checked(Expr::call(operator_function(op.text), std::move(a), op.column), op.column);
  }

  // comparison := sum [ ('<' | '<=' | '>' | '>=' | '==' | '!=') sum ]: 1 where it holds, else 0
  Expr comparison() {
    const int column = peek().column;
    Expr e = sum();
    if (peek().kind != TokenKind::compare) return e;
    const Token op = next();
    const int rhs_column = peek().column;
    Expr rhs = sum();
    want_scalar(op, e, column);
    want_scalar(op, rhs, rhs_column);
    if (peek().kind == TokenKind::compare)
      fail(source_, peek().column,
           "comparisons do not chain: write 'a " + op.text + " b and b " + peek().text + " c'");
    return checked(
        Expr::call(operator_function(op.text), {std::move(e), std::move(rhs)}, op.column),
        op.column);
  }

  Expr logical(const Token& op, Expr a, Expr b) {
    for (const Expr* e : {&a, &b})
      if ((*e)->vector)
        fail(source_, op.column,
             "'" + op.text + "' takes scalars, but '" + shown(*e) + "' is a vector");
    return checked(Expr::call(operator_function(op.text), {std::move(a), std::move(b)}, op.column),
                   op.column);
  }

  void want_scalar(const Token& op, const Expr& e, int column) {
    if (e->vector)
      fail(source_, column, "'" + op.text + "' takes scalars, but '" + shown(e) + "' is a vector");
  }

  // sum := term { ('+' | '-') term }
  Expr sum() {
    Chain chain;
    chain.run = term();
    while (peek().kind == TokenKind::plus || peek().kind == TokenKind::minus) {
      const Token op = next();
      Expr rhs = term();
      const bool add = op.kind == TokenKind::plus;
      check_same_rank(chain.run, rhs, op.column, add ? "add" : "subtract", op.text);
      extend(chain, add ? ExprKind::add : ExprKind::sub, std::move(rhs), op.column);
    }
    return finish(chain);
  }

  // term := unary { ('*' | '/') unary }
  Expr term() {
    Chain chain;
    chain.run = unary();
    bool vector = chain.run->vector;  // of the whole chain
    while (peek().kind == TokenKind::star || peek().kind == TokenKind::slash) {
      const Token op = next();
      Expr rhs = unary();
      if (op.kind == TokenKind::star && vector && rhs->vector)
        fail(source_, op.column, "cannot multiply two vectors; use dot(v, w)");
      if (op.kind == TokenKind::slash && rhs->vector)
        fail(source_, op.column, "cannot divide by a vector ('" + shown(rhs) + "')");
      vector = vector || rhs->vector;
      extend(chain, op.kind == TokenKind::star ? ExprKind::mul : ExprKind::div, std::move(rhs),
             op.column);
    }
    return finish(chain);
  }

  // Appends `op rhs` to a chain: to the current run, or as the first operand of a new one. A run
  // of a product starts only at a '*': inverting the operators of a run that starts at a '/'
  // would put a vector factor in a denominator (x/2*grad(u) is not x/(2/grad(u)) as a tree).
  void extend(Chain& chain, ExprKind op, Expr rhs, int column) {
    if (chain.size == 0) chain.size = chain.run->size;
    chain.size += rhs->size + 1;
    if (chain.size > limits::kMaxNodes) fail(source_, column, size_message());
    if (chain.run_length + 1 < kChainRun || op == ExprKind::div) {
      ++chain.run_length;
      const ExprKind k = inverting(chain.run_op) ? inverse(op) : op;
      chain.run = checked(Expr::binary(k, std::move(chain.run), std::move(rhs), column), column);
      return;
    }
    chain.runs.push_back(std::move(chain.run));
    chain.ops.push_back(chain.run_op);
    chain.columns.push_back(chain.run_column);
    chain.run = std::move(rhs);
    chain.run_op = op;
    chain.run_column = column;
    chain.run_length = 0;
  }

  Expr finish(Chain& chain) {
    if (chain.runs.empty()) return std::move(chain.run);
    chain.runs.push_back(std::move(chain.run));
    chain.ops.push_back(chain.run_op);
    chain.columns.push_back(chain.run_column);
    Expr e = chain.build(0, chain.runs.size(), false);
    return checked(std::move(e), chain.columns[1]);
  }

  // unary := ('-' | '+') unary | power
  Expr unary() {
    const DepthGuard guard(*this);
    if (peek().kind == TokenKind::minus) {
      const Token op = next();
      return checked(Expr::unary(ExprKind::neg, unary(), op.column), op.column);
    }
    if (accept(TokenKind::plus)) return unary();
    return power();
  }

  // power := primary [ '^' unary ]
  Expr power() {
    Expr base = primary();
    if (peek().kind != TokenKind::caret) return base;
    const Token op = next();
    Expr exponent = unary();
    for (const Expr* e : {&base, &exponent})
      if ((*e)->vector)
        fail(source_, op.column, "'^' takes scalars, but '" + shown(*e) + "' is a vector");
    return checked(Expr::binary(ExprKind::pow, std::move(base), std::move(exponent), op.column),
                   op.column);
  }

  // The parser's own recursion: every nesting level passes through unary().
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > limits::kMaxDepth)
        fail(parser.source_, parser.peek().column, depth_message());
    }
    ~DepthGuard() { --parser.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Parser& parser;
  };

  // `e`, built at `column`, within the depth and size limits.
  Expr checked(Expr e, int column) {
    if (e->depth > limits::kMaxDepth) fail(source_, column, depth_message());
    if (e->size > limits::kMaxNodes) fail(source_, column, size_message());
    return e;
  }

  // primary := number | name | name '(' args ')' | '(' expr ')'
  Expr primary() {
    const Token t = next();
    switch (t.kind) {
      case TokenKind::number:
        return Expr::number(t.value, t.column);
      case TokenKind::name:
        if (peek().kind == TokenKind::lparen) return call(t);
        return resolve(t);
      case TokenKind::lparen: {
        Expr e = expression();
        close(t);
        return e;
      }
      default:
        fail(source_, t.column, "expected an expression, found " + describe(t));
    }
  }

  // Consumes the ')' that closes `open`.
  void close(const Token& open) {
    if (accept(TokenKind::rparen)) return;
    const Token& t = peek();
    if (t.kind == TokenKind::end) fail(source_, open.column, "unclosed '('");
    fail(source_, t.column,
         "expected ')' to close the '(' at column " + std::to_string(open.column) + ", found " +
             describe(t));
  }

  // `a op b` must be two scalars or two vectors.
  void check_same_rank(const Expr& a, const Expr& b, int column, const std::string& verb,
                       const std::string& op) {
    if (a->vector == b->vector) return;
    const std::string kinds = a->vector ? "a vector and a scalar" : "a scalar and a vector";
    fail(source_, column,
         "cannot " + verb + " " + kinds + " ('" + shown(a) + "' " + op + " '" + shown(b) + "')");
  }

  // ---- names --------------------------------------------------------------------------------

  Expr resolve(const Token& t) {
    const std::string& name = t.text;
    if (name == "pi") return Expr::constant("pi", std::numbers::pi, t.column);
    if (name == "n") return normal(t.column);
    if (name == "and" || name == "or" || name == "not") {
      const char* example = name == "and"  ? "x > 0 and y < 1"
                            : name == "or" ? "x < 0 or x > 1"
                                           : "not x > 0";
      fail(source_, t.column,
           "'" + name + "' is a logical operator, not a value (as in " + example + ")");
    }
    if (find_function(name))
      fail(source_, t.column, "'" + name + "' is a function; call it as " + name + "(...)");
    if (const Symbol* s = ctx_.find(name)) return symbol(*s, t.column);
    const std::size_t us = name.rfind('_');
    if (us != std::string::npos && us > 0 && us + 1 < name.size()) {
      const std::string base = name.substr(0, us), suffix = name.substr(us + 1);
      const int suffix_column = t.column + static_cast<int>(us) + 1;
      if (base == "n") return normal_component(suffix, t.column, suffix_column);
      const Symbol* b = ctx_.find(base);
      if (b && b->kind == SymbolKind::field) return shorthand(*b, suffix, t, suffix_column);
      if (b)
        fail(source_, t.column,
             "'" + base + "' is a " + symbol_kind_name(b->kind) +
                 ", not a field; the derivative shorthand '" + name +
                 "' applies to fields (fields: " + join(ctx_.field_names()) + ")");
      if (all_coordinate_letters(suffix))
        fail(source_, t.column,
             "unknown field '" + base + "' (fields: " + join(ctx_.field_names()) + ")");
    }
    fail(source_, t.column, "unknown name '" + name + "' (" + symbol_listing(ctx_) + ")");
  }

  Expr symbol(const Symbol& s, int column) {
    switch (s.kind) {
      case SymbolKind::field:
        return Expr::field(s.name, s.index, column);
      case SymbolKind::coordinate:
        return Expr::coordinate(s.name, s.index, column);
      case SymbolKind::constant:
        return Expr::constant(s.name, s.value, column);
      case SymbolKind::param:
        return Expr::param(s.name, s.value, column);
      case SymbolKind::definition:
        return checked(s.expr.relocated(column), column);
    }
    fail(source_, column, "unknown symbol kind");
  }

  Expr normal(int column) {
    if (ctx_.spatial().empty())
      fail(source_, column, "the normal n needs a spatial coordinate; none is declared");
    return Expr::normal(column);
  }

  Expr normal_component(const std::string& coordinate, int column, int suffix_column) {
    const std::vector<std::string> spatial = ctx_.spatial_names();
    const auto it = std::find(spatial.begin(), spatial.end(), coordinate);
    if (it == spatial.end())
      fail(source_, suffix_column,
           "'" + coordinate + "' in 'n_" + coordinate +
               "' is not a spatial coordinate (spatial coordinates: " + join(spatial) + ")");
    return Expr::normal_component(coordinate, static_cast<int>(it - spatial.begin()), column);
  }

  bool all_coordinate_letters(const std::string& suffix) const {
    return std::all_of(suffix.begin(), suffix.end(),
                       [&](char c) { return ctx_.coordinate_index(std::string(1, c)) >= 0; });
  }

  // u_xt: one letter per coordinate.
  Expr shorthand(const Symbol& field, const std::string& suffix, const Token& t,
                 int suffix_column) {
    const std::vector<std::string>& coords = ctx_.coordinate_names();
    MultiIndex alpha(coords.size(), 0);
    for (std::size_t k = 0; k < suffix.size(); ++k) {
      const std::string letter(1, suffix[k]);
      const int i = ctx_.coordinate_index(letter);
      if (i < 0) {
        auto longer = std::find_if(coords.begin(), coords.end(),
                                   [](const std::string& c) { return c.size() > 1; });
        const std::string example = longer != coords.end() ? *longer : coords.at(0);
        fail(source_, suffix_column + static_cast<int>(k),
             "'" + letter + "' in '" + t.text +
                 "' is not a coordinate (coordinates: " + join(coords) +
                 "); the shorthand takes one letter per coordinate, so multi-letter "
                 "coordinates need d(), as in d(" +
                 field.name + ", " + example + ")");
      }
      ++alpha[static_cast<std::size_t>(i)];
    }
    check_order(alpha, t.column, t.text);
    return Expr::derivative(field.name, field.index, alpha, coords, t.column);
  }

  // ---- calls --------------------------------------------------------------------------------

  Expr call(const Token& name) {
    const FunctionInfo* f = find_function(name.text);
    if (!f) {
      if (const Symbol* s = ctx_.find(name.text))
        fail(source_, name.column,
             "'" + name.text + "' is a " + symbol_kind_name(s->kind) + ", not a function");
      fail(source_, name.column,
           "unknown function '" + name.text + "' (functions: " + function_list() + ")");
    }
    if (name.text == "d") return d_call(name);
    const Token open = next();  // '('
    std::vector<Expr> args;
    std::vector<int> columns;
    if (peek().kind != TokenKind::rparen) {
      do {
        columns.push_back(peek().column);
        args.push_back(expression());
      } while (accept(TokenKind::comma));
    }
    close(open);
    return checked(build_call(name, *f, std::move(args), columns), name.column);
  }

  void check_count(const Token& name, const std::vector<Expr>& args, std::size_t count,
                   const std::string& what) {
    if (args.size() != count)
      fail(source_, name.column,
           name.text + " takes " + plural(count, what) + ", found " + std::to_string(args.size()));
  }

  void want_rank(const Token& name, const Expr& arg, int column, bool vector) {
    if (arg->vector == vector) return;
    std::string hint;
    if (name.text == "div") hint = " (div(grad(u)) is the Laplacian of u)";
    if (name.text == "dot") hint = " (dot(n, grad(u)) is the normal derivative of u)";
    fail(source_, column,
         name.text + " takes " + (vector ? "a vector" : "a scalar") + ", but '" + shown(arg) +
             "' is " + (vector ? "a scalar" : "a vector") + hint);
  }

  Expr build_call(const Token& name, const FunctionInfo& f, std::vector<Expr> args,
                  const std::vector<int>& columns) {
    const std::string& n = name.text;
    if (n == "vec") {
      const std::vector<std::string> spatial = ctx_.spatial_names();
      if (args.size() != spatial.size())
        fail(source_, name.column,
             "vec takes " + plural(spatial.size(), "component") + " (one per spatial coordinate: " +
                 join(spatial) + "), found " + std::to_string(args.size()));
      for (std::size_t i = 0; i < args.size(); ++i) want_rank(name, args[i], columns[i], false);
      return Expr::vec(std::move(args), name.column);
    }
    if (n == "dot") {
      check_count(name, args, 2, "argument");
      for (std::size_t i = 0; i < 2; ++i) want_rank(name, args[i], columns[i], true);
      return Expr::binary(ExprKind::dot, args[0], args[1], name.column);
    }
    check_count(name, args, static_cast<std::size_t>(f.arity), "argument");
    const bool takes_vector = n == "div";
    for (std::size_t i = 0; i < args.size(); ++i)
      want_rank(name, args[i], columns[i], takes_vector);
    if (f.function) return Expr::call(*f.function, std::move(args), name.column);
    if (n == "laplacian") {
      if (ctx_.spatial().empty())
        fail(source_, name.column, "laplacian needs a spatial coordinate; none is declared");
      return Expr::laplacian(std::move(args[0]), 1, name.column);
    }
    if (ctx_.spatial().empty())
      fail(source_, name.column, n + " needs a spatial coordinate; none is declared");
    return Expr::unary(n == "grad" ? ExprKind::grad : ExprKind::divergence, std::move(args[0]),
                       name.column);
  }

  // d(e, x [, k] {, y [, k]})
  Expr d_call(const Token& name) {
    const Token open = next();  // '('
    const int operand_column = peek().column;
    Expr operand = expression();
    if (operand->vector)
      fail(source_, operand_column,
           "d takes a scalar, but '" + shown(operand) +
               "' is a vector (take the derivatives of "
               "its components)");
    const std::vector<std::string>& coords = ctx_.coordinate_names();
    MultiIndex alpha(coords.size(), 0);
    if (peek().kind != TokenKind::comma)
      fail(
          source_, name.column,
          "d takes an expression and at least one coordinate, as in d(u, " + coords.at(0) + ", 2)");
    while (accept(TokenKind::comma)) {
      const Token c = next();
      if (c.kind != TokenKind::name)
        fail(source_, c.column,
             "expected a coordinate in d(), found " + describe(c) + " (d(u, " + coords.at(0) +
                 ", 2) is the second derivative in " + coords.at(0) + ")");
      const int i = ctx_.coordinate_index(c.text);
      if (i < 0)
        fail(source_, c.column,
             "unknown coordinate '" + c.text + "' in d() (coordinates: " + join(coords) + ")");
      alpha[static_cast<std::size_t>(i)] += order_after_coordinate();
    }
    close(open);
    return checked(make_derivative(std::move(operand), std::move(alpha), name.column), name.column);
  }

  // The optional ", k" after a coordinate in d(); 1 when absent.
  int order_after_coordinate() {
    if (peek().kind != TokenKind::comma || tokens_[pos_ + 1].kind != TokenKind::number) return 1;
    next();
    const Token k = next();
    if (k.value != std::floor(k.value) || k.value < 1 || k.value > 64)
      fail(source_, k.column,
           "the order of a derivative is an integer from 1 to 64, found '" + k.text + "'");
    return static_cast<int>(k.value);
  }

  // A derivative of a field (or of a field's derivative) is a derivative node; of anything else
  // a diff node that expand() resolves by the chain rule.
  Expr make_derivative(Expr operand, MultiIndex alpha, int column) {
    const std::vector<std::string>& coords = ctx_.coordinate_names();
    const ExprKind k = operand->kind;
    if (k == ExprKind::field || k == ExprKind::derivative || k == ExprKind::diff)
      if (!operand->alpha.empty())
        for (std::size_t i = 0; i < alpha.size(); ++i) alpha[i] += operand->alpha[i];
    check_order(alpha, column, "d()");
    if (k == ExprKind::field || k == ExprKind::derivative || k == ExprKind::diff) {
      if (k == ExprKind::diff) return Expr::diff(operand->args[0], alpha, coords, column);
      return Expr::derivative(operand->name, operand->index, alpha, coords, column);
    }
    return Expr::diff(std::move(operand), std::move(alpha), coords, column);
  }

  // The total order of a derivative, nested d() combined, within the limit.
  void check_order(const MultiIndex& alpha, int column, const std::string& what) {
    if (degree(alpha) <= limits::kMaxDerivativeOrder) return;
    fail(source_, column,
         what + " asks for a derivative of total order " + std::to_string(degree(alpha)) +
             " (multi-index " + multi_index_str(alpha) + " over " + join(ctx_.coordinate_names()) +
             "); the highest order is " + std::to_string(limits::kMaxDerivativeOrder));
  }

  const Source& source_;
  const Context& ctx_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // nesting of unary(), the parser's recursion
};

}  // namespace

Equation parse(const std::string& text, const Context& ctx, const std::string& name) {
  const Source source{text, ""};
  Expr expr = Parser(source, ctx).equation(true);
  if (expr->vector)
    fail(source, 0,
         "the equation is a vector ('" + shown(expr) +
             "'); a residual must be a scalar (dot(v, w) and div(v) make scalars)");
  Expr core = expand(expr, ctx, source);
  return Equation{name, text, std::move(expr), std::move(core)};
}

std::vector<Equation> parse_all(const std::vector<std::string>& texts, const Context& ctx) {
  std::vector<Equation> out;
  for (const std::string& t : texts) out.push_back(parse(t, ctx));
  return out;
}

Expr parse_definition(const std::string& text, const Context& ctx, const std::string& name) {
  const Source source{text, name};
  Expr expr = Parser(source, ctx).equation(false);
  if (!expr->vector) expand(expr, ctx, source);  // reports what expansion finds wrong, now
  return expr;
}

}  // namespace jetpde::equations
