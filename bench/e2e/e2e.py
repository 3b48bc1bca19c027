"""End-to-end training speed: jetpde against the same problems in PyTorch and JAX (issue 16 item 4).

A step here is what a user waits for: points redrawn when the example says, the loss and its
gradient, the loss weights, and the Adam update. jetpde's side is `jetpde run` on the example
itself (the path every user takes), its first stage (Adam) capped at --steps steps, the later
stages at one step, validation and checkpoints pushed past the end; its seconds per step are read
from history.csv (a row every 10 steps, cumulative seconds), as the median over 10-step blocks.
The peers (bench/e2e/peers.py, in the benchmark venv) time the same problems written as PyTorch
and JAX users write them, Adam included, in the same 10-step blocks.

  python3 bench/e2e/e2e.py [--build build] [--problems burgers allen_cahn ldc] [--steps 300]
                           [--threads 2] [--precisions example auto] [--no-peers]
                           [--python build/bench-venv/bin/python] [--out FILE]

Prints one row per problem: jetpde's seconds per step under each precision policy, torch's, jax's,
and the fastest peer over jetpde (> 1: jetpde is faster); writes everything, with the date and the
CPU, to <build>/bench/e2e.json (--out). Run alone: the ratios are of runs made side by side on one
machine, and a competing process moves them.
"""
import argparse
import csv
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
from compare import cpu_model, write_json  # noqa: E402  (the CPU named with every figure)

PROBLEMS = {  # name: the example, and how many stages follow its Adam stage
    "burgers": ("examples/burgers.yaml", 1),
    "allen_cahn": ("examples/allen_cahn.yaml", 1),
    "ldc": ("examples/ldc.yaml", 1),
}
FAR = 10**9  # a step count no run reaches: validation and checkpoints only at the end


def block_seconds(history, stage):
    """Seconds per step of every 10-step block of `stage` in a history.csv (the first block, which
    holds the first run of each compiled program, left out)."""
    rows = []
    with open(history) as f:
        for r in csv.DictReader(f):
            rows.append((int(r["step"]), r["stage"], float(r["seconds"])))
    out = []
    for (s0, st0, t0), (s1, st1, t1) in zip(rows, rows[1:]):
        if st0 == stage and st1 == stage and s1 > s0:
            out.append((t1 - t0) / (s1 - s0))
    return out[1:]


def run_jetpde(jetpde, name, steps, threads, precision, work, env):
    example, later = PROBLEMS[name]
    out = os.path.join(work, "%s_%s" % (name, precision))
    cmd = [jetpde, "run", os.path.join(ROOT, example), "--output", out, "--progress", "none",
           "--threads", str(threads), "--set", "training.stages.0.steps=%d" % steps,
           "--set", "reference.every=%d" % FAR, "--set", "output.checkpoint_every=%d" % FAR]
    for i in range(later):
        cmd += ["--set", "training.stages.%d.steps=1" % (i + 1)]
    if precision != "example":
        cmd += ["--set", "precision=%s" % precision]
    log = out + ".log"
    with open(log, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        with open(log) as f:
            sys.exit("e2e.py: %s failed (exit %d):\n%s" % (" ".join(cmd), rc, f.read()[-3000:]))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    if any(st["steps"] != 1 for st in summary["stages"][1:]):
        sys.exit("e2e.py: %s has more than %d stages after its first: PROBLEMS says how many" %
                 (example, later))
    stage = summary["stages"][0]["name"]
    blocks = block_seconds(os.path.join(out, "history.csv"), stage)
    if not blocks:
        sys.exit("e2e.py: %s: no 10-step blocks in history.csv (--steps too small?)" % out)
    return {"seconds_per_step": statistics.median(blocks), "blocks": blocks,
            "precision": summary.get("precision"), "setup_seconds": summary["seconds"]["setup"],
            "command": " ".join(cmd)}


def run_peer(python, framework, problems, steps, threads, work):
    path = os.path.join(work, "%s.json" % framework)
    cmd = [python, os.path.join(HERE, "peers.py"), "--framework", framework, "--problems",
           *problems, "--steps", str(steps), "--threads", str(threads), "--json", path]
    print("== " + " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0 or not os.path.exists(path):
        print("e2e.py: %s failed; its column reads '-'" % framework, flush=True)
        return None
    with open(path) as f:
        return json.load(f)


def fmt(x):
    return "-" if x is None else "%.5f" % x


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    p.add_argument("--jetpde", help="the jetpde program (default: <build>/apps/jetpde)")
    p.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    p.add_argument("--steps", type=int, default=300, help="timed Adam steps (at least 30)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precisions", nargs="+", default=["example", "auto"],
                   help="jetpde's precision policies ('example': the example's own, fp32)")
    p.add_argument("--no-peers", action="store_true", help="jetpde only")
    p.add_argument("--python", help="the peers' Python (default: <build>/bench-venv/bin/python)")
    p.add_argument("--out", help="the JSON written (default: <build>/bench/e2e.json); the run "
                   "folders go beside it, to <out without .json>-runs/ (emptied first)")
    a = p.parse_args()
    if a.steps < 30 or a.threads < 1:
        p.error("--steps wants at least 30 (three 10-step blocks), --threads at least 1")
    build = os.path.abspath(a.build)
    jetpde = a.jetpde or os.path.join(build, "apps", "jetpde")
    if not os.path.exists(jetpde):
        sys.exit("e2e.py: %s not found (make build first)" % jetpde)
    path = os.path.abspath(a.out or os.path.join(build, "bench", "e2e.json"))
    out_dir = os.path.dirname(path)
    os.makedirs(out_dir, exist_ok=True)
    work = os.path.splitext(path)[0] + "-runs"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # A compile cache of this run's own (JETPDE_CACHE_DIR where set): each program compiled and its
    # tiles measured afresh in its first run (left out of the timing), not taken from whatever
    # earlier runs on this machine cached (a choice measured under load once cost ldc 1.6x a
    # step: bench/README.md, "Tiles measured under load").
    env = dict(os.environ)
    env.setdefault("JETPDE_CACHE_DIR", os.path.join(work, "compile-cache"))
    rows = {}
    for name in a.problems:
        rows[name] = {}
        for prec in a.precisions:
            r = run_jetpde(jetpde, name, a.steps, a.threads, prec, work, env)
            rows[name]["jetpde " + prec] = r
            print("jetpde %-10s %-8s %s s/step (%s)" % (name, prec, fmt(r["seconds_per_step"]),
                                                       r["precision"]), flush=True)
    peers = {}
    if not a.no_peers:
        python = a.python or os.path.join(build, "bench-venv", "bin", "python")
        for fw in ("torch", "jax"):
            peers[fw] = run_peer(python, fw, a.problems, a.steps, a.threads, work)

    cols = ["jetpde " + p for p in a.precisions]
    print("\nend to end, seconds per Adam step (median of 10-step blocks), %d threads, %s" %
          (a.threads, cpu_model()))
    print("%-11s" % "problem" + "".join("%14s" % c for c in cols + ["torch", "jax"]) +
          "".join("%16s" % ("peer/" + c.split()[1]) for c in cols))
    table = {}
    for name in a.problems:
        t = {c: rows[name][c]["seconds_per_step"] for c in cols}
        for fw in ("torch", "jax"):
            got = (peers.get(fw) or {}).get("problems", {}).get(name)
            t[fw] = got["seconds_per_step"] if got else None
        known = [t[fw] for fw in ("torch", "jax") if t[fw] is not None]
        best = min(known) if known else None
        ratios = {c: (best / t[c] if best else None) for c in cols}
        table[name] = {"seconds_per_step": t, "best_peer": best, "best_peer_over": ratios}
        print("%-11s" % name + "".join("%14s" % fmt(t[c]) for c in cols + ["torch", "jax"]) +
              "".join("%16s" % ("-" if ratios[c] is None else "%.2f" % ratios[c])
                      for c in cols))
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu_model(),
              "cores": os.cpu_count(), "threads": a.threads, "steps": a.steps, "table": table,
              "jetpde": rows, "peers": peers}
    write_json(path, result)
    print("written: %s (runs in %s)" % (path, work))


if __name__ == "__main__":
    main()
