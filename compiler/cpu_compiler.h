// The CPU backend's compiler role: C++ source -> shared object, through the host compiler, cached
// on disk by a hash of the source, the compiler and the CPU (docs/design.md section 7, step 7).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jetpde::compiler {

struct CpuCompileOptions {
  std::string cache_dir;  // empty: $JETPDE_CACHE_DIR, else ~/.cache/jetpde
  // The most bytes the cache's programs may take (prune_cache, after each new program): > 0 that
  // many; 0: $JETPDE_CACHE_MAX_MB megabytes where set (0 there: no limit), else kCacheMaxBytes;
  // negative: no limit.
  std::int64_t cache_max_bytes = 0;
  std::string compiler;  // empty: $CXX, else the compiler jetpde was built with, else c++
  // bf16 GEMMs with 16-bit instructions where native_bf16_gemm_available() (compiler/cpu_gemm.h);
  // false: emulated (f32 GEMMs on bf16-rounded operands) everywhere.
  bool native_bf16 = true;
  // Kernels of at least this many elements run on the OpenMP team (0: kParallelMinElements,
  // compiler/render_c.h). A kernel that sums over rows adds per-thread partial sums, so its
  // result depends on how many threads it ran on (and is deterministic for each count).
  std::int64_t parallel_min_elements = 0;
  // Points per tile in the tiled regions (program.h, TiledRegion): runs of GEMMs and kernels over
  // the same points run tile by tile, each tile's rows kept in cache between the steps. > 0: that
  // many; 0: the environment's JETPDE_TILE_ROWS where set (a number, 0 or less for none, or
  // auto), else auto: each region's tile measured on its first run among kTileCandidates and
  // running whole, and kept in the compile cache for this CPU, program and thread count;
  // negative: every step runs whole.
  std::int64_t tile_rows = 0;
  // Whether auto measures the tiles (on a program's first run: some 30 runs of each region, a
  // cost only a program run many times repays, as a training step is). false: auto means tiles
  // of kPreferredTile, unmeasured (evaluation programs, run a few times each).
  bool measure_tiles = true;
  // Whether a tile measured while other processes kept more than half a core busy
  // (cpu_runtime.cpp, kBusyCores) is kept as measured: false, the region takes kPreferredTile
  // instead (and the cache keeps that). true for tests of the measurement and the cache, which
  // run beside other tests.
  bool trust_busy_tiles = false;
  // The job this process is a rank of (solvers::Objective sets them from its communicator): the
  // ranks on this machine, this one included, each taken to keep as many cores busy as this
  // process has threads, which the measurement does not count as other processes (they run
  // beside this one for the whole run); and this process's rank, whose tile choices go into a
  // cache file of its own from rank 1 on (ranks measure side by side and may choose differently,
  // and a resumed rank must run the tiles it ran before).
  int ranks_here = 1;
  int rank = 0;
};

// options.tile_rows resolved (the environment, the default): > 0 that many points, 0 auto
// (measured; kPreferredTile where options.measure_tiles is false), < 0 no tiling. UserError
// naming JETPDE_TILE_ROWS when it is neither a number nor auto.
std::int64_t tile_rows(const CpuCompileOptions& options);

// A loaded shared object. It stays loaded for the life of the process (see the destructor).
class SharedObject {
 public:
  SharedObject(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  void* symbol(const std::string& name) const;  // InternalError when missing
  const std::string& path() const { return path_; }

 private:
  void* handle_;
  std::string path_;
};

struct CpuBuild {
  std::shared_ptr<SharedObject> object;
  bool cache_hit = false;
  double seconds = 0.0;  // compiling (or finding in the cache) and loading
};

// Compiles `source` (or finds it in the cache) and loads it. UserError, with the compiler's
// output, when the compiler is missing or fails.
CpuBuild build_shared_object(const std::string& source, const CpuCompileOptions& options);

// Compiles the C++ file `source` into the shared library `output` with the host compiler and the
// CPU backend's flags, linked with `link` (more arguments for the linker: libraries). Nothing is
// cached or loaded. UserError, with the compiler's output, when it fails.
void compile_shared_library(const std::string& source, const std::string& output,
                            const std::string& link, const CpuCompileOptions& options = {});

// The flags the host compiler gets for generated code (build_shared_object,
// compile_shared_library), "-O2 -march=native ...", besides -w there.
const char* host_compile_flags();

// How build_shared_object splits a large source into translation units compiled side by side:
// parts (kernels) of these sizes into `units` units (at most one per part) of about equal total
// size, largest part first into the unit with the fewest bytes (a part never split, no unit
// empty). Returns each part's unit; a unit keeps its parts in source order. (Runs of consecutive
// parts, before, left poisson32d's two units at 158 and 96 kB under auto: 2.7 s cold, 2.3 s so.)
std::vector<std::size_t> balanced_units(const std::vector<std::size_t>& sizes, std::size_t units);

// Runs `command` in a shell; returns its exit status (-1 when it did not exit normally) and
// appends what it printed, standard error included, to `output`.
int run_command(const std::string& command, std::string* output);

// The directory compiled programs are cached in.
std::string cache_directory(const CpuCompileOptions& options);

// The cache's default size limit: some 5,000 programs of a typical training step (a shared
// object and its source, 100-250 kB together).
inline constexpr std::int64_t kCacheMaxBytes = std::int64_t{1} << 30;
// options.cache_max_bytes resolved (the environment, the default); <= 0: no limit. UserError
// naming JETPDE_CACHE_MAX_MB when it is not a whole number of megabytes.
std::int64_t cache_max_bytes(const CpuCompileOptions& options);
// The programs in the compile cache `dir`: a program is its files jetpde-KEY.*, the object (a
// shared object; CUDA: PTX or cubin), its source and its tile files; its time is its object's,
// which each cache hit renews (without an object: its first file's). Files that vanish meanwhile
// are left out.
struct CachedProgram {
  std::vector<std::filesystem::path> files;
  std::int64_t bytes = 0;
  bool has_object = false;
  std::filesystem::file_time_type used = std::filesystem::file_time_type::min();
};
std::map<std::string, CachedProgram> cached_programs(const std::string& dir);
// Keeps the programs of the compile cache `dir` (cached_programs) within `max_bytes` (<= 0: no
// limit). Where they take more, whole programs go
// least recently used first until they take at most three quarters of the limit, never `keep` (a
// KEY: the one just built) nor one used within the last 10 minutes (another process may be loading
// it). Build temporaries (tmp-*) older than a day, left by a build that was killed, go too. Files
// that vanish meanwhile (another process pruning) are no error. Returns the bytes removed.
std::int64_t prune_cache(const std::string& dir, std::int64_t max_bytes, const std::string& keep);
// What it holds (`jetpde info`): compiled programs (shared objects), tile files (a training
// program's measured tiles, per thread count and rank), and the regions whose tiles were measured
// under load (CompileStats::tiles_busy), with their files: deleting one has the next run measure
// its tiles again. (Defined in cpu_runtime.cpp, beside the tile files' reader.)
struct CacheContents {
  int programs = 0, tile_files = 0, busy_regions = 0;
  std::int64_t bytes = 0;  // of the programs' files (what cache_max_bytes limits)
  std::vector<std::string> busy_files;
};
CacheContents cache_contents(const CpuCompileOptions& options);
// Whether a working host compiler is available (checked once per process).
bool host_compiler_available(const CpuCompileOptions& options);

}  // namespace jetpde::compiler
