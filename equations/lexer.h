// The lexer of the equation language: text -> tokens, each with its 1-based column.
//
// Tokens: numbers (1, 2.5, .5, 1e-3, 2.5E+4), names (a letter, then letters, digits, '_'),
// + - * / ^ ( ) , =, the comparisons < <= > >= == != and the end. Blanks separate tokens and are
// otherwise ignored.
#pragma once

#include <string>
#include <vector>

#include "equations/detail/diagnostics.h"

namespace jetpde::equations {

enum class TokenKind {
  number,
  name,
  plus,
  minus,
  star,
  slash,
  caret,
  lparen,
  rparen,
  comma,
  equals,
  compare,  // < <= > >= == != (the text says which)
  end
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;    // as written ("" for the end)
  double value = 0.0;  // numbers
  int column = 0;      // 1-based column of the first character
};

// UserError (with the column) on a character outside the language or a malformed number.
std::vector<Token> lex(const detail::Source& source);

// How a token reads in a message: "'u'", "')'", "the end".
std::string describe(const Token& token);

}  // namespace jetpde::equations
