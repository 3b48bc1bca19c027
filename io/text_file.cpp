#include "io/text_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "autodiff/errors.h"

namespace jetpde::io {

namespace fs = std::filesystem;

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw UserError("cannot write '" + path + "': " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw UserError("cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw UserError("cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace jetpde::io
