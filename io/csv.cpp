#include "io/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "autodiff/errors.h"

namespace jetpde::io {
namespace {

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trimmed(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Reads a file's lines with their 1-based numbers, skipping blank and '#' lines.
class Lines {
 public:
  explicit Lines(const std::string& path) : in_(path) {}
  bool ok() const { return in_.good(); }
  // The next line that holds data, or false at the end.
  bool next(std::string& line) {
    while (std::getline(in_, line)) {
      ++number_;
      // A byte-order mark, as spreadsheet programs write, is not part of the first name.
      if (number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
      const std::string_view content = trimmed(line);
      if (!content.empty() && content.front() != '#') return true;
    }
    return false;
  }
  int number() const { return number_; }

 private:
  std::ifstream in_;
  int number_ = 0;
};

std::vector<std::string> header_of(const std::string& line, const std::string& where) {
  std::vector<std::string> columns;
  for (const std::string_view field : fields_of(line)) {
    const std::string name(field);
    if (name.empty())
      throw UserError(where + " column " + std::to_string(columns.size() + 1) + " has no name");
    if (std::find(columns.begin(), columns.end(), name) != columns.end())
      throw UserError(where + " column '" + name + "' appears twice");
    columns.push_back(name);
  }
  return columns;
}

// The number in `field`, all of it; `where` is "path:line: column 'u':" for the message.
double number_of(std::string_view field, const std::string& where) {
  if (field.empty()) throw UserError(where + " the field is empty");
  // from_chars refuses the leading '+' some writers print ("+1.5"); one is skipped, never two
  // signs ("+-1").
  std::string_view digits = field;
  if (digits.front() == '+' && digits.size() > 1 && digits[1] != '-' && digits[1] != '+')
    digits.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const std::string quoted = "'" + std::string(field) + "'";
  if (ec == std::errc::result_out_of_range)
    throw UserError(where + " " + quoted + " is out of the range of a double");
  if (ec != std::errc() || end != digits.data() + digits.size())
    throw UserError(where + " " + quoted + " is not a number");
  // Reference data with inf or nan would poison every error norm computed against it.
  if (!std::isfinite(value)) throw UserError(where + " " + quoted + " is not a finite number");
  return value;
}

}  // namespace

Eigen::Index CsvTable::column(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end())
    throw UserError("'" + file + "' has no column '" + name + "' (columns: " + joined(columns) +
                    ")");
  return it - columns.begin();
}

CsvTable read_csv(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UserError("cannot read '" + path + "': no such file");
  if (std::filesystem::is_directory(path, ec))
    throw UserError("cannot read '" + path + "': it is a folder");
  Lines lines(path);
  if (!lines.ok()) throw UserError("cannot read '" + path + "'");
  std::string line;
  if (!lines.next(line))
    throw UserError("'" + path + "' has no header line (only comments and blank lines)");
  CsvTable table;
  table.file = path;
  table.columns = header_of(line, path + ":" + std::to_string(lines.number()) + ":");
  const std::size_t width = table.columns.size();
  std::vector<double> values;  // row-major, as MatrixD
  while (lines.next(line)) {
    const std::string where = path + ":" + std::to_string(lines.number()) + ":";
    const std::vector<std::string_view> fields = fields_of(line);
    if (fields.size() < width)
      throw UserError(where + " no value for column '" + table.columns[fields.size()] + "' (" +
                      std::to_string(fields.size()) + " fields, the header has " +
                      std::to_string(width) + ")");
    if (fields.size() > width)
      throw UserError(where + " " + std::to_string(fields.size()) + " fields, the header has " +
                      std::to_string(width) + " (" + joined(table.columns) + ")");
    for (std::size_t c = 0; c < width; ++c)
      values.push_back(number_of(fields[c], where + " column '" + table.columns[c] + "':"));
  }
  const auto rows = static_cast<Eigen::Index>(values.size() / width);
  table.values = Eigen::Map<const MatrixD>(values.data(), rows, static_cast<Eigen::Index>(width));
  return table;
}

}  // namespace jetpde::io
