#include "io/hdf5_read.h"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "autodiff/errors.h"
#include "io/detail/hdf5_handle.h"

namespace jetpde::io {
namespace {

using detail::Handle;
using detail::silence_hdf5;

Handle open_file(const std::string& file) {
  silence_hdf5();
  if (!std::filesystem::exists(file)) throw UserError("cannot read '" + file + "': no such file");
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.ok()) throw UserError("cannot read '" + file + "': not an HDF5 file");
  return f;
}

// HDF5 1.12 moved link and object info to new structs (H5L_info2_t, H5O_info2_t); 1.10 is
// Debian 12's.
#if H5_VERSION_GE(1, 12, 0)
using LinkInfo = H5L_info2_t;
herr_t object_info(hid_t group, const char* name, H5O_info2_t* info) {
  return H5Oget_info_by_name3(group, name, info, H5O_INFO_BASIC, H5P_DEFAULT);
}
using ObjectInfo = H5O_info2_t;
#else
using LinkInfo = H5L_info_t;
herr_t object_info(hid_t group, const char* name, H5O_info_t* info) {
  return H5Oget_info_by_name2(group, name, info, H5O_INFO_BASIC, H5P_DEFAULT);
}
using ObjectInfo = H5O_info_t;
#endif

herr_t collect_dataset(hid_t group, const char* name, const LinkInfo*, void* out) {
  ObjectInfo info;
  if (object_info(group, name, &info) >= 0 && info.type == H5O_TYPE_DATASET)
    static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

std::vector<std::string> datasets_of(hid_t file) {
  std::vector<std::string> names;
#if H5_VERSION_GE(1, 12, 0)
  H5Literate2(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_dataset, &names);
#else
  H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_dataset, &names);
#endif
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// H5Lexists fails, rather than answering false, when a group on the way is missing: each prefix
// of "a/b/c" is asked in turn.
bool link_exists(hid_t file, const std::string& name) {
  for (std::size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1))
    if (slash > 0 && H5Lexists(file, name.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) return false;
  return !name.empty() && H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
}

bool is_dataset(hid_t file, const std::string& name) {
  ObjectInfo info;
  return link_exists(file, name) && object_info(file, name.c_str(), &info) >= 0 &&
         info.type == H5O_TYPE_DATASET;
}

// The datasets next to `name` ("adam/m", "adam/v" for a missing "adam/u"), for error messages;
// the root's when its group does not exist either.
std::vector<std::string> datasets_near(hid_t file, const std::string& name) {
  const std::size_t slash = name.rfind('/');
  const std::string group = slash == std::string::npos ? "" : name.substr(0, slash);
  if (group.empty() || !link_exists(file, group)) return datasets_of(file);
  const Handle g(H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.ok()) return datasets_of(file);
  std::vector<std::string> names = datasets_of(g.get());
  for (std::string& n : names) n = group + "/" + n;
  return names;
}

// The dataset `name`, or a UserError naming the file, the dataset and the datasets beside it.
Handle open_dataset(const std::string& file, hid_t f, const std::string& name) {
  if (!is_dataset(f, name))
    throw UserError("'" + file + "' has no dataset '" + name +
                    "' (datasets: " + joined(datasets_near(f, name)) + ")");
  Handle d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) throw UserError("'" + file + "': cannot open dataset '" + name + "'");
  return d;
}

// The element count of a dataset and its rank.
std::pair<std::size_t, int> extent_of(hid_t dataset) {
  const Handle space(H5Dget_space(dataset), H5Sclose);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  return {count < 0 ? 0 : static_cast<std::size_t>(count), H5Sget_simple_extent_ndims(space.get())};
}

// A string stored as `type` (fixed-length) in `dataset`, up to its padding.
std::string read_fixed_string(hid_t dataset, hid_t type) {
  std::string out(H5Tget_size(type), '\0');
  if (H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) return "";
  if (H5Tget_strpad(type) == H5T_STR_SPACEPAD)  // Fortran's padding
    out.erase(out.find_last_not_of(' ') + 1);
  else
    out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
  return out;
}

std::string read_variable_string(hid_t dataset, hid_t type) {
  const Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(memory.get(), H5T_VARIABLE);
  H5Tset_cset(memory.get(), H5Tget_cset(type));
  char* value = nullptr;
  if (H5Dread(dataset, memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0 || !value)
    return "";
  std::string out = value;
  H5free_memory(value);
  return out;
}

}  // namespace

MatrixD Dataset::matrix() const {
  const std::int64_t rows = dims.empty() ? 1 : dims[0];
  const std::int64_t cols = dims.size() < 2 ? 1 : dims[1];
  MatrixD m(rows, cols);
  std::copy(values.begin(), values.end(), m.data());  // both row-major
  return m;
}

namespace {

// The dataspace's dimensions into out.dims; returns the number of values.
std::size_t read_shape(hid_t space, int rank, Dataset& out) {
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank), 1);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::size_t count = 1;
  for (const hsize_t n : dims) {
    out.dims.push_back(static_cast<std::int64_t>(n));
    count *= n;
  }
  return count;
}

// A numeric dataset as doubles; UserError when it has a rank above `max_rank`.
Dataset read_numeric(const std::string& file, const std::string& name, int max_rank) {
  const Handle f = open_file(file);
  const Handle d = open_dataset(file, f.get(), name);
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw UserError("'" + file + "': dataset '" + name + "' is not numeric");
  const Handle space(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > max_rank)
    throw UserError("'" + file + "': dataset '" + name + "' has rank " + std::to_string(rank) +
                    " (at most " + std::to_string(max_rank) + " is supported)");
  Dataset out;
  const std::size_t count = read_shape(space.get(), rank, out);
  out.values.resize(count);
  if (count > 0 &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()) < 0)
    throw UserError("'" + file + "': cannot read dataset '" + name + "'");
  return out;
}

// The members of a complex compound type (h5py's {r, i}, MATLAB v7.3's {real, imag}): two
// floating-point members; empty when `type` is not one.
std::vector<std::string> complex_members(hid_t type) {
  if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return {};
  std::vector<std::string> names;
  for (unsigned m = 0; m < 2; ++m) {
    if (H5Tget_member_class(type, m) != H5T_FLOAT) return {};
    char* name = H5Tget_member_name(type, m);
    names.push_back(name ? name : "");
    H5free_memory(name);
  }
  return names;
}

}  // namespace

Dataset read_dataset(const std::string& file, const std::string& name) {
  return read_numeric(file, name, 2);
}

bool is_complex_dataset(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  if (!is_dataset(f.get(), name)) return false;
  const Handle d(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  return d.ok() && !complex_members(type.get()).empty();
}

Dataset read_complex_part(const std::string& file, const std::string& name, bool imaginary) {
  const Handle f = open_file(file);
  const Handle d = open_dataset(file, f.get(), name);
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  const std::vector<std::string> members = complex_members(type.get());
  if (members.empty())
    throw UserError("'" + file + "': dataset '" + name +
                    "' is not complex (a compound of two floating-point members)");
  const Handle space(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  Dataset out;
  const std::size_t count = read_shape(space.get(), std::max(rank, 0), out);
  // A memory type of the one member: HDF5 reads that part alone, converted to double.
  const Handle memory(H5Tcreate(H5T_COMPOUND, sizeof(double)), H5Tclose);
  H5Tinsert(memory.get(), members[imaginary ? 1 : 0].c_str(), 0, H5T_NATIVE_DOUBLE);
  out.values.resize(count);
  if (count > 0 &&
      H5Dread(d.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()) < 0)
    throw UserError("'" + file + "': cannot read dataset '" + name + "'");
  return out;
}

Dataset read_array_dataset(const std::string& file, const std::string& name) {
  return read_numeric(file, name, 32);  // H5S_MAX_RANK
}

bool has_dataset(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  return is_dataset(f.get(), name);
}

std::vector<std::int64_t> read_int_dataset(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  const Handle d = open_dataset(file, f.get(), name);
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    throw UserError("'" + file + "': dataset '" + name + "' is not of an integer type");
  const auto [count, rank] = extent_of(d.get());
  if (rank < 0 || rank > 1)
    throw UserError("'" + file + "': dataset '" + name + "' has rank " + std::to_string(rank) +
                    " (integers are read from rank 0 or 1)");
  std::vector<std::int64_t> out(count);
  if (count > 0 &&
      H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw UserError("'" + file + "': cannot read dataset '" + name + "'");
  return out;
}

std::string read_string_dataset(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  const Handle d = open_dataset(file, f.get(), name);
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw UserError("'" + file + "': dataset '" + name + "' is not a string");
  if (const std::size_t count = extent_of(d.get()).first; count != 1)
    throw UserError("'" + file + "': dataset '" + name + "' holds " + std::to_string(count) +
                    " strings, not one");
  return H5Tis_variable_str(type.get()) > 0 ? read_variable_string(d.get(), type.get())
                                            : read_fixed_string(d.get(), type.get());
}

std::vector<std::string> list_datasets(const std::string& file) {
  const Handle f = open_file(file);
  return datasets_of(f.get());
}

std::string read_root_attribute(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  if (H5Aexists(f.get(), name.c_str()) <= 0) return "";
  const Handle a(H5Aopen(f.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  const Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw UserError("'" + file + "': attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {
    char* value = nullptr;
    const Handle mem(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
    if (H5Aread(a.get(), mem.get(), &value) < 0 || !value) return "";
    std::string out = value;
    H5free_memory(value);
    return out;
  }
  std::string out(H5Tget_size(type.get()), '\0');
  H5Aread(a.get(), type.get(), out.data());
  out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
  return out;
}

}  // namespace jetpde::io
