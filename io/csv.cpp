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

// The fields of a line: split at commas (trimmed), or, for a table without commas, at runs of
// spaces and tabs.
std::vector<std::string_view> fields_of(std::string_view line, bool commas) {
  std::vector<std::string_view> out;
  if (!commas) {
    for (std::size_t start = line.find_first_not_of(" \t\r"); start != std::string_view::npos;) {
      const std::size_t end = std::min(line.find_first_of(" \t\r", start), line.size());
      out.push_back(line.substr(start, end - start));
      start = line.find_first_not_of(" \t\r", end);
    }
    return out;
  }
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

// Reads a file's lines with their 1-based numbers, skipping blank lines and comments ('#', and
// '%' as MATLAB and Octave write).
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
      if (!content.empty() && content.front() != '#' && content.front() != '%') return true;
    }
    return false;
  }
  int number() const { return number_; }

 private:
  std::ifstream in_;
  int number_ = 0;
};

std::vector<std::string> header_of(const std::vector<std::string_view>& fields,
                                   const std::string& where) {
  std::vector<std::string> columns;
  for (const std::string_view field : fields) {
    const std::string name(field);
    if (name.empty())
      throw UserError(where + " column " + std::to_string(columns.size() + 1) + " has no name");
    if (std::find(columns.begin(), columns.end(), name) != columns.end())
      throw UserError(where + " column '" + name + "' appears twice");
    columns.push_back(name);
  }
  return columns;
}

// from_chars on all of `field`: the error code, or errc::invalid_argument when it stops early.
std::errc parse_number(std::string_view field, double& value) {
  // from_chars refuses the leading '+' some writers print ("+1.5"); one is skipped, never two
  // signs ("+-1").
  std::string_view digits = field;
  if (!digits.empty() && digits.front() == '+' && digits.size() > 1 && digits[1] != '-' &&
      digits[1] != '+')
    digits.remove_prefix(1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc() && end != digits.data() + digits.size()) return std::errc::invalid_argument;
  return ec;
}

// True when every field reads as a number: a line of data rather than a header.
bool all_numbers(const std::vector<std::string_view>& fields) {
  double value = 0;
  for (const std::string_view f : fields)
    if (f.empty() || parse_number(f, value) != std::errc()) return false;
  return true;
}

// The number in `field`, all of it; `where` is "path:line: column 'u':" for the message.
double number_of(std::string_view field, const std::string& where) {
  if (field.empty()) throw UserError(where + " the field is empty");
  double value = 0;
  const std::errc ec = parse_number(field, value);
  const std::string quoted = "'" + std::string(field) + "'";
  if (ec == std::errc::result_out_of_range)
    throw UserError(where + " " + quoted + " is out of the range of a double");
  if (ec != std::errc()) throw UserError(where + " " + quoted + " is not a number");
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

CsvTable read_csv(const std::string& path) { return read_text_table(path, {}); }

CsvTable read_text_table(const std::string& path, const std::vector<std::string>& columns) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UserError("cannot read '" + path + "': no such file");
  if (std::filesystem::is_directory(path, ec))
    throw UserError("cannot read '" + path + "': it is a folder");
  Lines lines(path);
  if (!lines.ok()) throw UserError("cannot read '" + path + "'");
  std::string line;
  if (!lines.next(line)) {
    if (columns.empty())
      throw UserError("'" + path + "' has no header line (only comments and blank lines)");
    throw UserError("'" + path + "' holds no data (only comments and blank lines)");
  }
  CsvTable table;
  table.file = path;
  // The first line decides the separator for the whole file.
  const bool commas = line.find(',') != std::string::npos;
  std::vector<std::string_view> fields = fields_of(line, commas);
  std::string where = path + ":" + std::to_string(lines.number()) + ":";
  const bool header = !all_numbers(fields);
  if (columns.empty() && !header)
    throw UserError(where +
                    " no header line (the first line holds numbers): name the columns "
                    "in the config (`columns: [x, t, u]`) or add a line of names");
  if (!columns.empty()) {
    table.columns = header_of(std::vector<std::string_view>(columns.begin(), columns.end()),
                              path + ": `columns`:");
    if (header && fields.size() != columns.size())
      throw UserError(where + " the header line names " + std::to_string(fields.size()) +
                      " columns, `columns` " + std::to_string(columns.size()) + " (" +
                      joined(table.columns) + ")");
  } else {
    table.columns = header_of(fields, where);
  }
  const std::size_t width = table.columns.size();
  const char* names_are = columns.empty() ? "the header has " : "`columns` names ";
  std::vector<double> values;  // row-major, as MatrixD
  for (bool first = !header; first || lines.next(line); first = false) {
    if (!first) {
      where = path + ":" + std::to_string(lines.number()) + ":";
      fields = fields_of(line, commas);
    }
    if (fields.size() < width)
      throw UserError(where + " no value for column '" + table.columns[fields.size()] + "' (" +
                      std::to_string(fields.size()) + " fields, " + names_are +
                      std::to_string(width) + ")");
    if (fields.size() > width)
      throw UserError(where + " " + std::to_string(fields.size()) + " fields, " + names_are +
                      std::to_string(width) + " (" + joined(table.columns) + ")");
    for (std::size_t c = 0; c < width; ++c)
      values.push_back(number_of(fields[c], where + " column '" + table.columns[c] + "':"));
  }
  const auto rows = static_cast<Eigen::Index>(values.size() / width);
  table.values = Eigen::Map<const MatrixD>(values.data(), rows, static_cast<Eigen::Index>(width));
  return table;
}

}  // namespace jetpde::io
