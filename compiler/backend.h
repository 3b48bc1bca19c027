// Where a compiled program runs (docs/design.md section 7). Its own header so that the passes
// (precision: what `auto` means depends on the backend) and the executable share it.
#pragma once

#include <string>

namespace jetpde::compiler {

enum class Backend {
  cpu,          // generated C++ kernels and BLAS GEMMs
  cuda,         // generated CUDA kernels (NVRTC) and cuBLAS GEMMs, where built and a GPU exists
  interpreter,  // the reference interpreter (the last fallback)
};
std::string backend_name(Backend backend);

}  // namespace jetpde::compiler
