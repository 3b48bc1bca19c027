// jetpde_layer_bench: one Taylor layer of a tanh network, unfused as jetpde runs it today and
// fused over tiles of points in several ways (issue 16 item 1: measure the candidates first).
//
// The layer: S = 1 + 2P streams of a second-order Taylor sweep in P directions, stacked as jetpde
// stacks them (stream s of point i at row s*N + i of an [S*N, W] matrix). Forward:
//   z_s = x_s W (+ b for s = 0);  y0 = tanh(z0), d = 1 - y0^2;
//   y_1p = d z_1p;  y_2p = d z_2p - y0 d z_1p^2          (Taylor coefficients, p = 1..P)
// Variants:
//   unfused      the runtime's way: one sgemm over the S*N stacked rows (8192-row blocks) into Z,
//                then one OpenMP kernel over the points reading Z and writing Y;
//   tiled-dnnl   OpenMP over tiles of R points: per tile S single-threaded dnnl_sgemm calls into
//                a thread-local [S, R, W] tile, the recurrence from the tile to Y (Z never
//                reaches memory);
//   tiled-xsmm   the same with libxsmm's JIT small GEMM (R x W x W), where libxsmm is linked;
//   fused-avx512 hand-written: per point row and 16*C columns, the S streams' accumulators in
//                registers (the weight row shared by all streams), stored to an L1 scratch of
//                S x 16C floats and run through the same recurrence.
// Backward (rows "bwd-"): the recurrence's adjoint, gx = gz Wᵀ, gW = Σ xᵀ gz and the bias
// gradient: unfused as the runtime runs it (gz through memory), tiled (gz in a thread-local tile,
// per-thread gW), and tiled with z recomputed from x by the tile's GEMM instead of read
// ("bwd-tiled-rz": a fused forward then need not keep z). GFLOP/s counts the two GEMMs.
// The recurrence is the same C++ loop in every variant (tanhf, `omp simd`, -ffast-math), so the
// variants differ only in where Z lives and how the GEMM is done. Each result is checked against
// the unfused one. The time is the median of --reps calls after a warm-up.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.h>
#if JETPDE_LAYER_HAVE_XSMM
#include <libxsmm.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace {

struct Shape {
  long n;  // points
  int w;   // width (a multiple of 16)
  int p;   // directions
  int s() const { return 1 + 2 * p; }
};

// Row-major c = a b (a: m x k with lda, b: k x n with ldb, c with ldc), single call.
void sgemm(long m, long n, long k, const float* a, long lda, const float* b, long ldb, float* c,
           long ldc) {
  dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

// The recurrence for `rows` points: z_s row r at z + (s * zs + r) * w, y likewise with ys. P is a
// template argument so that the loop over the directions unrolls and the loop over the columns
// vectorizes (tanhf through libmvec, as in the generated kernels).
template <int P>
inline void recurrence_p(const Shape& sh, const float* __restrict z, long zs,
                         const float* __restrict bias, float* __restrict y, long ys, long rows) {
  const int w = sh.w;
  for (long r = 0; r < rows; ++r) {
    const float* z0 = z + r * w;
    float* y0 = y + r * w;
#pragma omp simd
    for (int j = 0; j < w; ++j) {
      const float t = std::tanh(z0[j] + bias[j]);
      const float d = 1.0f - t * t;
      y0[j] = t;
#pragma GCC unroll 4
      for (int q = 0; q < P; ++q) {
        const float z1 = z0[(1 + 2 * q) * zs * w + j], z2 = z0[(2 + 2 * q) * zs * w + j];
        y0[(1 + 2 * q) * ys * w + j] = d * z1;
        y0[(2 + 2 * q) * ys * w + j] = d * z2 - t * d * z1 * z1;
      }
    }
  }
}

inline void recurrence(const Shape& sh, const float* z, long zs, const float* bias, float* y,
                       long ys, long rows) {
  if (sh.p == 1)
    recurrence_p<1>(sh, z, zs, bias, y, ys, rows);
  else if (sh.p == 2)
    recurrence_p<2>(sh, z, zs, bias, y, ys, rows);
  else
    recurrence_p<3>(sh, z, zs, bias, y, ys, rows);
}

void unfused(const Shape& sh, const float* x, const float* wt, const float* b, float* z, float* y) {
  const long rows = sh.n * sh.s();
  for (long r = 0; r < rows; r += 8192)
    sgemm(std::min(8192L, rows - r), sh.w, sh.w, x + r * sh.w, sh.w, wt, sh.w, z + r * sh.w, sh.w);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < sh.n; ++i) recurrence(sh, z + i * sh.w, sh.n, b, y + i * sh.w, sh.n, 1);
}

// OpenMP over tiles of `tile` points; `gemm(rows, x_rows, z_tile)` multiplies rows x W by W.
template <class Gemm>
void tiled(const Shape& sh, long tile, const float* x, const float* b, float* y, Gemm gemm) {
  const long tiles = (sh.n + tile - 1) / tile;
#pragma omp parallel
  {
    std::vector<float> zt(static_cast<std::size_t>(sh.s() * tile * sh.w));
#pragma omp for schedule(static)
    for (long t = 0; t < tiles; ++t) {
      const long i0 = t * tile, rows = std::min(tile, sh.n - i0);
      for (int s = 0; s < sh.s(); ++s)
        gemm(rows, x + (s * sh.n + i0) * sh.w, zt.data() + s * tile * sh.w);
      recurrence(sh, zt.data(), tile, b, y + i0 * sh.w, sh.n, rows);
    }
  }
}

// The recurrence's adjoint for `rows` points: from z (the forward's GEMM output) and gy, gz;
// the bias gradient's partial sums added to gb. Strides as in recurrence().
template <int P>
inline void adjoint_p(const Shape& sh, const float* __restrict z, long zs,
                      const float* __restrict bias, const float* __restrict gy, long gys,
                      float* __restrict gz, long gzs, float* __restrict gb, long rows) {
  const int w = sh.w;
  for (long r = 0; r < rows; ++r) {
    const float* z0 = z + r * w;
    const float* g0 = gy + r * w;
    float* o0 = gz + r * w;
#pragma omp simd
    for (int j = 0; j < w; ++j) {
      const float t = std::tanh(z0[j] + bias[j]);
      const float d = 1.0f - t * t;
      float gd = 0.0f, gt = g0[j];
#pragma GCC unroll 4
      for (int q = 0; q < P; ++q) {
        const float z1 = z0[(1 + 2 * q) * zs * w + j], z2 = z0[(2 + 2 * q) * zs * w + j];
        const float g1 = g0[(1 + 2 * q) * gys * w + j], g2 = g0[(2 + 2 * q) * gys * w + j];
        o0[(2 + 2 * q) * gzs * w + j] = g2 * d;
        o0[(1 + 2 * q) * gzs * w + j] = g1 * d - 2.0f * g2 * t * d * z1;
        gd += g1 * z1 + g2 * (z2 - t * z1 * z1);
        gt -= g2 * d * z1 * z1;
      }
      const float gz0 = (gt - 2.0f * t * gd) * d;
      o0[j] = gz0;
      gb[j] += gz0;
    }
  }
}

inline void adjoint(const Shape& sh, const float* z, long zs, const float* bias, const float* gy,
                    long gys, float* gz, long gzs, float* gb, long rows) {
  if (sh.p == 1)
    adjoint_p<1>(sh, z, zs, bias, gy, gys, gz, gzs, gb, rows);
  else if (sh.p == 2)
    adjoint_p<2>(sh, z, zs, bias, gy, gys, gz, gzs, gb, rows);
  else
    adjoint_p<3>(sh, z, zs, bias, gy, gys, gz, gzs, gb, rows);
}

struct Grads {
  std::vector<float> gx, gw, gb;
};

// Backward as the runtime runs it: the adjoint kernel over the points into gz (with the bias
// gradient's per-thread sums), gx = gz Wᵀ in row blocks, gW = Σ over row blocks of xᵀ gz.
void backward_unfused(const Shape& sh, const float* x, const float* wt, const float* b,
                      const float* z, const float* gy, float* gz, Grads& g) {
  const long rows = sh.n * sh.s();
  const int w = sh.w;
  std::vector<float> partial(static_cast<std::size_t>(omp_get_max_threads() * w), 0.0f);
#pragma omp parallel
  {
    float* gb = partial.data() + omp_get_thread_num() * w;
#pragma omp for schedule(static)
    for (long i = 0; i < sh.n; ++i)
      adjoint(sh, z + i * w, sh.n, b, gy + i * w, sh.n, gz + i * w, sh.n, gb, 1);
  }
  std::fill(g.gb.begin(), g.gb.end(), 0.0f);
  for (int t = 0; t < omp_get_max_threads(); ++t)
    for (int j = 0; j < w; ++j) g.gb[j] += partial[t * w + j];
  for (long r = 0; r < rows; r += 8192)
    dnnl_sgemm('N', 'T', std::min(8192L, rows - r), w, w, 1.0f, gz + r * w, w, wt, w, 0.0f,
               g.gx.data() + r * w, w);
  for (long r = 0; r < rows; r += 8192)
    dnnl_sgemm('T', 'N', w, w, std::min(8192L, rows - r), 1.0f, x + r * w, w, gz + r * w, w,
               r == 0 ? 0.0f : 1.0f, g.gw.data(), w);
}

// Backward over tiles of points: the adjoint into a thread-local gz tile, then per stream the
// tile's gx = gz Wᵀ and the thread's gW += xᵀ gz (single-threaded dnnl_sgemm), the threads' gW
// and gb summed at the end. With `recompute`, z is not read: the tile's forward GEMM is done
// again from x (so the forward need not keep z).
void backward_tiled(const Shape& sh, long tile, const float* x, const float* wt, const float* b,
                    const float* z, const float* gy, Grads& g, bool recompute) {
  const long tiles = (sh.n + tile - 1) / tile;
  const int w = sh.w, nt = omp_get_max_threads();
  std::vector<float> gw_part(static_cast<std::size_t>(nt * w * w), 0.0f);
  std::vector<float> gb_part(static_cast<std::size_t>(nt * w), 0.0f);
#pragma omp parallel
  {
    std::vector<float> gzt(static_cast<std::size_t>(sh.s() * tile * w));
    std::vector<float> zt(recompute ? gzt.size() : 0);
    float* gw = gw_part.data() + omp_get_thread_num() * w * w;
    float* gb = gb_part.data() + omp_get_thread_num() * w;
#pragma omp for schedule(static)
    for (long t = 0; t < tiles; ++t) {
      const long i0 = t * tile, rows = std::min(tile, sh.n - i0);
      if (recompute) {
        for (int s = 0; s < sh.s(); ++s)
          sgemm(rows, w, w, x + (s * sh.n + i0) * w, w, wt, w, zt.data() + s * tile * w, w);
        adjoint(sh, zt.data(), tile, b, gy + i0 * w, sh.n, gzt.data(), tile, gb, rows);
      } else {
        adjoint(sh, z + i0 * w, sh.n, b, gy + i0 * w, sh.n, gzt.data(), tile, gb, rows);
      }
      for (int s = 0; s < sh.s(); ++s) {
        const float* gzs = gzt.data() + s * tile * w;
        const long at = (s * sh.n + i0) * w;
        dnnl_sgemm('N', 'T', rows, w, w, 1.0f, gzs, w, wt, w, 0.0f, g.gx.data() + at, w);
        dnnl_sgemm('T', 'N', w, w, rows, 1.0f, x + at, w, gzs, w, 1.0f, gw, w);
      }
    }
  }
  std::fill(g.gw.begin(), g.gw.end(), 0.0f);
  std::fill(g.gb.begin(), g.gb.end(), 0.0f);
  for (int t = 0; t < nt; ++t) {
    for (int e = 0; e < w * w; ++e) g.gw[e] += gw_part[t * w * w + e];
    for (int j = 0; j < w; ++j) g.gb[j] += gb_part[t * w + j];
  }
}

#if defined(__AVX512F__)
// S streams x C vectors of 16 columns in registers for one point row, k over the width.
template <int S, int C>
inline void fused_row(const Shape& sh, const float* x, const float* wt, const float* b, float* y,
                      long i, float* scratch) {
  const int w = sh.w;
  for (int c0 = 0; c0 < w; c0 += 16 * C) {
    __m512 acc[S][C];
    for (int s = 0; s < S; ++s)
      for (int c = 0; c < C; ++c) acc[s][c] = _mm512_setzero_ps();
    for (int k = 0; k < w; ++k) {
      __m512 wk[C];
      for (int c = 0; c < C; ++c) wk[c] = _mm512_loadu_ps(wt + k * w + c0 + 16 * c);
      for (int s = 0; s < S; ++s) {
        const __m512 a = _mm512_set1_ps(x[(s * sh.n + i) * w + k]);
        for (int c = 0; c < C; ++c) acc[s][c] = _mm512_fmadd_ps(a, wk[c], acc[s][c]);
      }
    }
    for (int s = 0; s < S; ++s)
      for (int c = 0; c < C; ++c) _mm512_storeu_ps(scratch + s * 16 * C + 16 * c, acc[s][c]);
    // The recurrence on 16C columns: the scratch is an [S, 1, 16C] tile.
    Shape part = sh;
    part.w = 16 * C;
    const float* zs = scratch;
    float* out = y + i * w + c0;
    // recurrence() strides rows by part.w; y's stream stride is N rows of w: pass ys in units of
    // part.w rows so that (s * ys) * part.w == s * N * w.
    recurrence(part, zs, 1, b + c0, out, sh.n * w / part.w, 1);
  }
}

template <int S, int C>
void fused(const Shape& sh, const float* x, const float* wt, const float* b, float* y) {
#pragma omp parallel
  {
    alignas(64) float scratch[S * 16 * C];
#pragma omp for schedule(static)
    for (long i = 0; i < sh.n; ++i) fused_row<S, C>(sh, x, wt, b, y, i, scratch);
  }
}
#endif

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_it(int reps, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(t);
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

void usage() {
  std::puts(
      "jetpde_layer_bench [--points N ...] [--width W] [--dirs P] [--tiles R ...] [--reps K]\n"
      "  One Taylor layer (S = 1 + 2P streams, tanh) unfused and fused over tiles of points;\n"
      "  threads: OMP_NUM_THREADS (default: all cores). Defaults: --points 8192 32768 --width 64\n"
      "  --dirs 2 --tiles 32 64 128 256 512 --reps 21.");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> points{8192, 32768};
  std::vector<long> tiles{32, 64, 128, 256, 512};
  int width = 64, dirs = 2, reps = 21;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto list = [&](auto& v) {
      v.clear();
      while (a + 1 < argc && argv[a + 1][0] != '-') v.push_back(std::atol(argv[++a]));
    };
    if (arg == "--points")
      list(points);
    else if (arg == "--tiles")
      list(tiles);
    else if (arg == "--width" && a + 1 < argc)
      width = std::atoi(argv[++a]);
    else if (arg == "--dirs" && a + 1 < argc)
      dirs = std::atoi(argv[++a]);
    else if (arg == "--reps" && a + 1 < argc)
      reps = std::atoi(argv[++a]);
    else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  if (width % 16 != 0 || dirs < 1 || dirs > 3 || points.empty() || tiles.empty()) {
    std::fprintf(stderr, "jetpde_layer_bench: width must be a multiple of 16, dirs 1..3\n");
    return 2;
  }
#if JETPDE_LAYER_HAVE_XSMM
  libxsmm_init();
#endif
  std::printf("threads %d, width %d, directions %d (streams %d), median of %d\n",
              omp_get_max_threads(), width, dirs, 1 + 2 * dirs, reps);
  std::printf("%-8s %-14s %6s %10s %9s %8s %10s\n", "points", "variant", "tile", "ms", "GFLOP/s",
              "x unfused", "max diff");
  for (long n : points) {
    const Shape sh{n, width, dirs};
    const long rows = n * sh.s();
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(rows * width), wt(width * width), b(width), z(rows * width),
        ref(rows * width), y(rows * width);
    for (auto& v : x) v = normal(rng);
    for (auto& v : wt) v = normal(rng) / std::sqrt(float(width));
    for (auto& v : b) v = 0.1f * normal(rng);
    const double flops = 2.0 * rows * width * width;
    auto report = [&](const char* name, long tile, double sec, double base) {
      std::printf("%-8ld %-14s %6ld %10.3f %9.1f %8.2f %10.2e\n", n, name, tile, sec * 1e3,
                  flops / sec * 1e-9, base / sec, max_diff(ref, y));
    };
    const double base =
        time_it(reps, [&] { unfused(sh, x.data(), wt.data(), b.data(), z.data(), ref.data()); });
    y = ref;
    report("unfused", 0, base, base);
    for (long tile : tiles) {
      std::fill(y.begin(), y.end(), 0.0f);
      const double t = time_it(reps, [&] {
        tiled(sh, tile, x.data(), b.data(), y.data(), [&](long r, const float* xr, float* zt) {
          sgemm(r, width, width, xr, width, wt.data(), width, zt, width);
        });
      });
      report("tiled-dnnl", tile, t, base);
    }
#if JETPDE_LAYER_HAVE_XSMM
    for (long tile : tiles) {
      // Column-major libxsmm: row-major Z (r x W) = X W is column-major Zᵀ = Wᵀ Xᵀ, i.e. the
      // kernel's A is W and its B is X, m = W, n = r, k = W.
      // libxsmm's default beta is 1 (accumulate): beta 0 asked for.
      const float one = 1.0f, zero = 0.0f;
      const libxsmm_smmfunction full = libxsmm_smmdispatch(width, tile, width, nullptr, nullptr,
                                                           nullptr, &one, &zero, nullptr, nullptr);
      if (!full) {
        std::printf("%-8ld %-14s %6ld   (libxsmm gave no kernel)\n", n, "tiled-xsmm", tile);
        continue;
      }
      std::fill(y.begin(), y.end(), 0.0f);
      const double t = time_it(reps, [&] {
        tiled(sh, tile, x.data(), b.data(), y.data(), [&](long r, const float* xr, float* zt) {
          if (r == tile) {
            full(wt.data(), xr, zt);
          } else {
            const libxsmm_smmfunction part =
                libxsmm_smmdispatch(width, static_cast<libxsmm_blasint>(r), width, nullptr, nullptr,
                                    nullptr, &one, &zero, nullptr, nullptr);
            part(wt.data(), xr, zt);
          }
        });
      });
      report("tiled-xsmm", tile, t, base);
    }
#endif
#if defined(__AVX512F__)
    {
      std::fill(y.begin(), y.end(), 0.0f);
      std::function<void()> f;
      const int s = sh.s();
      if (s == 3)
        f = [&] { fused<3, 4>(sh, x.data(), wt.data(), b.data(), y.data()); };
      else if (s == 5)
        f = [&] { fused<5, 4>(sh, x.data(), wt.data(), b.data(), y.data()); };
      else
        f = [&] { fused<7, 2>(sh, x.data(), wt.data(), b.data(), y.data()); };
      if (width % (s == 7 ? 32 : 64) == 0) report("fused-avx512", 1, time_it(reps, f), base);
    }
#endif
    // Backward: z as the unfused forward left it, an upstream gradient gy.
    {
      std::vector<float> gy(rows * width), gz(rows * width);
      for (auto& v : gy) v = normal(rng);
      unfused(sh, x.data(), wt.data(), b.data(), z.data(), ref.data());
      auto grads = [&] {
        return Grads{std::vector<float>(rows * width), std::vector<float>(width * width),
                     std::vector<float>(width)};
      };
      Grads gref = grads(), g = grads();
      const double bflops = 4.0 * rows * width * width;
      const double bbase = time_it(reps, [&] {
        backward_unfused(sh, x.data(), wt.data(), b.data(), z.data(), gy.data(), gz.data(), gref);
      });
      auto diff = [&](const Grads& a) {
        return std::max({max_diff(a.gx, gref.gx), max_diff(a.gw, gref.gw) / rows,
                         max_diff(a.gb, gref.gb) / rows});
      };
      auto breport = [&](const char* name, long tile, double sec, const Grads& got) {
        std::printf("%-8ld %-14s %6ld %10.3f %9.1f %8.2f %10.2e\n", n, name, tile, sec * 1e3,
                    bflops / sec * 1e-9, bbase / sec, diff(got));
      };
      breport("bwd-unfused", 0, bbase, gref);
      for (bool recompute : {false, true})
        for (long tile : tiles) {
          const double t = time_it(reps, [&] {
            backward_tiled(sh, tile, x.data(), wt.data(), b.data(), z.data(), gy.data(), g,
                           recompute);
          });
          breport(recompute ? "bwd-tiled-rz" : "bwd-tiled", tile, t, g);
        }
    }
  }
#if JETPDE_LAYER_HAVE_XSMM
  libxsmm_finalize();
#endif
  return 0;
}
