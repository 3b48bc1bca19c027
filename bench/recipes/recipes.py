#!/usr/bin/env python3
"""The default recipe against the hand-tuned examples (issue 15; `make bench-recipes`).

Each problem is an example's config with its `network`, `sampling`, `training` and `output`
sections taken out, so that only the mathematics and the reference are left and the default
recipe (docs/config.md) chooses the rest. Each runs with seeds 0..2 (--seeds) and a wall-time
budget (--max-time, default 900 s: training.max_time, so a run that would take longer stops and
says so); the example itself runs once with seed 0 under the same budget. The table gives the
relative L2 error against each example's reference and the wall time of the whole `jetpde run`.

  python3 bench/recipes/recipes.py                      # all problems, seeds 0 1 2
  python3 bench/recipes/recipes.py --problems heat wave --seeds 0 --no-examples

Writes BUILD/bench/recipes/<problem>/<run>/ (the run folders) and results.json (merged with the
rows of earlier runs, so that problems run one by one or side by side make one table), and prints
the markdown table that bench/README.md holds.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
# The CPU named with every figure; results written to a temporary and renamed.
from compare import write_json, cpu_model as cpu_name  # noqa: E402
EXAMPLES = os.path.join(ROOT, "examples")

# problem -> (example config, target rel. L2 of the issue or None, what the target is)
PROBLEMS = {
    "burgers": ("burgers.yaml", 5e-4, "issue 15"),
    "allen_cahn": ("allen_cahn.yaml", 1e-3, "issue 15"),
    "kdv": ("kdv.yaml", None, ""),
    "heat": ("heat.yaml", None, ""),
    "wave": ("wave.yaml", None, ""),
    "advection": ("advection.yaml", None, "JAX-PI 6.9e-4"),
    "reaction": ("reaction.yaml", None, ""),
}
STRIPPED = ("network", "sampling", "training", "output")


def problem_text(example):
    """The example's config without the sections the recipe chooses, data paths made absolute."""
    out, skip = [], False
    with open(example) as f:
        for line in f:
            m = re.match(r"^([A-Za-z_]+):", line)
            if m:
                skip = m.group(1) in STRIPPED
            if not skip:
                out.append(line)
    text = "".join(out)

    def absolute(m):
        path = m.group(2)
        if os.path.isabs(path):
            return m.group(0)
        return m.group(1) + os.path.normpath(os.path.join(os.path.dirname(example), path))

    return re.sub(r"^(\s*file:\s*)(\S+)", absolute, text, flags=re.M)


def run(jetpde, config, out_dir, seed, max_time, threads, log):
    cmd = [jetpde, "run", config, "--output", out_dir, "--progress", "none",
           "--set", "seed=%d" % seed, "--set", "training.max_time=%g" % max_time]
    if threads:
        cmd += ["--threads", str(threads)]
    start = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    wall = time.monotonic() - start
    row = {"config": config, "seed": seed, "rc": rc, "wall_seconds": wall}
    summary = os.path.join(out_dir, "summary.json")
    # A run stopped by the time budget (exit status 4) still writes its summary and metrics.
    if os.path.exists(summary):
        with open(summary) as f:
            s = json.load(f)
        row.update(rel_l2=s["metrics"].get("rel_l2"), status=s["status"], steps=s["steps"],
                   train_seconds=s["seconds"]["train"])
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    p.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--max-time", type=float, default=900)
    p.add_argument("--threads", type=int, default=0, help="jetpde's threads (0: all cores)")
    p.add_argument("--no-examples", action="store_true", help="the recipe runs only")
    p.add_argument("--examples-only", action="store_true", help="the examples' runs only")
    p.add_argument("--table", action="store_true",
                   help="only print the table, from the run folders' summary.json files")
    a = p.parse_args()
    build = os.path.join(ROOT, a.build) if not os.path.isabs(a.build) else a.build
    jetpde = os.path.join(build, "apps", "jetpde")
    if not os.path.exists(jetpde):
        sys.exit("recipes.py: %s not found (make build first)" % jetpde)
    out = os.path.join(build, "bench", "recipes")
    if a.table:
        table(from_folders(out), a.max_time)
        return
    os.makedirs(out, exist_ok=True)
    rows = []
    for name in a.problems:
        example_file, target, source = PROBLEMS[name]
        example = os.path.join(EXAMPLES, example_file)
        if not os.path.exists(example):
            print("recipes.py: %s: no %s, skipped" % (name, example), file=sys.stderr)
            continue
        problem = os.path.join(out, name, "problem.yaml")
        os.makedirs(os.path.dirname(problem), exist_ok=True)
        with open(problem, "w") as f:
            f.write(problem_text(example))
        runs = [] if a.examples_only else [("recipe", problem, s) for s in a.seeds]
        if not a.no_examples:
            runs.append(("example", example, 0))
        for kind, config, seed in runs:
            d = os.path.join(out, name, "%s_seed%d" % (kind, seed))
            r = run(jetpde, config, d, seed, a.max_time, a.threads, d + ".log")
            r.update(problem=name, kind=kind, target=target, target_source=source)
            rows.append(r)
            print("%-10s %-7s seed %d: rel_l2 %s, %.0f s (%s)" % (
                name, kind, seed, "%.2e" % r["rel_l2"] if r.get("rel_l2") is not None else "-",
                r["wall_seconds"], r.get("status", "rc %d" % r["rc"])), flush=True)
    # Merged into the rows of earlier runs (another problem, another seed), so that runs made
    # one by one, or side by side, make one table.
    results = os.path.join(out, "results.json")
    old = []
    if os.path.exists(results):
        with open(results) as f:
            old = json.load(f).get("runs", [])
    key = lambda r: (r["problem"], r["kind"], r["seed"])
    fresh = {key(r) for r in rows}
    rows = [r for r in old if key(r) not in fresh] + rows
    write_json(results, {"cpu": cpu_name(), "runs": rows})
    table(rows, a.max_time)


def from_folders(out):
    """The rows of every run folder under `out` (wall time: setup + training + output)."""
    rows = []
    for name in PROBLEMS:
        for kind in ("recipe", "example"):
            for summary in sorted(glob.glob(os.path.join(out, name, kind + "_seed*",
                                                         "summary.json"))):
                with open(summary) as f:
                    s = json.load(f)
                seed = int(re.search(r"_seed(\d+)", summary).group(1))
                sec = s["seconds"]
                rows.append(dict(problem=name, kind=kind, seed=seed, rel_l2=s["metrics"].get(
                    "rel_l2"), status=s["status"], steps=s["steps"],
                    wall_seconds=sec["setup"] + sec["train"] + sec["output"],
                    target=PROBLEMS[name][1], target_source=PROBLEMS[name][2]))
    return rows


def table(rows, max_time):
    print()
    print("%s, %s, budget %g s a run" % (time.strftime("%Y-%m-%d"), cpu_name(), max_time))
    print()
    print("| problem | target | recipe rel. L2 (seeds) | recipe time (s) | example rel. L2 "
          "| example time (s) |")
    print("|---|---|---|---|---|---|")
    for name in PROBLEMS:
        mine = [r for r in rows if r["problem"] == name]
        if not mine:
            continue
        rec = sorted((r for r in mine if r["kind"] == "recipe"), key=lambda r: r["seed"])
        ex = [r for r in mine if r["kind"] == "example"]
        fmt = lambda r: ("%.2e" % r["rel_l2"]) if r.get("rel_l2") is not None else "failed"
        target = mine[0]["target"]
        t = ("<= %.0e" % target if target else "") + (
            " (%s)" % mine[0]["target_source"] if mine[0]["target_source"] else "")
        print("| %s | %s | %s | %s | %s | %s |" % (
            name, t.strip(), " / ".join("%s (%d)" % (fmt(r), r["seed"]) for r in rec),
            " / ".join("%.0f" % r["wall_seconds"] for r in rec),
            fmt(ex[0]) if ex else "", "%.0f" % ex[0]["wall_seconds"] if ex else ""))

if __name__ == "__main__":
    main()
