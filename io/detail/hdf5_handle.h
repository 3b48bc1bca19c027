// Shared by the HDF5 reader and writer: an owning handle, and HDF5's own error printing switched
// off (we report our own messages, naming the file and the object).
#pragma once

#include <hdf5.h>

namespace jetpde::io::detail {

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

// HDF5 prints its error stack to stderr by default; once per process, turn that off.
inline void silence_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

}  // namespace jetpde::io::detail
