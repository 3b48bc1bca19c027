#include "io/hdf5_write.h"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <type_traits>

#include "autodiff/errors.h"
#include "io/detail/hdf5_handle.h"

namespace jetpde::io {

// The header keeps hdf5.h (and the mpi.h the parallel flavour pulls in) out of its includers.
static_assert(std::is_same_v<hid_t, std::int64_t>, "Hdf5Writer stores a hid_t as std::int64_t");
static_assert(MatrixD::IsRowMajor, "Hdf5Writer::write(MatrixD) copies no data: HDF5 is row-major");

namespace {

namespace fs = std::filesystem;

using detail::Handle;
using detail::silence_hdf5;

fs::path folder_of(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

// Parts separated by single '/', none empty: "" , "/a", "a/" and "a//b" are refused rather than
// left to HDF5, whose reading of them (absolute paths, ignored slashes) would surprise.
bool valid_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  return name.find("//") == std::string::npos;
}

// The prefixes "a", "a/b" of "a/b/c": the groups a dataset "a/b/c" lives in.
std::vector<std::string> parent_groups(const std::string& name) {
  std::vector<std::string> out;
  for (std::size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1))
    out.push_back(name.substr(0, slash));
  return out;
}

bool is_group(hid_t file, const std::string& name) {
  const Handle object(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
  return object.ok() && H5Iget_type(object.get()) == H5I_GROUP;
}

// Link creation that makes the missing groups of "a/b/c" on the way.
Handle intermediate_groups() {
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  return lcpl;
}

// A scalar variable-length UTF-8 string type, for datasets and attributes alike.
Handle string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

// The data reaches the disk before the rename publishes it: otherwise a power cut right after
// commit() could leave `path` naming an empty or partial file.
bool sync_file(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Makes the rename itself durable; best effort (some file systems refuse to sync a folder).
void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Hdf5Writer::Hdf5Writer(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".tmp-" + std::to_string(::getpid())) {
  silence_hdf5();
  const fs::path folder = folder_of(path_);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw UserError("cannot write '" + path_ + "': folder '" + folder.string() +
                    "' does not exist");
  if (fs::is_directory(path_, ec)) throw UserError("cannot write '" + path_ + "': it is a folder");
  file_ = H5Fcreate(temporary_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) {
    if (::access(folder.c_str(), W_OK) != 0)
      throw UserError("cannot write '" + path_ + "': folder '" + folder.string() +
                      "' is not writable");
    throw UserError("cannot write '" + path_ + "': cannot create '" + temporary_ + "'");
  }
}

Hdf5Writer::~Hdf5Writer() {
  if (committed_) return;
  if (file_ >= 0) H5Fclose(file_);
  std::error_code ec;  // a destructor must not throw; a leftover temporary is harmless
  fs::remove(temporary_, ec);
}

void Hdf5Writer::check_writable(const std::string& name) const {
  check_internal(!committed_,
                 "Hdf5Writer for '" + path_ + "': '" + name + "' written after commit()");
  if (!valid_name(name))
    throw UserError("cannot write '" + path_ + "': '" + name +
                    "' is not a dataset name (parts separated by single '/', none empty)");
  for (const std::string& group : parent_groups(name)) {
    if (H5Lexists(file_, group.c_str(), H5P_DEFAULT) <= 0) return;  // made on the way
    if (!is_group(file_, group))
      throw UserError("cannot write '" + path_ + "': '" + name + "' needs a group '" + group +
                      "', which is already a dataset");
  }
  if (H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0)
    throw UserError("cannot write '" + path_ + "': '" + name + "' is written twice");
}

void Hdf5Writer::write_numeric(const std::string& name, std::int64_t file_type,
                               std::int64_t memory_type, const std::vector<std::uint64_t>& dims,
                               const void* data) {
  check_writable(name);
  std::vector<hsize_t> extent(dims.begin(), dims.end());
  const Handle space(
      extent.empty() ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr),
      H5Sclose);
  const Handle lcpl = intermediate_groups();
  const Handle d(
      H5Dcreate2(file_, name.c_str(), file_type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!d.ok())
    throw UserError("cannot write '" + path_ + "': cannot create dataset '" + name + "'");
  // An empty selection is still written through a null buffer, which H5Dwrite refuses.
  const bool empty = H5Sget_simple_extent_npoints(space.get()) == 0;
  if (!empty && H5Dwrite(d.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw UserError("cannot write '" + path_ + "': cannot write dataset '" + name + "'");
}

void Hdf5Writer::write(const std::string& name, const MatrixD& values) {
  write_numeric(
      name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
      {static_cast<std::uint64_t>(values.rows()), static_cast<std::uint64_t>(values.cols())},
      values.data());
}

void Hdf5Writer::write(const std::string& name, const std::vector<double>& values) {
  write_numeric(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {values.size()}, values.data());
}

void Hdf5Writer::write(const std::string& name, const std::vector<std::int64_t>& values) {
  write_numeric(name, H5T_STD_I64LE, H5T_NATIVE_INT64, {values.size()}, values.data());
}

void Hdf5Writer::write_scalar(const std::string& name, double value) {
  write_numeric(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {}, &value);
}

void Hdf5Writer::write_scalar(const std::string& name, std::int64_t value) {
  write_numeric(name, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, &value);
}

void Hdf5Writer::write_string(const std::string& name, const std::string& text) {
  check_writable(name);
  if (text.find('\0') != std::string::npos)
    throw UserError("cannot write '" + path_ + "': string '" + name + "' contains a NUL character");
  const Handle type = string_type();
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle lcpl = intermediate_groups();
  const Handle d(H5Dcreate2(file_, name.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT,
                            H5P_DEFAULT),
                 H5Dclose);
  const char* data = text.c_str();
  if (!d.ok() || H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &data) < 0)
    throw UserError("cannot write '" + path_ + "': cannot write string '" + name + "'");
}

void Hdf5Writer::attribute(const std::string& name, const std::string& value) {
  check_internal(!committed_,
                 "Hdf5Writer for '" + path_ + "': attribute '" + name + "' written after commit()");
  if (name.empty()) throw UserError("cannot write '" + path_ + "': an attribute needs a name");
  if (value.find('\0') != std::string::npos)
    throw UserError("cannot write '" + path_ + "': attribute '" + name +
                    "' contains a NUL character");
  if (H5Aexists(file_, name.c_str()) > 0) H5Adelete(file_, name.c_str());
  const Handle type = string_type();
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle a(H5Acreate2(file_, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose);
  const char* data = value.c_str();
  if (!a.ok() || H5Awrite(a.get(), type.get(), &data) < 0)
    throw UserError("cannot write '" + path_ + "': cannot write attribute '" + name + "'");
}

void Hdf5Writer::commit() {
  check_internal(!committed_, "Hdf5Writer for '" + path_ + "': commit() called twice");
  const bool flushed = H5Fflush(file_, H5F_SCOPE_GLOBAL) >= 0;
  const bool closed = H5Fclose(file_) >= 0;
  file_ = -1;
  if (!flushed || !closed || !sync_file(temporary_))
    throw UserError("cannot write '" + path_ + "': flushing '" + temporary_ + "' failed");
  std::error_code ec;
  fs::rename(temporary_, path_, ec);
  if (ec)
    throw UserError("cannot write '" + path_ + "': renaming '" + temporary_ +
                    "' over it failed: " + ec.message());
  committed_ = true;
  sync_folder(folder_of(path_));
}

}  // namespace jetpde::io
