#include "compiler/cpu_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>
#include <vector>

#include "autodiff/errors.h"
#include "compiler/render_c.h"

#ifndef JETPDE_HOST_CXX
#define JETPDE_HOST_CXX "c++"
#endif

namespace jetpde::compiler {
namespace fs = std::filesystem;
namespace {

// -O2: GCC 12 vectorizes there too; against -O3 it compiled poisson32d's 141 kernels in 1.9 s
// instead of 2.5 s with the same step time within noise (jetpde_bench, this session).
// -mprefer-vector-width=512 (x86): GCC's tuning for Intel CPUs with AVX-512 prefers 256-bit
// vectors, so the kernels ran at half width there and called libmvec's 8-lane tanh; the GEMMs run
// AVX-512 (or AMX) anyway. On an Intel Xeon with AMX the examples' Adam steps ran 6-24% faster
// with it, order6 and poisson32d 10-20% (bench/README.md, "On an AMX CPU"). No effect where GCC
// already prefers 512 bits or the CPU has no AVX-512.
#if defined(__x86_64__)
constexpr const char* kVectorWidth = " -mprefer-vector-width=512";
#else
constexpr const char* kVectorWidth = "";
#endif

// What the host compiler gets: host_compile_flags() with warnings off (generated code).
const std::string& flags() {
  static const std::string f = std::string(host_compile_flags()) + " -w";
  return f;
}

// Source bytes below which another translation unit does not pay: GCC takes 6-10 ms a kB of
// kernels at -O2 and 0.1 s to start a unit (headers included).
constexpr std::size_t kBytesPerUnit = 16 * 1024;

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string compiler_of(const CpuCompileOptions& o) {
  if (!o.compiler.empty()) return o.compiler;
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) return cxx;
  return JETPDE_HOST_CXX;
}

// What the cache key depends on besides the source: the compiler's identity and this CPU.
const std::string& environment_key(const std::string& compiler) {
  static std::mutex mutex;
  static std::string key, for_compiler;
  std::lock_guard lock(mutex);
  if (key.empty() || for_compiler != compiler) {
    std::string version;
    run_command(compiler + " --version", &version);
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, cpu;
    while (std::getline(cpuinfo, line))
      if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) {
        cpu += line;
        if (line.rfind("flags", 0) == 0) break;
      }
    key = compiler + "\n" + version + "\n" + flags() + "\n" + cpu;
    for_compiler = compiler;
  }
  return key;
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw UserError("compile cache: cannot write " + path);
}

[[noreturn]] void compiler_failed(const std::string& cmd, int status, const std::string& log,
                                  const std::string& kept) {
  throw UserError("the host compiler failed (" + cmd + "), exit status " + std::to_string(status) +
                  ":\n" + log.substr(0, 4000) + "\nthe source is kept in " + kept);
}

// Splits a rendered source at its part markers into the prelude and the kernels.
std::vector<std::string> split_parts(const std::string& source, std::string* prelude) {
  std::vector<std::string> parts;
  std::size_t at = source.find(kPartMarker);
  *prelude = source.substr(0, at);
  while (at != std::string::npos) {
    const std::size_t next = source.find(kPartMarker, at + 1);
    parts.push_back(source.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return parts;
}

// Compiles `source` into `tmp`.so. A large source is split at its part markers into one
// translation unit per core (at most 4), of about equal size, compiled concurrently and linked:
// cold compiles of big programs take a fraction of the time.
void compile_to(const std::string& compiler, const std::string& source, const std::string& tmp) {
  std::string prelude;
  const std::vector<std::string> kernels = split_parts(source, &prelude);
  const unsigned cores = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::size_t> sizes;
  for (const std::string& k : kernels) sizes.push_back(k.size());
  const std::size_t bytes = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
  const std::size_t units =
      std::min({static_cast<std::size_t>(cores), kernels.size(), bytes / kBytesPerUnit});
  write_file(tmp + ".cpp", source);
  if (units <= 1) {
    std::string log;
    const std::string cmd =
        compiler + " " + flags() + " -shared -o '" + tmp + ".so' '" + tmp + ".cpp'";
    if (const int status = run_command(cmd, &log); status != 0)
      compiler_failed(cmd, status, log, tmp + ".cpp");
    return;
  }
  const std::vector<std::size_t> unit = balanced_units(sizes, units);
  std::vector<std::string> objects(units), logs(units), commands(units);
  std::vector<int> status(units, 0);
  std::vector<std::thread> workers;
  for (std::size_t u = 0; u < units; ++u) {
    std::string text = prelude;
    for (std::size_t k = 0; k < kernels.size(); ++k)
      if (unit[k] == u) text += kernels[k];
    const std::string part = tmp + "-" + std::to_string(u);
    write_file(part + ".cpp", text);
    objects[u] = part + ".o";
    commands[u] = compiler + " " + flags() + " -c -o '" + objects[u] + "' '" + part + ".cpp'";
    workers.emplace_back([&, u] { status[u] = run_command(commands[u], &logs[u]); });
  }
  for (std::thread& w : workers) w.join();
  std::error_code ec;
  for (std::size_t u = 0; u < units; ++u) {
    fs::remove(tmp + "-" + std::to_string(u) + ".cpp", ec);
    if (status[u] != 0) compiler_failed(commands[u], status[u], logs[u], tmp + ".cpp");
  }
  std::string link = compiler + " -fopenmp -shared -o '" + tmp + ".so'", log;
  for (const std::string& o : objects) link += " '" + o + "'";
  const int linked = run_command(link, &log);
  for (const std::string& o : objects) fs::remove(o, ec);
  if (linked != 0) compiler_failed(link, linked, log, tmp + ".cpp");
}

}  // namespace

int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Loaded with RTLD_NODELETE and never closed: the generated code's OpenMP worker threads may
// outlive any one executable, and unloading code they run crashes the process.
SharedObject::~SharedObject() = default;

void* SharedObject::symbol(const std::string& name) const {
  void* s = dlsym(handle_, name.c_str());
  if (!s) throw InternalError("symbol " + name + " missing from " + path_);
  return s;
}

std::vector<std::size_t> balanced_units(const std::vector<std::size_t>& sizes, std::size_t units) {
  units = std::max<std::size_t>(1, std::min(units, sizes.size()));
  // Largest part first, each into the unit that holds the fewest bytes so far (the first of
  // equals): the first `units` parts take one unit each, so none stays empty.
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::size_t> unit(sizes.size(), 0), bytes(units, 0);
  for (const std::size_t k : order) {
    const auto least =
        static_cast<std::size_t>(std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
    unit[k] = least;
    bytes[least] += sizes[k];
  }
  return unit;
}

const char* host_compile_flags() {
  static const std::string f =
      std::string("-O2 -march=native") + kVectorWidth + " -ffast-math -fopenmp -fPIC";
  return f.c_str();
}

void compile_shared_library(const std::string& source, const std::string& output,
                            const std::string& link, const CpuCompileOptions& o) {
  const std::string cmd =
      compiler_of(o) + " " + flags() + " -shared -o '" + output + "' '" + source + "' " + link;
  std::string log;
  if (const int status = run_command(cmd, &log); status != 0)
    compiler_failed(cmd, status, log, source);
}

std::string cache_directory(const CpuCompileOptions& o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char* dir = std::getenv("JETPDE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/jetpde";
  return (fs::temp_directory_path() / "jetpde-cache").string();
}

bool host_compiler_available(const CpuCompileOptions& o) {
  static std::mutex mutex;
  static std::string checked;
  static bool available = false;
  std::lock_guard lock(mutex);
  const std::string compiler = compiler_of(o);
  if (checked != compiler) {
    std::string out;
    available = run_command(compiler + " --version", &out) == 0;
    checked = compiler;
  }
  return available;
}

std::int64_t cache_max_bytes(const CpuCompileOptions& o) {
  if (o.cache_max_bytes != 0) return o.cache_max_bytes;
  if (const char* env = std::getenv("JETPDE_CACHE_MAX_MB"); env && *env) {
    char* end = nullptr;
    const long long mb = std::strtoll(env, &end, 10);
    if (*end != '\0' || mb < 0)
      throw UserError(std::string("JETPDE_CACHE_MAX_MB: '") + env +
                      "' is not a whole number of megabytes (0: no limit)");
    constexpr long long kMb = 1 << 20;
    return mb == 0 || mb > std::numeric_limits<std::int64_t>::max() / kMb ? -1 : mb * kMb;
  }
  return kCacheMaxBytes;
}

std::map<std::string, CachedProgram> cached_programs(const std::string& dir) {
  std::map<std::string, CachedProgram> programs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("jetpde-")) continue;
    std::error_code gone;
    const auto time = fs::last_write_time(e.path(), gone);
    if (gone) continue;
    const auto size = static_cast<std::int64_t>(fs::file_size(e.path(), gone));
    if (gone) continue;
    const std::string key = name.substr(7, name.find('.') - 7), base = "jetpde-" + key;
    const bool object = name == base + ".so" || name == base + ".ptx" || name == base + ".cubin";
    CachedProgram& p = programs[key];
    p.files.push_back(e.path());
    p.bytes += size;
    if (object || p.files.size() == 1) p.used = time;
    p.has_object = p.has_object || object;
  }
  return programs;
}

std::int64_t prune_cache(const std::string& dir, std::int64_t max_bytes, const std::string& keep) {
  if (max_bytes <= 0) return 0;
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {  // temporaries of builds that died
    if (!e.path().filename().string().starts_with("tmp-")) continue;
    std::error_code gone;
    const auto time = fs::last_write_time(e.path(), gone);
    if (!gone && now - time > std::chrono::hours(24)) fs::remove(e.path(), gone);
  }
  const std::map<std::string, CachedProgram> programs = cached_programs(dir);
  std::int64_t total = 0, removed = 0;
  std::vector<std::pair<fs::file_time_type, const CachedProgram*>> order;
  for (const auto& [key, p] : programs) {
    total += p.bytes;
    if (key != keep && now - p.used > std::chrono::minutes(10)) order.emplace_back(p.used, &p);
  }
  if (total <= max_bytes) return 0;
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [used, p] : order) {
    if (total <= max_bytes / 4 * 3) break;
    for (const fs::path& f : p->files) fs::remove(f, ec);
    total -= p->bytes;
    removed += p->bytes;
  }
  return removed;
}

CpuBuild build_shared_object(const std::string& source, const CpuCompileOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::string compiler = compiler_of(o);
  const std::string key = hex(fnv1a(source, fnv1a(environment_key(compiler))));
  const fs::path dir = cache_directory(o);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("compile cache: cannot create " + dir.string() + ": " + ec.message());
  const fs::path so = dir / ("jetpde-" + key + ".so");
  // Written under unique temporary names and renamed: a concurrent or interrupted build never
  // leaves a half-written object under the final name. Unique per process and per build in it:
  // threads of one process (ranks as threads, Python threads) may build the same key at once, and
  // the first rename would take the other's file away. Then the cache is pruned to its limit.
  const auto build_into_cache = [&] {
    static std::atomic<unsigned long> builds{0};
    const std::string tmp =
        (dir / ("tmp-" + key + "-" + std::to_string(getpid()) + "-" + std::to_string(builds++)))
            .string();
    compile_to(compiler, source, tmp);
    fs::rename(tmp + ".so", so, ec);
    if (ec)
      throw UserError("compile cache: cannot rename into " + so.string() + ": " + ec.message());
    fs::rename(tmp + ".cpp", dir / ("jetpde-" + key + ".cpp"), ec);
    prune_cache(dir.string(), cache_max_bytes(o), key);
  };
  CpuBuild build;
  build.cache_hit = fs::exists(so);
  if (build.cache_hit)
    fs::last_write_time(so, fs::file_time_type::clock::now(), ec);  // its use, for prune_cache
  else
    build_into_cache();
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle && build.cache_hit && !fs::exists(so)) {
    // Pruned by another process between the look and the load: built again.
    build.cache_hit = false;
    build_into_cache();
    handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  }
  if (!handle) throw UserError(std::string("cannot load ") + so.string() + ": " + dlerror());
  build.object = std::make_shared<SharedObject>(handle, so.string());
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return build;
}

}  // namespace jetpde::compiler
