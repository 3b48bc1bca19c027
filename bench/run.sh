#!/usr/bin/env bash
# make bench: jetpde_bench, then PyTorch (${BENCH_SHARED}/torch_pinn.py, skipped if missing) and
# JAX (bench/peers/jax_pinn.py) in the venv that bench/peers/setup_venv.sh keeps at
# ${BUILD_DIR}/bench-venv, then bench/peers/compare.py: one table, and ${BUILD_DIR}/bench/peers.json.
# All in one run, so that the ratios compare figures taken side by side on one machine.
# OpenBLAS runs with its native kernels here: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are dropped
# for every one of these commands (docs/design.md section 13).
#
#   BENCH_WORKLOADS="burgers order6"  only these, everywhere    BENCH_ARGS  more jetpde_bench options
#   BENCH_THREADS=2  the peers' threads    BENCH_REPS=5  timed steps, everywhere (after one warm-up)
#   BENCH_PEERS=0    jetpde_bench alone    BENCH_BF16=0  no second jetpde run with --precision bf16
#   BENCH_AUTO=0     no jetpde run with --precision auto (what it stands for on this CPU)
#   BENCH_ACCURACY=0 no accuracy runs (jetpde_accuracy: the PINN solvers' cases, full budgets)
#   BENCH_OPENMP=0   no jetpde_threads_bench (1 and 2 threads, a competing process, wait policies,
#                    kernel parallel thresholds; BENCH_OPENMP_ARGS: its options)
#   BENCH_SCALING=0  no bench/scaling/scaling.py (MPI strong and weak scaling at 1, 2, 4 ranks and
#                    the communication model; BENCH_SCALING_ARGS: its options)
#   BENCH_MEMORY=0   no jetpde_memory_bench (a step's arena and time at 1x, 4x, 16x the points, in
#                    one batch and under a memory budget; BENCH_MEMORY_ARGS: its options)
#   BENCH_E2E=0      no bench/e2e/e2e.py (a whole Adam training step of three examples through
#                    `jetpde run`, fp32 and auto, against PyTorch and JAX; BENCH_E2E_ARGS: its options)
#   BENCH_AUTO_ACCURACY=0  no bench/e2e/auto_accuracy.py (the same examples trained whole under fp32
#                    and under auto, errors and times; BENCH_AUTO_ACCURACY_ARGS: its options, e.g.
#                    "--seeds 0 1 2 --auto-as bf16_wgrad")
BUILD_DIR=${BUILD_DIR:-build}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-}
BENCH_THREADS=${BENCH_THREADS:-2}
BENCH_REPS=${BENCH_REPS:-5}
BENCH_PEERS=${BENCH_PEERS:-1}
BENCH_SHARED=${BENCH_SHARED:-../shared/bench}
BENCH_ARGS=${BENCH_ARGS:-}
BENCH_BF16=${BENCH_BF16:-1}
BENCH_AUTO=${BENCH_AUTO:-1}
BENCH_ACCURACY=${BENCH_ACCURACY:-1}
BENCH_OPENMP=${BENCH_OPENMP:-1}
BENCH_OPENMP_ARGS=${BENCH_OPENMP_ARGS:-}
BENCH_SCALING=${BENCH_SCALING:-1}
BENCH_SCALING_ARGS=${BENCH_SCALING_ARGS:-}
BENCH_MEMORY=${BENCH_MEMORY:-1}
BENCH_MEMORY_ARGS=${BENCH_MEMORY_ARGS:-}
BENCH_E2E=${BENCH_E2E:-1}
BENCH_E2E_ARGS=${BENCH_E2E_ARGS:-}
BENCH_AUTO_ACCURACY=${BENCH_AUTO_ACCURACY:-1}
BENCH_AUTO_ACCURACY_ARGS=${BENCH_AUTO_ACCURACY_ARGS:-}
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
run="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE"
out="${BUILD_DIR}/bench"
only="$(echo ${BENCH_WORKLOADS})"; flags=" --steps ${BENCH_REPS}"; for w in $only; do flags="$flags --workload $w"; done
if [ "${BENCH_PEERS}" = 0 ]; then
  echo "$run ${BUILD_DIR}/bench/jetpde_bench$flags ${BENCH_ARGS}"
  exec $run ${BUILD_DIR}/bench/jetpde_bench $flags ${BENCH_ARGS}
fi
BUILD_DIR="${BUILD_DIR}" bash bench/peers/setup_venv.sh || \
  { echo "bench: setup_venv.sh failed (BENCH_PEERS=0 runs jetpde_bench alone)"; exit 1; }
py="${BUILD_DIR}/bench-venv/bin/python"; failed=""
rm -f "$out"/jetpde.json "$out"/jetpde_bf16.json "$out"/jetpde_auto.json "$out"/torch.txt "$out"/jax.json "$out"/jax.txt "$out"/peers.json "$out"/*.rc
echo "bench: jetpde_bench, torch_pinn.py, jax_pinn.py and compare.py all run under '$run'"
echo; echo "== jetpde: ${BUILD_DIR}/bench/jetpde_bench$flags --json $out/jetpde.json ${BENCH_ARGS}"
$run ${BUILD_DIR}/bench/jetpde_bench $flags --json "$out/jetpde.json" ${BENCH_ARGS} || \
  failed="$failed jetpde_bench"
# One more jetpde_bench run, under precision policy $1: a column "cpu $1" of its own in the
# comparison.
extra_json=""
policy_run() {
  echo; echo "== jetpde $1: ${BUILD_DIR}/bench/jetpde_bench$flags --executor cpu --precision $1 --json $out/jetpde_$1.json"
  $run ${BUILD_DIR}/bench/jetpde_bench $flags --executor cpu --precision "$1" \
    --json "$out/jetpde_$1.json" && extra_json="$extra_json --jetpde $out/jetpde_$1.json" || \
    failed="$failed jetpde_bench($1)"
}
# precision: auto as this CPU resolves it (bf16_wgrad on a CPU with AMX, else fp32); the bf16
# policy (native bf16 GEMMs where the CPU has AVX512-BF16 or AMX, else emulated, and
# jetpde_bench says which), for speed only.
[ "${BENCH_AUTO}" != 0 ] && policy_run auto
[ "${BENCH_BF16}" != 0 ] && policy_run bf16
torch_log=""
if [ -f "${BENCH_SHARED}/torch_pinn.py" ]; then
  echo; echo "== PyTorch: ${BENCH_SHARED}/torch_pinn.py --threads ${BENCH_THREADS} --reps ${BENCH_REPS}${only:+ --only $only}"
  { $run "$py" "${BENCH_SHARED}/torch_pinn.py" --threads ${BENCH_THREADS} --reps ${BENCH_REPS} ${only:+--only $only} 2>&1
    echo $? >"$out/torch.rc"; } | tee "$out/torch.txt"
  [ "$(cat "$out/torch.rc")" = 0 ] || failed="$failed torch_pinn.py"; torch_log="--torch-log $out/torch.txt"
else
  echo; echo "== PyTorch: skipped, ${BENCH_SHARED}/torch_pinn.py is missing"
fi
echo; echo "== JAX: bench/peers/jax_pinn.py --threads ${BENCH_THREADS} --reps ${BENCH_REPS}${only:+ --only $only} --json $out/jax.json"
{ $run "$py" bench/peers/jax_pinn.py --threads ${BENCH_THREADS} --reps ${BENCH_REPS} ${only:+--only $only} \
    --json "$out/jax.json" 2>&1; echo $? >"$out/jax.rc"; } | tee "$out/jax.txt"
[ "$(cat "$out/jax.rc")" = 0 ] || failed="$failed jax_pinn.py"
echo; echo "== comparison"
$run "$py" bench/peers/compare.py --jetpde "$out/jetpde.json" $extra_json $torch_log \
  --jax-json "$out/jax.json" --jax-log "$out/jax.txt" --out "$out/peers.json" || \
  failed="$failed compare.py"
rm -f "$out"/*.rc
if [ "${BENCH_E2E}" != 0 ]; then
  # What a user waits for: `jetpde run` against the same examples in PyTorch and JAX, Adam included.
  echo; echo "== end to end: bench/e2e/e2e.py --build ${BUILD_DIR} --threads ${BENCH_THREADS} --python $py ${BENCH_E2E_ARGS}"
  $run python3 bench/e2e/e2e.py --build "${BUILD_DIR}" --threads ${BENCH_THREADS} --python "$py" \
    ${BENCH_E2E_ARGS} || failed="$failed e2e.py"
fi
if [ "${BENCH_AUTO_ACCURACY}" != 0 ]; then
  # precision: auto against fp32 on whole runs of the same examples (about 20 minutes on 2 cores).
  echo; echo "== auto's accuracy: bench/e2e/auto_accuracy.py --build ${BUILD_DIR} --threads ${BENCH_THREADS} ${BENCH_AUTO_ACCURACY_ARGS}"
  $run python3 bench/e2e/auto_accuracy.py --build "${BUILD_DIR}" --threads ${BENCH_THREADS} \
    ${BENCH_AUTO_ACCURACY_ARGS} || failed="$failed auto_accuracy.py"
fi
if [ "${BENCH_OPENMP}" != 0 ]; then
  echo; echo "== threads: ${BUILD_DIR}/bench/threads/jetpde_threads_bench ${BENCH_OPENMP_ARGS}"
  $run ${BUILD_DIR}/bench/threads/jetpde_threads_bench ${BENCH_OPENMP_ARGS} | \
    tee "$out/threads.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || failed="$failed jetpde_threads_bench"
fi
if [ "${BENCH_SCALING}" != 0 ]; then
  # MPI data parallelism (bench/README.md, "Scaling (MPI)"); results in $out/scaling/scaling.json.
  if [ -x "${BUILD_DIR}/bench/scaling/jetpde_mpi_pingpong" ] && command -v mpirun >/dev/null; then
    echo; echo "== scaling: python3 bench/scaling/scaling.py --build-dir ${BUILD_DIR} ${BENCH_SCALING_ARGS}"
    $run python3 bench/scaling/scaling.py --build-dir "${BUILD_DIR}" ${BENCH_SCALING_ARGS} || \
      failed="$failed scaling.py"
  else
    echo; echo "== scaling: skipped, this build has no MPI (mpirun and jetpde_mpi_pingpong)"
  fi
fi
if [ "${BENCH_MEMORY}" != 0 ]; then
  echo; echo "== memory: ${BUILD_DIR}/bench/memory/jetpde_memory_bench ${BENCH_MEMORY_ARGS}"
  $run ${BUILD_DIR}/bench/memory/jetpde_memory_bench ${BENCH_MEMORY_ARGS} | tee "$out/memory.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || failed="$failed jetpde_memory_bench"
fi
if [ "${BENCH_ACCURACY}" != 0 ]; then
  echo; echo "== accuracy: ${BUILD_DIR}/bench/accuracy/jetpde_accuracy --data ${BENCH_SHARED}/../data --json $out/accuracy.json"
  $run ${BUILD_DIR}/bench/accuracy/jetpde_accuracy --data "${BENCH_SHARED}/../data" \
    --json "$out/accuracy.json" || failed="$failed jetpde_accuracy"
fi
if [ -n "$failed" ]; then echo "bench: failed:$failed"; exit 1; fi
