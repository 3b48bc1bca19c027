#!/usr/bin/env bash
# The GPU check: one prepared run on a machine with an NVIDIA GPU, over a copy of the working tree,
# with the CUDA toolkit and nothing else assumed (docs/design.md section 12: GPU execution tests run
# where a GPU is present). It finishes within about 8 minutes on 16 cores, goes on after any
# failure, and ends with a summary.
#
#   bash scripts/gpu_check.sh
#
# 1. prints the GPU, driver and tools (nvidia-smi, nvcc, cmake, ninja, c++);
# 2. dependencies: packages carried in build-gpu-deps/ (scripts/gpu_deps.sh fetches them) are
#    unpacked into a private prefix and used; else whatever the machine has;
# 3. configures a Release build in build-gpu/ with CUDA and without MPI, HDF5, VTK, PETSc, Python;
# 4. builds cuda_tests and runs its GPU tests first (every workload and primitive on the GPU
#    against the interpreter, reductions, bf16/fp16 against the CPU backend);
# 5. builds everything else (tests, bench), checks the exported CUDA library against `jetpde eval`
#    on the GPU, and runs jetpde_bench on the GPU, then the peers on the
#    same GPU (PyTorch through bench/peers/torch_pinn_cuda.py, JAX through bench/peers/jax_pinn.py),
#    a larger batch, and jetpde_bench on the CPU, each while time is left;
# 6. compute-sanitizer (memcheck, racecheck) on a few GPU tests, the GPU-free CUDA tests (NVRTC,
#    emulation), then the other tests, each only while time is left;
# 7. nvidia-smi again, and the summary.
#
# Environment: BUILD_DIR (default build-gpu), OUT (where the logs go; default $BUILD_DIR/out),
# JOBS (default nproc), BUDGET (seconds for the whole check, default 450), SKIP (a regular
# expression: stages whose names match are skipped), JAX_WORKLOADS (the JAX peer's workloads,
# space-separated; default all).
set -x
set -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-${BUILD_DIR:-$root/build-gpu}/out}
mkdir -p "$out"
exec > >(tee -a "$out/gpu_check.log") 2>&1
jobs=${JOBS:-$(nproc)}
budget=${BUDGET:-450}
start=$(date +%s)
build=${BUILD_DIR:-$root/build-gpu}
summary=()

left() { echo $((budget - ($(date +%s) - start))); }

# stage NAME TIMEOUT COMMAND...: runs COMMAND under `timeout`, records PASS/FAIL/TIMEOUT.
stage() {
  local name=$1 limit=$2
  shift 2
  if [[ -n ${SKIP:-} && $name =~ $SKIP ]]; then
    summary+=("SKIP     $name (SKIP)")
    return 1
  fi
  if ((limit < 10)); then
    summary+=("SKIP     $name (no time left)")
    return 1
  fi
  local t0=$(date +%s)
  echo "===== $name (limit ${limit}s, $(left)s left) ====="
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  local dt=$(($(date +%s) - t0))
  if ((rc == 0)); then
    summary+=("PASS     $name (${dt}s)")
  elif ((rc == 124 || rc == 137)); then
    summary+=("TIMEOUT  $name (${dt}s)")
  else
    summary+=("FAIL     $name (exit $rc, ${dt}s)")
  fi
  return $rc
}

note() { summary+=("NOTE     $*"); }

# ---- 1. the machine ----------------------------------------------------------------------------
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
export CMAKE_POLICY_VERSION_MINIMUM=3.5  # CMake 4 and the carried packages' older CMake files
nvidia-smi
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
nvcc --version
cmake --version
ninja --version
c++ --version
nproc
note "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | head -1)"
note "nvcc: $(nvcc --version 2>&1 | grep -o 'release [0-9.]*')"

# ---- 2. dependencies ---------------------------------------------------------------------------
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DJETPDE_WITH_CUDA=ON -DJETPDE_WITH_MPI=OFF
            -DJETPDE_WITH_HDF5=OFF -DJETPDE_WITH_VTK=OFF -DJETPDE_WITH_PETSC=OFF
            -DJETPDE_WITH_PYTHON=OFF)
unpack() {  # unpack DEB DIR: dpkg-deb where there is one, else ar and tar
  dpkg-deb -x "$1" "$2" 2>/dev/null && return 0
  local data
  data=$(ar t "$1" | grep '^data\.tar') || return 1
  ar p "$1" "$data" | tar -x --auto-compress -f - -C "$2" 2>/dev/null ||
    ar p "$1" "$data" | tar -xJ -C "$2"
}
if ls "$root"/build-gpu-deps/*.deb >/dev/null 2>&1; then
  prefix=/tmp/jetpde-deps
  rm -rf "$prefix"
  mkdir -p "$prefix/link"
  for deb in "$root"/build-gpu-deps/*.deb; do unpack "$deb" "$prefix" || note "cannot unpack $deb"; done
  lib=$prefix/usr/lib/x86_64-linux-gnu
  blas=$lib/openblas-openmp
  # OpenBLAS's CMake file names /usr; point it into the prefix.
  sed -i "s|/usr/|$prefix/usr/|g" "$blas/cmake/openblas/OpenBLASConfig.cmake"
  runtime=$blas
  # OpenBLAS's Fortran runtime, only where the machine has none (never shadow a newer one).
  ldconfig -p | grep -q 'libgfortran\.so\.5 ' || runtime=$runtime:$lib
  # -lquadmath (the test reference) wants the unversioned name.
  if [[ $(c++ -print-file-name=libquadmath.so) != /* ]]; then
    quadmath=$(ldconfig -p | grep -o '/[^ ]*libquadmath\.so\.0$' | head -1)
    ln -sf "${quadmath:-$lib/libquadmath.so.0}" "$prefix/link/libquadmath.so"
    [[ -n $quadmath ]] || runtime=$runtime:$lib
  fi
  export LD_LIBRARY_PATH=$runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LIBRARY_PATH=$prefix/link:$runtime${LIBRARY_PATH:+:$LIBRARY_PATH}
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix/usr"
               -DEigen3_DIR="$prefix/usr/share/eigen3/cmake" -DGTest_DIR="$lib/cmake/GTest"
               -DOpenBLAS_DIR="$blas/cmake/openblas" -DJETPDE_OPENBLAS_OPENMP="$blas/libopenblas.so.0")
  note "dependencies: carried packages from build-gpu-deps/ in $prefix"
else
  note "dependencies: the machine's own (no build-gpu-deps/)"
fi

# ---- 3. configure ------------------------------------------------------------------------------
if ! stage configure 120 cmake -S "$root" -B "$build" "${cmake_args[@]}"; then
  # Without GoogleTest there are no tests, but the benchmark may still build.
  stage configure-without-tests 60 cmake -S "$root" -B "$build" "${cmake_args[@]}" \
    -DJETPDE_BUILD_TESTS=OFF
fi
if [[ -d $build/compiler/cuda ]]; then  # compiler/CMakeLists.txt adds it with the toolkit only
  note "CUDA backend: configured"
else
  note "CUDA backend: NOT configured (CUDA toolkit, cuBLAS or NVRTC not found by CMake)"
fi

# ---- 4. the GPU tests first --------------------------------------------------------------------
export JETPDE_CACHE_DIR=/tmp/jetpde-cache
gpu_filter='CudaRegistration.*:CudaReductions.*:CudaPrecision.*:CudaGraphs.*:CudaFallback.*:Workloads/CudaWorkloads.*:Dtypes/CudaPrimitives.*'
if stage build-cuda-tests 240 ninja -C "$build" -j "$jobs" cuda_tests; then
  stage gpu-tests 200 "$build/tests/cuda_tests" --gtest_filter="$gpu_filter" \
    --gtest_output=xml:"$out/cuda_gpu_tests.xml"
  skipped=$(grep -c 'result="skipped"' "$out/cuda_gpu_tests.xml" 2>/dev/null)
  note "gpu tests skipped: ${skipped:-?} (a skip means no usable CUDA device; the log says why)"
fi

# ---- 5. everything else, the benchmark on the GPU, and the peers on the same GPU ----------------
stage build-all $(( $(left) > 240 ? 240 : $(left) - 60 )) ninja -C "$build" -j "$jobs" -k 0
# The exported CUDA library (jetpde export --library --device cuda): nvcc builds it, a C program
# calls it on device pointers, its values against `jetpde eval` on the GPU, bit for bit.
if [[ -x $build/tests/apps_tests ]]; then
  stage cuda-library 90 "$build/tests/apps_tests" --gtest_filter='Library.TheCudaLibrary*'
else
  note "cuda-library: apps_tests was not built (the jetpde command needs yaml-cpp and CLI11)"
fi
bench=$build/bench/jetpde_bench
if [[ -x $bench ]] && "$bench" --help 2>&1 | grep -qw cuda; then
  stage bench-gpu $(( $(left) > 200 ? 120 : $(left) - 60 )) \
    "$bench" --executor cuda --steps 5 --json "$out/bench_gpu.json"
  # The same without CUDA graphs (each step's kernels and GEMMs launched one by one): what the
  # graphs buy where a step is launch-bound.
  (($(left) > 200)) && stage bench-gpu-no-graphs 60 env JETPDE_CUDA_GRAPHS=0 "$bench" \
    --executor cuda --steps 5 --json "$out/bench_gpu_no_graphs.json"
else
  note "bench-gpu: jetpde_bench has no cuda executor ($bench --help names none); skipped"
fi
# The peers, side by side on the same GPU: PyTorch (the shared script's workloads through
# bench/peers/torch_pinn_cuda.py; the script travels in build-gpu-deps/, see gpu_deps.sh) and JAX.
peer_script=$root/../shared/bench/torch_pinn.py
[[ -f $peer_script ]] || peer_script=$root/build-gpu-deps/torch_pinn.py
if [[ -f $peer_script ]] && (($(left) > 150)); then
  stage torch-gpu 90 python3 "$root/bench/peers/torch_pinn_cuda.py" --script "$peer_script" \
    --reps 5 --json "$out/torch_gpu.json"
else
  note "torch-gpu: no torch_pinn.py (neither ../shared/bench nor build-gpu-deps) or no time"
fi
if (($(left) > 120)); then
  # Each JAX variant compiles for 5-30 s on the GPU machine: JAX_WORKLOADS can name fewer.
  # shellcheck disable=SC2086
  stage jax-gpu $(( $(left) > 220 ? 180 : $(left) - 40 )) \
    env PYTHONUNBUFFERED=1 python3 "$root/bench/peers/jax_pinn.py" --reps 5 \
    ${JAX_WORKLOADS:+--only $JAX_WORKLOADS} --json "$out/jax_gpu.json"
fi
# A larger batch (16x the points), where a GPU is busier: jetpde and PyTorch.
if [[ -x $bench ]] && (($(left) > 150)); then
  stage bench-gpu-large 60 "$bench" --executor cuda --steps 5 --points 131072 \
    --workload burgers --workload ns2d --workload order6 --json "$out/bench_gpu_large.json"
  [[ -f $peer_script ]] && stage torch-gpu-large 45 python3 "$root/bench/peers/torch_pinn_cuda.py" \
    --script "$peer_script" --reps 5 --points 131072 --only burgers ns2d order6
fi
if [[ -x $bench ]] && (($(left) > 120)); then
  stage bench-cpu 60 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bench" --executor cpu \
    --steps 3 --json "$out/bench_cpu.json"
fi

# ---- 6. sanitizers, the GPU-free CUDA tests, the other tests, while time is left ----------------
if command -v compute-sanitizer >/dev/null && (($(left) > 150)); then
  stage memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$build/tests/cuda_tests" --gtest_filter='CudaReductions.*:Workloads/CudaWorkloads.*/burgers_f32:Dtypes/CudaPrimitives.*/f32'
  stage racecheck 45 compute-sanitizer --tool racecheck --error-exitcode 1 \
    "$build/tests/cuda_tests" --gtest_filter='Workloads/CudaWorkloads.*/burgers_f64'
fi
stage cuda-tests-without-gpu $(( $(left) > 120 ? 100 : $(left) - 20 )) \
  ctest --test-dir "$build" -j "$jobs" --timeout 90 --output-on-failure \
  -R '^(Nvrtc|Golden\.RenderedCuda|EmulatedReductions|EmulatedPrecision|EmulatedTensorCores|Workloads/Nvrtc|Workloads/Emulated|Dtypes/Nvrtc|Dtypes/Emulated)'
stage other-tests $(( $(left) - 30 )) \
  ctest --test-dir "$build" -j "$jobs" --timeout 90 --output-on-failure \
  -E '(Cuda|Nvrtc|Emulated|Golden\.RenderedCuda)'

# ---- 7. the GPU after the run, and the summary -------------------------------------------------
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks.mem,memory.used --format=csv
set +x
{
  echo
  echo "===== jetpde GPU check: summary ($(($(date +%s) - start))s of ${budget}s) ====="
  printf '%s\n' "${summary[@]}"
  echo "----- GPU results printed by the tests -----"
  grep -ah '^\[cuda\]' "$out/gpu_check.log" | sort -u
  echo "----- failed tests -----"
  grep -ah '^\[  FAILED  \]\|^[0-9]*% tests passed\|The following tests FAILED' "$out/gpu_check.log" |
    sort -u | head -40
  echo "logs: $out"
} | tee "$out/summary.txt"
