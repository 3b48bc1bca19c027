#include "io/hdf5_read.h"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>

#include "autodiff/errors.h"

namespace jetpde::io {
namespace {

// Closes an HDF5 handle on scope exit.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// HDF5 prints its error stack to stderr by default; we report our own messages.
void silence_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

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

}  // namespace

MatrixD Dataset::matrix() const {
  const std::int64_t rows = dims.empty() ? 1 : dims[0];
  const std::int64_t cols = dims.size() < 2 ? 1 : dims[1];
  MatrixD m(rows, cols);
  std::copy(values.begin(), values.end(), m.data());  // both row-major
  return m;
}

Dataset read_dataset(const std::string& file, const std::string& name) {
  const Handle f = open_file(file);
  if (H5Lexists(f.get(), name.c_str(), H5P_DEFAULT) <= 0)
    throw UserError("'" + file + "' has no dataset '" + name +
                    "' (datasets: " + joined(datasets_of(f.get())) + ")");
  const Handle d(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) throw UserError("'" + file + "': '" + name + "' is not a dataset");
  const Handle type(H5Dget_type(d.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw UserError("'" + file + "': dataset '" + name + "' is not numeric");
  const Handle space(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 2)
    throw UserError("'" + file + "': dataset '" + name + "' has rank " + std::to_string(rank) +
                    " (at most 2 is supported)");
  hsize_t dims[2] = {1, 1};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  Dataset out;
  std::size_t count = 1;
  for (int r = 0; r < rank; ++r) {
    out.dims.push_back(static_cast<std::int64_t>(dims[r]));
    count *= dims[r];
  }
  out.values.resize(count);
  if (count > 0 &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()) < 0)
    throw UserError("'" + file + "': cannot read dataset '" + name + "'");
  return out;
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
