#include "geometry/predicate.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "autodiff/errors.h"

namespace jetpde::geometry {
namespace {

enum class TokenKind { number, name, op, lparen, rparen, end };

struct Token {
  TokenKind kind;
  std::string text;
  double value = 0;
  int column = 0;  // 1-based
};

using Number = std::function<double(Point)>;

class Parser {
 public:
  Parser(const std::string& text, const std::vector<std::string>& names, double tolerance)
      : text_(text), names_(names), tol_(tolerance) {
    lex();
  }

  PointPredicate parse() {
    PointPredicate result = parse_or();
    if (peek().kind != TokenKind::end) fail(peek(), "unexpected " + describe(peek()));
    return result;
  }

 private:
  [[noreturn]] void fail(int column, const std::string& what) const {
    throw UserError("predicate '" + text_ + "', column " + std::to_string(column) + ": " + what);
  }
  [[noreturn]] void fail(const Token& token, const std::string& what) const {
    fail(token.column, what);
  }
  static std::string describe(const Token& token) {
    return token.kind == TokenKind::end ? std::string("end of input") : "'" + token.text + "'";
  }

  void lex() {
    std::size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      const int column = static_cast<int>(i) + 1;
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        char* end = nullptr;
        const double value = std::strtod(text_.c_str() + i, &end);
        const auto length = static_cast<std::size_t>(end - (text_.c_str() + i));
        if (length == 0) fail(column, "unexpected '" + std::string(1, c) + "'");
        tokens_.push_back({TokenKind::number, text_.substr(i, length), value, column});
        i += length;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t j = i;
        while (j < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_'))
          ++j;
        tokens_.push_back({TokenKind::name, text_.substr(i, j - i), 0, column});
        i = j;
      } else if (c == '(' || c == ')') {
        tokens_.push_back(
            {c == '(' ? TokenKind::lparen : TokenKind::rparen, std::string(1, c), 0, column});
        ++i;
      } else {
        const std::string two = text_.substr(i, 2);
        if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
          tokens_.push_back({TokenKind::op, two, 0, column});
          i += 2;
        } else if (c == '<' || c == '>' || c == '+' || c == '-' || c == '*' || c == '/') {
          tokens_.push_back({TokenKind::op, std::string(1, c), 0, column});
          ++i;
        } else {
          fail(column, "unexpected '" + std::string(1, c) + "'");
        }
      }
    }
    tokens_.push_back({TokenKind::end, "", 0, static_cast<int>(text_.size()) + 1});
  }

  const Token& peek() const { return tokens_[pos_]; }
  bool is_keyword(const Token& t, const char* word) const {
    return t.kind == TokenKind::name && t.text == word;
  }
  static bool is_comparison(const Token& t) {
    return t.kind == TokenKind::op && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                       t.text == "<=" || t.text == ">" || t.text == ">=");
  }

  PointPredicate parse_or() {
    PointPredicate left = parse_and();
    while (is_keyword(peek(), "or")) {
      ++pos_;
      left = [a = left, b = parse_and()](Point p) { return a(p) || b(p); };
    }
    return left;
  }

  PointPredicate parse_and() {
    PointPredicate left = parse_not();
    while (is_keyword(peek(), "and")) {
      ++pos_;
      left = [a = left, b = parse_not()](Point p) { return a(p) && b(p); };
    }
    return left;
  }

  PointPredicate parse_not() {
    if (is_keyword(peek(), "not")) {
      ++pos_;
      return [a = parse_not()](Point p) { return !a(p); };
    }
    if (peek().kind == TokenKind::lparen) {
      // "(" starts either a parenthesized predicate or an arithmetic group, as in (x + 1) < 2:
      // try the predicate first; if that fails, or a comparison follows, parse a comparison.
      const std::size_t start = pos_;
      try {
        ++pos_;
        PointPredicate inner = parse_or();
        if (peek().kind != TokenKind::rparen) fail(peek(), "expected ')', got " + describe(peek()));
        ++pos_;
        if (peek().kind != TokenKind::op) return inner;
      } catch (const UserError& as_predicate) {
        pos_ = start;
        try {
          return parse_comparison();
        } catch (const UserError& as_comparison) {
          // Report the error that got further into the text.
          throw error_column(as_comparison) >= error_column(as_predicate) ? as_comparison
                                                                          : as_predicate;
        }
      }
      pos_ = start;
    }
    return parse_comparison();
  }

  static int error_column(const UserError& e) {
    const std::string what = e.what();
    const std::size_t at = what.find("', column ");
    return at == std::string::npos ? 0 : std::atoi(what.c_str() + at + 10);
  }

  PointPredicate parse_comparison() {
    Number left = parse_sum();
    if (!is_comparison(peek()))
      fail(peek(), "expected a comparison (==, !=, <, <=, >, >=), got " + describe(peek()));
    PointPredicate result;
    while (is_comparison(peek())) {
      const std::string op = tokens_[pos_++].text;
      Number right = parse_sum();
      PointPredicate test = compare(op, left, right);
      result =
          result ? PointPredicate([a = result, b = test](Point p) { return a(p) && b(p); }) : test;
      left = right;
    }
    return result;
  }

  PointPredicate compare(const std::string& op, Number a, Number b) const {
    const double tol = tol_;
    if (op == "==") return [a, b, tol](Point p) { return std::abs(a(p) - b(p)) <= tol; };
    if (op == "!=") return [a, b, tol](Point p) { return std::abs(a(p) - b(p)) > tol; };
    if (op == "<=") return [a, b, tol](Point p) { return a(p) <= b(p) + tol; };
    if (op == ">=") return [a, b, tol](Point p) { return a(p) >= b(p) - tol; };
    if (op == "<") return [a, b, tol](Point p) { return a(p) < b(p) - tol; };
    return [a, b, tol](Point p) { return a(p) > b(p) + tol; };
  }

  Number parse_sum() {
    Number left = parse_product();
    while (peek().kind == TokenKind::op && (peek().text == "+" || peek().text == "-")) {
      const bool plus = tokens_[pos_++].text == "+";
      Number right = parse_product();
      left = plus ? Number([a = left, b = right](Point p) { return a(p) + b(p); })
                  : Number([a = left, b = right](Point p) { return a(p) - b(p); });
    }
    return left;
  }

  Number parse_product() {
    Number left = parse_unary();
    while (peek().kind == TokenKind::op && (peek().text == "*" || peek().text == "/")) {
      const bool times = tokens_[pos_++].text == "*";
      Number right = parse_unary();
      left = times ? Number([a = left, b = right](Point p) { return a(p) * b(p); })
                   : Number([a = left, b = right](Point p) { return a(p) / b(p); });
    }
    return left;
  }

  Number parse_unary() {
    const Token token = peek();
    if (token.kind == TokenKind::op && token.text == "-") {
      ++pos_;
      return [a = parse_unary()](Point p) { return -a(p); };
    }
    if (token.kind == TokenKind::number) {
      ++pos_;
      return [v = token.value](Point) { return v; };
    }
    if (token.kind == TokenKind::lparen) {
      ++pos_;
      Number inner = parse_sum();
      if (peek().kind != TokenKind::rparen) fail(peek(), "expected ')', got " + describe(peek()));
      ++pos_;
      return inner;
    }
    if (token.kind == TokenKind::name) return parse_name();
    fail(token, "expected a number or a coordinate, got " + describe(token));
  }

  Number parse_name() {
    const Token token = tokens_[pos_++];
    if (token.text == "pi") return [](Point) { return std::numbers::pi; };
    if (token.text == "and" || token.text == "or" || token.text == "not")
      fail(token, "expected a number or a coordinate, got '" + token.text + "'");
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == token.text) return [i](Point p) { return p[i]; };
    std::string known;
    for (const auto& name : names_) known += (known.empty() ? "" : ", ") + name;
    fail(token, "unknown name '" + token.text + "'; the coordinates are " + known);
  }

  std::string text_;
  std::vector<std::string> names_;
  double tol_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

PointPredicate compile_predicate(const std::string& text, const std::vector<std::string>& names,
                                 double tolerance) {
  return Parser(text, names, tolerance).parse();
}

}  // namespace jetpde::geometry
