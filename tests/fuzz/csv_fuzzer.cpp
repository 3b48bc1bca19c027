// libFuzzer target: the CSV reader (io/csv.h) on a file holding the input. A UserError is the
// expected answer to bad input; anything else (another exception, a crash, a sanitizer report, a
// hang, running out of memory) is a finding. A table that is read must have what read_csv
// promises: distinct column names and values of its shape.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "autodiff/errors.h"
#include "io/csv.h"

namespace {

// One file per process, rewritten for every input.
const std::string& input_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/jetpde_fuzz_csv_" +
           std::to_string(getpid()) + ".csv";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = input_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
    const jetpde::io::CsvTable t = jetpde::io::read_csv(path);
    const std::set<std::string> names(t.columns.begin(), t.columns.end());
    if (names.size() != t.columns.size() ||
        t.values.cols() != static_cast<Eigen::Index>(t.columns.size()))
      std::abort();
    for (const std::string& name : t.columns) t.column(name);
  } catch (const jetpde::UserError&) {
  }
  return 0;
}
