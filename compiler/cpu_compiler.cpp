#include "compiler/cpu_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "autodiff/errors.h"

#ifndef JETPDE_HOST_CXX
#define JETPDE_HOST_CXX "c++"
#endif

namespace jetpde::compiler {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFlags = "-O3 -march=native -ffast-math -fopenmp -fPIC -shared -w";

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// Runs `command` in a shell; returns its exit status and what it printed.
int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
    key = compiler + "\n" + version + "\n" + kFlags + "\n" + cpu;
    for_compiler = compiler;
  }
  return key;
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

// Loaded with RTLD_NODELETE and never closed: the generated code's OpenMP worker threads may
// outlive any one executable, and unloading code they run crashes the process.
SharedObject::~SharedObject() = default;

void* SharedObject::symbol(const std::string& name) const {
  void* s = dlsym(handle_, name.c_str());
  if (!s) throw InternalError("symbol " + name + " missing from " + path_);
  return s;
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

CpuBuild build_shared_object(const std::string& source, const CpuCompileOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::string compiler = compiler_of(o);
  const std::string key = hex(fnv1a(source, fnv1a(environment_key(compiler))));
  const fs::path dir = cache_directory(o);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("compile cache: cannot create " + dir.string() + ": " + ec.message());
  const fs::path so = dir / ("jetpde-" + key + ".so");
  CpuBuild build;
  build.cache_hit = fs::exists(so);
  if (!build.cache_hit) {
    // Written under unique temporary names and renamed: a concurrent or interrupted build never
    // leaves a half-written object under the final name.
    const std::string tmp = (dir / ("tmp-" + key + "-" + std::to_string(getpid()))).string();
    {
      std::ofstream out(tmp + ".cpp");
      out << source;
      if (!out) throw UserError("compile cache: cannot write " + tmp + ".cpp");
    }
    std::string log;
    const std::string cmd = compiler + " " + kFlags + " -o '" + tmp + ".so' '" + tmp + ".cpp'";
    const int status = run_command(cmd, &log);
    if (status != 0) {
      fs::remove(tmp + ".so", ec);
      throw UserError("the host compiler failed (" + cmd + "), exit status " +
                      std::to_string(status) + ":\n" + log.substr(0, 4000) +
                      "\nthe source is kept in " + tmp + ".cpp");
    }
    fs::rename(tmp + ".so", so, ec);
    if (ec)
      throw UserError("compile cache: cannot rename into " + so.string() + ": " + ec.message());
    fs::rename(tmp + ".cpp", dir / ("jetpde-" + key + ".cpp"), ec);
  }
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) throw UserError(std::string("cannot load ") + so.string() + ": " + dlerror());
  build.object = std::make_shared<SharedObject>(handle, so.string());
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return build;
}

}  // namespace jetpde::compiler
