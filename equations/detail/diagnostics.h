// Error messages of the equation language: the expression, a 1-based column, and a caret line.
//
//   in 'u_t + u*v_x': column 9: unknown field 'v' (fields: u)
//     u_t + u*v_x
//             ^
#pragma once

#include <string>
#include <vector>

namespace jetpde::equations::detail {

// Where text comes from: an expression, or the body of a definition (named in the message).
struct Source {
  std::string text;
  std::string definition;  // non-empty for the body of `define(definition, text)`
};

// The message for `what` at `column` of `source` (column 0: no caret).
std::string located(const Source& source, int column, const std::string& what);
// Throws UserError(located(...)).
[[noreturn]] void fail(const Source& source, int column, const std::string& what);

// "a, b, c", or "none" for an empty list.
std::string join(const std::vector<std::string>& items);

}  // namespace jetpde::equations::detail
