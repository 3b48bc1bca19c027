#include "compiler/library.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autodiff/errors.h"
#include "compiler/cpu_compiler.h"
#include "compiler/render_c.h"

#ifndef JETPDE_LIBRARY_BLAS
#define JETPDE_LIBRARY_BLAS "-lopenblas"
#endif

namespace jetpde::compiler {
namespace fs = std::filesystem;

namespace library_detail {

void check_name(const std::string& name) {
  const auto c_identifier = [](const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
  };
  if (!c_identifier(name))
    throw UserError(
        "library name '" + name +
        "': expected a C identifier (letters, digits and _, not starting with a digit)");
}

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<double> buffer_values(const Buffer& b, const std::map<std::string, MatrixD>& values) {
  if (b.kind == Buffer::Kind::Constant) return b.data;
  const auto it = values.find(b.name);
  if (it == values.end()) throw UserError("library: no value for the parameter '" + b.name + "'");
  const MatrixD& m = it->second;
  if (m.rows() != b.shape.rows || m.cols() != b.shape.cols)
    throw UserError("library: the parameter '" + b.name + "' is [" + std::to_string(m.rows()) +
                    ", " + std::to_string(m.cols()) + "], the program's [" +
                    std::to_string(b.shape.rows) + ", " + std::to_string(b.shape.cols) + "]");
  return std::vector<double>(m.data(), m.data() + m.size());  // row-major (autodiff/primitive.h)
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) throw UserError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw UserError("cannot rename " + tmp + " to " + path);
}

const Buffer& checked_input(const Program& program, const LibrarySpec& spec) {
  check_name(spec.name);
  // The library runs every step whole, at the arena offsets of the memory plan.
  check_internal(program.regions.empty(),
                 "library: a program with tiled regions (plan it with "
                 "cpu.tile_rows -1)");
  const auto d = static_cast<std::int64_t>(spec.coordinates.size());
  int input = -1;
  for (std::size_t i = 0; i < program.buffers.size(); ++i) {
    const Buffer& b = program.buffers[i];
    if (b.dtype != DType::f64 || b.packed)
      throw UserError("library: the program is not fp64 throughout (buffer '" + b.name +
                      "'); export compiles it in fp64");
    if (b.kind != Buffer::Kind::Input) continue;
    if (b.name != spec.input)
      throw UserError("library: the program has an input '" + b.name + "' besides '" + spec.input +
                      "' (a mesh distance, data values): not exportable yet");
    if (b.shape.cols != d)
      throw UserError("library: the input '" + spec.input + "' has " +
                      std::to_string(b.shape.cols) + " columns for " + std::to_string(d) +
                      " coordinates");
    input = static_cast<int>(i);
  }
  if (input < 0) throw UserError("library: the program has no input '" + spec.input + "'");
  if (program.outputs.size() != spec.outputs.size())
    throw UserError("library: " + std::to_string(program.outputs.size()) + " outputs for " +
                    std::to_string(spec.outputs.size()) + " names");
  const Buffer& in = program.buffers[static_cast<std::size_t>(input)];
  for (const View& v : program.outputs)
    if (v.shape.cols != 1 || (v.shape.rows != in.shape.rows && v.shape.rows != 1))
      throw UserError("library: an output of shape [" + std::to_string(v.shape.rows) + ", " +
                      std::to_string(v.shape.cols) + "]: expected one column per output");
  return in;
}

std::vector<EmbeddedBuffer> embed_buffers(std::ostream& os, const Program& program,
                                          const std::map<std::string, MatrixD>& values) {
  std::vector<EmbeddedBuffer> out;
  for (std::size_t i = 0; i < program.buffers.size(); ++i) {
    const Buffer& b = program.buffers[i];
    if ((b.kind != Buffer::Kind::Param && b.kind != Buffer::Kind::Constant) || b.offset < 0)
      continue;
    const std::vector<double> data = buffer_values(b, values);
    os << "static const double jp_data" << i << "[" << std::max<std::size_t>(1, data.size())
       << "] = {";
    for (std::size_t k = 0; k < data.size(); ++k)
      os << (k % 4 ? " " : "\n  ") << c_literal(data[k], DType::f64) << ",";
    os << "\n};  // " << (b.name.empty() ? "constant" : b.name) << "\n";
    out.push_back({.buffer = i, .offset = b.offset, .bytes = b.bytes()});
  }
  return out;
}

std::string name_functions(const LibrarySpec& spec) {
  return "extern \"C\" const char* " + spec.name + "_coordinates(void) { return " +
         quoted(joined(spec.coordinates, ",")) + "; }\n" + "extern \"C\" const char* " + spec.name +
         "_outputs(void) { return " + quoted(joined(spec.outputs, ",")) + "; }\n";
}

std::string header_body(const LibrarySpec& spec, const std::string& declarations) {
  const std::string n = spec.name, N = upper(spec.name);
  std::ostringstream os;
  os << "#ifndef " << N << "_H\n#define " << N << "_H\n\n"
     << "#define " << N << "_COORDINATES " << spec.coordinates.size() << "\n"
     << "#define " << N << "_OUTPUTS " << spec.outputs.size() << "\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << declarations << "/* \"" << joined(spec.coordinates, ",") << "\" and \""
     << joined(spec.outputs, ",") << "\" */\n"
     << "const char* " << n << "_coordinates(void);\n"
     << "const char* " << n << "_outputs(void);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return os.str();
}

}  // namespace library_detail

namespace {

using namespace library_detail;

std::map<Backend, LibraryBuilder>& library_builders() {
  static std::map<Backend, LibraryBuilder> builders;
  return builders;
}

std::vector<std::string> build_cpu_library(const Program& program,
                                           const std::map<std::string, MatrixD>& values,
                                           const LibrarySpec& spec, const LibraryOptions& options,
                                           const std::string& dir) {
  build_library(render_library_source(program, values, spec), spec, options.block_rows, dir);
  const std::string n = spec.name;
  return {"lib" + n + ".so", n + ".h", n + "Config.cmake", n + ".cpp"};
}

}  // namespace

std::string render_library_source(const Program& program,
                                  const std::map<std::string, MatrixD>& values,
                                  const LibrarySpec& spec) {
  const Buffer& in = checked_input(program, spec);
  const auto d = static_cast<std::int64_t>(spec.coordinates.size());
  const std::int64_t rows = in.shape.rows;
  std::ostringstream os;
  os << "// Generated by jetpde export --library: " << spec.name << " ("
     << joined(spec.outputs, ", ") << " at points (" << joined(spec.coordinates, ", ") << "))";
  if (!spec.description.empty()) os << ", " << spec.description;
  os << ".\n// Rebuild: c++ " << host_compile_flags() << " -shared -o lib" << spec.name << ".so "
     << spec.name << ".cpp -lopenblas\n";
  // The kernels, internal to the library (two exported models linked into one program must not
  // clash).
  std::string kernels = render_cpu_source(program);
  const std::string linkage = "extern \"C\" void", exported = linkage + " jetpde_step";
  for (std::size_t at = kernels.find(exported); at != std::string::npos;
       at = kernels.find(exported, at))
    kernels.replace(at, linkage.size(), "static void");
  os << kernels;
  os << "// ---- the driver ----\n"
        "extern \"C\" void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k,\n"
        "                              double alpha, const double* a, int lda, const double* b,\n"
        "                              int ldb, double beta, double* c, int ldc);\n\n";
  // The parameters and constants, exactly (hexadecimal literals), and where they go.
  std::ostringstream init;
  for (const EmbeddedBuffer& e : embed_buffers(os, program, values))
    init << "  std::memcpy(arena + " << e.offset << ", jp_data" << e.buffer << ", " << e.bytes
         << ");\n";
  os << "\nstatic void jp_parameters(char* arena) {\n" << init.str() << "}\n\n";
  os << "static void jp_run(char* arena) {\n";
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    if (std::holds_alternative<Kernel>(program.steps[s].op)) {
      os << "  " << kernel_symbol(s) << "(arena);\n";
      continue;
    }
    const Gemm& g = std::get<Gemm>(program.steps[s].op);
    const auto ld = [&](const View& v) {
      return program.buffers[static_cast<std::size_t>(v.buffer)].shape.cols;
    };
    const auto at = [&](const View& v) {
      return "(double*)(arena + " +
             std::to_string(program.buffers[static_cast<std::size_t>(v.buffer)].offset) + ") + " +
             std::to_string(v.row0 * ld(v) + v.col0);
    };
    // As the CPU runtime calls it (cpu_runtime.cpp, run_dgemm): row-major, one call.
    os << "  cblas_dgemm(101, " << (g.transpose_a ? 112 : 111) << ", "
       << (g.transpose_b ? 112 : 111) << ", " << g.c.shape.rows << ", " << g.c.shape.cols << ", "
       << (g.transpose_a ? g.a.shape.rows : g.a.shape.cols) << ", 1.0, " << at(g.a) << ", "
       << ld(g.a) << ", " << at(g.b) << ", " << ld(g.b) << ", 0.0, " << at(g.c) << ", " << ld(g.c)
       << ");\n";
  }
  os << "}\n\n";
  const std::string fn = spec.name;
  os << "extern \"C\" int " << fn << "_eval(const double* points, long n, double* out) {\n"
     << "  if (n < 0 || (n > 0 && (!points || !out))) return -1;\n"
     << "  if (n == 0) return 0;\n"
     << "  char* arena = (char*)std::aligned_alloc(64, "
     << (std::max<std::int64_t>(64, program.arena_bytes) + 63) / 64 * 64 << ");\n"
     << "  if (!arena) return -2;\n"
     << "  for (long first = 0; first < n; first += " << rows << ") {\n"
     << "    const long count = n - first < " << rows << " ? n - first : " << rows << ";\n"
     << "    jp_parameters(arena);  // the program may reuse any buffer as scratch\n"
     << "    double* in = (double*)(arena + " << in.offset << ");\n"
     << "    for (long i = 0; i < " << rows << "; ++i) {\n"
     << "      const double* p = points + (first + (i < count ? i : count - 1)) * " << d << ";\n"
     << "      for (long c = 0; c < " << d << "; ++c) in[i * " << d << " + c] = p[c];\n"
     << "    }\n"
     << "    jp_run(arena);\n";
  for (std::size_t k = 0; k < program.outputs.size(); ++k) {
    const View& v = program.outputs[k];
    os << "    for (long i = 0; i < count; ++i) {\n"
       << "      const long j = 0;\n"
       << "      out[(first + i) * " << program.outputs.size() << " + " << k
       << "] = " << c_element(program, v, false) << ";\n"
       << "    }\n";
  }
  os << "  }\n  std::free(arena);\n  return 0;\n}\n\n" << name_functions(spec);
  return os.str();
}

std::string render_library_header(const LibrarySpec& spec, std::int64_t block_rows) {
  check_name(spec.name);
  const std::string n = spec.name, N = upper(spec.name);
  std::ostringstream os;
  os << "/* " << n << ".h: generated by jetpde export --library";
  if (!spec.description.empty()) os << " (" << spec.description << ")";
  os << ".\n"
     << " *\n"
     << " * " << n << "_eval(points, n, out): the trained model at n points.\n"
     << " *   points  n x " << N << "_COORDINATES doubles, row-major: point i is points["
     << "i * " << N << "_COORDINATES + c],\n"
     << " *           c over (" << joined(spec.coordinates, ", ") << ")\n"
     << " *   out     n x " << N << "_OUTPUTS doubles, row-major: out[i * " << N
     << "_OUTPUTS + k], k over\n"
     << " *           (" << joined(spec.outputs, ", ") << ")\n"
     << " *   returns 0; -1 when n < 0 or a pointer is null (n > 0); -2 when memory cannot be\n"
     << " *   allocated. Thread-safe: each call has its own memory. Computed in fp64, "
     << block_rows << " points\n"
     << " *   at a time, with the same kernels and BLAS calls as jetpde's CPU backend: the values\n"
     << " *   of `jetpde eval --precision fp64` bit for bit on the CPU it was exported on.\n"
     << " * From Fortran: bind(C, name=\"" << n << "_eval\") with points(" << N
     << "_COORDINATES, n) and out(" << N << "_OUTPUTS, n).\n"
     << " */\n"
     << header_body(spec, "int " + n + "_eval(const double* points, long n, double* out);\n");
  return os.str();
}

std::string render_library_cmake_config(const LibrarySpec& spec) {
  check_name(spec.name);
  std::string text = R"(# @Config.cmake: generated by jetpde export --library.
#   find_package(@ CONFIG REQUIRED PATHS <this folder>)
#   target_link_libraries(app PRIVATE jetpde::@)
if(NOT TARGET jetpde::@)
  add_library(jetpde::@ SHARED IMPORTED)
  set_target_properties(jetpde::@ PROPERTIES
    IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/lib@.so"
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}")
endif()
)";
  for (std::size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at))
    text.replace(at, 1, spec.name);
  return text;
}

void build_library(const std::string& source, const LibrarySpec& spec, std::int64_t block_rows,
                   const std::string& dir) {
  check_name(spec.name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UserError("--library: cannot create the folder " + dir);
  const fs::path base = fs::path(dir) / spec.name;
  write_atomically(base.string() + ".cpp", source);
  const fs::path so = fs::path(dir) / ("lib" + spec.name + ".so");
  const std::string tmp = so.string() + ".tmp-" + std::to_string(getpid());
  compile_shared_library(base.string() + ".cpp", tmp, JETPDE_LIBRARY_BLAS);
  fs::rename(tmp, so, ec);
  if (ec) throw UserError("cannot rename " + tmp + " to " + so.string());
  write_atomically(base.string() + ".h", render_library_header(spec, block_rows));
  write_atomically((fs::path(dir) / (spec.name + "Config.cmake")).string(),
                   render_library_cmake_config(spec));
}

bool register_library_builder(Backend backend, LibraryBuilder builder) {
  library_builders()[backend] = builder;
  return true;
}

std::vector<std::string> export_library(const Program& program,
                                        const std::map<std::string, MatrixD>& values,
                                        const LibrarySpec& spec, const LibraryOptions& options,
                                        const std::string& dir) {
  if (options.backend == Backend::cpu)
    return build_cpu_library(program, values, spec, options, dir);
  const auto it = library_builders().find(options.backend);
  if (it == library_builders().end())
    throw UserError("--library: no " + backend_name(options.backend) +
                    " library in this build of jetpde" +
                    (options.backend == Backend::cuda
                         ? " (it was built without the CUDA toolkit: nvcc, cudart, cuBLAS)"
                         : ""));
  return it->second(program, values, spec, options, dir);
}

}  // namespace jetpde::compiler
