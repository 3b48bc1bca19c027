#include "equations/lexer.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace jetpde::equations {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Scans a number at text[i]: digits [. digits] [e [+-] digits], or . digits ...
Token scan_number(const detail::Source& source, std::size_t& i) {
  const std::string& t = source.text;
  const std::size_t start = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && is_digit(t[i])) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
    if (j >= t.size() || !is_digit(t[j])) {
      while (j < t.size() && is_name_char(t[j])) ++j;
      detail::fail(source, static_cast<int>(start) + 1,
                   "malformed number '" + t.substr(start, j - start) +
                       "' (an exponent needs digits, as in 1e-3)");
    }
    i = j;
    while (i < t.size() && is_digit(t[i])) ++i;
  }
  Token tok{TokenKind::number, t.substr(start, i - start), 0.0, static_cast<int>(start) + 1};
  if (tok.text == ".") detail::fail(source, tok.column, "unexpected character '.'");
  tok.value = std::strtod(tok.text.c_str(), nullptr);
  if (!std::isfinite(tok.value))
    detail::fail(source, tok.column, "the number '" + tok.text + "' is out of range");
  return tok;
}

// The length of the comparison operator at text[i] (< <= > >= == !=), or 0.
std::size_t comparison_length(const std::string& t, std::size_t i) {
  const char c = t[i], next = i + 1 < t.size() ? t[i + 1] : '\0';
  if (c == '<' || c == '>') return next == '=' ? 2 : 1;
  if ((c == '=' || c == '!') && next == '=') return 2;
  return 0;
}

TokenKind operator_kind(char c) {
  switch (c) {
    case '+':
      return TokenKind::plus;
    case '-':
      return TokenKind::minus;
    case '*':
      return TokenKind::star;
    case '/':
      return TokenKind::slash;
    case '^':
      return TokenKind::caret;
    case '(':
      return TokenKind::lparen;
    case ')':
      return TokenKind::rparen;
    case ',':
      return TokenKind::comma;
    case '=':
      return TokenKind::equals;
    default:
      return TokenKind::end;
  }
}

// "unexpected character '$'"; control characters by their code ("a NUL byte (0x00)"), since
// they would not show (and a NUL would end the message where it is printed as a C string).
std::string unexpected_character(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u != 0x7f) return "unexpected character '" + std::string(1, c) + "'";
  static const char* const hex = "0123456789abcdef";
  const std::string code = std::string("0x") + hex[u >> 4] + hex[u & 15];
  return u == 0 ? "unexpected NUL byte (0x00) in the expression"
                : "unexpected control character " + code;
}

}  // namespace

std::vector<Token> lex(const detail::Source& source) {
  const std::string& t = source.text;
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (is_digit(c) || (c == '.' && i + 1 < t.size() && is_digit(t[i + 1]))) {
      tokens.push_back(scan_number(source, i));
    } else if (is_name_start(c)) {
      const std::size_t start = i;
      while (i < t.size() && is_name_char(t[i])) ++i;
      tokens.push_back(
          {TokenKind::name, t.substr(start, i - start), 0.0, static_cast<int>(start) + 1});
    } else if (std::size_t n = comparison_length(t, i)) {
      tokens.push_back({TokenKind::compare, t.substr(i, n), 0.0, static_cast<int>(i) + 1});
      i += n;
    } else if (operator_kind(c) != TokenKind::end) {
      tokens.push_back({operator_kind(c), std::string(1, c), 0.0, static_cast<int>(i) + 1});
      ++i;
    } else {
      detail::fail(source, static_cast<int>(i) + 1, unexpected_character(c));
    }
  }
  tokens.push_back({TokenKind::end, "", 0.0, static_cast<int>(t.size()) + 1});
  return tokens;
}

std::string describe(const Token& token) {
  return token.kind == TokenKind::end ? "the end" : "'" + token.text + "'";
}

}  // namespace jetpde::equations
