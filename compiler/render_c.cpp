#include "compiler/render_c.h"

#include <array>
#include <cstdio>
#include <sstream>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/primitive.h"

namespace jetpde::compiler {
namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string storage_type(const Buffer& b) {
  return b.packed ? "unsigned short" : b.dtype == DType::f64 ? "double" : "float";
}

// `expr` converted to what buffer b stores.
std::string stored(const Buffer& b, const std::string& expr) {
  return b.packed ? "jp_to_bf16((float)(" + expr + "))" : "(" + storage_type(b) + ")(" + expr + ")";
}

// Index expression of element (i, j) of a view.
std::string index_of(const View& v, std::int64_t ld) {
  std::ostringstream os;
  os << "(" << v.row0;
  if (!v.row_broadcast) os << " + i";
  os << ") * " << ld << " + " << v.col0;
  if (!v.col_broadcast) os << " + j";
  return os.str();
}

std::string pointer(const Program& p, const View& v, bool writable) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
  std::ostringstream os;
  os << "((" << (writable ? "" : "const ") << storage_type(b) << "*)(arena + " << b.offset << "))";
  return os.str();
}

// How a kernel's views are addressed: from the arena at their buffer's offset or, in a tiled
// region's rows function, a region-local buffer (TiledRegion::locals, slot k) through the table:
// its base lb[k], and lr[2k] rows per block (the region's points in the arena, the tile's in a
// scratch) and lr[2k + 1] (0 in the arena, 1 in a scratch: rows counted from the tile's i0).
struct Addressing {
  std::vector<int> slot;  // by buffer: the local's slot, or -1 (empty: none)
  std::int64_t points = 0;
  const char* row_sums = "acc";  // where a row's terms of the sums over rows go
  int slot_of(const View& v) const {
    return slot.empty() ? -1 : slot[static_cast<std::size_t>(v.buffer)];
  }
};

std::string address_base(const Program& p, const View& v, bool writable, const Addressing& at) {
  const int k = at.slot_of(v);
  if (k < 0) return pointer(p, v, writable);
  return "((" + std::string(writable ? "" : "const ") +
         storage_type(p.buffers[static_cast<std::size_t>(v.buffer)]) + "*)(lb[" +
         std::to_string(k) + "]))";
}

// Index of element (i, j) of `v` under `at`; a local's row: block * lr[2k] - lr[2k + 1] * i0 + i.
std::string address_index(const Program& p, const View& v, const Addressing& at) {
  const std::int64_t ld = p.buffers[static_cast<std::size_t>(v.buffer)].shape.cols;
  const int k = at.slot_of(v);
  if (k < 0) return index_of(v, ld);
  std::ostringstream os;
  os << "(" << v.row0 / at.points << " * lr[" << 2 * k << "] - lr[" << 2 * k + 1 << "] * i0 + i) * "
     << ld << " + " << v.col0;
  if (!v.col_broadcast) os << " + j";
  return os.str();
}

bool reduces_rows(const Kernel& k) {
  for (const auto& r : k.reductions)
    if (r.over_rows) return true;
  return false;
}

// One column j of row i: loads, values, stores, and the reductions' terms.
void render_columns(std::ostringstream& os, const Program& p, const Kernel& k,
                    const Addressing& at) {
  const std::int64_t cols = k.domain.cols;
  for (std::size_t v = 0; v < k.values.size(); ++v) {
    const Value& val = k.values[v];
    os << "      const " << c_type(val.dtype) << " v" << v << " = ";
    if (val.kind == Value::Kind::Load) {
      const View& view = k.loads[static_cast<std::size_t>(val.load)];
      const Buffer& b = p.buffers[static_cast<std::size_t>(view.buffer)];
      const std::string element =
          address_base(p, view, false, at) + "[" + address_index(p, view, at) + "]";
      os << (b.packed ? "jp_from_bf16(" + element + ")" : element) << ";\n";
    } else {
      os << c_value_expression(k, static_cast<int>(v), "v") << ";\n";
    }
  }
  for (const auto& s : k.stores) {
    const Buffer& b = p.buffers[static_cast<std::size_t>(s.target.buffer)];
    const std::string v = "v" + std::to_string(s.value);
    const bool rounded = k.values[static_cast<std::size_t>(s.value)].dtype == DType::bf16;
    os << "      " << address_base(p, s.target, true, at) << "[" << address_index(p, s.target, at)
       << "] = "
       << (!b.packed ? v
           : rounded ? "jp_bf16_bits(" + v + ")"
                     : stored(b, v))
       << ";\n";
  }
  for (std::size_t r = 0; r < k.reductions.size(); ++r) {
    const auto& red = k.reductions[r];
    if (red.over_rows)
      os << "      " << at.row_sums << "[" << r * cols << " + j] += v" << red.value << ";\n";
    else
      os << "      c" << r << " += v" << red.value << ";\n";
  }
}

// The column ranges of a row's vectorized loops, with each range's simdlen (0: the compiler's).
// One range, unless the width leaves a remainder that the compiler would run in scalar code: GCC
// vectorizes `omp simd` loops of 16 floats on AVX-512, and their tail only when it is a multiple
// of 8, so a width of 20 (a 20-wide layer) called scalar tanhf on 4 of every 20 values, 12% of a
// Burgers step (bench/README.md, "End to end"), and ran the rest of those columns' arithmetic
// (bf16 rounding included) one value at a time. There the tail becomes loops of 8 and 4 columns,
// vectorized, whose calls go to libmvec's 8- and 4-lane variants.
std::vector<std::array<std::int64_t, 3>> column_ranges(const Kernel& k) {
  const std::int64_t cols = k.domain.cols, main = cols / 16 * 16;
  if (main == 0 || (cols - main) % 8 == 0) return {{0, cols, 0}};
  std::vector<std::array<std::int64_t, 3>> out{{0, main, 0}};
  std::int64_t j = main;
  for (const std::int64_t len : {8, 4})
    if (cols - j >= len) {
      out.push_back({j, j + len, len});
      j += len;
    }
  if (j < cols) out.push_back({j, cols, 0});
  return out;
}

// The work of row i: the vectorized loops over the columns (loads, values, stores, the row's
// column sums and its contributions to `acc`, the row sums' accumulators), then the column sums'
// stores.
void render_row(std::ostringstream& os, const Program& p, const Kernel& k, const Addressing& at) {
  const std::int64_t cols = k.domain.cols;
  std::string simd_reduction;
  for (std::size_t r = 0; r < k.reductions.size(); ++r)
    if (!k.reductions[r].over_rows) {
      os << "    double c" << r << " = 0;\n";
      simd_reduction += (simd_reduction.empty() ? "" : ",") + std::string("c") + std::to_string(r);
    }
  for (const auto& [j0, j1, simdlen] : column_ranges(k)) {
    os << "    #pragma omp simd" << (simdlen > 0 ? " simdlen(" + std::to_string(simdlen) + ")" : "")
       << (simd_reduction.empty() ? "" : " reduction(+:" + simd_reduction + ")")
       << "\n    for (long j = " << j0 << "; j < " << j1 << "; ++j) {\n";
    render_columns(os, p, k, at);
    os << "    }\n";
  }
  for (std::size_t r = 0; r < k.reductions.size(); ++r) {
    const auto& red = k.reductions[r];
    if (red.over_rows) continue;
    const Buffer& b = p.buffers[static_cast<std::size_t>(red.target.buffer)];
    View row = red.target;
    row.row_broadcast = false, row.col_broadcast = true;  // column col0 of row i
    os << "    " << address_base(p, red.target, true, at) << "[" << address_index(p, row, at)
       << "] = "
       << stored(b, "c" + std::to_string(r) + (red.mean ? " / " + std::to_string(cols) + ".0" : ""))
       << ";\n";
  }
}

// The row sums' stores: thread t's accumulators at partial[t * stride + ...], added in thread
// order (deterministic for a fixed thread count).
void render_row_sums(std::ostringstream& os, const Program& p, const Kernel& k,
                     const std::string& stride) {
  const std::int64_t rows = k.domain.rows, cols = k.domain.cols;
  for (std::size_t r = 0; r < k.reductions.size(); ++r) {
    const auto& red = k.reductions[r];
    if (!red.over_rows) continue;
    const Buffer& b = p.buffers[static_cast<std::size_t>(red.target.buffer)];
    os << "  for (long j = 0; j < " << cols << "; ++j) {\n    double s = 0;\n"
       << "    for (int t = 0; t < nt; ++t) s += partial[(size_t)t * " << stride << " + "
       << r * cols << " + j];\n    " << pointer(p, red.target, true) << "[" << red.target.row0
       << " * " << b.shape.cols << " + " << red.target.col0 << " + j] = "
       << stored(b, "s" + std::string(red.mean ? " / " + std::to_string(rows) + ".0" : ""))
       << ";\n  }\n";
  }
}

// The whole kernel as one function: OpenMP over its rows (for domains of at least
// `parallel_min_elements`), row sums into per-thread partials added in thread order.
void render_whole(std::ostringstream& os, const Program& p, const Kernel& k, std::size_t step,
                  bool parallel) {
  const bool row_reduce = reduces_rows(k);
  const std::string stride =
      std::to_string(k.domain.cols * static_cast<std::int64_t>(k.reductions.size()));
  os << "extern \"C\" void " << kernel_symbol(step) << "(char* __restrict arena) {\n";
  if (row_reduce) {
    os << "  const int nt = " << (parallel ? "omp_get_max_threads()" : "1") << ";\n"
       << "  double* partial = (double*)calloc((size_t)nt * " << stride << ", sizeof(double));\n";
  }
  os << "  #pragma omp parallel if(" << (parallel ? "1" : "0") << ")\n  {\n";
  if (row_reduce)
    os << "  double* acc = partial + (size_t)omp_get_thread_num() * " << stride << ";\n";
  os << "  #pragma omp for schedule(static)\n"
     << "  for (long i = 0; i < " << k.domain.rows << "; ++i) {\n";
  render_row(os, p, k, Addressing{});
  os << "  }\n  }\n";
  render_row_sums(os, p, k, stride);
  if (row_reduce) os << "  free(partial);\n";
  os << "}\n\n";
}

// A kernel of a tiled region: its rows [i0, i1) on the calling thread, row sums into its `acc`
// (columns x reductions doubles); then, once every tile ran, the threads' sums stored.
void render_tiled(std::ostringstream& os, const Program& p, const Kernel& k, std::size_t step,
                  const TiledRegion& region) {
  // Rows of a tiled kernel summed in float before they join the thread's double sums: at most
  // this many, so that a float sum loses no more than rounding over a few hundred terms.
  constexpr std::int64_t kRowSumBlock = 256;
  Addressing at{std::vector<int>(p.buffers.size(), -1), region.points};
  for (std::size_t l = 0; l < region.locals.size(); ++l)
    at.slot[static_cast<std::size_t>(region.locals[l].buffer)] = static_cast<int>(l);
  os << "extern \"C\" void " << kernel_symbol(step)
     << "_rows(char* __restrict arena, long i0, long i1, double* __restrict acc, "
        "char* const* __restrict lb, const long* __restrict lr) {\n"
     << "  (void)acc;\n  (void)lb;\n  (void)lr;\n";
  if (!reduces_rows(k)) {
    os << "  for (long i = i0; i < i1; ++i) {\n";
    render_row(os, p, k, at);
    os << "  }\n}\n\n";
    return;
  }
  // Sums over rows: a float per column and sum for each block of kRowSumBlock rows (an array in
  // L1 that the rows' vector adds update), added into the thread's double `acc` after the block.
  // Updating `acc` itself took a double load, add and store per value (4% of order1's step).
  // (In f64 programs the block's sums are doubles too.)
  const std::int64_t sums = k.domain.cols * static_cast<std::int64_t>(k.reductions.size());
  bool f64 = false;
  for (const auto& red : k.reductions)
    f64 = f64 || k.values[static_cast<std::size_t>(red.value)].dtype == DType::f64;
  at.row_sums = "racc";
  os << "  for (long b0 = i0; b0 < i1; b0 += " << kRowSumBlock << ") {\n"
     << "  const long b1 = b0 + " << kRowSumBlock << " < i1 ? b0 + " << kRowSumBlock << " : i1;\n  "
     << (f64 ? "double" : "float") << " racc[" << sums
     << "] = {};\n  for (long i = b0; i < b1; ++i) {\n";
  render_row(os, p, k, at);
  os << "  }\n  for (long q = 0; q < " << sums << "; ++q) acc[q] += racc[q];\n  }\n}\n\n";
  os << "extern \"C\" void " << kernel_symbol(step)
     << "_row_sums(char* __restrict arena, const double* partial, long stride, int nt) {\n";
  render_row_sums(os, p, k, "stride");
  os << "}\n\n";
}

void render_kernel(std::ostringstream& os, const Program& p, const Kernel& k, std::size_t step,
                   std::int64_t parallel_min_elements) {
  // A kernel of a region that runs in tiles only has no whole function (half the code of such a
  // program, and of its cold compile).
  if (can_run_whole(p, step))
    render_whole(os, p, k, step, k.domain.rows * k.domain.cols >= parallel_min_elements);
  if (const TiledRegion* region = tiled_region_of(p, step)) render_tiled(os, p, k, step, *region);
}

constexpr const char* kPreludeHead = R"(// Generated by jetpde: one function per kernel step.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <omp.h>
)";

constexpr const char* kPreludeTail = R"(static inline float jp_bf16(float x) {
  unsigned u; std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;
  u += 0x7fffu + ((u >> 16) & 1u); u &= 0xffff0000u;
  std::memcpy(&x, &u, 4); return x;
}
static inline float jp_f16(float x) { return (float)(_Float16)x; }
static inline unsigned short jp_bf16_bits(float x) {  // x already rounded to bf16
  unsigned u; std::memcpy(&u, &x, 4); return (unsigned short)(u >> 16);
}
static inline unsigned short jp_to_bf16(float x) { return jp_bf16_bits(jp_bf16(x)); }
static inline float jp_from_bf16(unsigned short h) {
  const unsigned u = (unsigned)h << 16; float x; std::memcpy(&x, &u, 4); return x;
}

)";

}  // namespace

std::string c_math_using_lines() {
  std::string out, line;
  for (const std::string& name : c_math_functions()) {
    const std::string decl = "using std::" + name + ";";
    if (!line.empty() && line.size() + 1 + decl.size() > 100) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + decl;
  }
  return out + line + "\n";
}

std::string c_type(DType dtype) { return dtype == DType::f64 ? "double" : "float"; }

std::string c_literal(double value, DType dtype) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", value);
  std::string s = buf;
  if (s == "inf")
    s = "__builtin_inf()";
  else if (s == "-inf")
    s = "(-__builtin_inf())";
  else if (s == "nan" || s == "-nan")
    s = "__builtin_nan(\"\")";
  return "((" + c_type(dtype) + ")" + s + ")";
}

std::string c_value_expression(const Kernel& k, int index, const std::string& prefix) {
  const Value& v = k.values[static_cast<std::size_t>(index)];
  if (v.kind == Value::Kind::Literal) return c_literal(v.real, v.dtype);
  check_internal(v.kind == Value::Kind::Compute, "c_value_expression of a load");
  const Primitive& prim = primitive(v.op);
  check_internal(prim.c_expr != nullptr, std::string("no C expression for ") + prim.name);
  std::string e = prim.c_expr;
  for (std::size_t a = 0; a < v.args.size(); ++a)
    e = replace_all(e, "{" + std::to_string(a) + "}", prefix + std::to_string(v.args[a]));
  e = replace_all(e, "{p}", c_literal(v.real, v.dtype));
  e = replace_all(e, "{T}", c_type(v.dtype));
  if (v.dtype == DType::bf16) e = "jp_bf16(" + e + ")";
  if (v.dtype == DType::f16) e = "jp_f16(" + e + ")";
  return e;
}

std::string c_pointer(const Program& program, const View& v, bool writable) {
  return pointer(program, v, writable);
}

std::string c_element(const Program& program, const View& v, bool writable) {
  const Buffer& b = program.buffers[static_cast<std::size_t>(v.buffer)];
  return pointer(program, v, writable) + "[" + index_of(v, b.shape.cols) + "]";
}

std::string kernel_symbol(std::size_t step) { return "jetpde_step" + std::to_string(step); }

std::string render_cpu_source(const Program& program, std::int64_t parallel_min_elements) {
  std::ostringstream os;
  os << kPreludeHead << c_math_using_lines() << kPreludeTail;
  for (std::size_t s = 0; s < program.steps.size(); ++s)
    if (const auto* k = std::get_if<Kernel>(&program.steps[s].op)) {
      os << kPartMarker;
      render_kernel(os, program, *k, s, parallel_min_elements);
    }
  return os.str();
}

}  // namespace jetpde::compiler
