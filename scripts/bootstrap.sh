#!/usr/bin/env bash
# Installs what building and testing jetpde needs on Debian 12, and nothing that is already there.
#
#   bash scripts/bootstrap.sh
#
# - Debian packages (docs/design.md section 13): checked with dpkg-query; the missing ones are installed
#   with apt-get (running 'apt-get update' once first). Not root: prints the apt-get line to run and
#   exits 1.
# - Python packages for the bindings and their tests (pybind11, pytest, numpy): checked by import in
#   the python3 on PATH; the missing ones are installed with pip into that interpreter, or, where it
#   is Debian's externally managed python3, as the matching Debian packages.
# - Optional, for jetpde.solve(..., comm=MPI.COMM_WORLD) and its test (python/README.md): mpi4py,
#   installed the same way. Nothing else needs it, so a failed install is a warning, not an error.
#   PyPI's wheel (about a second; a source build takes 3 minutes) carries no MPI of its own: it
#   loads the libmpi already in the process, else the system's libmpi.so, here Debian's Open MPI,
#   the one jetpde links. That is checked after the install: two MPI libraries in one process
#   do not work together.
# - Not installed here: the CUDA toolkit and a GPU driver (they come with the machine; jetpde builds
#   and runs on the CPU without them).
#
# Prints nothing when everything is present. Environment: PYTHON (default python3).
set -euo pipefail

debian_packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libboost-dev liblbfgspp-dev libopenblas-dev libopenblas0-openmp libdnnl-dev
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev petsc-dev libvtk9-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libmatio-dev libzip-dev
  libgtest-dev libgmock-dev
  python3 python3-dev python3-pip
  # make test: the format check, and the fuzzers (clang's libFuzzer runtime; llvm-symbolizer for
  # their stack traces)
  clang-format clang libclang-rt-dev llvm
  # make test: the batch scripts' check (examples/cluster)
  shellcheck
  # make test: the exported library's Fortran example (examples/library)
  gfortran
)
# import name -> pip name -> Debian package
python_modules=(pybind11 pytest numpy)
optional_python_modules=(mpi4py)
declare -A debian_python_package=(
  [pybind11]=python3-pybind11 [pytest]=python3-pytest [numpy]=python3-numpy
  [mpi4py]=python3-mpi4py
)
python=${PYTHON:-python3}

log() { printf 'bootstrap: %s\n' "$*" >&2; }

missing_debian_packages() {
  # dpkg-query lists installed packages as "name install ok installed"; anything else is missing.
  local installed
  installed=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
    awk '$NF == "installed" { sub(/:.*/, "", $1); print $1 }') || true
  local p
  for p in "$@"; do
    grep -qxF "$p" <<<"$installed" || printf '%s\n' "$p"
  done
}

apt_updated=0
apt_install() {
  [[ $# -gt 0 ]] || return 0
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages; run as root:"
    printf 'sudo apt-get update && sudo apt-get install -y --no-install-recommends %s\n' "$*" >&2
    exit 1
  fi
  log "installing $*"
  if [[ $apt_updated -eq 0 ]]; then
    apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v dpkg-query >/dev/null; then
  log "not a Debian system: install the equivalents of: ${debian_packages[*]}"
  exit 1
fi

mapfile -t missing < <(missing_debian_packages "${debian_packages[@]}")
apt_install "${missing[@]}"

# Python modules, one interpreter start for all of them.
missing_python_modules() {
  "$python" - "$@" <<'EOF'
import importlib.util, sys
for name in sys.argv[1:]:
    if importlib.util.find_spec(name) is None:
        print(name)
EOF
}

externally_managed=$("$python" -c \
  'import os, sysconfig; print(int(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))')

# Installs the Python modules named, with pip into $python or as Debian packages.
python_install() {
  [[ $# -gt 0 ]] || return 0
  if [[ $externally_managed -eq 1 ]]; then
    # Debian's own python3 refuses pip installs (PEP 668): use the Debian packages instead.
    local debs=() m
    for m in "$@"; do debs+=("${debian_python_package[$m]}"); done
    apt_install "${debs[@]}"
  else
    log "pip installing $* into $("$python" -c 'import sys; print(sys.executable)')"
    local pip_args=(install --quiet --disable-pip-version-check) site
    # A user without write access to the interpreter's site-packages installs into ~/.local.
    site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    [[ -w $site ]] || pip_args+=(--user)
    PIP_ROOT_USER_ACTION=ignore "$python" -m pip "${pip_args[@]}" "$@"
  fi
}

mapfile -t missing_py < <(missing_python_modules "${python_modules[@]}")
python_install "${missing_py[@]}"

mapfile -t missing_optional < <(missing_python_modules "${optional_python_modules[@]}")
if [[ ${#missing_optional[@]} -gt 0 ]]; then
  # In a subshell tested by if: a failure there (apt_install's exit for a user who is not root
  # included) ends the subshell, not this script.
  if ! (python_install "${missing_optional[@]}"); then
    log "warning: could not install ${missing_optional[*]} (optional: only jetpde.solve(comm=...) and its test need it)"
  elif [[ " ${missing_optional[*]} " == *" mpi4py "* ]]; then
    library=$("$python" -c 'from mpi4py import MPI; print(MPI.Get_library_version().replace(chr(0), "").splitlines()[0])' 2>&1) || true
    if [[ $library != "Open MPI"* ]]; then
      log "warning: mpi4py uses '$library', not jetpde's Open MPI; build it against mpicc with"
      log "  $python -m pip install --force-reinstall --no-binary mpi4py mpi4py"
    fi
  fi
fi
