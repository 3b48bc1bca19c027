// The data files users have, behind one interface: a DataSource is a file seen as named arrays
// (a text table's columns, a .npz's or .mat's arrays, an HDF5 file's datasets), each with its
// shape. read_point_data() turns one into points and values the same way for every format: on a
// grid (`coordinates:`), from a points array (`points:`), or from arrays named by coordinate.
//
//   auto src = io::open_data_file("burgers_shock.mat");        // x [256,1], t [100,1], usol
//   io::PointData d = io::read_point_data(*src, {.axes = {{"x", "x"}, {"t", "t"}},
//                                                 .coordinates = {"x", "t"},
//                                                 .fields = {{"u", "usol"}}});
//
// Formats, by extension:
//   .csv .dat .txt .tsv  text tables (csv.h): columns separated by commas or by spaces and tabs,
//                        '#' and '%' comment lines; a header line of names, or `columns` naming
//                        them. Each column is an array of shape [rows].
//   .h5 .hdf5            HDF5 datasets (names may hold '/' for groups), any rank.
//   .npy                 one NumPy array, named by the file's stem ("data.npy" -> "data").
//   .npz                 NumPy's zip of .npy arrays (stored or deflated), named as numpy.savez
//                        named them.
//   .mat                 MATLAB v5 (and v4) and v7.3 (HDF5) files through matio: the numeric
//                        variables (double, single, integers, logical).
// A complex array `u` (.npy/.npz complex64/128, a complex MATLAB variable, an HDF5 compound of two
// floats as h5py writes them) is two real arrays, `u.re` and `u.im`. `columns` given for a format
// other than a text table names the columns of the file's only array, which must be 2-D ([rows,
// columns.size()]): a .npy table.
//
// Every array read is checked: values that are not finite (NaN, Inf) are refused naming the file,
// the array and the index ("'ref.npy': array 'ref' holds nan at [3, 1]"), and an empty one naming
// the file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/config.h"

namespace jetpde::io {

struct NamedArray {
  std::string name;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::vector<double> values;       // row-major (C order)
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  const std::string& file() const { return file_; }
  // What the file's arrays are called in messages: "column", "dataset", "array", "variable".
  virtual std::string noun() const = 0;
  // The arrays it holds, in the file's order (HDF5: the root's datasets, sorted).
  virtual std::vector<std::string> names() const = 0;
  virtual bool contains(const std::string& name) const;
  // The array `name`, checked: UserError when it is missing (naming the ones there are), empty,
  // or holds a value that is not finite.
  NamedArray read(const std::string& name) const;

 protected:
  explicit DataSource(std::string file) : file_(std::move(file)) {}
  // The array, unchecked; called for names that contains() accepts.
  virtual NamedArray load(const std::string& name) const = 0;
  // The message for an empty array `name`.
  virtual std::string empty_message(const std::string& name) const;

 private:
  std::string file_;
};

struct DataFileOptions {
  std::vector<std::string> columns = {};  // names of a table's columns (see above)
};

// The file's source by its extension. UserError naming the file when it is missing, of a type not
// listed above (naming those), or not readable as its type.
std::unique_ptr<DataSource> open_data_file(const std::string& path,
                                           const DataFileOptions& options = {});
// The extensions open_data_file reads, for messages: ".csv, .dat, ...".
std::string data_file_extensions();

// How a source's arrays become points [n, coordinates] and values [n, fields]:
// - `axes` given: a grid. axes are (coordinate, 1-D array of its values) in the order of the
//   value arrays' dimensions (u[i, j] = u(axes[0][i], axes[1][j])); every value array's shape must
//   equal the axes' lengths in that order (dimensions of length 1 aside, so a MATLAB [n, 1] is a
//   vector).
// - else `points` given: an array [n, coordinates.size()], columns in coordinate order.
// - else: each coordinate's values from the array of its name (a table's columns).
// Every field array (field, array name) must hold one value per point, in the points' order.
struct DataLayout {
  std::vector<std::pair<std::string, std::string>> axes = {};
  std::string points = {};
  std::vector<std::string> coordinates = {};  // the problem's, in order
  std::vector<std::pair<std::string, std::string>> fields = {};
};

PointData read_point_data(const DataSource& source, const DataLayout& layout);

}  // namespace jetpde::io
