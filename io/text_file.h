// Writing a text file whole or not at all: a temporary file in the same folder, renamed over the
// target once written (config.yaml, summary.json, CSV from `jetpde eval`). HDF5 and VTK files
// do the same through their own writers.
#pragma once

#include <string>

namespace jetpde::io {

// UserError naming `path` and the reason when it cannot; the temporary is then removed and
// `path` is left as it was.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace jetpde::io
