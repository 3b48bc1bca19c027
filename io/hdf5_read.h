// Reading HDF5 files: numeric datasets of rank 0 to 2 as doubles, string attributes, the list of
// datasets. Enough for reference solutions (../shared/data/*.h5) and, later, checkpoints.
//
//   io::Dataset u = io::read_dataset("burgers.h5", "u");   // u.dims = {256, 100}
//   MatrixD m = u.matrix();                                  // [256, 100]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/primitive.h"

namespace jetpde::io {

struct Dataset {
  std::vector<std::int64_t> dims;  // empty for a scalar
  std::vector<double> values;      // row-major (C order, as HDF5 stores them)
  // Rank 0 -> [1,1], rank 1 -> [n,1], rank 2 -> [rows, cols].
  MatrixD matrix() const;
};

// UserError naming the file, and the dataset with the ones that exist, when either is missing,
// not numeric, or of rank above 2.
Dataset read_dataset(const std::string& file, const std::string& name);
// A numeric dataset of any rank (values on a grid of three axes), read as read_dataset reads one
// of rank 0 to 2 (Dataset::matrix() is then only meaningful up to rank 2).
Dataset read_array_dataset(const std::string& file, const std::string& name);
// Complex datasets, a compound of two floating-point members (h5py's {r, i}): true when `name` is
// one; its real or imaginary part, shaped as the dataset. UserError when it is not complex.
bool is_complex_dataset(const std::string& file, const std::string& name);
Dataset read_complex_part(const std::string& file, const std::string& name, bool imaginary);
// Names may contain '/' for datasets inside groups ("adam/m"), in read_dataset too.
// True when `name` is a dataset of the file (false for a group or a missing name); UserError
// when the file is missing or not HDF5.
bool has_dataset(const std::string& file, const std::string& name);
// An integer dataset of rank 0 or 1, its values in order. UserError naming the file and the
// dataset when it is missing, not an integer type (floats are not truncated silently) or of
// higher rank.
std::vector<std::int64_t> read_int_dataset(const std::string& file, const std::string& name);
// A scalar string dataset, variable- or fixed-length (the trailing padding of a fixed-length one
// removed). UserError naming the file and the dataset when it is missing or not one string.
std::string read_string_dataset(const std::string& file, const std::string& name);
// The names of the datasets at the file's root, sorted.
std::vector<std::string> list_datasets(const std::string& file);
// A string attribute of the file's root group ("" when absent).
std::string read_root_attribute(const std::string& file, const std::string& name);

}  // namespace jetpde::io
