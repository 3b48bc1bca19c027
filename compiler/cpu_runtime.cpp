// The CPU backend's runtime: one arena, generated kernels from the shared object, BLAS GEMMs.
#include <cblas.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#if defined(JETPDE_COMPILER_OPENMP)
#include <omp.h>
#endif

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "compiler/cpu_compiler.h"
#include "compiler/cpu_gemm.h"
#include "compiler/lower.h"
#include "compiler/render_c.h"
#include "compiler/runtime.h"

// OpenBLAS's: 0 sequential, 1 pthreads, 2 OpenMP; absent from other CBLAS libraries (weak: null).
extern "C" int openblas_get_parallel(void) __attribute__((weak));

namespace jetpde::compiler {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What the other processes on the machine take while this one measures its tiles: the CPU
// seconds every core spent busy (/proc/stat's first line: all but idle and iowait, steal
// included, in clock ticks) and this process's own (CLOCK_PROCESS_CPUTIME_ID). Where /proc/stat
// cannot be read, the machine counts as idle.
struct CpuUse {
  double machine = -1, self = 0;
  Clock::time_point at = Clock::now();
  static CpuUse now() {
    CpuUse u;
    std::ifstream in("/proc/stat");
    std::string cpu;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal &&
        cpu == "cpu")
      u.machine = static_cast<double>(user + nice + system + irq + softirq + steal) /
                  static_cast<double>(sysconf(_SC_CLK_TCK));
    timespec t{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0)
      u.self = static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    u.at = Clock::now();
    return u;
  }
  // The cores the other processes kept busy on average since `before` (0 where unknown).
  double others_since(const CpuUse& before) const {
    const double wall = std::chrono::duration<double>(at - before.at).count();
    if (machine < 0 || before.machine < 0 || wall <= 0) return 0;
    return std::max(0.0, (machine - before.machine) - (self - before.self)) / wall;
  }
};

// A tile measurement during which the other processes kept more than this many cores busy on
// average is not trusted: the region takes kPreferredTile (the weight gradients summed per tile,
// all threads) instead, and that is what the cache keeps, so that later runs of the program still
// run the same tiles (and give the same bits). Measured under `ctest --parallel 2`, one choice
// once cost the cavity example 1.6x a step in every later run (bench/README.md, "Tiles measured
// under load").
constexpr double kBusyCores = 0.5;
// /proc/stat counts in clock ticks (10 ms): over a region measured in 13 ms one tick of another
// process read as 0.77 cores, and a quiet MPI rank's short region came out busy. A measurement
// shorter than this is judged over the time since the runtime's first measurement began.
constexpr double kBusyWindow = 0.2;

// A line of a tile cache file (CpuRuntime::read_tile_cache): "first last points tile sums_whole
// threads busy" (busy 1: measured under load, the preferred tile taken; lines of before without
// it count as 0). False for a line of another layout, or a tile that is not a candidate for the
// points, sums_whole or busy not 0 or 1, a negative thread count.
struct TileLine {
  std::int64_t first = 0, last = 0, points = 0, tile = 0;
  bool sums_whole = false, busy = false;
  int threads = 0;
};
bool parse_tile_line(const std::string& line, TileLine* out) {
  std::istringstream fields(line);
  int sums_whole = 0, busy = 0;
  std::string more;
  if (!(fields >> out->first >> out->last >> out->points >> out->tile >> sums_whole >>
        out->threads))
    return false;
  if (!(fields >> busy)) busy = fields.eof() ? 0 : -1;
  if ((busy != 0 && busy != 1) || (sums_whole != 0 && sums_whole != 1) || fields >> more ||
      out->threads < 0)
    return false;
  const bool candidate =
      out->tile == 0 || (std::find(kTileCandidates.begin(), kTileCandidates.end(), out->tile) !=
                             kTileCandidates.end() &&
                         out->points >= 2 * out->tile);
  out->sums_whole = sums_whole == 1;
  out->busy = busy == 1;
  return candidate;
}

using KernelFn = void (*)(char*);
using RowsFn = void (*)(char*, long, long, double*, char* const*, const long*);
using RowSumsFn = void (*)(char*, const double*, long, int);

template <class T>
T* address(char* arena, const Program& p, const View& v) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
  return reinterpret_cast<T*>(arena + b.offset) + v.row0 * b.shape.cols + v.col0;
}

}  // namespace

bool cblas_runs_per_thread() {
#if defined(JETPDE_COMPILER_OPENMP)
  return openblas_get_parallel != nullptr && openblas_get_parallel() == 2;
#else
  return false;
#endif
}

namespace {

// Row-major c = op(a) op(b) + beta c in f32 (the library's sgemm) and in f64 (the CBLAS).
void gemm_row_major(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                    float* c, std::int64_t ldc) {
  sgemm_row_major(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}
void gemm_row_major(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
                    double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// f(T{}) with T the element type of `b`, a buffer of an f32 or f64 GEMM (not packed bf16).
template <class F>
void with_element_type(const Buffer& b, F f) {
  if (b.dtype == DType::f64)
    f(0.0);
  else
    f(0.0f);
}

// Rows per GEMM call: libraries multiply 8192-row blocks of a skinny operand at least as fast as
// one tall operand (OpenBLAS: 156 against 71 GFLOP/s for 8192 and 32768 rows x 64 x 64 in f32
// in one bench/gemm run; in f64, jetpde_bench's steps ran 10-20% faster in blocks), so stacked
// GEMMs are issued block by block. A product that reduces over the stacked rows (aᵀ b)
// accumulates its blocks.
constexpr std::int64_t kGemmRowBlock = 8192;

template <class T>
void run_blas_gemm(char* arena, const Program& p, const Gemm& g) {
  const auto lda = p.buffers[static_cast<std::size_t>(g.a.buffer)].shape.cols;
  const auto ldb = p.buffers[static_cast<std::size_t>(g.b.buffer)].shape.cols;
  const auto ldc = p.buffers[static_cast<std::size_t>(g.c.buffer)].shape.cols;
  const auto m = g.c.shape.rows, n = g.c.shape.cols;
  const auto k = g.transpose_a ? g.a.shape.rows : g.a.shape.cols;
  const T* a = address<T>(arena, p, g.a);
  const T* b = address<T>(arena, p, g.b);
  T* c = address<T>(arena, p, g.c);
  if (g.transpose_a && !g.transpose_b) {  // c = Σ over row blocks of a_blockᵀ b_block
    for (std::int64_t r = 0; r < k; r += kGemmRowBlock)
      gemm_row_major(true, false, m, n, std::min(kGemmRowBlock, k - r), a + r * lda, lda,
                     b + r * ldb, ldb, T(r == 0 ? 0 : 1), c, ldc);
  } else if (!g.transpose_a) {  // row blocks of a give row blocks of c
    for (std::int64_t r = 0; r < m; r += kGemmRowBlock)
      gemm_row_major(false, g.transpose_b, std::min(kGemmRowBlock, m - r), n, k, a + r * lda, lda,
                     b, ldb, T(0), c + r * ldc, ldc);
  } else {
    gemm_row_major(true, g.transpose_b, m, n, k, a, lda, b, ldb, T(0), c, ldc);
  }
}

// Measured tiles (CpuRuntime::measure_tiles): kPreferredTile (program.h) kept unless another
// candidate is faster by more than this margin.
constexpr double kTileMargin = 0.05;
// Thread splits are measured only for regions with fewer tiles a thread than this.
constexpr std::int64_t kTilesPerThreadToSplit = 4;

// Where one tile's rows of a tiled region's buffers are, on one thread: in the arena, or, for the
// region's locals (TiledRegion::locals, slot by buffer), where the thread's table puts them (the
// arena or its scratch; render_c.h gives the table's layout).
struct TileRows {
  char* arena;
  const Program& p;
  const std::vector<int>& slot;  // by buffer: the local's slot, or -1
  char* const* lb;
  const long* lr;
  std::int64_t points, i0;
  // Row i0 of the block `r` rows (a multiple of points) past v's first row (T: its storage).
  template <class T = float>
  T* at(const View& v, std::int64_t r) const {
    const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
    const int k = slot[static_cast<std::size_t>(v.buffer)];
    if (k < 0) return address<T>(arena, p, v) + (r + i0) * b.shape.cols;
    const std::int64_t row = (v.row0 + r) / points * lr[2 * k] - lr[2 * k + 1] * i0 + i0;
    return reinterpret_cast<T*>(lb[k]) + row * b.shape.cols + v.col0;
  }
  // Whether v's blocks follow one another for tiles of `rows` points: a local in the thread's
  // scratch (blocks of one tile's rows, counted from i0) and a full tile.
  bool contiguous(const View& v, std::int64_t rows) const {
    const int k = slot[static_cast<std::size_t>(v.buffer)];
    return k >= 0 && lr[2 * k + 1] == 1 && lr[2 * k] == rows;
  }
};

// A tiled region's native bf16 GEMM for one tile: set up for its rows of one block, and for
// every block's rows at once (full tiles: TileRows::contiguous); null where the GEMM is not one.
struct TileBf16 {
  Bf16Gemm* block = nullptr;
  Bf16Gemm* blocks = nullptr;
};

// Rows [i0, i1) of each block of `points` rows of a tiled region's GEMM (no transposed a:
// tileable() in tile_regions.cpp), on the calling thread: the library's sgemm, the CBLAS's dgemm
// (f64), or `bf16` where the operands are packed bf16; one call for every block where a's and c's
// blocks follow one another in the scratch.
void run_gemm_tile(const TileRows& t, const Gemm& g, std::int64_t i1, TileBf16 bf16, int thread) {
  const auto lda = t.p.buffers[static_cast<std::size_t>(g.a.buffer)].shape.cols;
  const auto ldb = t.p.buffers[static_cast<std::size_t>(g.b.buffer)].shape.cols;
  const auto ldc = t.p.buffers[static_cast<std::size_t>(g.c.buffer)].shape.cols;
  const std::int64_t rows = i1 - t.i0;
  const bool at_once = t.contiguous(g.a, rows) && t.contiguous(g.c, rows);
  const std::int64_t m = at_once ? g.c.shape.rows / t.points * rows : rows;
  Bf16Gemm* native = at_once ? bf16.blocks : bf16.block;
  for (std::int64_t r = 0; r < (at_once ? t.points : g.c.shape.rows); r += t.points)
    if (native)
      native->run(t.at<std::uint16_t>(g.a, r), address<std::uint16_t>(t.arena, t.p, g.b),
                  t.at(g.c, r), thread);
    else
      with_element_type(t.p.buffers[static_cast<std::size_t>(g.c.buffer)], [&](auto zero) {
        using T = decltype(zero);
        gemm_row_major(false, g.transpose_b, m, g.c.shape.cols, g.a.shape.cols, t.at<T>(g.a, r),
                       lda, address<T>(t.arena, t.p, g.b), ldb, zero, t.at<T>(g.c, r), ldc);
      });
}

// c_partial += aᵀ b over rows [i0, i1) of each block of `points` rows (a weight gradient in a tiled
// region: tileable() in tile_regions.cpp), on the calling thread; `partial` is c's shape, dense,
// of c's type. `bf16`, f64 and the single call as in run_gemm_tile (accumulating).
void run_gemm_sum_tile(const TileRows& t, const Gemm& g, std::int64_t i1, void* partial,
                       TileBf16 bf16, int thread) {
  const auto lda = t.p.buffers[static_cast<std::size_t>(g.a.buffer)].shape.cols;
  const auto ldb = t.p.buffers[static_cast<std::size_t>(g.b.buffer)].shape.cols;
  const std::int64_t rows = i1 - t.i0;
  const bool at_once = t.contiguous(g.a, rows) && t.contiguous(g.b, rows);
  const std::int64_t k = at_once ? g.a.shape.rows / t.points * rows : rows;
  Bf16Gemm* native = at_once ? bf16.blocks : bf16.block;
  for (std::int64_t r = 0; r < (at_once ? t.points : g.a.shape.rows); r += t.points)
    if (native)
      native->run(t.at<std::uint16_t>(g.a, r), t.at<std::uint16_t>(g.b, r),
                  static_cast<float*>(partial), thread);
    else
      with_element_type(t.p.buffers[static_cast<std::size_t>(g.c.buffer)], [&](auto zero) {
        using T = decltype(zero);
        gemm_row_major(true, false, g.c.shape.rows, g.c.shape.cols, k, t.at<T>(g.a, r), lda,
                       t.at<T>(g.b, r), ldb, T(1), static_cast<T*>(partial), g.c.shape.cols);
      });
}

// The per-thread bf16 GEMM of a tiled region's GEMM `g` (two packed operands) over tiles of
// `rows` points, for `threads` threads; null for other GEMMs.
std::unique_ptr<Bf16Gemm> prepare_bf16_tile_gemm(const Program& p, const Gemm& g, std::int64_t rows,
                                                 int threads) {
  const Buffer& a = p.buffers[static_cast<std::size_t>(g.a.buffer)];
  const Buffer& b = p.buffers[static_cast<std::size_t>(g.b.buffer)];
  if (!a.packed || !b.packed) return nullptr;
  if (g.transpose_a)  // c_partial (dense) += aᵀ b over the tile's rows
    return std::make_unique<Bf16Gemm>(true, false, g.c.shape.rows, g.c.shape.cols, rows,
                                      a.shape.cols, b.shape.cols, g.c.shape.cols, true, threads);
  return std::make_unique<Bf16Gemm>(
      false, g.transpose_b, rows, g.c.shape.cols, g.a.shape.cols, a.shape.cols, b.shape.cols,
      p.buffers[static_cast<std::size_t>(g.c.buffer)].shape.cols, false, threads);
}

// A GEMM of two packed bf16 operands, set up once with its shape and strides.
std::unique_ptr<Bf16Gemm> prepare_bf16_gemm(const Program& p, const Gemm& g) {
  const Buffer& a = p.buffers[static_cast<std::size_t>(g.a.buffer)];
  const Buffer& b = p.buffers[static_cast<std::size_t>(g.b.buffer)];
  if (!a.packed || !b.packed) return nullptr;
  const Buffer& c = p.buffers[static_cast<std::size_t>(g.c.buffer)];
  check_internal(c.dtype == DType::f32 && !c.packed, "a bf16 GEMM writes f32");
  return std::make_unique<Bf16Gemm>(g.transpose_a, g.transpose_b, g.c.shape.rows, g.c.shape.cols,
                                    g.transpose_a ? g.a.shape.rows : g.a.shape.cols, a.shape.cols,
                                    b.shape.cols, c.shape.cols);
}

void run_gemm(char* arena, const Program& p, const Gemm& g, Bf16Gemm* bf16) {
  if (bf16)
    bf16->run(address<std::uint16_t>(arena, p, g.a), address<std::uint16_t>(arena, p, g.b),
              address<float>(arena, p, g.c));
  else
    with_element_type(p.buffers[static_cast<std::size_t>(g.c.buffer)],
                      [&](auto zero) { run_blas_gemm<decltype(zero)>(arena, p, g); });
}

std::uint16_t bf16_bits(double value) {
  const float rounded = round_to(DType::bf16, static_cast<float>(value));
  std::uint32_t u;
  std::memcpy(&u, &rounded, 4);
  return static_cast<std::uint16_t>(u >> 16);
}

double from_bf16_bits(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

template <class T>
void copy_in(char* arena, const Buffer& b, const MatrixD& value) {
  T* dst = reinterpret_cast<T*>(arena + b.offset);
  for (Eigen::Index i = 0; i < value.size(); ++i)
    if constexpr (std::is_same_v<T, std::uint16_t>)
      dst[i] = bf16_bits(value.data()[i]);
    else
      dst[i] = static_cast<T>(value.data()[i]);
}

template <class T>
MatrixD copy_out(const char* arena, const Program& p, const View& v) {
  const Buffer& b = p.buffers[static_cast<std::size_t>(v.buffer)];
  const T* src = reinterpret_cast<const T*>(arena + b.offset);
  MatrixD out(v.shape.rows, v.shape.cols);
  for (Eigen::Index i = 0; i < out.rows(); ++i)
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      const T x = src[(v.row0 + (v.row_broadcast ? 0 : i)) * b.shape.cols + v.col0 +
                      (v.col_broadcast ? 0 : j)];
      if constexpr (std::is_same_v<T, std::uint16_t>)
        out(i, j) = from_bf16_bits(x);
      else
        out(i, j) = x;
    }
  return out;
}

class CpuRuntime final : public Runtime {
 public:
  CpuRuntime(const Module& module, const CompileOptions& options, CompileStats& stats)
      : trust_busy_tiles_(options.cpu.trust_busy_tiles),
        ranks_here_(std::max(1, options.cpu.ranks_here)),
        rank_(std::max(0, options.cpu.rank)),
        stats_(stats) {
    const auto t = Clock::now();
    program_ = lower_for(module, Backend::cpu, options, &stats.recomputed);
    const std::string source = render_cpu_source(program_, options.cpu.parallel_min_elements > 0
                                                               ? options.cpu.parallel_min_elements
                                                               : kParallelMinElements);
    stats.lower_seconds = seconds_since(t);
    const CpuBuild build = build_shared_object(source, options.cpu);
    object_ = build.object;
    stats.build_seconds = build.seconds;
    stats.cache_hit = build.cache_hit;
    kernels_.assign(program_.steps.size(), nullptr);
    prepare_regions();
    if (std::any_of(regions_.begin(), regions_.end(),
                    [](const RegionRun& r) { return r.automatic; }))
      stats.tile_file = tile_cache_path();
    bf16_gemms_.resize(program_.steps.size());
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      if (std::holds_alternative<Kernel>(program_.steps[s].op)) {
        if (can_run_whole(program_, s))
          kernels_[s] = reinterpret_cast<KernelFn>(object_->symbol(kernel_symbol(s)));
        ++stats.kernels;
      } else {
        ++stats.gemms;
        bf16_gemms_[s] = prepare_bf16_gemm(program_, std::get<Gemm>(program_.steps[s].op));
        if (bf16_gemms_[s]) ++stats.native_bf16_gemms;
      }
    }
    stats.arena_bytes = program_.arena_bytes;
    stats.peak_live_bytes = program_.peak_live_bytes;
    arena_ = static_cast<char*>(std::aligned_alloc(
        64, static_cast<std::size_t>(std::max<std::int64_t>(64, program_.arena_bytes))));
    if (!arena_)
      throw UserError("cannot allocate the arena (" + std::to_string(program_.arena_bytes) +
                      " bytes)");
    for (std::size_t b = 0; b < program_.buffers.size(); ++b) {
      const Buffer& buf = program_.buffers[b];
      if (buf.kind == Buffer::Kind::Constant)
        store(buf, Eigen::Map<const MatrixD>(buf.data.data(), buf.shape.rows, buf.shape.cols));
      if (buf.kind == Buffer::Kind::Input || buf.kind == Buffer::Kind::Param)
        buffer_by_name_[buf.name] = static_cast<int>(b);
    }
  }
  ~CpuRuntime() override { std::free(arena_); }

  void set(const std::string& name, const MatrixD& value) override {
    auto it = buffer_by_name_.find(name);
    if (it == buffer_by_name_.end()) return;  // no output depends on it
    store(program_.buffers[static_cast<std::size_t>(it->second)], value);
  }

  void run() override {
    for (std::size_t s = 0; s < program_.steps.size();) s = step(s);
  }

  // A tiled region's time is its first step's; its other steps read 0.
  std::vector<double> run_timed() override {
    std::vector<double> seconds;
    for (std::size_t s = 0; s < program_.steps.size();) {
      const auto t = Clock::now();
      const std::size_t next = step(s);
      seconds.push_back(seconds_since(t));
      seconds.resize(next, 0.0);
      s = next;
    }
    return seconds;
  }

  MatrixD output(std::size_t k) const override {
    const View& v = program_.outputs[k];
    const Buffer& b = program_.buffers[static_cast<std::size_t>(v.buffer)];
    if (b.packed) return copy_out<std::uint16_t>(arena_, program_, v);
    if (b.dtype == DType::f64) return copy_out<double>(arena_, program_, v);
    return copy_out<float>(arena_, program_, v);
  }

  const Program* program() const override { return &program_; }

 private:
  // Runs step s, or the tiled region starting there; returns the next step to run.
  std::size_t step(std::size_t s) {
    if (region_at_[s] >= 0) {
      RegionRun& run = regions_[static_cast<std::size_t>(region_at_[s])];
      if (program_.regions[run.index].tune) measure_tiles(run);
      run_region(run);
      return static_cast<std::size_t>(program_.regions[run.index].last);
    }
    run_whole(s);
    return s + 1;
  }

  void run_whole(std::size_t s) {
    if (std::holds_alternative<Kernel>(program_.steps[s].op)) {
      check_internal(kernels_[s] != nullptr,
                     "a kernel of a region that runs in tiles only run whole");
      kernels_[s](arena_);
    } else
      run_gemm(arena_, program_, std::get<Gemm>(program_.steps[s].op), bf16_gemms_[s].get());
  }

  // A tiled region's entry points: each kernel's rows function and row sums (where it sums over
  // rows) with the offset of its accumulators in a thread's block of `stride` doubles.
  // The weight gradients (c = aᵀ b) likewise: each thread's partial c (of c's type) at `sum_at`
  // bytes in its block of `sum_stride` bytes (multiples of 64).
  struct RegionRun {
    std::size_t index = 0;            // in program_.regions
    std::vector<RowsFn> rows;         // by step - first; null for GEMMs
    std::vector<RowSumsFn> row_sums;  // null where the kernel sums no rows
    std::vector<std::int64_t> at;     // accumulator offsets
    std::int64_t stride = 0;
    std::vector<double> partial;       // threads x stride
    std::vector<std::int64_t> sum_at;  // by step - first; -1 but for aᵀ b GEMMs
    std::int64_t sum_stride = 0;
    std::vector<double> sum_partial;  // threads x sum_stride bytes
    bool automatic = false;           // TiledRegion::tune was set: its tile measured or cached
    // Its tile is kPreferredTile because other processes kept the cores busy while it was
    // measured (here, or by the runtime that wrote the cache line).
    bool busy = false;
    // The locals (TiledRegion::locals) in a thread's scratch of one tile: each one's offset in
    // bytes per point of the tile (-1: in the arena), by sums_whole (the weight gradients' operands
    // are then read whole from the arena); locals used at disjoint steps share bytes.
    struct ScratchPlan {
      std::vector<std::int64_t> at;
      std::int64_t per_point = 0;
    };
    std::array<ScratchPlan, 2> plans;
    std::int64_t local_bytes = 0;  // the locals' bytes (as they would take in the arena)
    // Some local is Buffer::scratch_only (no arena bytes): the region runs in tiles only, its
    // scratch-only locals always in the scratch.
    bool scratch_only = false;
    std::vector<int> slot;  // by buffer: its slot in TiledRegion::locals, or -1
    std::vector<char*> lb;  // threads x locals: where each thread's tile of each local is
    std::vector<long> lr;   // 2 x locals: rows per block, and 1 where counted from i0
    // By step - first: the native bf16 GEMMs' per-thread forms, one per tile height used (kept),
    // and those of this run's tile and its last tile (null for other steps).
    std::vector<std::vector<std::pair<std::int64_t, std::unique_ptr<Bf16Gemm>>>> bf16;
    std::vector<std::array<Bf16Gemm*, 3>> bf16_run;  // this tile, the last one, all blocks
    std::int64_t bf16_tile = 0;  // the tile and threads bf16_run is for (0: none yet)
    int bf16_threads = 0;
  };

  // A region's scratch plan (RegionRun::ScratchPlan): the memory plan's placement
  // (place_by_size) of the locals' bytes per point over the steps using them.
  static RegionRun::ScratchPlan plan_scratch(const Program& p, const TiledRegion& r,
                                             bool sums_whole) {
    RegionRun::ScratchPlan plan;
    plan.at.assign(r.locals.size(), -1);
    std::vector<Lifetime> lifetimes;
    std::vector<std::size_t> placed;
    for (std::size_t k = 0; k < r.locals.size(); ++k) {
      const TiledRegion::Local& l = r.locals[k];
      if (sums_whole && l.summed) continue;
      lifetimes.push_back(
          {p.buffers[static_cast<std::size_t>(l.buffer)].bytes() / r.points, l.first, l.last});
      placed.push_back(k);
    }
    const std::vector<std::int64_t> at = place_by_size(lifetimes, &plan.per_point);
    for (std::size_t i = 0; i < placed.size(); ++i) plan.at[placed[i]] = at[i];
    return plan;
  }

  // TiledRegion::tune: the region runs, on this first run's values, whole and with each
  // candidate tile that gives at least two tiles, three times each; the fastest of the three
  // counts. The fastest candidate is kept (here and in the cache file, for the next runtime of
  // this program on this CPU with as many threads) where it beats tiles of kPreferredTile by more
  // than kTileMargin; otherwise those: three runs do not tell apart candidates within the noise
  // of a shared machine (burgers picked 512 or 1024 and ran 5-8% slower than 256;
  // bench/README.md, "Tiled regions"). Then whether the weight gradients run whole after the tiles,
  // and on how many threads the tiles run. Any candidate gives the region's values (a tile or
  // thread split moves only the last bits of row sums); the run goes on with the chosen one.
  void measure_tiles(RegionRun& run) {
    read_tile_cache();
    TiledRegion& r = program_.regions[run.index];
    if (!r.tune) return;  // found in the cache
    const auto start = Clock::now();
    const CpuUse before = CpuUse::now();
    if (!first_measurement_) first_measurement_ = before;
    std::vector<std::int64_t> candidates;
    if (!run.scratch_only) candidates.push_back(0);  // whole: its locals have arena bytes
    for (const std::int64_t c : kTileCandidates)
      if (r.points >= 2 * c) candidates.push_back(c);
    double best = INFINITY, preferred = INFINITY;
    std::int64_t chosen = candidates.back();
    for (const std::int64_t c : candidates) {
      r.tile = c;
      double fastest = INFINITY;
      for (int k = 0; k < 3; ++k) {
        const auto t = Clock::now();
        run_region(run);
        fastest = std::min(fastest, seconds_since(t));
      }
      if (c == kPreferredTile) preferred = fastest;
      if (fastest < best) {
        best = fastest;
        chosen = c;
      }
    }
    if (preferred < INFINITY && best > (1.0 - kTileMargin) * preferred) chosen = kPreferredTile;
    r.tile = chosen;
    // Then, with that tile, the weight gradients run whole after the tiles: kept where faster by
    // the margin (their operands then go through the arena instead of the tile scratch; a choice
    // within the noise cost Burgers' example 40% a step once cached: bench/README.md).
    if (chosen > 0 && run.sum_stride > 0) {
      double tiled = INFINITY, whole = INFINITY;
      for (int k = 0; k < 5; ++k)
        for (const bool sums_whole : {false, true}) {
          r.sums_whole = sums_whole;
          const auto t = Clock::now();
          run_region(run);
          double& fastest = sums_whole ? whole : tiled;
          fastest = std::min(fastest, seconds_since(t));
        }
      r.sums_whole = whole < (1.0 - kTileMargin) * tiled;
    }
    // Then, with those, where the region has fewer than kTilesPerThreadToSplit tiles a thread, the
    // tiles split among half the threads, a quarter, ... one, five runs each: the fastest count
    // kept where it beats all the threads by the margin (a few tiles among many threads leave most
    // of them waiting at the region's barrier). Not where each thread has tiles enough: measured
    // while another process takes a core, fewer threads win by 2x (bench/gemm/README.md, "Threads
    // under load"), and the choice would stay in the cache.
    r.threads = 0;
    if (chosen > 0 && threads() > 1 &&
        (r.points + chosen - 1) / chosen < kTilesPerThreadToSplit * threads()) {
      std::vector<int> counts;
      for (int t = threads(); t >= 1; t /= 2) counts.push_back(t);
      std::vector<double> fastest(counts.size(), INFINITY);
      for (int k = 0; k < 5; ++k)
        for (std::size_t i = 0; i < counts.size(); ++i) {
          r.threads = counts[i];
          const auto t = Clock::now();
          run_region(run);
          fastest[i] = std::min(fastest[i], seconds_since(t));
        }
      const auto best_fewer = std::min_element(fastest.begin() + 1, fastest.end());
      r.threads = *best_fewer < (1.0 - kTileMargin) * fastest[0]
                      ? counts[static_cast<std::size_t>(best_fewer - fastest.begin())]
                      : 0;
    }
    r.tune = false;
    scratch_.clear();  // sized for the largest candidate: made again for the tile chosen
    scratch_size_ = 0;
    const double siblings = static_cast<double>((ranks_here_ - 1) * threads());
    const CpuUse& since = seconds_since(start) >= kBusyWindow ? before : *first_measurement_;
    if (CpuUse::now().others_since(since) - siblings > kBusyCores && !trust_busy_tiles_) {
      const bool fits =
          std::find(candidates.begin(), candidates.end(), kPreferredTile) != candidates.end();
      r.tile = fits ? kPreferredTile : candidates.back();  // else the largest that fits
      r.sums_whole = false;
      r.threads = 0;
      run.busy = true;
      ++stats_.tiles_busy;
    }
    write_tile_cache();
    ++stats_.tiles_measured;
    stats_.tile_seconds += seconds_since(start);
  }

  // The tile cache: beside the shared object, one file per thread count (and rank from 1 on), a
  // line per measured region (parse_tile_line). A line that matches no region to be measured,
  // names a tile that is not a candidate, a thread count out of range or has other fields is
  // ignored; a file that cannot be read or written is no error (the tiles are measured again).
  std::string tile_cache_path() const {
    return object_->path() + ".tiles-" + std::to_string(threads()) + "-threads" +
           (rank_ > 0 ? "-rank-" + std::to_string(rank_) : "");
  }

  void read_tile_cache() {
    if (tile_cache_read_) return;
    tile_cache_read_ = true;
    std::ifstream in(tile_cache_path());
    for (std::string text; std::getline(in, text);) {
      TileLine line;
      if (!parse_tile_line(text, &line) || line.threads >= threads()) continue;
      for (RegionRun& run : regions_) {
        TiledRegion& r = program_.regions[run.index];
        if (line.tile == 0 && run.scratch_only) continue;  // a region that cannot run whole
        if (r.tune && r.first == line.first && r.last == line.last && r.points == line.points) {
          r.tile = line.tile;
          r.sums_whole = line.sums_whole;
          r.threads = line.threads;
          r.tune = false;
          run.busy = line.busy;
          if (run.busy) ++stats_.tiles_busy;
        }
      }
    }
  }

  void write_tile_cache() const {
    std::ostringstream text;
    for (const RegionRun& run : regions_) {
      const TiledRegion& r = program_.regions[run.index];
      if (run.automatic && !r.tune)
        text << r.first << " " << r.last << " " << r.points << " " << r.tile << " "
             << (r.sums_whole ? 1 : 0) << " " << r.threads << " " << (run.busy ? 1 : 0) << "\n";
    }
    const std::string path = tile_cache_path();
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << text.str();
      if (!out.flush()) return;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }

  static int threads() {
#if defined(JETPDE_COMPILER_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
  }

  void prepare_regions() {
    region_at_.assign(program_.steps.size(), -1);
    for (std::size_t i = 0; i < program_.regions.size(); ++i) {
      const TiledRegion& r = program_.regions[i];
      RegionRun run{.index = i, .automatic = r.tune};
      for (int s = r.first; s < r.last; ++s) {
        const auto* k = std::get_if<Kernel>(&program_.steps[static_cast<std::size_t>(s)].op);
        run.rows.push_back(k ? reinterpret_cast<RowsFn>(object_->symbol(kernel_symbol(s) + "_rows"))
                             : nullptr);
        bool sums = false;
        if (k)
          for (const auto& red : k->reductions) sums = sums || red.over_rows;
        run.row_sums.push_back(
            sums ? reinterpret_cast<RowSumsFn>(object_->symbol(kernel_symbol(s) + "_row_sums"))
                 : nullptr);
        run.at.push_back(run.stride);
        if (sums) run.stride += k->domain.cols * static_cast<std::int64_t>(k->reductions.size());
        const auto* g = std::get_if<Gemm>(&program_.steps[static_cast<std::size_t>(s)].op);
        run.sum_at.push_back(g && g->transpose_a ? run.sum_stride : -1);
        if (g && g->transpose_a)  // c: f32 or f64, never packed
          with_element_type(
              program_.buffers[static_cast<std::size_t>(g->c.buffer)], [&](auto zero) {
                run.sum_stride += (g->c.shape.size() * std::int64_t{sizeof zero} + 63) / 64 * 64;
              });
      }
      run.slot.assign(program_.buffers.size(), -1);
      for (std::size_t k = 0; k < r.locals.size(); ++k) {
        run.slot[static_cast<std::size_t>(r.locals[k].buffer)] = static_cast<int>(k);
        run.local_bytes += program_.buffers[static_cast<std::size_t>(r.locals[k].buffer)].bytes();
      }
      run.scratch_only = runs_in_tiles_only(program_, r);
      run.plans = {plan_scratch(program_, r, false), plan_scratch(program_, r, true)};
      run.bf16.resize(static_cast<std::size_t>(r.last - r.first));
      run.bf16_run.resize(run.bf16.size());
      region_at_[static_cast<std::size_t>(r.first)] = static_cast<int>(regions_.size());
      regions_.push_back(std::move(run));
    }
  }

  // Tile after tile, each running the region's steps on its points; tiles split statically among
  // the threads (each thread's tiles in order), row sums and weight gradients per thread, added
  // in thread order (or the weight gradients whole after the tiles: sums_whole). A region whose
  // tile is 0 runs its steps whole (never one with scratch-only locals).
  void run_region(RegionRun& run) {
    const TiledRegion& r = program_.regions[run.index];
    if (r.tile == 0) {
      check_internal(!run.scratch_only, "a region with scratch-only locals run whole");
      for (int s = r.first; s < r.last; ++s) run_whole(static_cast<std::size_t>(s));
      return;
    }
    const int nt = r.threads > 0 ? std::min(r.threads, threads()) : threads();
    run.partial.assign(static_cast<std::size_t>(nt * run.stride), 0.0);
    // Per-thread weight-gradient sums only where they are summed tile by tile.
    run.sum_partial.assign(r.sums_whole ? 0 : static_cast<std::size_t>(nt * run.sum_stride / 8),
                           0.0);
    const std::int64_t tiles = (r.points + r.tile - 1) / r.tile;
    char* arena = arena_;
    const Program& p = program_;
    // The locals in each thread's scratch: always where some have no arena bytes, else where the
    // threads' tiles take no more than the arena does.
    const RegionRun::ScratchPlan& plan = run.plans[r.sums_whole ? 1 : 0];
    const std::int64_t scratch_bytes = r.tile * plan.per_point;
    const bool scratch =
        scratch_bytes > 0 && (run.scratch_only || nt * scratch_bytes <= run.local_bytes);
    if (scratch) reserve_scratch(nt, scratch_bytes);
    const std::size_t nl = r.locals.size();
    run.lr.resize(2 * nl);
    run.lb.resize(static_cast<std::size_t>(nt) * nl);
    for (std::size_t k = 0; k < nl; ++k) {
      const bool in_scratch = scratch && plan.at[k] >= 0;
      run.lr[2 * k] = in_scratch ? r.tile : r.points;
      run.lr[2 * k + 1] = in_scratch ? 1 : 0;
      for (int t = 0; t < nt; ++t)
        run.lb[static_cast<std::size_t>(t) * nl + k] =
            in_scratch ? scratch_[static_cast<std::size_t>(t)].get() + plan.at[k] * r.tile
                       : arena + p.buffers[static_cast<std::size_t>(r.locals[k].buffer)].offset;
    }
    // The native bf16 GEMMs for this tile, the last one and all blocks of a full one (set up
    // once per tile height, kept; looked up again only when the tile or the threads change).
    const std::int64_t last_tile = r.points - (tiles - 1) * r.tile;
    const bool same_bf16 = run.bf16_tile == r.tile && run.bf16_threads == nt;
    run.bf16_tile = r.tile;
    run.bf16_threads = nt;
    for (int s = r.first; s < r.last && !same_bf16; ++s) {
      const auto at = static_cast<std::size_t>(s - r.first);
      const auto* g = std::get_if<Gemm>(&p.steps[static_cast<std::size_t>(s)].op);
      if (!g || !bf16_gemms_[static_cast<std::size_t>(s)]) continue;
      auto& forms = run.bf16[at];
      const std::int64_t blocks = (g->transpose_a ? g->a.shape.rows : g->c.shape.rows) / r.points;
      for (const int which : {0, 1, 2}) {
        const std::int64_t rows = which == 0 ? r.tile : which == 1 ? last_tile : blocks * r.tile;
        auto it = std::find_if(forms.begin(), forms.end(),
                               [&](const auto& form) { return form.first == rows; });
        if (it == forms.end()) it = forms.insert(forms.end(), {rows, nullptr});
        if (!it->second || it->second->threads() < nt)
          it->second = prepare_bf16_tile_gemm(p, *g, rows, nt);
        run.bf16_run[at][static_cast<std::size_t>(which)] = it->second.get();
      }
    }
#if defined(JETPDE_COMPILER_OPENMP)
#pragma omp parallel num_threads(nt)
#endif
    {
#if defined(JETPDE_COMPILER_OPENMP)
      const auto thread = static_cast<std::int64_t>(omp_get_thread_num());
#else
      const std::int64_t thread = 0;
#endif
      double* acc = run.partial.data() + thread * run.stride;
      char* sums = run.sum_partial.empty()
                       ? nullptr
                       : reinterpret_cast<char*>(run.sum_partial.data()) + thread * run.sum_stride;
      char* const* lb = run.lb.data() + static_cast<std::size_t>(thread) * nl;
      const long* lr = run.lr.data();
#if defined(JETPDE_COMPILER_OPENMP)
#pragma omp for schedule(static)
#endif
      for (std::int64_t t = 0; t < tiles; ++t) {
        const std::int64_t i0 = t * r.tile, i1 = std::min(r.points, i0 + r.tile);
        const TileRows rows{arena, p, run.slot, lb, lr, r.points, i0};
        for (int s = r.first; s < r.last; ++s) {
          const auto at = static_cast<std::size_t>(s - r.first);
          const Step& step = p.steps[static_cast<std::size_t>(s)];
          if (run.rows[at])
            run.rows[at](arena, i0, i1, acc + run.at[at], lb, lr);
          else if (run.sum_at[at] >= 0 && r.sums_whole)
            continue;
          else if (run.sum_at[at] >= 0)
            run_gemm_sum_tile(rows, std::get<Gemm>(step.op), i1, sums + run.sum_at[at],
                              {run.bf16_run[at][t + 1 == tiles], run.bf16_run[at][2]},
                              static_cast<int>(thread));
          else
            run_gemm_tile(rows, std::get<Gemm>(step.op), i1,
                          {run.bf16_run[at][t + 1 == tiles], run.bf16_run[at][2]},
                          static_cast<int>(thread));
        }
      }
    }
    for (int s = r.first; s < r.last; ++s) {
      const auto at = static_cast<std::size_t>(s - r.first);
      if (run.row_sums[at])
        run.row_sums[at](arena, run.partial.data() + run.at[at], run.stride, nt);
      if (run.sum_at[at] >= 0 && r.sums_whole)
        run_whole(static_cast<std::size_t>(s));
      else if (run.sum_at[at] >= 0)
        add_partials(std::get<Gemm>(p.steps[static_cast<std::size_t>(s)].op),
                     reinterpret_cast<const char*>(run.sum_partial.data()) + run.sum_at[at],
                     run.sum_stride, nt);
    }
  }

  // Each of `threads` threads gets a scratch of at least `bytes` (kept from region to region).
  void reserve_scratch(int threads, std::int64_t bytes) {
    if (scratch_.size() < static_cast<std::size_t>(threads))
      scratch_.resize(static_cast<std::size_t>(threads));
    const std::int64_t size = (std::max(scratch_size_, bytes) + 63) / 64 * 64;
    for (auto& block : scratch_)
      if (scratch_size_ < size || !block) {
        block.reset(static_cast<char*>(std::aligned_alloc(64, static_cast<std::size_t>(size))));
        if (!block)
          throw UserError("cannot allocate a tile scratch (" + std::to_string(size) + " bytes)");
      }
    scratch_size_ = size;
    stats_.scratch_bytes = static_cast<std::int64_t>(scratch_.size()) * scratch_size_;
  }

  // c = the threads' partial sums of a weight gradient (each `stride` bytes after the one
  // before), added in thread order.
  void add_partials(const Gemm& g, const char* partial, std::int64_t stride, int threads) {
    with_element_type(program_.buffers[static_cast<std::size_t>(g.c.buffer)], [&](auto zero) {
      using T = decltype(zero);
      T* c = address<T>(arena_, program_, g.c);
      const auto ldc = program_.buffers[static_cast<std::size_t>(g.c.buffer)].shape.cols;
      const std::int64_t cols = g.c.shape.cols;
      for (std::int64_t i = 0; i < g.c.shape.rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          T sum = zero;
          for (int t = 0; t < threads; ++t)
            sum += reinterpret_cast<const T*>(partial + t * stride)[i * cols + j];
          c[i * ldc + j] = sum;
        }
    });
  }

  void store(const Buffer& b, const MatrixD& value) {
    if (b.packed)
      copy_in<std::uint16_t>(arena_, b, value);
    else if (b.dtype == DType::f64)
      copy_in<double>(arena_, b, value);
    else
      copy_in<float>(arena_, b, value);
  }

  Program program_;
  std::shared_ptr<SharedObject> object_;
  std::vector<KernelFn> kernels_;                      // by step; null for GEMMs
  std::vector<std::unique_ptr<Bf16Gemm>> bf16_gemms_;  // by step; set for native bf16 GEMMs
  std::vector<RegionRun> regions_;
  std::vector<int> region_at_;  // by step: the region starting there, else -1
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<char, Free>> scratch_;  // by thread: its tile scratch
  std::int64_t scratch_size_ = 0;                     // bytes of each
  bool tile_cache_read_ = false;
  bool trust_busy_tiles_ = false;            // CpuCompileOptions::trust_busy_tiles
  int ranks_here_ = 1, rank_ = 0;            // CpuCompileOptions::ranks_here, rank
  std::optional<CpuUse> first_measurement_;  // when the first region's measurement began
  CompileStats& stats_;                      // the Executable's (it owns this runtime)
  char* arena_ = nullptr;
  std::unordered_map<std::string, int> buffer_by_name_;
};

bool cpu_available(const CompileOptions& options, std::string* why) {
  if (host_compiler_available(options.cpu)) return true;
  *why = "no working host compiler found";
  return false;
}

std::unique_ptr<Runtime> make_cpu(const Module& m, const CompileOptions& o, CompileStats& s) {
  return std::make_unique<CpuRuntime>(m, o, s);
}

std::int64_t host_free_memory() { return available_memory(Backend::cpu); }

}  // namespace

CacheContents cache_contents(const CpuCompileOptions& options) {
  CacheContents c;
  for (const auto& [key, p] : cached_programs(cache_directory(options))) {
    c.programs += p.has_object ? 1 : 0;
    c.bytes += p.bytes;
    for (const std::filesystem::path& f : p.files) {
      const std::string name = f.filename().string();
      if (name.find(".so.tiles-") == std::string::npos || name.find(".tmp-") != std::string::npos)
        continue;
      ++c.tile_files;
      int busy = 0;
      std::ifstream in(f);
      for (std::string text; std::getline(in, text);) {
        TileLine line;
        busy += parse_tile_line(text, &line) && line.busy ? 1 : 0;
      }
      if (busy > 0) c.busy_files.push_back(f.string());
      c.busy_regions += busy;
    }
  }
  std::sort(c.busy_files.begin(), c.busy_files.end());
  return c;
}

// Called by the registry on first use, so that linking never drops the CPU backend.
void register_cpu_runtime() {
  register_runtime(Backend::cpu, {cpu_available, make_cpu, host_free_memory});
}

}  // namespace jetpde::compiler
