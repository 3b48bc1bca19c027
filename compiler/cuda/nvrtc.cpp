#include "compiler/cuda/nvrtc.h"

#include <nvrtc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "autodiff/errors.h"
#include "compiler/cpu_compiler.h"

namespace jetpde::compiler {
namespace fs = std::filesystem;
namespace {

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> nvrtc_flags(const NvrtcOptions& o) {
  return {"--gpu-architecture=" + o.arch, "-std=c++17"};
}

bool wants_cubin(const std::string& arch) { return arch.rfind("sm_", 0) == 0; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw UserError("compile cache: cannot write " + path.string());
}

// An NVRTC program, destroyed with its owner.
struct OwnedProgram {
  nvrtcProgram p = nullptr;
  OwnedProgram() = default;
  OwnedProgram(const OwnedProgram&) = delete;
  OwnedProgram& operator=(const OwnedProgram&) = delete;
  ~OwnedProgram() {
    if (p) nvrtcDestroyProgram(&p);
  }
};

std::string program_log(nvrtcProgram p) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(p, log.data());
  log.resize(size - 1);
  return log;
}

// Runs NVRTC; on failure, keeps the source at `kept` and throws with the log.
std::string run_nvrtc(const std::string& source, const NvrtcOptions& o, const fs::path& kept) {
  OwnedProgram program;
  nvrtcResult r = nvrtcCreateProgram(&program.p, source.c_str(), "jetpde.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS)
    throw UserError(std::string("NVRTC cannot create a program: ") + nvrtcGetErrorString(r));
  const std::vector<std::string> flags = nvrtc_flags(o);
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  r = nvrtcCompileProgram(program.p, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    std::error_code ec;
    fs::create_directories(kept.parent_path(), ec);
    std::ofstream(kept) << source;
    std::string log = program_log(program.p);
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n[...]";
    throw UserError("NVRTC could not compile the generated CUDA source for " + o.arch + " (" +
                    nvrtcGetErrorString(r) + "):\n" + log + "\nthe source is kept in " +
                    kept.string());
  }
  std::size_t size = 0;
  std::string image;
  if (wants_cubin(o.arch)) {
    nvrtcGetCUBINSize(program.p, &size);
    image.resize(size);
    nvrtcGetCUBIN(program.p, image.data());
  } else {
    nvrtcGetPTXSize(program.p, &size);  // includes the terminating null
    image.resize(size);
    nvrtcGetPTX(program.p, image.data());
    if (!image.empty() && image.back() == '\0') image.pop_back();
  }
  return image;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_architectures() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  nvrtcGetSupportedArchs(archs.data());
  return archs;
}

CudaBinary compile_cuda(const std::string& source, const NvrtcOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  std::string flags;
  for (const std::string& f : nvrtc_flags(o)) flags += f + " ";
  const std::string key = hex(fnv1a(source, fnv1a("nvrtc " + nvrtc_version() + "\n" + flags)));
  const fs::path dir = cache_directory(CpuCompileOptions{.cache_dir = o.cache_dir});
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("compile cache: cannot create " + dir.string() + ": " + ec.message());
  CudaBinary out;
  out.ptx = !wants_cubin(o.arch);
  const fs::path cached = dir / ("jetpde-" + key + (out.ptx ? ".ptx" : ".cubin"));
  out.cache_hit = fs::exists(cached);
  if (out.cache_hit) {
    out.image = read_file(cached);
    fs::last_write_time(cached, fs::file_time_type::clock::now(), ec);  // for prune_cache
  } else {
    out.image = run_nvrtc(source, o, dir / ("failed-" + key + ".cu"));
    // Written under a unique temporary name (per process and per build: threads of one process
    // may build the same key at once) and renamed: a concurrent or interrupted build never leaves
    // a half-written file under the final name.
    static std::atomic<unsigned long> builds{0};
    const fs::path tmp =
        dir / ("tmp-" + key + "-" + std::to_string(getpid()) + "-" + std::to_string(builds++));
    write_file(tmp, out.image);
    fs::rename(tmp, cached, ec);
    if (ec)
      throw UserError("compile cache: cannot rename into " + cached.string() + ": " + ec.message());
    write_file(dir / ("jetpde-" + key + ".cu"), source);
    prune_cache(dir.string(), cache_max_bytes(CpuCompileOptions{.cache_dir = o.cache_dir}), key);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace jetpde::compiler
