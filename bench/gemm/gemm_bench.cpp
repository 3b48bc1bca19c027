// jetpde_gemm_bench: single-precision GEMM rate (GFLOP/s = 2*m*n*k / seconds) of every BLAS this
// machine has, on the shapes of PINN training, measured side by side in one process.
// `--help` lists the options; README.md here has the measured table and the recommendation.
//
// Libraries. Eigen is compiled in (-O3 -march=native; with OpenMP when the build found it).
// OpenBLAS, and BLIS and oneDNN when the build found them, are linked: for OpenBLAS and BLIS the
// variant the Debian alternatives system points at. The other Debian variants
// (openblas-{pthread,openmp,serial}, blis-{openmp,pthread,serial}, ATLAS) are dlopen()ed from their
// fixed paths when present, with RTLD_LOCAL | RTLD_DEEPBIND so that each copy binds its own
// symbols; --lib adds any other cblas library (MKL's libmkl_rt, a pip-installed OpenBLAS).
// Every cblas-style library is called through a function pointer taken from its own handle
// (dlsym), never through the ambiguous global `cblas_sgemm`. Where a library exports a bf16 GEMM
// (OpenBLAS's cblas_sbgemm, MKL's cblas_gemm_bf16bf16f32; oneDNN's bf16 matmul) it is measured
// too, as NAME-bf16, on the same shapes with the inputs rounded to bf16 beforehand.
//
// Shapes (row-major, as jetpde stores activations: points x features). For a dense layer
// Y = X W with X (M x K), W (K x N), reverse mode needs dX = G W^T and dW = X^T G:
//   A*B   C(MxN)  = A(MxK)   B(KxN)      forward
//   A^T*B C(KxN)  = A(MxK)^T B(MxN)      weight gradient, the reduction runs over the M points
//   A*B^T C(MxK)  = A(MxN)   B(KxN)^T    input gradient
// The cblas call's (m, n, k) are listed; FLOPs = 2*m*n*k in every case.
//
// Timing. Every library gets a warm-up call that also checks its result against a
// double-precision reference on 64 sampled entries, then calibration batches that set the calls
// per sample so that a sample lasts about --min-time. Samples are interleaved: in each round every
// library runs one sample (the order rotates from round to round), each after a --pause-ms sleep
// (so that the worker threads the previous library left spinning have gone to sleep) and a wait of
// up to --quiet-wait seconds for a moment when other processes leave the CPUs alone. The CPU time
// other processes used during each sample is read from /proc/stat: a sample is quiet when they used
// under 0.1 core. The reported time is the median of the quiet samples (of all samples, marked ~,
// when fewer than 3 are quiet); rounds go on past --reps, up to --max-reps, for the libraries with
// fewer than --reps quiet samples.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Core>

#if JETPDE_GEMM_HAVE_OPENMP
#include <omp.h>
#endif
#if JETPDE_GEMM_HAVE_DNNL
#include <map>

#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

constexpr const char* kUsage =
    "usage: jetpde_gemm_bench [options]\n"
    "  --threads N        threads for the libraries that thread (default 2)\n"
    "  --reps N           quiet samples per library and shape (default 7); the median is reported\n"
    "  --max-reps N       rounds at most while other processes load the CPUs (default 3 * reps)\n"
    "  --min-time S       seconds one sample lasts (default 0.1)\n"
    "  --pause-ms N       sleep after each sample: spinning BLAS threads go idle (default 150)\n"
    "  --quiet-wait S     before each sample, wait up to S s for a 50 ms window in which other\n"
    "                     processes use < 0.1 core (default 3)\n"
    "  --only A,B         measure only these libraries (names as in the table)\n"
    "  --shapes A,B       measure only these shapes (ab8k, atb8k, abt8k, ..., abt34k, sq2048)\n"
    "  --lib NAME=PATH[,VAR=VALUE][,-VAR]\n"
    "                     also dlopen PATH and call its cblas_sgemm (or scipy_cblas_sgemm); with\n"
    "                     VAR=VALUE or -VAR, the variable is set or unset while a private copy of\n"
    "                     PATH is loaded and initializes (a fresh instance of the library)\n"
    "  --coretype-pair    also load a private copy of the linked OpenBLAS that initializes\n"
    "                     with the opposite OPENBLAS_CORETYPE (Haswell if unset here; unset,\n"
    "                     with OPENBLAS_L2_SIZE, if set here)\n"
    "  --no-dlopen        measure only Eigen and the linked libraries\n"
    "  --json FILE        also write the results, with every sample, to FILE as JSON\n";

// ---------------------------------------------------------------------------------------------
// Shapes

struct Shape {
  std::string id;     // short name for --shapes
  std::string label;  // A*B, A^T*B, A*B^T
  std::string role;   // what it is in training
  bool trans_a = false, trans_b = false;
  long m = 0, n = 0, k = 0;  // of the cblas call
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Row-major storage of the operands as they lie in memory.
  long a_rows() const { return trans_a ? k : m; }
  long a_cols() const { return trans_a ? m : k; }
  long b_rows() const { return trans_b ? n : k; }
  long b_cols() const { return trans_b ? k : n; }
  long lda() const { return a_cols(); }
  long ldb() const { return b_cols(); }
  long ldc() const { return n; }
};

std::vector<Shape> pinn_shapes() {
  std::vector<Shape> s;
  auto triple = [&](const std::string& tag, long points, long width) {
    s.push_back({"ab" + tag, "A*B", "forward X*W", false, false, points, width, width});
    s.push_back({"atb" + tag, "A^T*B", "weight grad X^T*G", true, false, width, width, points});
    s.push_back({"abt" + tag, "A*B^T", "input grad G*W^T", false, true, points, width, width});
  };
  triple("8k", 8192, 64);
  triple("32k", 32768, 64);
  triple("56k", 57344, 64);   // 7 Taylor streams x 8192 points
  triple("34k", 34816, 128);  // 1024 x 34
  s.push_back({"sq2048", "A*B", "peak (square)", false, false, 2048, 2048, 2048});
  return s;
}

// ---------------------------------------------------------------------------------------------
// Libraries

// The cblas ABI (enums are ints): order 101 = row-major, 111 = no-trans, 112 = trans.
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
using CblasSbgemm = void (*)(int, int, int, int, int, int, float, const std::uint16_t*, int,
                             const std::uint16_t*, int, float, float*, int);
// BLIS's typed API: dim_t and inc_t are int64, trans_t is an enum (BLIS_TRANSPOSE = 8).
using BliSgemm = void (*)(int, int, std::int64_t, std::int64_t, std::int64_t, const float*,
                          const float*, std::int64_t, std::int64_t, const float*, std::int64_t,
                          std::int64_t, const float*, float*, std::int64_t, std::int64_t);
using SetThreadsInt = void (*)(int);
using SetThreadsDim = void (*)(std::int64_t);
using CharFn = const char* (*)();
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kBlisTrans = 8, kBlisNoTrans = 0;

struct Operands {
  const float* a;
  const float* b;
  const std::uint16_t* a16;  // bf16 copies, for sbgemm
  const std::uint16_t* b16;
  float* c;
};

struct Library {
  std::string name;
  std::string detail;
  int threads = 1;
  bool bf16 = false;              // takes bf16 inputs (sbgemm)
  std::function<void()> prepare;  // before every sample: thread count
  std::function<void(const Shape&, const Operands&)> gemm;
  std::function<std::string(const Shape&)> note = nullptr;  // per-shape remark (implementation)
};

using EigenRowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void eigen_gemm(const Shape& s, const Operands& o) {
  Eigen::Map<const EigenRowMajor> a(o.a, s.a_rows(), s.a_cols());
  Eigen::Map<const EigenRowMajor> b(o.b, s.b_rows(), s.b_cols());
  Eigen::Map<EigenRowMajor> c(o.c, s.m, s.n);
  if (s.trans_a && s.trans_b)
    c.noalias() = a.transpose() * b.transpose();
  else if (s.trans_a)
    c.noalias() = a.transpose() * b;
  else if (s.trans_b)
    c.noalias() = a * b.transpose();
  else
    c.noalias() = a * b;
}

std::string eigen_version() {
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
         std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
}

std::string eigen_simd() {
  const char* simd = Eigen::SimdInstructionSetsInUse();
  return simd ? simd : "?";
}

// The file a loaded handle came from.
std::string handle_path(void* handle) {
  const link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return "?";
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  const auto p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

// Library name from its path: .../openblas-pthread/libopenblas.so.0 -> openblas-pthread.
std::string name_from_path(const std::string& path, const std::string& fallback) {
  const std::string dir = std::filesystem::path(path).parent_path().filename().string();
  if (dir.starts_with("openblas") || dir.starts_with("blis") || dir == "atlas") return dir;
  return fallback;
}

template <class F>
F symbol(void* handle, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = dlsym(handle, n)) return reinterpret_cast<F>(p);
  return nullptr;
}

// A cblas-style library (OpenBLAS, ATLAS, MKL, ...) or BLIS, from an open handle. Adds the sgemm
// entry and, where the library exports one, the bf16 sbgemm entry.
void add_from_handle(std::vector<Library>& libs, void* handle, const std::string& name,
                     std::string origin, int threads, std::string path = "") {
  if (path.empty()) path = handle_path(handle);
  auto set_int = symbol<SetThreadsInt>(
      handle,
      {"openblas_set_num_threads", "scipy_openblas_set_num_threads", "MKL_Set_Num_Threads"});
  auto set_dim = symbol<SetThreadsDim>(handle, {"bli_thread_set_num_threads"});
  auto corename = symbol<CharFn>(handle, {"openblas_get_corename", "scipy_openblas_get_corename"});
  auto config = symbol<CharFn>(handle, {"openblas_get_config", "scipy_openblas_get_config"});
  auto blis_version = symbol<CharFn>(handle, {"bli_info_get_version_str"});
  auto blis_arch_id = symbol<int (*)()>(handle, {"bli_arch_query_id"});
  auto blis_arch_str = symbol<const char* (*)(int)>(handle, {"bli_arch_string"});
  auto blis_threading = symbol<int (*)()>(handle, {"bli_info_get_enable_threading"});
  auto bli = symbol<BliSgemm>(handle, {"bli_sgemm"});
  auto cblas = symbol<CblasSgemm>(handle, {"cblas_sgemm", "scipy_cblas_sgemm"});
  // OpenBLAS's bf16 GEMM (built with BUILD_BFLOAT16=1 only), or MKL's, which has the same
  // signature.
  const char* sb_names[] = {"cblas_sbgemm", "scipy_cblas_sbgemm", "cblas_gemm_bf16bf16f32"};
  const char* sb_name = nullptr;
  CblasSbgemm sbgemm = nullptr;
  for (const char* n : sb_names)
    if ((sbgemm = symbol<CblasSbgemm>(handle, {n}))) {
      sb_name = n;
      break;
    }
  auto mkl_version = symbol<void (*)(char*, int)>(handle, {"MKL_Get_Version_String"});
  if (!bli && !cblas) {
    std::cerr << "note: " << path << " has no cblas_sgemm; skipped\n";
    return;
  }
  // A library without a thread setter (ATLAS, serial builds) runs what it runs.
  const bool threaded_lib = (set_int || set_dim) &&
                            !(config && std::strstr(config(), "SINGLE_THREADED")) &&
                            !(blis_threading && !blis_threading());
  const int t = threaded_lib ? threads : 1;
  std::string detail;
  if (config) detail = config();
  if (mkl_version) {
    char buf[256] = {};
    mkl_version(buf, sizeof buf - 1);
    detail = buf;
  }
  if (corename) detail += std::string(", kernels ") + corename();
  if (blis_version && blis_arch_id && blis_arch_str)
    detail = std::string("BLIS ") + blis_version() + ", arch " + blis_arch_str(blis_arch_id()) +
             (threaded_lib ? "" : ", single-threaded build");
  if (!set_int && !set_dim) detail += detail.empty() ? "no thread control" : ", no thread control";
  detail += "; " + origin + " " + path;
  auto prepare = [set_int, set_dim, t] {
    if (set_int) set_int(t);
    if (set_dim) set_dim(t);
  };
  prepare();
  Library lib{name, detail, t, false, prepare, nullptr};
  if (bli) {
    lib.gemm = [bli](const Shape& s, const Operands& o) {
      const float one = 1, zero = 0;
      bli(s.trans_a ? kBlisTrans : kBlisNoTrans, s.trans_b ? kBlisTrans : kBlisNoTrans, s.m, s.n,
          s.k, &one, o.a, s.lda(), 1, o.b, s.ldb(), 1, &zero, o.c, s.ldc(), 1);
    };
  } else {
    lib.gemm = [cblas](const Shape& s, const Operands& o) {
      cblas(kRowMajor, s.trans_a ? kTrans : kNoTrans, s.trans_b ? kTrans : kNoTrans, int(s.m),
            int(s.n), int(s.k), 1.0f, o.a, int(s.lda()), o.b, int(s.ldb()), 0.0f, o.c,
            int(s.ldc()));
    };
  }
  libs.push_back(lib);
  if (sbgemm) {
    Library bf = lib;
    bf.name = name + "-bf16";
    bf.bf16 = true;
    bf.detail = std::string(sb_name) + " (bf16 inputs, f32 output); " + lib.detail;
    bf.gemm = [sbgemm](const Shape& s, const Operands& o) {
      sbgemm(kRowMajor, s.trans_a ? kTrans : kNoTrans, s.trans_b ? kTrans : kNoTrans, int(s.m),
             int(s.n), int(s.k), 1.0f, o.a16, int(s.lda()), o.b16, int(s.ldb()), 0.0f, o.c,
             int(s.ldc()));
    };
    libs.push_back(bf);
  }
}

// An environment change applied while a library initializes.
struct EnvChange {
  std::string var;
  std::optional<std::string> value;  // nullopt: unset
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// dlopen `path` on its own (RTLD_LOCAL | RTLD_DEEPBIND). With environment changes, a private copy
// of the file is loaded, so that the library initializes afresh under those variables even when
// the same file is already loaded.
void* open_library(const std::string& path, const std::vector<EnvChange>& env) {
  std::string file = path;
  if (!env.empty()) {
    char tmpl[] = "/tmp/jetpde_gemm_lib_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    std::filesystem::copy_file(path, tmpl, std::filesystem::copy_options::overwrite_existing);
    file = tmpl;
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const EnvChange& e : env) {
    const char* old = std::getenv(e.var.c_str());
    saved.emplace_back(e.var, old ? std::optional<std::string>(old) : std::nullopt);
    if (e.value)
      setenv(e.var.c_str(), e.value->c_str(), 1);
    else
      unsetenv(e.var.c_str());
  }
#if defined(__SANITIZE_ADDRESS__)
  const int deepbind = 0;  // AddressSanitizer refuses RTLD_DEEPBIND
#else
  const int deepbind = RTLD_DEEPBIND;
#endif
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | deepbind);
  if (file != path) std::remove(file.c_str());  // the mapping stays; no file is left behind
  for (const auto& [var, old] : saved) {
    if (old)
      setenv(var.c_str(), old->c_str(), 1);
    else
      unsetenv(var.c_str());
  }
  if (!handle) std::cerr << "note: cannot load " << path << ": " << dlerror() << "\n";
  return handle;
}

#if JETPDE_GEMM_HAVE_DNNL
// oneDNN: dnnl_sgemm (row-major, like cblas) and a bf16 x bf16 -> f32 matmul primitive, the
// library's own bf16 GEMM (it uses AVX512-BF16 where the CPU has it).
void dnnl_check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw std::runtime_error(std::string("oneDNN: ") + what + " failed (" +
                             std::to_string(int(status)) + ")");
}

struct DnnlMatmul {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t src = nullptr, weights = nullptr, dst = nullptr;
  const void* bound[3] = {};
};

struct DnnlState {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::map<std::string, DnnlMatmul> matmuls;  // by shape id
  std::map<std::string, std::string> impl;    // by shape id
};

DnnlMatmul& dnnl_matmul_for(DnnlState& st, const Shape& s) {
  auto it = st.matmuls.find(s.id);
  if (it != st.matmuls.end()) return it->second;
  // Logical src (m x k), weights (k x n), dst (m x n); a transposed operand is the same memory
  // read with the "ba" (column-major) tag.
  dnnl_memory_desc_t src_md, w_md, dst_md;
  const dnnl_dims_t src_dims = {s.m, s.k}, w_dims = {s.k, s.n}, dst_dims = {s.m, s.n};
  dnnl_check(
      dnnl_memory_desc_init_by_tag(&src_md, 2, src_dims, dnnl_bf16, s.trans_a ? dnnl_ba : dnnl_ab),
      "src desc");
  dnnl_check(
      dnnl_memory_desc_init_by_tag(&w_md, 2, w_dims, dnnl_bf16, s.trans_b ? dnnl_ba : dnnl_ab),
      "weights desc");
  dnnl_check(dnnl_memory_desc_init_by_tag(&dst_md, 2, dst_dims, dnnl_f32, dnnl_ab), "dst desc");
  dnnl_matmul_desc_t desc;
  dnnl_check(dnnl_matmul_desc_init(&desc, &src_md, &w_md, nullptr, &dst_md), "matmul desc");
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_check(dnnl_primitive_desc_create(&pd, &desc, nullptr, st.engine, nullptr), "matmul pd");
  const char* impl = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
    st.impl[s.id] = impl;
  DnnlMatmul mm;
  dnnl_check(dnnl_primitive_create(&mm.primitive, pd), "matmul primitive");
  dnnl_primitive_desc_destroy(pd);
  dnnl_check(dnnl_memory_create(&mm.src, &src_md, st.engine, DNNL_MEMORY_NONE), "src memory");
  dnnl_check(dnnl_memory_create(&mm.weights, &w_md, st.engine, DNNL_MEMORY_NONE), "w memory");
  dnnl_check(dnnl_memory_create(&mm.dst, &dst_md, st.engine, DNNL_MEMORY_NONE), "dst memory");
  return st.matmuls.emplace(s.id, mm).first->second;
}

void add_dnnl(std::vector<Library>& libs, int threads) {
  auto st = std::make_shared<DnnlState>();
  dnnl_check(dnnl_engine_create(&st->engine, dnnl_cpu, 0), "engine");
  dnnl_check(dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags), "stream");
  const dnnl_version_t* v = dnnl_version();
  const std::string version = "oneDNN " + std::to_string(v->major) + "." +
                              std::to_string(v->minor) + "." + std::to_string(v->patch);
#if JETPDE_GEMM_HAVE_OPENMP
  auto prepare = [threads] { omp_set_num_threads(threads); };
  const int t = threads;
#else
  auto prepare = [] {};  // oneDNN's OpenMP runtime uses its default: one thread per core
  const int t = int(std::max(1u, std::thread::hardware_concurrency()));
#endif
  libs.push_back({"onednn", version + ", dnnl_sgemm (OpenMP runtime); linked", t, false, prepare,
                  [](const Shape& s, const Operands& o) {
                    dnnl_check(
                        dnnl_sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k,
                                   1.0f, o.a, s.lda(), o.b, s.ldb(), 0.0f, o.c, s.ldc()),
                        "dnnl_sgemm");
                  }});
  // A 64^3 probe primitive now, so that the library's detail names the implementation.
  dnnl_matmul_for(*st, {"probe", "", "", false, false, 64, 64, 64});
  libs.push_back(
      {"onednn-bf16",
       version + ", matmul bf16 x bf16 -> f32, implementation " + st->impl["probe"] +
           " (64^3); linked",
       t, true, prepare, [st](const Shape& s, const Operands& o) {
         DnnlMatmul& mm = dnnl_matmul_for(*st, s);
         const void* want[3] = {o.a16, o.b16, o.c};
         dnnl_memory_t mem[3] = {mm.src, mm.weights, mm.dst};
         for (int i = 0; i < 3; ++i)
           if (mm.bound[i] != want[i]) {
             dnnl_check(dnnl_memory_set_data_handle(mem[i], const_cast<void*>(want[i])),
                        "set handle");
             mm.bound[i] = want[i];
           }
         const dnnl_exec_arg_t args[3] = {
             {DNNL_ARG_SRC, mm.src}, {DNNL_ARG_WEIGHTS, mm.weights}, {DNNL_ARG_DST, mm.dst}};
         dnnl_check(dnnl_primitive_execute(mm.primitive, st->stream, 3, args), "execute");
         dnnl_check(dnnl_stream_wait(st->stream), "wait");
       }});
  libs.back().note = [st](const Shape& s) { return "implementation " + st->impl[s.id]; };
}
#endif

struct Options {
  int threads = 2;
  int reps = 7;
  int max_reps = 0;  // default 3 * reps
  double min_time = 0.1;
  int pause_ms = 150;
  double quiet_wait = 3;
  std::vector<std::string> only, shapes;
  std::vector<std::string> extra_libs;
  bool coretype_pair = false;
  bool dlopen_variants = true;
  std::string json;
};

std::vector<Library> make_libraries(const Options& o) {
  std::vector<Library> libs;
  // Eigen, compiled into this program.
  const std::string eigen_detail = eigen_version() + ", -O3 -march=native, SIMD " + eigen_simd();
  libs.push_back({"eigen", eigen_detail + ", 1 thread (= a build without -fopenmp)", 1, false,
                  [] { Eigen::setNbThreads(1); }, eigen_gemm});
#if JETPDE_GEMM_HAVE_OPENMP
  const int t = o.threads;
  libs.push_back({"eigen-omp",
                  eigen_detail + ", -fopenmp, Eigen::setNbThreads(" + std::to_string(t) + ")", t,
                  false, [t] { Eigen::setNbThreads(t); }, eigen_gemm});
#endif

#if JETPDE_GEMM_HAVE_DNNL
  add_dnnl(libs, o.threads);
#endif

  // The linked libraries: find their handles by soname (RTLD_NOLOAD opens nothing new).
  std::vector<std::string> loaded;
  for (const char* soname : {"libopenblas.so.0", "libblis.so.4"}) {
    if (void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      const std::string path = handle_path(h);
      add_from_handle(libs, h, name_from_path(canonical(path), soname), "linked", o.threads);
      loaded.push_back(canonical(path));
    }
  }

  if (o.dlopen_variants) {
    const std::string dir = "/usr/lib/x86_64-linux-gnu/";
    for (const char* rel :
         {"openblas-pthread/libopenblas.so.0", "openblas-openmp/libopenblas.so.0",
          "openblas-serial/libopenblas.so.0", "blis-openmp/libblis.so.4",
          "blis-pthread/libblis.so.4", "blis-serial/libblis.so.4", "atlas/libblas.so.3"}) {
      const std::string path = dir + rel;
      if (!std::filesystem::exists(path)) continue;
      if (std::find(loaded.begin(), loaded.end(), canonical(path)) != loaded.end()) continue;
      if (void* h = open_library(path, {})) {
        add_from_handle(libs, h, name_from_path(path, rel), "dlopen", o.threads);
        loaded.push_back(canonical(path));
      }
    }
  }

  if (o.coretype_pair) {
    void* linked = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (!linked) throw std::runtime_error("--coretype-pair: no linked OpenBLAS");
    const std::string path = canonical(handle_path(linked));
    const bool set_here = std::getenv("OPENBLAS_CORETYPE") != nullptr;
    std::vector<EnvChange> env;
    if (set_here)
      env = {{"OPENBLAS_CORETYPE", std::nullopt}, {"OPENBLAS_L2_SIZE", std::nullopt}};
    else
      env = {{"OPENBLAS_CORETYPE", std::string("Haswell")}};
    if (void* h = open_library(path, env))
      add_from_handle(libs, h,
                      name_from_path(path, "openblas") + (set_here ? "[auto]" : "[Haswell]"),
                      set_here ? "private copy, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, of"
                               : "private copy, OPENBLAS_CORETYPE=Haswell, of",
                      o.threads, path);
  }

  for (const std::string& spec : o.extra_libs) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--lib wants NAME=PATH");
    const std::vector<std::string> parts = split(spec.substr(eq + 1), ',');
    if (parts.empty()) throw std::runtime_error("--lib wants NAME=PATH");
    std::vector<EnvChange> env;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      if (parts[i][0] == '-') {
        env.push_back({parts[i].substr(1), std::nullopt});
      } else {
        const std::size_t e = parts[i].find('=');
        if (e == std::string::npos) throw std::runtime_error("--lib: bad VAR=VALUE " + parts[i]);
        env.push_back({parts[i].substr(0, e), parts[i].substr(e + 1)});
      }
    }
    if (void* h = open_library(parts[0], env))
      add_from_handle(libs, h, spec.substr(0, eq), env.empty() ? "--lib" : "--lib, private copy of",
                      o.threads, parts[0]);
  }

  if (!o.only.empty()) {
    std::vector<Library> kept;
    for (const std::string& want : o.only) {
      auto it =
          std::find_if(libs.begin(), libs.end(), [&](const Library& l) { return l.name == want; });
      if (it == libs.end()) throw std::runtime_error("--only: no library named '" + want + "'");
      kept.push_back(*it);
    }
    libs = kept;
  }
  return libs;
}

// ---------------------------------------------------------------------------------------------
// Measurement

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
using Buffer = std::unique_ptr<T[], AlignedFree>;
template <class T>
Buffer<T> allocate(std::size_t n) {
  const std::size_t bytes = ((n * sizeof(T) + 63) / 64) * 64;
  return Buffer<T>(static_cast<T*>(std::aligned_alloc(64, bytes)));
}

std::uint16_t to_bf16(float x) {  // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return std::uint16_t(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Cell {
  std::vector<double> seconds;  // per call, one per sample
  std::vector<double> foreign;  // other processes' CPU use during each sample, in cores
  long calls_per_sample = 0;
  int quiet_samples = 0;  // samples with foreign < kQuiet
  bool quiet = false;     // the median is over quiet samples only
  double median_seconds = 0, gflops = 0, error = 0;
  bool ok = true;
  std::string note;
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A sample during which other processes used less than this many cores counts as quiet.
constexpr double kQuiet = 0.1;

// CPU time, in seconds, that all processes have used (/proc/stat; idle and iowait excluded, steal
// included) and that this process has used.
double system_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  long long v[10] = {};
  in >> cpu;
  for (long long& x : v) in >> x;
  const long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return double(busy) / double(sysconf(_SC_CLK_TCK));
}
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Sleeps in 50 ms windows until one passes in which other processes used < kQuiet cores, or until
// `max_wait` seconds have gone by.
void wait_until_quiet(double max_wait) {
  const double start = now_seconds();
  while (now_seconds() - start < max_wait) {
    const double busy0 = system_busy_seconds(), own0 = process_cpu_seconds(), t0 = now_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double foreign =
        ((system_busy_seconds() - busy0) - (process_cpu_seconds() - own0)) / (now_seconds() - t0);
    if (foreign < kQuiet) return;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<Cell> measure_shape(const Shape& s, std::vector<Library>& libs, const Options& o) {
  const std::size_t na = std::size_t(s.a_rows() * s.a_cols());
  const std::size_t nb = std::size_t(s.b_rows() * s.b_cols());
  const std::size_t nc = std::size_t(s.m * s.n);
  auto a = allocate<float>(na), b = allocate<float>(nb), c = allocate<float>(nc);
  auto a16 = allocate<std::uint16_t>(na), b16 = allocate<std::uint16_t>(nb);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < na; ++i) a[i] = u(rng), a16[i] = to_bf16(a[i]);
  for (std::size_t i = 0; i < nb; ++i) b[i] = u(rng), b16[i] = to_bf16(b[i]);
  const Operands ops{a.get(), b.get(), a16.get(), b16.get(), c.get()};

  // Reference: sampled entries of C in double, with the scale sum_k |a_ik b_kj|.
  auto a_at = [&](long i, long p, bool bf) {  // op(A)(i, p)
    const std::size_t idx = s.trans_a ? std::size_t(p * s.lda() + i) : std::size_t(i * s.lda() + p);
    return bf ? double(from_bf16(a16[idx])) : double(a[idx]);
  };
  auto b_at = [&](long p, long j, bool bf) {  // op(B)(p, j)
    const std::size_t idx = s.trans_b ? std::size_t(j * s.ldb() + p) : std::size_t(p * s.ldb() + j);
    return bf ? double(from_bf16(b16[idx])) : double(b[idx]);
  };
  struct Probe {
    long i, j;
    double ref, ref_bf16, scale;
  };
  std::vector<Probe> probes;
  std::uniform_int_distribution<long> ri(0, s.m - 1), rj(0, s.n - 1);
  for (int t = 0; t < 64; ++t) {
    Probe p{ri(rng), rj(rng), 0, 0, 0};
    for (long q = 0; q < s.k; ++q) {
      p.ref += a_at(p.i, q, false) * b_at(q, p.j, false);
      p.ref_bf16 += a_at(p.i, q, true) * b_at(q, p.j, true);
      p.scale += std::abs(a_at(p.i, q, false) * b_at(q, p.j, false));
    }
    probes.push_back(p);
  }

  std::vector<Cell> cells(libs.size());
  for (std::size_t l = 0; l < libs.size(); ++l) {
    Library& lib = libs[l];
    lib.prepare();
    std::fill(c.get(), c.get() + nc, std::nanf(""));
    double t0 = now_seconds();
    lib.gemm(s, ops);
    double first = now_seconds() - t0;
    double err = 0;
    for (const Probe& p : probes) {
      const double got = c[std::size_t(p.i * s.ldc() + p.j)];
      const double e = std::abs(got - (lib.bf16 ? p.ref_bf16 : p.ref)) / p.scale;
      err = std::isfinite(e) ? std::max(err, e) : INFINITY;
    }
    cells[l].error = err;
    cells[l].ok = err < 1e-4;  // float accumulation over k <= 57344 stays far below this
    // Calibration: batches of 1, 4, 16, ... calls until one lasts >= min_time / 4, twice; the
    // faster estimate of one call's time sets the calls per sample.
    double one = std::max(1e-7, first);
    for (int pass = 0; pass < 2; ++pass) {
      for (long n = 1;; n *= 4) {
        t0 = now_seconds();
        for (long i = 0; i < n; ++i) lib.gemm(s, ops);
        const double t = now_seconds() - t0;
        if (t >= 0.25 * o.min_time || n >= (1L << 20)) {
          one = std::min(one, std::max(1e-7, t / double(n)));
          break;
        }
      }
    }
    cells[l].calls_per_sample = std::max<long>(1, long(std::ceil(o.min_time / one)));
    std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_ms));
  }
  // Rounds: every library once per round, in rotating order. After --reps rounds, rounds go on (up
  // to --max-reps) for the libraries that have fewer than --reps quiet samples.
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  for (int r = 0; r < o.max_reps; ++r) {
    bool any = false;
    for (std::size_t q = 0; q < libs.size(); ++q) {
      const std::size_t l = (q + std::size_t(r)) % libs.size();  // rotate the order
      if (r >= o.reps && cells[l].quiet_samples >= o.reps) continue;
      any = true;
      wait_until_quiet(o.quiet_wait);
      libs[l].prepare();
      const long n = cells[l].calls_per_sample;
      const double busy0 = system_busy_seconds(), own0 = process_cpu_seconds();
      const double t0 = now_seconds();
      for (long i = 0; i < n; ++i) libs[l].gemm(s, ops);
      const double wall = now_seconds() - t0;
      const double foreign =
          std::max(0.0, (system_busy_seconds() - busy0) - (process_cpu_seconds() - own0)) / wall;
      cells[l].seconds.push_back(wall / double(n));
      cells[l].foreign.push_back(std::min(foreign, double(cores)));
      if (foreign < kQuiet) ++cells[l].quiet_samples;
      std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_ms));
    }
    if (!any) break;
  }
  for (Cell& cell : cells) {
    std::vector<double> quiet;
    for (std::size_t i = 0; i < cell.seconds.size(); ++i)
      if (cell.foreign[i] < kQuiet) quiet.push_back(cell.seconds[i]);
    cell.quiet = int(quiet.size()) >= std::min(o.reps, 3);
    cell.median_seconds = cell.quiet ? median(quiet) : median(cell.seconds);
    cell.gflops = s.flops() / cell.median_seconds * 1e-9;
  }
  for (std::size_t l = 0; l < libs.size(); ++l)
    if (libs[l].note) cells[l].note = libs[l].note(s);
  return cells;
}

// ---------------------------------------------------------------------------------------------
// Reporting

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buf;
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(key)) {
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  return "unknown";
}

std::string cpu_model() {
  return cpuinfo_field("model name") + " (family " + cpuinfo_field("cpu family") + ", model " +
         cpuinfo_field("model") + ")";
}

// The SIMD features that matter for GEMM, as /proc/cpuinfo lists them.
std::string cpu_features() {
  const std::string flags = " " + cpuinfo_field("flags") + " ";
  std::string out;
  for (const char* f : {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                        "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"}) {
    const std::string name = f;
    const bool has = flags.find(" " + name + " ") != std::string::npos;
    if (!out.empty()) out.push_back(' ');
    out.append(name);
    out.push_back(has ? '+' : '-');
  }
  return out;
}

std::string environment() {
  std::string out;
  for (const char* v :
       {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OPENBLAS_THREAD_TIMEOUT",
        "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "BLIS_NUM_THREADS",
        "BLIS_ARCH_TYPE", "MKL_NUM_THREADS", "MKL_THREADING_LAYER", "MKL_ENABLE_INSTRUCTIONS"})
    if (const char* value = std::getenv(v))
      out += (out.empty() ? "" : ", ") + std::string(v) + "=" + value;
  return out.empty() ? "none of the BLAS variables set" : out;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + '"';
}

std::string shape_dims(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

void print_header(const Options& o, const std::vector<Library>& libs) {
  std::cout << "jetpde_gemm_bench  " << utc_date() << "\n"
            << "cpu: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " cores\n"
            << "cpu flags: " << cpu_features() << "\n"
            << "environment: " << environment() << "\n"
            << "threads: " << o.threads << " for the libraries that thread; samples: " << o.reps
            << " quiet ones (median; up to " << o.max_reps << " rounds), each >= " << o.min_time
            << " s, " << o.pause_ms << " ms pause after each, then up to " << o.quiet_wait
            << " s of waiting for a quiet machine\n\nlibraries:\n";
  for (const Library& l : libs)
    std::printf("  %-22s %d thr  %s\n", l.name.c_str(), l.threads, l.detail.c_str());
  std::printf(
      "\nGFLOP/s (2*m*n*k / median seconds per call); m x n x k of the row-major cblas call\n");
  std::fflush(stdout);
}

void print_table(const std::vector<Shape>& shapes, const std::vector<Library>& libs,
                 const std::vector<std::vector<Cell>>& cells, std::size_t ref) {
  std::string head = "| shape | op | m x n x k |";
  std::string rule = "|---|---|---|";
  for (const Library& l : libs) head += " " + l.name + " |", rule += "---:|";
  head += " best | best / " + libs[ref].name + " |";
  rule += "---|---:|";
  std::cout << "\n" << head << "\n" << rule << "\n";
  for (std::size_t s = 0; s < cells.size(); ++s) {
    std::string row =
        "| " + shapes[s].id + " | " + shapes[s].label + " | " + shape_dims(shapes[s]) + " |";
    std::size_t best = libs.size();  // the fastest f32 library with a correct result
    for (std::size_t l = 0; l < libs.size(); ++l) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %.1f%s%s |", cells[s][l].gflops,
                    cells[s][l].quiet ? "" : "~", cells[s][l].ok ? "" : " (BAD)");
      row += buf;
      if (!libs[l].bf16 && cells[s][l].ok &&
          (best == libs.size() || cells[s][l].gflops > cells[s][best].gflops))
        best = l;
    }
    char buf[128] = " - | - |";
    if (best < libs.size())
      std::snprintf(buf, sizeof buf, " %s | %.2f |", libs[best].name.c_str(),
                    cells[s][best].gflops / cells[s][ref].gflops);
    std::cout << row << buf << "\n";
  }
  std::cout << "\n~ = fewer than 3 quiet samples (other processes used >= " << kQuiet
            << " core): median of all samples\n";
  std::cout << "\nratio to " << libs[ref].name << " (same process, same rounds):\n\n";
  head = "| shape |";
  rule = "|---|";
  for (const Library& l : libs) head += " " + l.name + " |", rule += "---:|";
  std::cout << head << "\n" << rule << "\n";
  for (std::size_t s = 0; s < cells.size(); ++s) {
    std::string row = "| " + shapes[s].id + " |";
    for (std::size_t l = 0; l < libs.size(); ++l) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.2f |", cells[s][l].gflops / cells[s][ref].gflops);
      row += buf;
    }
    std::cout << row << "\n";
  }
  std::cout << "\nmax error per library (|c - exact| / sum_k |a b|, 64 sampled entries; bf16 "
               "against the exact product of the rounded inputs):";
  for (std::size_t l = 0; l < libs.size(); ++l) {
    double e = 0;
    for (const auto& row : cells) e = std::max(e, row[l].error);
    std::printf(" %s %.1e;", libs[l].name.c_str(), e);
  }
  std::cout << "\n";
  for (std::size_t l = 0; l < libs.size(); ++l) {
    std::string notes;
    for (std::size_t s = 0; s < cells.size(); ++s)
      if (!cells[s][l].note.empty()) notes += " " + shapes[s].id + ": " + cells[s][l].note + ";";
    if (!notes.empty()) std::cout << libs[l].name << ":" << notes << "\n";
  }
}

void write_json(const std::string& path, const Options& o, const std::vector<Shape>& shapes,
                const std::vector<Library>& libs, const std::vector<std::vector<Cell>>& cells) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out.precision(9);
  out << "{\n  \"date\": " << quoted(utc_date()) << ",\n  \"cpu\": " << quoted(cpu_model())
      << ",\n  \"cores\": " << std::thread::hardware_concurrency()
      << ",\n  \"cpu_flags\": " << quoted(cpu_features())
      << ",\n  \"environment\": " << quoted(environment()) << ",\n  \"threads\": " << o.threads
      << ",\n  \"reps\": " << o.reps << ",\n  \"max_reps\": " << o.max_reps
      << ",\n  \"min_time\": " << o.min_time << ",\n  \"pause_ms\": " << o.pause_ms
      << ",\n  \"quiet_wait\": " << o.quiet_wait << ",\n  \"libraries\": [\n";
  for (std::size_t l = 0; l < libs.size(); ++l)
    out << "    {\"name\": " << quoted(libs[l].name) << ", \"threads\": " << libs[l].threads
        << ", \"bf16\": " << (libs[l].bf16 ? "true" : "false")
        << ", \"detail\": " << quoted(libs[l].detail) << "}" << (l + 1 < libs.size() ? "," : "")
        << "\n";
  out << "  ],\n  \"results\": [\n";
  bool first = true;
  for (std::size_t s = 0; s < cells.size(); ++s)
    for (std::size_t l = 0; l < libs.size(); ++l) {
      const Cell& c = cells[s][l];
      out << (first ? "" : ",\n") << "    {\"shape\": " << quoted(shapes[s].id)
          << ", \"op\": " << quoted(shapes[s].label) << ", \"role\": " << quoted(shapes[s].role)
          << ", \"m\": " << shapes[s].m << ", \"n\": " << shapes[s].n << ", \"k\": " << shapes[s].k
          << ", \"library\": " << quoted(libs[l].name) << ", \"gflops\": " << c.gflops
          << ", \"median_seconds\": " << c.median_seconds
          << ", \"calls_per_sample\": " << c.calls_per_sample
          << ", \"quiet_samples\": " << c.quiet_samples
          << ", \"median_over_quiet\": " << (c.quiet ? "true" : "false")
          << ", \"max_error\": " << c.error << ", \"note\": " << quoted(c.note)
          << ", \"ok\": " << (c.ok ? "true" : "false") << ", \"seconds\": [";
      for (std::size_t i = 0; i < c.seconds.size(); ++i) out << (i ? ", " : "") << c.seconds[i];
      out << "], \"foreign_cores\": [";
      for (std::size_t i = 0; i < c.foreign.size(); ++i) out << (i ? ", " : "") << c.foreign[i];
      out << "]}";
      first = false;
    }
  out << "\n  ]\n}\n";
  if (!out) throw std::runtime_error("error writing '" + path + "'");
}

// ---------------------------------------------------------------------------------------------

double positive_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v > 0))
    throw std::runtime_error(flag + " wants a positive number, got '" + text + "'");
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg == "--coretype-pair") {
      o.coretype_pair = true;
      continue;
    }
    if (arg == "--no-dlopen") {
      o.dlopen_variants = false;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("unknown option or missing value: '" + arg + "'");
    const std::string v = argv[++i];
    if (arg == "--threads")
      o.threads = int(positive_number(arg, v));
    else if (arg == "--reps")
      o.reps = int(positive_number(arg, v));
    else if (arg == "--max-reps")
      o.max_reps = int(positive_number(arg, v));
    else if (arg == "--quiet-wait")
      o.quiet_wait = v == "0" ? 0 : positive_number(arg, v);
    else if (arg == "--min-time")
      o.min_time = positive_number(arg, v);
    else if (arg == "--pause-ms")
      o.pause_ms = v == "0" ? 0 : int(positive_number(arg, v));
    else if (arg == "--only")
      o.only = split(v, ',');
    else if (arg == "--shapes")
      o.shapes = split(v, ',');
    else if (arg == "--lib")
      o.extra_libs.push_back(v);
    else if (arg == "--json")
      o.json = v;
    else
      throw std::runtime_error("unknown option '" + arg + "'");
  }
  o.max_reps = std::max(o.max_reps == 0 ? 3 * o.reps : o.max_reps, o.reps);
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  std::vector<Shape> shapes = pinn_shapes();
  if (!o.shapes.empty()) {
    std::vector<Shape> kept;
    for (const std::string& id : o.shapes) {
      auto it =
          std::find_if(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.id == id; });
      if (it == shapes.end()) throw std::runtime_error("--shapes: no shape '" + id + "'");
      kept.push_back(*it);
    }
    shapes = kept;
  }
  std::vector<Library> libs = make_libraries(o);
  if (libs.empty()) throw std::runtime_error("no library to measure");
  print_header(o, libs);
  std::vector<std::vector<Cell>> cells;
  for (const Shape& s : shapes) {
    cells.push_back(measure_shape(s, libs, o));
    std::printf("  %-7s %-6s %-16s", s.id.c_str(), s.label.c_str(), shape_dims(s).c_str());
    for (std::size_t l = 0; l < libs.size(); ++l)
      std::printf(" %s %.1f%s%s", libs[l].name.c_str(), cells.back()[l].gflops,
                  cells.back()[l].quiet ? "" : "~", cells.back()[l].ok ? "" : "(BAD)");
    std::printf("\n");
    std::fflush(stdout);
  }
  // Ratios against the linked OpenBLAS when there is one, else the first library.
  std::size_t ref = 0;
  for (std::size_t l = 0; l < libs.size(); ++l)
    if (libs[l].detail.find("; linked ") != std::string::npos &&
        libs[l].name.starts_with("openblas") && !libs[l].bf16) {
      ref = l;
      break;
    }
  print_table(shapes, libs, cells, ref);
  if (!o.json.empty()) {
    write_json(o.json, o, shapes, libs, cells);
    std::cout << "\nwrote " << o.json << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "jetpde_gemm_bench: " << e.what() << "\n" << kUsage;
    rc = 2;
  }
  std::fflush(stdout);
  // Skip the libraries' destructors: several OpenBLAS/BLIS copies tear down thread pools at exit.
  std::_Exit(rc);
}
