#!/usr/bin/env bash
# Fetches, here (Debian 12, with network), the Debian packages that building jetpde's tests needs
# and that a bare GPU machine may lack, into build-gpu-deps/ (ignored by git; about 23 MB), for
# scripts/gpu_check.sh to unpack there into a private prefix:
#
#   bash scripts/gpu_deps.sh        # then carry build-gpu-deps to the GPU machine
#
# Eigen, LBFGSpp and Boost (headers), GoogleTest (static libraries), OpenBLAS (the OpenMP
# flavour, as here) and the runtime libraries OpenBLAS needs (libgfortran5, libquadmath0; libgomp
# comes with the machine's compiler, and a newer one must not be shadowed). MPI, HDF5, VTK and
# PETSc are not fetched: the GPU check builds without them.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/build-gpu-deps"
packages=(libeigen3-dev liblbfgspp-dev libboost1.74-dev libgtest-dev libopenblas0-openmp libopenblas-openmp-dev libopenblas-dev
          libgfortran5 libquadmath0)

mkdir -p "$dir"
cd "$dir"
for p in "${packages[@]}"; do
  if ! ls "${p}"_*.deb >/dev/null 2>&1; then
    apt-get download "$p" 2>/dev/null || { echo "gpu_deps: cannot download $p" >&2; exit 1; }
  fi
done
# The PyTorch peer script, which ../shared holds and which does not travel with the tree.
cp "$root/../shared/bench/torch_pinn.py" . 2>/dev/null || echo "gpu_deps: no ../shared/bench/torch_pinn.py" >&2
echo "gpu_deps: $(ls -1 *.deb | wc -l) packages, $(du -sh . | cut -f1) in $dir"
