// Writing HDF5 files atomically: checkpoints, fields and results. A reader (another run resuming,
// a plotting script) sees either the previous complete file or the new complete file, never a
// half-written one, even when the writer dies midway.
//
//   io::Hdf5Writer out("run/checkpoint.h5");
//   out.write("params/w0", w0);                  // group "params" is created on the way
//   out.write_scalar("step", std::int64_t{1200});
//   out.write_string("config", yaml_text);
//   out.attribute("jetpde_version", "0.1.0");
//   out.commit();                                // only now does run/checkpoint.h5 change
//
// Everything is read back with io/hdf5_read.h; doubles round-trip bit for bit (stored as IEEE
// binary64, the machine's own format, so no conversion touches them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/primitive.h"

namespace jetpde::io {

// Writes one HDF5 file: everything goes to `path + ".tmp-<pid>"` in the same folder (so the final
// rename stays within one file system and is atomic); commit() flushes, syncs, closes and renames
// it over `path`. Destroyed without commit() (an exception unwinding, an early return): the
// temporary is removed and `path` is untouched. A process killed outright leaves the temporary
// behind, still without touching `path`.
//
// Names may contain '/': the intermediate groups are created ("adam/m" is dataset "m" in group
// "adam"). Writing a name twice is a UserError; attributes are replaced instead.
// Not copyable or movable: it owns the temporary file.
class Hdf5Writer {
 public:
  // UserError naming `path` when its folder does not exist or a file cannot be created there.
  explicit Hdf5Writer(std::string path);
  ~Hdf5Writer();
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;

  // Rank 2, dims [rows, cols], f64, row-major as HDF5 stores it (MatrixD is row-major too).
  void write(const std::string& name, const MatrixD& values);
  // Rank 1, dims [n].
  void write(const std::string& name, const std::vector<double>& values);
  void write(const std::string& name, const std::vector<std::int64_t>& values);
  // Rank 0.
  void write_scalar(const std::string& name, double value);
  void write_scalar(const std::string& name, std::int64_t value);
  // A scalar variable-length UTF-8 string dataset, of any length (a whole YAML file). The text
  // may not contain a NUL character (HDF5 takes it as a C string); UserError when it does.
  void write_string(const std::string& name, const std::string& text);
  // A string attribute of the root group (read back with read_root_attribute); replaces any
  // attribute of that name written before.
  void attribute(const std::string& name, const std::string& value);

  // Makes the file appear at `path`, replacing what was there. UserError when the data cannot be
  // flushed or the rename fails (the temporary is then removed). Nothing may be written after.
  void commit();

  const std::string& path() const { return path_; }

 private:
  void write_numeric(const std::string& name, std::int64_t file_type, std::int64_t memory_type,
                     const std::vector<std::uint64_t>& dims, const void* data);
  void check_writable(const std::string& name) const;

  std::string path_;
  std::string temporary_;
  std::int64_t file_ = -1;  // the hid_t of the open temporary file (hid_t is int64_t since 1.10)
  bool committed_ = false;
};

}  // namespace jetpde::io
