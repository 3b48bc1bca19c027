// The kernel program: what lowering makes of a module and what a backend renders and runs.
//
// Buffers live in one arena. Steps run in order; each is a library GEMM or a generated kernel.
// A kernel is a fused loop nest over a 2-D domain [rows, cols]: it loads operands through views
// (offsets and broadcasting, never copies), computes a straight-line list of elementwise values,
// stores some of them, and reduces some over rows or columns (the loss mean, a bias gradient).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde::compiler {

struct Buffer {
  enum class Kind { Input, Param, Constant, Temp };
  Kind kind = Kind::Temp;
  std::string name;  // inputs and params: the leaf's name
  Shape shape;
  // Element type. bf16 and f16 are stored as f32 holding a rounded value (emulated), except a
  // `packed` bf16 buffer: 2-byte bf16 bit patterns, for a backend's native bf16 GEMM
  // (pack_bf16_gemm_operands).
  DType dtype = DType::f32;
  bool packed = false;
  // A tiled region's local that the backend keeps in a thread's tile scratch, always
  // (find_tiled_regions: every local but the weight gradients' operands): no bytes in the arena,
  // offset -1.
  bool scratch_only = false;
  std::vector<double> data;  // constants
  std::int64_t offset = -1;  // bytes from the arena's start, set by the memory plan
  std::int64_t bytes() const;
};

// Element (i, j) of a view is buffer[(row0 + i') * ld + col0 + j'] with ld the buffer's column
// count, i' = 0 when the view broadcasts rows (else i), j' likewise for columns.
struct View {
  int buffer = -1;
  std::int64_t row0 = 0, col0 = 0;
  Shape shape;
  bool row_broadcast = false, col_broadcast = false;
  friend bool operator==(const View&, const View&) = default;
};

// One value of a kernel: an elementwise primitive over earlier values, a load, or a literal.
struct Value {
  enum class Kind { Compute, Load, Literal };
  Kind kind = Kind::Compute;
  Op op = Op::Neg;
  DType dtype = DType::f32;
  std::vector<int> args;  // earlier values of the same kernel
  double real = 0.0;      // PowC exponent, or the literal
  int load = -1;          // index into Kernel::loads
};

struct Kernel {
  Shape domain;
  std::vector<View> loads;
  std::vector<Value> values;
  struct Store {
    int value;
    View target;
  };
  std::vector<Store> stores;
  struct Reduction {
    int value;
    bool over_rows;  // sum over rows ([r,c] -> [1,c]); else over columns ([r,c] -> [r,1])
    bool mean;
    View target;
  };
  std::vector<Reduction> reductions;
};

// c = op(a) op(b) by the BLAS.
struct Gemm {
  View a, b, c;
  bool transpose_a = false, transpose_b = false;
};

struct Step {
  std::variant<Kernel, Gemm> op;
};

// Calls f(view) for every view a step reads or writes: a kernel's loads, stores and reduction
// targets, a GEMM's a, b and c.
template <class F>
void for_each_view(const Step& step, F f) {
  if (const auto* k = std::get_if<Kernel>(&step.op)) {
    for (const View& v : k->loads) f(v);
    for (const auto& s : k->stores) f(s.target);
    for (const auto& r : k->reductions) f(r.target);
  } else {
    const Gemm& g = std::get<Gemm>(step.op);
    f(g.a);
    f(g.b);
    f(g.c);
  }
}

// Steps [first, last) that a backend may run tile by tile (find_tiled_regions, lower.h): every
// step reads and writes, of the buffers the region writes, only rows i + b * points (b = 0, 1, ...:
// the blocks of stacked streams) for the points i of one tile, so that all the steps run on one
// tile of points while its rows are in cache, tile after tile (and tiles in parallel). Kernels
// keep their row reductions as per-thread partial sums; GEMMs reduce over no rows.
struct TiledRegion {
  int first = 0, last = 0;
  std::int64_t points = 0;  // the rows of every kernel's domain in the region
  std::int64_t tile = 0;    // points per tile; 0: the steps run whole (tiles measured slower)
  // The tile is the backend's to choose, by measuring the candidates (kTileCandidates) on the
  // region's first run, once per CPU and program (cached beside the compiled kernels); `tile` is
  // kMeasuredRegionTile until then.
  bool tune = false;
  // The region's weight gradients (c = aᵀ b GEMMs) run whole after its tiles instead of summed
  // tile by tile (valid: nothing in the region reads c, and the memory plan keeps every buffer of
  // the region live through it). Measured with the tile: narrow layers' per-tile sums are small
  // library calls.
  bool sums_whole = false;
  // The threads the region's tiles are split among: 0 for all the backend's (OpenMP's), else
  // that many where measured faster with the tile (few tiles among many threads).
  int threads = 0;
  // The buffers that live within the region's tiles (region_locals, tile_regions.cpp): written
  // and read only inside it, each read after a write covering it, not an output. The backend may
  // keep them, tile by tile, in a scratch of one tile's rows per thread (reused from tile to tile,
  // so they stay in cache and never go to memory) instead of the arena; the kernels of the
  // region address them through a table (render_c.h). `first`, `last`: the steps using it.
  struct Local {
    int buffer = 0;
    int first = 0, last = 0;
    bool summed = false;  // an operand of a weight gradient (c = aᵀ b) of the region: read
                          // whole after the tiles where sums_whole, so then in the arena
  };
  std::vector<Local> locals;
};

// The tiles a region to be measured tries, besides running whole (jetpde_layer_bench,
// bench/gemm/README.md: 256-512 points were fastest for 64-wide layers of 4-5 streams on the
// 2-core machines measured; wider layers and more streams want fewer points: 32 for poisson32d's
// 34 streams of 128, bench/README.md "Tiled regions").
inline constexpr std::array<std::int64_t, 8> kTileCandidates{32,  64,   128,  256,
                                                             512, 1024, 2048, 4096};
// Regions to be measured are formed where at least two tiles of this many points fit (smaller
// point sets run whole, unmeasured).
inline constexpr std::int64_t kMeasuredRegionTile = 128;
// The tile a measured region keeps unless another candidate beats it by the runtime's margin, and
// the tile of programs that do not measure (CpuCompileOptions::measure_tiles).
inline constexpr std::int64_t kPreferredTile = 256;

struct Program {
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<View> outputs;
  std::vector<TiledRegion> regions;  // disjoint, in step order; empty: every step runs whole
  std::int64_t arena_bytes = 0;      // set by the memory plan
  std::int64_t peak_live_bytes = 0;  // largest sum of buffers live at one step (a lower bound)

  std::string to_text() const;  // a listing for dumps and tests
};

// The tiled region holding step `step` of `p`, or null.
const TiledRegion* tiled_region_of(const Program& p, std::size_t step);
// Whether region `r` of `p` runs in tiles only: some local of it lives in the tile scratch alone
// (Buffer::scratch_only, no arena bytes), so it never runs whole.
bool runs_in_tiles_only(const Program& p, const TiledRegion& r);
// Whether step `step` of `p` may run whole: outside a region, or in one that does not run in
// tiles only. A kernel that may not is rendered without its whole function (render_c.cpp), and
// the CPU runtime looks that function up only where this holds.
bool can_run_whole(const Program& p, std::size_t step);

// Marks bf16 buffers `packed` where every GEMM that reads them has two bf16 operands and widths
// (inner and output, besides the points) of at least kNativeBf16MinWidth (so that it can run as
// one native bf16 x bf16 -> f32 GEMM); kernels convert on load and store. Run before the memory
// plan, since a packed buffer takes half the bytes. Returns how many were packed.
//
// Narrower GEMMs stay emulated (f32 GEMMs on f32-stored rounded values: the same products, summed
// in another order). A 20-wide layer's bf16 GEMM is hardly faster than its sgemm (per tile of 256
// points, 2 threads, Zen 5: 1.05-1.2x, against 1.5-1.9x at 64 wide), and a kernel storing
// 2-byte values over fewer than 32 columns vectorizes at half width (GCC needs 32 iterations for
// a 64-byte vector of them): Burgers' 20-wide example ran 1.65x slower a step with its weight
// gradients native.
constexpr std::int64_t kNativeBf16MinWidth = 32;
int pack_bf16_gemm_operands(Program& program);

}  // namespace jetpde::compiler
