// A compiled program as a standalone C library (docs/design.md section 7, "Export"): the kernels
// a renderer emits, the parameters embedded as constants, and a driver that runs the program's
// steps in order over blocks of points, behind a C entry point. `jetpde export RUN --library DIR`
// writes one for a trained run, for the CPU (here: the CBLAS for the GEMMs, host pointers) or for
// CUDA (compiler/cuda/cuda_library.h: cuBLAS, device pointers):
//
//   LibrarySpec spec{.name = "burgers", .input = "points", .coordinates = {"x", "t"},
//                    .outputs = {"u", "u_x"}};
//   LibraryOptions options{.backend = Backend::cpu, .block_rows = 1024};
//   Program program = plan_program(outputs, compile_options);  // for options.backend
//   export_library(program, values, spec, options, "out/");    // out/libburgers.so, burgers.h, ...
//
// The program must be f64 throughout (its GEMMs then go to cblas_dgemm, as the CPU runtime's do)
// and compiled for `rows` points; the driver evaluates any number of points in blocks of that
// many, the last block padded by repeating its last point. Every row of a kernel is computed by
// the same code whatever the row count, so the library gives the CPU runtime's values bit for bit
// when it runs on the CPU it was compiled for, linked to the same BLAS.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "autodiff/primitive.h"
#include "compiler/executable.h"
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

// What a library is built for. The program handed to export_library must be planned for the same
// backend (plan_program with options.backend).
struct LibraryOptions {
  // cpu: points and values in host memory, GEMMs by the CBLAS; cuda: in device memory, kernels
  // compiled by nvcc, GEMMs by cuBLAS (compiler/cuda/cuda_library.cpp).
  Backend backend = Backend::cpu;
  std::int64_t block_rows = 1024;  // the program's rows: points a block
  // CUDA: nvcc's target GPUs, comma-separated ("sm_90", "sm_80,sm_90"); empty: the GPU here
  // (-arch=native), or without one sm_80 and sm_90 with compute_90 PTX that newer GPUs compile.
  std::string cuda_arch;
};

// Renders, compiles and writes the library of `program` for options.backend into `dir`; returns
// the names of the files written (every one written under a temporary name and renamed).
// UserError when that backend has no library builder in this build (CUDA without its toolkit),
// and as render_library_source and build_library.
std::vector<std::string> export_library(const Program& program,
                                        const std::map<std::string, MatrixD>& values,
                                        const LibrarySpec& spec, const LibraryOptions& options,
                                        const std::string& dir);

// A backend's library builder; the CPU's is built in, CUDA's registers itself with its runtime.
using LibraryBuilder = std::vector<std::string> (*)(const Program& program,
                                                    const std::map<std::string, MatrixD>& values,
                                                    const LibrarySpec& spec,
                                                    const LibraryOptions& options,
                                                    const std::string& dir);
bool register_library_builder(Backend backend, LibraryBuilder builder);

// Writes DIR/<name>.cpp, DIR/<name>.h and DIR/<name>Config.cmake, and compiles the source into
// DIR/lib<name>.so with the host compiler (the CPU backend's, same flags), linked to the BLAS
// jetpde was built with. Every file is written under a temporary name and renamed. UserError, with
// the compiler's output, when the compiler fails; for a name that is not a C identifier.
void build_library(const std::string& source, const LibrarySpec& spec, std::int64_t block_rows,
                   const std::string& dir);

// What every backend's library shares.
namespace library_detail {
// UserError unless `name` is a C identifier.
void check_name(const std::string& name);
// The program's input buffer, checked against `spec` (fp64 throughout, one input of
// spec.coordinates columns, one column per output); UserError naming what is wrong.
const Buffer& checked_input(const Program& program, const LibrarySpec& spec);
// The row-major values of a Param or Constant buffer (a parameter's from `values`), checked.
std::vector<double> buffer_values(const Buffer& b, const std::map<std::string, MatrixD>& values);
// `text` written to `path` under a temporary name, then renamed.
void write_atomically(const std::string& path, const std::string& text);
// Where a parameter's or constant's literal array goes: `jp_data<buffer>` to `offset`.
struct EmbeddedBuffer {
  std::size_t buffer = 0;
  std::int64_t offset = 0, bytes = 0;
};
// Every Param and Constant buffer the program places as `static const double jp_data<i>[]` of its
// exact values (hexadecimal literals), appended to `os`.
std::vector<EmbeddedBuffer> embed_buffers(std::ostream& os, const Program& program,
                                          const std::map<std::string, MatrixD>& values);
// The library's <name>_coordinates() and <name>_outputs() definitions.
std::string name_functions(const LibrarySpec& spec);
// The header after its comment: the guard, the counts as macros, `declarations` (the backend's
// entry points) and <name>_coordinates / <name>_outputs in extern "C".
std::string header_body(const LibrarySpec& spec, const std::string& declarations);
std::string joined(const std::vector<std::string>& v, const std::string& sep);
std::string quoted(const std::string& s);  // a C string literal
std::string upper(std::string s);
}  // namespace library_detail

}  // namespace jetpde::compiler
