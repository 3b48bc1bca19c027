// libFuzzer target: the config loader (io/config.h) on YAML text: parse, schema, every section
// converted and validated, as `jetpde run` does before training. Data files are looked up in a
// folder that does not exist, so no input reads the disk. A UserError is the expected answer to
// bad input; anything else (another exception such as yaml-cpp's, a crash, a sanitizer report, a
// hang, running out of memory) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "autodiff/errors.h"
#include "io/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    jetpde::io::run_config_from_text(text, "fuzz.yaml", "/nonexistent/jetpde-fuzz");
  } catch (const jetpde::UserError&) {
  }
  return 0;
}
