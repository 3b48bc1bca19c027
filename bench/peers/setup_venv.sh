#!/usr/bin/env bash
# Creates, once, the virtual environment that only the peer benchmarks use, and installs the peers
# into it: PyTorch and JAX (CPU). jetpde itself never depends on them.
#
#   bash bench/peers/setup_venv.sh [--upgrade]
#
# - Where: ${BUILD_DIR:-build}/bench-venv (relative to the repository root unless absolute), so
#   `make clean` removes it with the build folder.
# - What: `torch` and `jax[cpu]` from PyPI, newest releases for this Python unless BENCH_TORCH_SPEC or
#   BENCH_JAX_SPEC say otherwise (pip requirement strings, e.g. BENCH_TORCH_SPEC='torch==2.15.0').
#   PyPI has no CPU-only torch wheel for Linux x86_64 (the CPU builds live on PyTorch's own index,
#   which this project does not use), and its one Linux wheel does not import without the CUDA
#   libraries it declares (libtorch_cuda.so is linked against them). So torch is installed with
#   --no-deps and then every dependency its metadata declares except triton (about 1 GiB: the GPU
#   kernel compiler behind torch.compile, which nested autograd never imports); should that torch
#   not work, its full dependency set follows. BENCH_TORCH_FULL=1 installs the full set at once.
#   Still about 5 GiB, mostly CUDA libraries that nothing here runs.
# - Idempotent: a stamp file records the specs installed; when it matches, nothing is installed and
#   only one line with the versions is printed. --upgrade reinstalls to the newest releases.
# - Environment: PYTHON (default python3) creates the venv; PIP_* variables reach pip as usual.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir=${BUILD_DIR:-build}
[[ $build_dir == /* ]] || build_dir=$root/$build_dir
venv=$build_dir/bench-venv
python=${PYTHON:-python3}
torch_spec=${BENCH_TORCH_SPEC:-torch}
jax_spec=${BENCH_JAX_SPEC:-jax[cpu]}
stamp=$venv/.jetpde-bench-stamp
want="torch_spec=$torch_spec jax_spec=$jax_spec"

upgrade=0
for arg in "$@"; do
  case $arg in
    --upgrade) upgrade=1 ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup_venv.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

log() { printf 'bench-venv: %s\n' "$*" >&2; }

versions() {
  "$venv/bin/python" - <<'EOF'
import importlib.metadata as m, sys
def v(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return "missing"
print(f"bench-venv: python {sys.version.split()[0]}, torch {v('torch')}, jax {v('jax')}, "
      f"jaxlib {v('jaxlib')}, numpy {v('numpy')}")
EOF
}

if [[ $upgrade -eq 0 && -x $venv/bin/python && -f $stamp && $(cat "$stamp") == "$want" ]]; then
  versions
  exit 0
fi

if [[ ! -x $venv/bin/python ]]; then
  log "creating $venv with $($python --version 2>&1)"
  mkdir -p "$build_dir"
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    # Debian's python3 needs python3-venv (ensurepip) for this.
    rm -rf "$venv"
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      log "installing Debian's python3-venv"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
      "$python" -m venv "$venv"
    else
      log "cannot create a venv with $python: install Debian's python3-venv (as root) and rerun"
      exit 1
    fi
  fi
fi

py=$venv/bin/python
pip_args=(install --quiet --disable-pip-version-check)
[[ $upgrade -eq 1 ]] && pip_args+=(--upgrade)
# Both must import and differentiate, or the stamp is not written and the next run tries again.
check='import torch, jax
x = torch.ones(3, requires_grad=True)
torch.autograd.grad(torch.tanh(x).sum(), x)
jax.grad(lambda v: jax.numpy.tanh(v).sum())(jax.numpy.ones(3)).block_until_ready()'

start=$(date +%s)
if [[ ${BENCH_TORCH_FULL:-0} == 1 ]]; then
  log "installing $torch_spec with all its dependencies, and $jax_spec"
  "$py" -m pip "${pip_args[@]}" "$torch_spec" "$jax_spec" numpy
else
  log "installing $torch_spec (its CUDA libraries included, triton left out) and $jax_spec"
  "$py" -m pip "${pip_args[@]}" packaging
  "$py" -m pip "${pip_args[@]}" --no-deps "$torch_spec"
  # torch's declared dependencies on this platform, less triton.
  mapfile -t torch_deps < <(
    "$py" -c '
import importlib.metadata as m
from packaging.requirements import Requirement
for line in m.requires("torch") or []:
    r = Requirement(line)
    if r.name.lower() == "triton" or (r.marker and not r.marker.evaluate({"extra": ""})):
        continue
    extras = "[" + ",".join(sorted(r.extras)) + "]" if r.extras else ""
    print(f"{r.name}{extras}{r.specifier}")'
  )
  # pip then warns that torch's triton is missing: that warning alone is dropped.
  errors=$venv/.pip-stderr
  "$py" -m pip "${pip_args[@]}" "${torch_deps[@]}" "$jax_spec" numpy 2>"$errors" ||
    { cat "$errors" >&2; exit 1; }
  grep -v -e "dependency resolver does not currently take into account" -e " requires triton" \
    "$errors" >&2 || true
  rm -f "$errors"
  if ! "$py" -c "$check" 2>/dev/null; then
    log "torch does not work without triton here; installing its full dependency set"
    "$py" -m pip "${pip_args[@]}" "$torch_spec"
  fi
fi
"$py" -c "$check"
printf '%s\n' "$want" >"$stamp"
log "installed in $(($(date +%s) - start)) s; venv size $(du -sh "$venv" | cut -f1)"
versions
