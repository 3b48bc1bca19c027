#include "io/data_files.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "autodiff/errors.h"
#include "io/csv.h"
#include "io/detail/data_sources.h"
#include "io/hdf5_read.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::int64_t count_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

// The multi-index of flat (row-major) position `k`: "[3, 1]".
std::string index_text(const std::vector<std::int64_t>& shape, std::int64_t k) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    index[a] = shape[a] > 0 ? k % shape[a] : 0;
    k = shape[a] > 0 ? k / shape[a] : 0;
  }
  return detail::shape_text(index);
}

// The shape without its dimensions of length 1: [256, 1] and [256] are both a vector.
std::vector<std::int64_t> squeezed(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> out;
  for (const std::int64_t d : shape)
    if (d != 1) out.push_back(d);
  return out;
}

// ---- text tables -------------------------------------------------------------------------------

class TextSource : public DataSource {
 public:
  TextSource(const std::string& path, const std::vector<std::string>& columns)
      : DataSource(path), table_(read_text_table(path, columns)) {}
  std::string noun() const override { return "column"; }
  std::vector<std::string> names() const override { return table_.columns; }

 protected:
  NamedArray load(const std::string& name) const override {
    const auto c = table_.column(name);
    NamedArray a{name, {table_.values.rows()}, {}};
    a.values.assign(table_.values.col(c).begin(), table_.values.col(c).end());
    return a;
  }
  std::string empty_message(const std::string&) const override {
    return "'" + file() + "' holds no data: no rows after the header line";
  }

 private:
  CsvTable table_;
};

// ---- HDF5 --------------------------------------------------------------------------------------

class Hdf5Source : public DataSource {
 public:
  explicit Hdf5Source(const std::string& path) : DataSource(path) {
    list_datasets(path);  // refuses a file that is not HDF5 now, not at the first read
  }
  std::string noun() const override { return "dataset"; }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const std::string& n : list_datasets(file())) {
      if (!is_complex_dataset(file(), n)) {
        out.push_back(n);
        continue;
      }
      out.push_back(n + ".re");
      out.push_back(n + ".im");
    }
    return out;
  }
  bool contains(const std::string& name) const override {
    if (has_dataset(file(), name)) return !is_complex_dataset(file(), name);
    const auto [base, part] = detail::complex_part(name);
    return part >= 0 && is_complex_dataset(file(), base);
  }

 protected:
  NamedArray load(const std::string& name) const override {
    const auto [base, part] = detail::complex_part(name);
    Dataset d = has_dataset(file(), name) ? read_array_dataset(file(), name)
                                          : read_complex_part(file(), base, part == 1);
    return {name, std::move(d.dims), std::move(d.values)};
  }
};

// ---- `columns` for a file of one 2-D array ------------------------------------------------------

class ColumnsOf : public DataSource {
 public:
  ColumnsOf(std::unique_ptr<DataSource> inner, const std::vector<std::string>& columns)
      : DataSource(inner->file()), inner_(std::move(inner)), columns_(columns) {
    const std::vector<std::string> arrays = inner_->names();
    if (arrays.size() != 1)
      throw UserError("'" + file() + "': `columns` names the columns of a file's only array, and " +
                      "it holds " + std::to_string(arrays.size()) + " (" + joined(arrays) + ")");
    for (std::size_t i = 0; i < columns_.size(); ++i)
      if (std::find(columns_.begin(), columns_.begin() + static_cast<std::ptrdiff_t>(i),
                    columns_[i]) != columns_.begin() + static_cast<std::ptrdiff_t>(i))
        throw UserError("'" + file() + "': `columns` names '" + columns_[i] + "' twice");
    table_ = inner_->read(arrays[0]);
    if (table_.shape.size() != 2 || table_.shape[1] != static_cast<std::int64_t>(columns_.size()))
      throw UserError("'" + file() + "': " + inner_->noun() + " '" + arrays[0] + "' has shape " +
                      detail::shape_text(table_.shape) + ", `columns` names " +
                      std::to_string(columns_.size()) + " columns (" + joined(columns_) +
                      "): expected [rows, " + std::to_string(columns_.size()) + "]");
  }
  std::string noun() const override { return "column"; }
  std::vector<std::string> names() const override { return columns_; }

 protected:
  NamedArray load(const std::string& name) const override {
    const auto c = std::find(columns_.begin(), columns_.end(), name) - columns_.begin();
    const std::int64_t rows = table_.shape[0], width = table_.shape[1];
    NamedArray a{name, {rows}, std::vector<double>(static_cast<std::size_t>(rows))};
    for (std::int64_t i = 0; i < rows; ++i)
      a.values[static_cast<std::size_t>(i)] =
          table_.values[static_cast<std::size_t>(i * width + c)];
    return a;
  }

 private:
  std::unique_ptr<DataSource> inner_;
  std::vector<std::string> columns_;
  NamedArray table_;
};

const std::vector<std::string>& text_extensions() {
  static const std::vector<std::string> e{".csv", ".dat", ".txt", ".tsv"};
  return e;
}

}  // namespace

namespace detail {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::pair<std::string, int> complex_part(const std::string& name) {
  for (const auto& [suffix, part] : {std::pair<const char*, int>{".re", 0}, {".im", 1}})
    if (name.size() > 3 && name.ends_with(suffix)) return {name.substr(0, name.size() - 3), part};
  return {name, -1};
}

}  // namespace detail

bool DataSource::contains(const std::string& name) const {
  const std::vector<std::string> all = names();
  return std::find(all.begin(), all.end(), name) != all.end();
}

std::string DataSource::empty_message(const std::string& name) const {
  return "'" + file_ + "': " + noun() + " '" + name + "' is empty (no values)";
}

NamedArray DataSource::read(const std::string& name) const {
  if (!contains(name))
    throw UserError("'" + file_ + "' has no " + noun() + " '" + name + "' (" + noun() +
                    "s: " + joined(names()) + ")");
  NamedArray a = load(name);
  if (a.values.empty()) throw UserError(empty_message(name));
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (!std::isfinite(a.values[k])) {
      const double v = a.values[k];
      throw UserError("'" + file_ + "': " + noun() + " '" + name + "' holds " +
                      (std::isnan(v) ? "nan"
                       : v > 0       ? "inf"
                                     : "-inf") +
                      " at " + index_text(a.shape, static_cast<std::int64_t>(k)) +
                      " (data must be finite numbers)");
    }
  return a;
}

std::string data_file_extensions() {
  std::string out;
  for (const std::string& e : text_extensions()) out += e + ", ";
  return out + ".h5, .hdf5, .npy, .npz, .mat";
}

std::unique_ptr<DataSource> open_data_file(const std::string& path,
                                           const DataFileOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError("cannot read '" + path + "': no such file");
  if (fs::is_directory(path, ec)) throw UserError("cannot read '" + path + "': it is a folder");
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const auto& text = text_extensions();
  if (std::find(text.begin(), text.end(), ext) != text.end())
    return std::make_unique<TextSource>(path, options.columns);
  std::unique_ptr<DataSource> source;
  if (ext == ".h5" || ext == ".hdf5")
    source = std::make_unique<Hdf5Source>(path);
  else if (ext == ".npy")
    source = detail::open_npy(path);
  else if (ext == ".npz")
    source = detail::open_npz(path);
  else if (ext == ".mat")
    source = detail::open_mat(path);
  else
    throw UserError("'" + path + "': not a data file type jetpde reads (" +
                    (ext.empty() ? std::string("no extension") : "'" + ext + "'") + "; expected " +
                    data_file_extensions() + ")");
  if (options.columns.empty()) return source;
  return std::make_unique<ColumnsOf>(std::move(source), options.columns);
}

PointData read_point_data(const DataSource& s, const DataLayout& l) {
  const std::string& file = s.file();
  const auto& coords = l.coordinates;
  const auto where = [&](const std::string& name) {
    return "'" + file + "': " + s.noun() + " '" + name + "'";
  };
  PointData out;
  std::vector<std::int64_t> grid_shape;  // the axes' lengths, for a grid
  if (!l.axes.empty()) {
    std::vector<std::vector<double>> axis_values;
    std::vector<int> column;
    for (const auto& [name, array] : l.axes) {
      const auto it = std::find(coords.begin(), coords.end(), name);
      if (it == coords.end())
        throw UserError("'" + name + "' is not a coordinate of this problem (coordinates: " +
                        joined(coords) + ")");
      if (std::find(column.begin(), column.end(), it - coords.begin()) != column.end())
        throw UserError("the grid names coordinate '" + name + "' twice");
      column.push_back(static_cast<int>(it - coords.begin()));
      NamedArray a = s.read(array);
      if (squeezed(a.shape).size() > 1)
        throw UserError(where(array) + " has shape " + detail::shape_text(a.shape) +
                        ": the axis of '" + name + "' must be a 1-D array");
      grid_shape.push_back(static_cast<std::int64_t>(a.values.size()));
      axis_values.push_back(std::move(a.values));
    }
    if (axis_values.size() != coords.size())
      throw UserError("the grid names " + std::to_string(axis_values.size()) + " of the " +
                      std::to_string(coords.size()) + " coordinates (" + joined(coords) + ")");
    const Eigen::Index n = count_of(grid_shape);
    out.points.resize(n, static_cast<Eigen::Index>(coords.size()));
    for (Eigen::Index k = 0; k < n; ++k) {
      Eigen::Index rest = k;
      for (std::size_t a = axis_values.size(); a-- > 0;) {
        const auto len = static_cast<Eigen::Index>(axis_values[a].size());
        out.points(k, column[a]) = axis_values[a][static_cast<std::size_t>(rest % len)];
        rest /= len;
      }
    }
  } else if (!l.points.empty()) {
    const NamedArray p = s.read(l.points);
    const auto dims = static_cast<std::int64_t>(coords.size());
    const bool ok =
        (p.shape.size() == 2 && p.shape[1] == dims) || (dims == 1 && squeezed(p.shape).size() <= 1);
    if (!ok)
      throw UserError(where(l.points) + " has shape " + detail::shape_text(p.shape) +
                      ": points are [n, " + std::to_string(dims) +
                      "], one column per coordinate (" + joined(coords) + ")");
    const Eigen::Index n = static_cast<Eigen::Index>(p.values.size()) / dims;
    out.points = Eigen::Map<const MatrixD>(p.values.data(), n, dims);
  } else {
    std::string first;
    for (std::size_t c = 0; c < coords.size(); ++c) {
      if (!s.contains(coords[c]))
        throw UserError("'" + file + "' has no " + s.noun() + " '" + coords[c] + "' (" + s.noun() +
                        "s: " + joined(s.names()) +
                        "): the points' coordinates come from arrays named by coordinate, a grid "
                        "(`coordinates:`) or a points array (`points:`)");
      const NamedArray a = s.read(coords[c]);
      const auto n = static_cast<Eigen::Index>(a.values.size());
      if (c == 0) {
        out.points.resize(n, static_cast<Eigen::Index>(coords.size()));
        first = coords[c];
      } else if (n != out.points.rows()) {
        throw UserError(where(coords[c]) + " has " + std::to_string(n) + " values, '" + first +
                        "' " + std::to_string(out.points.rows()) +
                        ": for values on a grid, name its axes in `coordinates:`");
      }
      out.points.col(static_cast<Eigen::Index>(c)) =
          Eigen::Map<const Eigen::ArrayXd>(a.values.data(), n);
    }
  }
  const Eigen::Index n = out.points.rows();
  out.values.resize(n, static_cast<Eigen::Index>(l.fields.size()));
  for (std::size_t f = 0; f < l.fields.size(); ++f) {
    const auto& [field, array] = l.fields[f];
    const NamedArray a = s.read(array);
    if (!grid_shape.empty() && squeezed(a.shape) != squeezed(grid_shape)) {
      std::string axes;
      for (const auto& ax : l.axes) axes += (axes.empty() ? "" : ", ") + ax.first;
      throw UserError(where(array) + " has shape " + detail::shape_text(a.shape) +
                      ", the grid's axes (" + axes + ") have lengths " +
                      detail::shape_text(grid_shape) +
                      ": `coordinates:` lists the axes in the order of the array's dimensions");
    }
    if (static_cast<Eigen::Index>(a.values.size()) != n)
      throw UserError(where(array) + " has " + std::to_string(a.values.size()) + " values for " +
                      std::to_string(n) + " points");
    out.values.col(static_cast<Eigen::Index>(f)) =
        Eigen::Map<const Eigen::ArrayXd>(a.values.data(), n);
    out.fields.push_back(field);
  }
  return out;
}

}  // namespace jetpde::io
