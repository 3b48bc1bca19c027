"""`precision: auto` against fp32 on whole runs of the examples (issue 16 item 3's accuracy test).

Each example runs as written (every stage, its own validation), once with `--set precision=fp32`
and once with `--set precision=auto`, for each seed; the table gives each run's relative L2 error
(summary.json `metrics.rel_l2`), its training seconds, the precision `auto` stood for, and the step
at which its check against fp32 switched it to fp32 (`-`: never). Where `auto` is fp32 on this
machine (no AMX: docs/design.md section 8) both columns are the same run twice; `--auto-as
bf16_wgrad` measures what an AMX CPU runs (JETPDE_AUTO_PRECISION), at this machine's speed.

  python3 bench/e2e/auto_accuracy.py [--build build] [--problems burgers ldc allen_cahn]
                                     [--seeds 0 1 2] [--threads 2] [--auto-as bf16_wgrad]
                                     [--out FILE]

Whole runs: about 1 minute (burgers), 4 (ldc) and 6 (allen_cahn) each on 2 cores.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, HERE)
from compare import cpu_model, write_json  # noqa: E402
from e2e import PROBLEMS  # noqa: E402  (the same three examples)


def run(jetpde, name, precision, seed, threads, auto_as, work):
    out = os.path.join(work, "%s_%s_%d" % (name, precision, seed))
    cmd = [jetpde, "run", os.path.join(ROOT, PROBLEMS[name][0]), "--output", out, "--progress",
           "none", "--threads", str(threads), "--set", "precision=%s" % precision, "--set",
           "seed=%d" % seed]
    env = dict(os.environ)
    env.pop("JETPDE_AUTO_PRECISION", None)
    # A compile cache of the run's own (JETPDE_CACHE_DIR where set), as e2e.py: tiles measured
    # afresh, none taken from what earlier runs on this machine cached.
    if "JETPDE_CACHE_DIR" not in env:
        env["JETPDE_CACHE_DIR"] = out + ".compile-cache"
        shutil.rmtree(env["JETPDE_CACHE_DIR"], ignore_errors=True)
    if precision == "auto" and auto_as:
        env["JETPDE_AUTO_PRECISION"] = auto_as
    with open(out + ".log", "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        with open(out + ".log") as f:
            sys.exit("auto_accuracy.py: %s failed (exit %d):\n%s" % (" ".join(cmd), rc,
                                                                     f.read()[-3000:]))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return {"rel_l2": s["metrics"]["rel_l2"], "train_seconds": s["seconds"]["train"],
            "precision": s["precision"],
            "switched_at": s.get("precision_switched_to_fp32_at_step"),
            "checks": s.get("precision_checks", []), "command": " ".join(cmd),
            "auto_as": env.get("JETPDE_AUTO_PRECISION")}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    p.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--auto-as", help="what auto stands for (JETPDE_AUTO_PRECISION; default: "
                   "this machine's choice)")
    p.add_argument("--out", help="the JSON written (default: <build>/bench/auto_accuracy.json)")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    jetpde = os.path.join(build, "apps", "jetpde")
    out = a.out or os.path.join(build, "bench", "auto_accuracy.json")
    work = os.path.splitext(out)[0] + "-runs"
    os.makedirs(work, exist_ok=True)
    rows = []
    print("%-11s %4s  %-22s  %s" % ("example", "seed", "fp32: rel. L2, train s",
                                    "auto: rel. L2, train s, stood for, to fp32 at"), flush=True)
    for name in a.problems:
        for seed in a.seeds:
            f = run(jetpde, name, "fp32", seed, a.threads, a.auto_as, work)
            u = run(jetpde, name, "auto", seed, a.threads, a.auto_as, work)
            rows.append({"example": name, "seed": seed, "fp32": f, "auto": u})
            print("%-11s %4d  %-22s  %.3e, %.0f s, %s, %s" %
                  (name, seed, "%.3e, %.0f s" % (f["rel_l2"], f["train_seconds"]), u["rel_l2"],
                   u["train_seconds"], u["precision"],
                   "-" if u["switched_at"] is None else u["switched_at"]), flush=True)
    write_json(out, {"date": datetime.datetime.now(datetime.timezone.utc).strftime(
                         "%Y-%m-%d %H:%M UTC"),
                     "machine": cpu_model(), "threads": a.threads, "auto_as": a.auto_as,
                     "runs": rows})
    print("written: %s (runs in %s)" % (out, work))


if __name__ == "__main__":
    main()
