#include "equations/detail/diagnostics.h"

#include "autodiff/errors.h"

namespace jetpde::equations::detail {

std::string located(const Source& source, int column, const std::string& what) {
  std::string s = source.definition.empty()
                      ? "in '" + source.text + "'"
                      : "in the definition of '" + source.definition + "' = '" + source.text + "'";
  if (column <= 0) return s + ": " + what;
  s += ": column " + std::to_string(column) + ": " + what + "\n  " + source.text + "\n  ";
  s.append(static_cast<std::size_t>(column - 1), ' ');
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
