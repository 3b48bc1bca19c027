// The formats behind io::open_data_file (data_files.h), one factory each; shared helpers for
// their arrays. Not for use outside io/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/data_files.h"

namespace jetpde::io::detail {

std::unique_ptr<DataSource> open_npy(const std::string& path);
std::unique_ptr<DataSource> open_npz(const std::string& path);
std::unique_ptr<DataSource> open_mat(const std::string& path);

// "[3, 4]"
std::string shape_text(const std::vector<std::int64_t>& shape);

// A complex array `u` is read as `u.re` and `u.im`: the base name and the part (0 real, 1
// imaginary) of `name`, or the name and -1 when it ends in neither.
std::pair<std::string, int> complex_part(const std::string& name);

}  // namespace jetpde::io::detail
