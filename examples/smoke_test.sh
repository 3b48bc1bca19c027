#!/bin/sh
# One example config at a few steps (ctest: examples are tests): smoke_test.sh JETPDE CONFIG RUN_DIR
# Runs every stage for 3 steps with a small output grid, then checks the run folder; exits 77
# (skipped) when the config reads ../shared/data and that folder is absent.
set -eu
jetpde=$1 config=$2 out=$3
if grep -q 'shared/data' "$config" && [ ! -d "$(dirname "$config")/../../shared/data" ]; then
  echo "skipped: $config reads ../shared/data, which is absent"
  exit 77
fi
rm -rf "$out"
"$jetpde" run "$config" --max-steps 3 --output "$out" --progress plain \
  --set output.grid=[9] --set output.time_steps=3 --set output.checkpoint_every=2
# A classical solve (solver: {type: petsc}) trains nothing: no checkpoint, no history.
files="config.yaml fields.h5 summary.json"
grep -q '"type": "petsc"' "$out/summary.json" || files="$files checkpoint.h5 history.csv"
for f in $files; do
  test -s "$out/$f" || { echo "missing $out/$f"; exit 1; }
done
grep -q '"status": "finished"' "$out/summary.json"
