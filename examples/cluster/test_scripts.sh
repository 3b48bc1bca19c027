#!/bin/bash
# The batch scripts' bodies run here as plain bash, with SLURM's and PBS's variables faked and
# scontrol/qsub replaced by recorders (ctest cluster_scripts; examples/cluster/README.md):
#   - every script parses (bash -n; shellcheck too where installed);
#   - slurm_data_parallel.sbatch at 2 ranks through mpirun (no srun here): a part that spends its
#     time budget (training.max_time from the faked limit) asks scontrol to requeue the job, the
#     next part resumes from the checkpoint, and SIGTERM to the job (scancel, pre-emption) ends
#     with a checkpoint and status interrupted, not requeued;
#   - pbs_data_parallel.pbs the same way: the next part is submitted with qsub and the run folder;
#   - the decomposed scripts refuse a config without a top-level `decomposition:` key, and
#     slurm_decomposed.sbatch trains its default config for a few steps (when it is there).
#
#   bash examples/cluster/test_scripts.sh build/apps/jetpde /tmp/cluster-test [RANKS]
#   bash examples/cluster/test_scripts.sh --syntax       # the parsing checks only (no MPI, no jetpde)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
syntax_only=0
if [ "${1:-}" = --syntax ]; then
  syntax_only=1
else
  jetpde=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  work=$2
  ranks=${3:-2}
fi
root=$(cd "$here/../.." && pwd)
failures=0
check() {  # check DESCRIPTION COMMAND...: one line per check
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi
}

for f in "$here"/*.sbatch "$here"/*.pbs; do
  check "bash -n $(basename "$f")" bash -n "$f"
  if command -v shellcheck >/dev/null; then check "shellcheck $(basename "$f")" shellcheck "$f"; fi
done
if [ "$syntax_only" = 1 ]; then
  [ "$failures" = 0 ] && echo "all checks passed" && exit 0
  exit 1
fi

rm -rf "$work"
mkdir -p "$work/bin"
# Recorders for the scheduler's commands: their arguments, one call a line.
for tool in scontrol qsub; do
  printf '#!/bin/sh\necho "$@" >>"%s/%s.calls"\necho 1001.pbs\n' "$work" "$tool" >"$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
export PATH="$work/bin:$PATH"
# The run: 100000 Adam steps never fit in the 1 s budget (limit 2 s - margin 1 s), so every part
# ends on the time budget; OMP_NUM_THREADS as a scheduler sets it.
common=(env -u SLURM_JOB_ID -u PBS_JOBID OMP_NUM_THREADS=1 JETPDE="$jetpde" SCRATCH="$work/scratch"
  JETPDE_CONFIG=bench/scaling/poisson2d.yaml JETPDE_ARGS="--set training.stages.0.steps=100000")
status_of() { sed -n 's/^  "status": "\(.*\)",$/\1/p' "$1/summary.json" 2>/dev/null; }
steps_of() { sed -n 's/^  "steps": \([0-9]*\),$/\1/p' "$1/summary.json" 2>/dev/null; }
ranks_of() { sed -n 's/^  "ranks": \([0-9]*\),$/\1/p' "$1/summary.json" 2>/dev/null; }

# --- SLURM -----------------------------------------------------------------------------------------
slurm=("${common[@]}" SLURM_JOB_ID=4242 SLURM_NTASKS="$ranks" SLURM_CPUS_PER_TASK=1
  SLURM_SUBMIT_DIR="$root" JETPDE_TIME_LIMIT=2 JETPDE_MARGIN=1)
dir="$work/scratch/jetpde/jetpde-dp-4242"
"${slurm[@]}" bash "$here/slurm_data_parallel.sbatch" >"$work/slurm1.log" 2>&1
check "slurm part 1 ends on the time budget" test "$(status_of "$dir")" = time_limit
check "slurm part 1 trains on $ranks ranks" test "$(ranks_of "$dir")" = "$ranks"
check "slurm part 1 asks scontrol to requeue job 4242" grep -qx "requeue 4242" "$work/scontrol.calls"
first=$(steps_of "$dir")
"${slurm[@]}" bash "$here/slurm_data_parallel.sbatch" >"$work/slurm2.log" 2>&1
check "slurm part 2 resumes" grep -q -- "--resume" "$work/slurm2.log"
check "slurm part 2 continues past step $first" test "$(steps_of "$dir")" -gt "${first:-0}"

# SIGTERM to the whole job (what scancel and pre-emption do): checkpoint, interrupted, no requeue.
# A run folder of its own: another time limit is another max_time, which --resume would refuse.
rm -f "$work/scontrol.calls"
dir="$work/scratch/sigterm"
"${slurm[@]}" JETPDE_RUN_DIR="$dir" JETPDE_TIME_LIMIT=600 JETPDE_MARGIN=300 \
  setsid bash "$here/slurm_data_parallel.sbatch" >"$work/slurm3.log" 2>&1 &
job=$!
# Wait for training to run (the first progress line), then signal the job's process group.
for _ in $(seq 300); do
  grep -qs "^step " "$work/slurm3.log" && break
  sleep 0.1
done
kill -TERM -- "-$job"
wait "$job"
check "slurm SIGTERM: status interrupted" test "$(status_of "$dir")" = interrupted
check "slurm SIGTERM: not requeued" test ! -e "$work/scontrol.calls"
check "slurm SIGTERM: the batch script waited for the checkpoint" \
  grep -q "interrupted (stopped from outside)" "$work/slurm3.log"

# --- PBS -------------------------------------------------------------------------------------------
yes localhost | head -n "$ranks" >"$work/nodefile"
pbs=("${common[@]}" PBS_JOBID=77.pbs PBS_JOBNAME=cluster-test PBS_NODEFILE="$work/nodefile"
  PBS_O_WORKDIR="$root" JETPDE_TIME_LIMIT=2 JETPDE_MARGIN=1)
dir="$work/scratch/jetpde/cluster-test-77"
"${pbs[@]}" bash "$here/pbs_data_parallel.pbs" >"$work/pbs1.log" 2>&1
check "pbs part 1 ends on the time budget" test "$(status_of "$dir")" = time_limit
check "pbs part 1 trains on $ranks ranks (the node file's lines)" test "$(ranks_of "$dir")" = "$ranks"
check "pbs part 1 submits part 2 with the run folder" \
  grep -q -- "-V -v JETPDE_RUN_DIR=$dir,JETPDE_PART=2," "$work/qsub.calls"
first=$(steps_of "$dir")
"${pbs[@]}" PBS_JOBID=1001.pbs JETPDE_RUN_DIR="$dir" JETPDE_PART=2 \
  bash "$here/pbs_data_parallel.pbs" >"$work/pbs2.log" 2>&1
check "pbs part 2 resumes the same folder" grep -q -- "--output $dir .*--resume" "$work/pbs2.log"
check "pbs part 2 continues past step $first" test "$(steps_of "$dir")" -gt "${first:-0}"

# --- decomposed: the config must say how to decompose ----------------------------------------------
for s in slurm_decomposed.sbatch pbs_decomposed.pbs; do
  out=$("${common[@]}" JETPDE_CONFIG=examples/heat.yaml SLURM_SUBMIT_DIR="$root" PBS_O_WORKDIR="$root" \
    bash "$here/$s" 2>&1)
  check "$s refuses a config without decomposition:" \
    grep -q "has no top-level 'decomposition:' key" <<<"$out"
done

# The decomposed scripts' default config, a few steps at 2 ranks, where it is there.
if [ -f "$root/examples/fbpinn_cos.yaml" ]; then
  dir="$work/scratch/decomposed"
  env -u SLURM_JOB_ID -u PBS_JOBID OMP_NUM_THREADS=1 JETPDE="$jetpde" JETPDE_RUN_DIR="$dir" \
    SLURM_JOB_ID=4343 SLURM_NTASKS="$ranks" SLURM_SUBMIT_DIR="$root" JETPDE_ARGS="--max-steps 3" \
    bash "$here/slurm_decomposed.sbatch" >"$work/decomposed.log" 2>&1
  check "slurm_decomposed.sbatch trains examples/fbpinn_cos.yaml on $ranks ranks" \
    test "$(status_of "$dir")/$(ranks_of "$dir")" = "finished/$ranks"
else
  echo "note: examples/fbpinn_cos.yaml (the decomposed scripts' default config) is not there"
fi

if [ "$failures" != 0 ]; then
  echo "$failures checks failed; logs in $work"
  exit 1
fi
echo "all checks passed"
