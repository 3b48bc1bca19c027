// The CUDA backend's compiler role: CUDA source -> PTX (or CUBIN) with NVRTC, cached on disk by a
// hash of the source, the NVRTC version and the options, in the CPU backend's cache directory
// (docs/design.md section 7, step 7). Needs no GPU and no driver.
#pragma once

#include <string>
#include <vector>

namespace jetpde::compiler {

struct NvrtcOptions {
  // compute_XY: PTX for that virtual architecture, compiled for the GPU by the driver at load;
  // sm_XY: a CUBIN for exactly that GPU. compute_90 suits the H100/H200.
  std::string arch = "compute_90";
  std::string cache_dir;  // empty: cache_directory() of compiler/cpu_compiler.h
};

struct CudaBinary {
  std::string image;  // PTX text, or the CUBIN's bytes
  bool ptx = true;
  bool cache_hit = false;
  double seconds = 0.0;  // compiling, or reading from the cache
};

// Compiles `source` (or finds it in the cache). UserError with NVRTC's log, and the source kept
// next to the cache, when NVRTC rejects the source or the options.
CudaBinary compile_cuda(const std::string& source, const NvrtcOptions& options = {});

// NVRTC's version, "major.minor".
std::string nvrtc_version();
// The architectures this NVRTC compiles for, as compute capabilities times ten (75, 80, ... 120).
std::vector<int> nvrtc_architectures();

}  // namespace jetpde::compiler
