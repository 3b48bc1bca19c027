// A compiled program as a standalone C library (docs/design.md section 7, "Export"): the kernels
// the CPU renderer emits, the parameters embedded as constants, and a driver that runs the
// program's steps in order over blocks of points (the GEMMs through the CBLAS), behind a C entry
// point. `jetpde export RUN --library DIR` writes one for a trained run:
//
//   LibrarySpec spec{.name = "burgers", .input = "points", .coordinates = {"x", "t"},
//                    .outputs = {"u", "u_x"}};
//   std::string source = render_library_source(exe.program(), values, spec);
//   build_library(source, spec, "out/");  // out/libburgers.so, burgers.h, burgersConfig.cmake
//
// The program must be f64 throughout (its GEMMs then go to cblas_dgemm, as the CPU runtime's do)
// and compiled for `rows` points; the driver evaluates any number of points in blocks of that
// many, the last block padded by repeating its last point. Every row of a kernel is computed by
// the same code whatever the row count, so the library gives the CPU runtime's values bit for bit
// when it runs on the CPU it was compiled for, linked to the same BLAS.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autodiff/primitive.h"
#include "compiler/program.h"

namespace jetpde::compiler {

struct LibrarySpec {
  std::string name = "model";            // a C identifier: <name>_eval, lib<name>.so, <name>.h
  std::string input = "points";          // the input buffer's name: [rows, coordinates]
  std::vector<std::string> coordinates;  // the input's columns, in order
  // One per program output, in order: each output is [rows, 1] (or [1, 1], a constant).
  std::vector<std::string> outputs;
  std::string description;  // a line for the header's comment (the run, its step)
};

// The library's C++ source. `values`: every Param buffer's value by name (from the trained
// parameters). UserError when the program is not f64 throughout, has no input `spec.input` of
// spec.coordinates columns, an output of more than one column, or a parameter without a value.
std::string render_library_source(const Program& program,
                                  const std::map<std::string, MatrixD>& values,
                                  const LibrarySpec& spec);

// The C header declaring what the source defines.
std::string render_library_header(const LibrarySpec& spec, std::int64_t block_rows);

// A CMake package configuration: find_package(<name> CONFIG PATHS DIR) gives the imported target
// jetpde::<name> (the shared library, its include directory).
std::string render_library_cmake_config(const LibrarySpec& spec);

// Writes DIR/<name>.cpp, DIR/<name>.h and DIR/<name>Config.cmake, and compiles the source into
// DIR/lib<name>.so with the host compiler (the CPU backend's, same flags), linked to the BLAS
// jetpde was built with. Every file is written under a temporary name and renamed. UserError, with
// the compiler's output, when the compiler fails; for a name that is not a C identifier.
void build_library(const std::string& source, const LibrarySpec& spec, std::int64_t block_rows,
                   const std::string& dir);

}  // namespace jetpde::compiler
