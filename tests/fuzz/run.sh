#!/usr/bin/env bash
# Runs each libFuzzer target for FUZZ_SECONDS on its seed corpus; exits 1 when any of them found a
# crash, a sanitizer report, a hang or an out-of-memory input, naming the reproducer.
#
#   bash tests/fuzz/run.sh [BUILD_DIR [TARGET...]]     # BUILD_DIR: build-fuzz; TARGET: expression
#                                                      # config csv (all when none is given)
#   bash tests/fuzz/run.sh --replay [BUILD_DIR [TARGET...]]   # each seed once, and list the ones
#                                                      # that fail (libFuzzer stops at the first)
#   build-fuzz/tests/fuzz/fuzz_expression path/to/reproducer     # replays one input
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60; 0 skips them all)
#   FUZZ_SEED     libFuzzer's -seed (default 0: a random one; make test sets 1, so that CI
#                 explores the same inputs each run)
#   FUZZ_TIMEOUT  seconds one input may take before it counts as a hang (default 10)
#   FUZZ_RSS_MB   memory one run may use, and the largest single allocation (default 2048)
#   FUZZ_OUT      where each target's corpus and findings go (default BUILD_DIR/fuzz-out): the
#                 corpus grows from run to run in FUZZ_OUT/<target>/corpus; findings are written
#                 to FUZZ_OUT/<target>/crash-*, timeout-*, oom-*, leak-*; logs to <target>.log.
# Seeds: tests/fuzz/corpus/<target>/ (read only), and for the config loader examples/*.yaml.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
replay=0
if [[ ${1:-} == --replay ]]; then
  replay=1
  shift
fi
build=$(realpath -m "${1:-build-fuzz}")
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(expression config csv)
seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-10}
fuzz_seed=${FUZZ_SEED:-0}
rss=${FUZZ_RSS_MB:-2048}
out=$(realpath -m "${FUZZ_OUT:-$build/fuzz-out}")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [[ $replay -eq 1 ]]; then
  failed=0
  for t in "${targets[@]}"; do
    exe=$build/tests/fuzz/fuzz_$t
    mkdir -p "$out/replay"
    for seed in "$repo/tests/fuzz/corpus/$t"/*; do
      log=$out/replay/$t-$(basename "$seed").log
      rc=0
      "$exe" -timeout="$timeout" -rss_limit_mb="$rss" -malloc_limit_mb="$rss" "$seed" >"$log" 2>&1 ||
        rc=$?
      if [[ $rc -eq 0 ]]; then
        echo "  ok      $t $(basename "$seed")"
      else
        failed=1
        what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z0-9 -]+|runtime error: .*|terminate called.*' "$log" || echo "exit status $rc")
        where=$(grep -m1 -E '#[0-9]+ 0x[0-9a-f]+ in jetpde::' "$log" |
          sed -E 's/.* in //; s/\(anonymous namespace\):://g; s/[(<].*//' || true)
        echo "  FAILED  $t $(basename "$seed"): $what${where:+ (first project frame: $where)}; log: $log"
      fi
    done
  done
  exit $failed
fi

if [[ $seconds -eq 0 ]]; then
  echo "fuzz: skipped (FUZZ_SECONDS=0)"
  exit 0
fi

failed=0
summary=()
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz_$t
  seeds=$repo/tests/fuzz/corpus/$t
  if [[ ! -x $exe ]]; then
    echo "fuzz: $exe is missing (build it: cmake --preset fuzz && cmake --build --preset fuzz)" >&2
    exit 2
  fi
  mkdir -p "$out/$t/corpus"
  dirs=("$out/$t/corpus" "$seeds")
  if [[ $t == config ]]; then
    mkdir -p "$out/$t/examples"
    cp "$repo"/examples/*.yaml "$out/$t/examples/"
    dirs+=("$out/$t/examples")
  fi
  log=$out/$t.log
  echo "fuzz: $t for ${seconds} s (log: $log)"
  rc=0
  # -artifact_prefix: findings land in the target's folder, not the current one.
  "$exe" -seed="$fuzz_seed" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss" \
    -malloc_limit_mb="$rss" -print_final_stats=1 -artifact_prefix="$out/$t/" \
    "${dirs[@]}" >"$log" 2>&1 || rc=$?
  # Figures: the last status line (#runs ... cov: ... ft: ... corp: ...) and the final stats.
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1 || true)
  figures="${runs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}"
  if [[ $rc -eq 0 ]]; then
    summary+=("$t: ok, $figures")
    continue
  fi
  failed=1
  reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  kind=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [^ ]+( [^ ]+)?|runtime error: .*|Segmentation fault|terminate called.*' "$log" || true)
  [[ -n $kind ]] || kind="exit status $rc"
  summary+=("$t: FAILED ($kind), $figures")
  summary+=("    reproducer: ${reproducer:-none written; see $log}")
  [[ -z $reproducer ]] || summary+=("    replay: $exe $reproducer")
  echo "fuzz: $t failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
done

echo "fuzz: summary"
printf '  %s\n' "${summary[@]}"
exit $failed
