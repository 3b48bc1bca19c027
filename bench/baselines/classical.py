#!/usr/bin/env python3
"""Time to accuracy of the classical solver (solver: {type: petsc}) against the PINN.

For each case, runs `jetpde run CONFIG --set solver.type=petsc --set solver.grid=[N]` on a
ladder of grids and reads rel_l2 and the solve's seconds from summary.json (the whole command's
wall time is printed too: it includes PetscInitialize and writing the fields). With --pinn it
also trains the config as written (minutes each) and reports the coarsest grid of the ladder
whose error is at most the PINN's. Without --pinn the PINN column is left empty: see
README.md for measured PINN figures.

    python3 bench/baselines/classical.py [--jetpde build/apps/jetpde] [--pinn] [--case burgers]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name -> (config, grids). Poisson2d-CG (a square minus four disks) is not a box: the finite
# difference solver refuses it, so it is not a case (README.md says what it would take).
CASES = {
    "burgers": ("examples/burgers.yaml", [257, 513, 1025, 2049, 4097]),
    "allen_cahn": ("examples/allen_cahn.yaml", [128, 256, 512, 1024]),
    "heat": ("examples/heat.yaml", [33, 65, 129, 257]),
    # The PINN's config is ldc.yaml (--pinn trains it); the classical ladder solves
    # ldc_petsc.yaml, the same problem stated plainly (its lid corners at the walls' value, as the
    # reference has them). 257 x 257 takes minutes.
    "cavity": ("examples/ldc_petsc.yaml", [65, 129, 257]),
}
# The config --pinn trains where it is not the ladder's.
PINN_CONFIGS = {"cavity": "examples/ldc.yaml"}


def run(jetpde, config, out, sets):
    cmd = [jetpde, "run", config, "--output", out, "--progress", "none"]
    for s in sets:
        cmd += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return summary, wall


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jetpde", default=os.path.join(ROOT, "build/apps/jetpde"))
    p.add_argument("--pinn", action="store_true", help="also train each config as written")
    p.add_argument("--case", action="append", choices=sorted(CASES), help="repeatable")
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="jetpde_baselines_") as tmp:
        for name in a.case or list(CASES):
            config, grids = CASES[name]
            pinn = None
            if a.pinn:
                s, wall = run(a.jetpde, PINN_CONFIGS.get(name, config),
                              os.path.join(tmp, name + "_pinn"), [])
                pinn = (s["metrics"]["rel_l2"], wall)
            ladder = []
            for n in grids:
                out = os.path.join(tmp, f"{name}_{n}")
                s, wall = run(a.jetpde, config, out,
                              ["solver.type=petsc", f"solver.grid=[{n}]"])
                ladder.append((n, s["metrics"]["rel_l2"], s["solver"]["seconds"], wall))
            rows.append((name, pinn, ladder))
    print("| case | PINN rel. L2 | PINN wall s | grid | classical rel. L2 | solve s | wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, pinn, ladder in rows:
        for n, err, solve, wall in ladder:
            mark = ""
            if pinn and err <= pinn[0] and all(e > pinn[0] for m, e, *_ in ladder if m < n):
                mark = " (first at most the PINN's)"
            print(f"| {name} | {f'{pinn[0]:.2e}' if pinn else ''} | "
                  f"{f'{pinn[1]:.0f}' if pinn else ''} | {n}{mark} | {err:.2e} | {solve:.2f} | "
                  f"{wall:.2f} |")


if __name__ == "__main__":
    main()
