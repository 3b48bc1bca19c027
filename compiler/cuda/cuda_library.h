// The CUDA library builder (compiler/library.h with LibraryOptions::backend = cuda): a program
// planned for CUDA as one .cu file, its kernels render_cuda_source's, its GEMMs cuBLAS's, behind
// a C API on device pointers (model handle, caller's stream). `jetpde export RUN --library DIR
// --device cuda` writes it, with nvcc's lib<name>.so, the header and the CMake package config.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/library.h"

namespace jetpde::compiler {

// The .cu source: checked as render_library_source checks (fp64 throughout, one input, one
// column per output).
std::string render_cuda_library_source(const Program& program,
                                       const std::map<std::string, MatrixD>& values,
                                       const LibrarySpec& spec);
// Its C header: <name>_cuda_create / _eval / _destroy / _error, the layout of points and values.
std::string render_cuda_library_header(const LibrarySpec& spec, std::int64_t block_rows);

}  // namespace jetpde::compiler
