#include "equations/detail/diagnostics.h"

#include "autodiff/errors.h"

namespace jetpde::equations::detail {

namespace {

// Long texts are quoted in part: the first kHead characters in the header, and a window of
// kWindow characters either side of the column in the caret line.
constexpr std::size_t kLong = 160, kHead = 60, kWindow = 60;

// The text as it can be shown, one character per column: tabs become blanks, other control
// characters (a NUL byte, say) their symbols from the Unicode block Control Pictures.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\t') {
      out += ' ';
    } else if (u < 0x20 || u == 0x7f) {
      const unsigned code = u == 0x7f ? 0x2421 : 0x2400 + u;  // U+2400..U+241F, U+2421
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string located(const Source& source, int column, const std::string& what) {
  const std::string& text = source.text;
  const bool long_text = text.size() > kLong;
  const std::string quoted = long_text ? printable(text.substr(0, kHead)) + "...' (" +
                                             std::to_string(text.size()) + " characters"
                                       : printable(text) + "'";
  std::string s = source.definition.empty() ? "in '" + quoted + (long_text ? ")" : "")
                                            : "in the definition of '" + source.definition +
                                                  "' = '" + quoted + (long_text ? ")" : "");
  if (column <= 0) return s + ": " + what;
  s += ": column " + std::to_string(column) + ": " + what + "\n  ";
  std::size_t at = static_cast<std::size_t>(column - 1);
  if (!long_text) {
    s += printable(text) + "\n  ";
  } else {
    const std::size_t from = at > kWindow ? at - kWindow : 0;
    const std::string prefix = from > 0 ? "..." : "";
    const std::string suffix = from + 2 * kWindow < text.size() ? "..." : "";
    s += prefix + printable(text.substr(from, 2 * kWindow)) + suffix + "\n  ";
    at = at - from + prefix.size();
  }
  s.append(at, ' ');
  return s + "^";
}

void fail(const Source& source, int column, const std::string& what) {
  throw UserError(located(source, column, what));
}

std::string join(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s;
}

}  // namespace jetpde::equations::detail
