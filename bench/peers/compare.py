"""Puts jetpde's benchmark results beside the peers' (PyTorch, JAX) in one table and one JSON file.

  python3 compare.py --jetpde build/bench/jetpde.json
                     [--torch-json FILE | --torch-log FILE] [--jax-json FILE] [--jax-log FILE]
                     [--out build/bench/peers.json]

Inputs (any may be missing; its columns then read '-'):
  --jetpde FILE     jetpde_bench --json output; repeatable. Each file holds one executor
                    ({"executor": NAME, "results": [...]}), several ({"executors": [{"executor":
                    NAME, "results": [...]}, ...]}), or results that name their own executor
                    ({"results": [{"executor": NAME, "workload": ..., ...}]}). A result's time is
                    its median_seconds_per_step.
  --torch-json FILE {workload: seconds_per_step}; --torch-log FILE: torch_pinn.py's stdout
                    (lines 'NAME  SECONDS s/step ...', header 'torch VERSION threads=N').
  --jax-json FILE   jax_pinn.py --json output: {NAME: s, NAME/jet: s}; --jax-log FILE: its stdout,
                    read for the header line (versions, threads, XLA_FLAGS) and, without
                    --jax-json, for the times.
Prints one row per workload: jetpde's seconds per step for each executor, torch, jax (nested),
jax (jet), the fastest peer, and for each jetpde executor the ratio fastest peer / jetpde
(> 1: jetpde is faster). Writes all of it, with the date, the machine (cores, CPU model), the
peers' versions and thread settings, to --out.
"""
import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import sys

ORDER = ["burgers", "ns2d", "ks4"] + [f"order{k}" for k in range(1, 7)] + ["poisson32d"]
POINTS = {**{w: 8192 for w in ORDER[:-1]}, "poisson32d": 1024}  # WORKLOADS.md
LINE = re.compile(r"^(\S+)\s+([0-9.eE+-]+) s/step\b")


def jetpde_results(paths):
    """{executor: {workload: seconds}}, the files' own facts, and the workloads run on other point
    counts than WORKLOADS.md's (the peers always use those), from jetpde_bench JSON files."""
    executors, facts, odd = {}, [], set()
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        facts.append({k: v for k, v in doc.items() if k not in ("results", "executors")})
        groups = doc.get("executors") or [doc]
        for group in groups:
            default = group.get("executor") or doc.get("executor") or "jetpde"
            precision = group.get("precision") or doc.get("precision")
            for r in group.get("results", []):
                name = r.get("executor") or default
                if precision not in (None, "fp32") and name != "interpreter":
                    name = f"{name} {precision}"  # e.g. "cpu bf16": another column
                seconds = r.get("median_seconds_per_step", r.get("seconds_per_step"))
                if seconds is not None:
                    executors.setdefault(name, {})[r["workload"]] = float(seconds)
                if r.get("points") not in (None, POINTS.get(r["workload"], r.get("points"))):
                    odd.add(r["workload"])
    return executors, facts, odd


def read_json_times(path):
    with open(path) as f:
        return {k: float(v) for k, v in json.load(f).items()}


def read_log(path):
    """(times, header line) from a torch_pinn.py / jax_pinn.py stdout capture."""
    times, header = {}, None
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                times[m.group(1)] = float(m.group(2))
            elif header is None and re.match(r"^(torch|jax) \S+", line):
                header = line.strip()
    return times, header


def write_json(path, value):
    """`value` as indented JSON at `path`, written to a temporary beside it and renamed, so that
    an interrupted write never leaves half a file where a whole one was."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, with its family and model numbers (a virtual
    machine's name is often only the vendor's brand)."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
                if not line.strip():
                    break  # the first processor's block is enough
    except OSError:
        pass
    name = info.get("model name") or platform.processor() or "unknown CPU"
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


def version(name, header, pattern, ran):
    """What the peer's header line says (torch's has its build tag), else, if the peer ran, the
    version installed in this interpreter."""
    m = re.search(pattern, header or "")
    if m:
        return m.group(1)
    if not ran:
        return None
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def fmt(x, spec=".4g"):
    return "-" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jetpde", action="append", default=[], metavar="FILE")
    ap.add_argument("--torch-json", metavar="FILE")
    ap.add_argument("--torch-log", metavar="FILE")
    ap.add_argument("--jax-json", metavar="FILE")
    ap.add_argument("--jax-log", metavar="FILE")
    ap.add_argument("--out", default="build/bench/peers.json", metavar="FILE")
    a = ap.parse_args()

    def present(path, what):
        if path and not os.path.isfile(path):
            print(f"compare.py: no {what} file {path}; its columns stay empty", file=sys.stderr)
            return None
        return path

    executors, jetpde_facts, odd_points = jetpde_results([p for p in a.jetpde if present(p, "jetpde")])
    torch_times, torch_header = {}, None
    if present(a.torch_log, "torch log"):
        torch_times, torch_header = read_log(a.torch_log)
    if present(a.torch_json, "torch JSON"):
        torch_times = read_json_times(a.torch_json)
    jax_times, jax_header = {}, None
    if present(a.jax_log, "jax log"):
        jax_times, jax_header = read_log(a.jax_log)
    if present(a.jax_json, "jax JSON"):
        jax_times = read_json_times(a.jax_json)

    names = list(executors)
    seen = set().union(*executors.values(), torch_times, (k.split("/")[0] for k in jax_times))
    workloads = [w for w in ORDER if w in seen] + sorted(seen - set(ORDER))

    rows = []
    for w in workloads:
        peers = {"torch": torch_times.get(w), "jax": jax_times.get(w),
                 "jax/jet": jax_times.get(f"{w}/jet")}
        timed = {k: v for k, v in peers.items() if v is not None}
        best = min(timed, key=timed.get) if timed else None
        jet = {e: executors[e].get(w) for e in names}
        ratio = {e: (timed[best] / s if best and s else None) for e, s in jet.items()}
        rows.append({"workload": w, "jetpde": jet, "torch": peers["torch"], "jax": peers["jax"],
                     "jax_jet": peers["jax/jet"], "best_peer": best,
                     "best_peer_seconds": timed.get(best), "ratio_best_peer_over_jetpde": ratio})

    # The table.
    cols = ["workload"] + [f"jetpde {e}" for e in names] + ["torch", "jax", "jax jet", "best peer"]
    cols += [f"peer/{e}" for e in names]
    table = []
    for r in rows:
        table.append([r["workload"]] + [fmt(r["jetpde"][e]) for e in names]
                     + [fmt(r["torch"]), fmt(r["jax"]), fmt(r["jax_jet"]), r["best_peer"] or "-"]
                     + [fmt(r["ratio_best_peer_over_jetpde"][e], ".2f") for e in names])
    widths = [max(len(c), *(len(t[i]) for t in table)) if table else len(c)
              for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.ljust(wd) if i == 0 else c.rjust(wd)
                                   for i, (c, wd) in enumerate(zip(cells, widths)))
    print("seconds per step (median); peer/EXECUTOR = fastest peer's time / jetpde's "
          "(> 1: jetpde is faster)")
    print(line(cols))
    print(line(["-" * wd for wd in widths]))
    for t in table:
        print(line(t))
    if odd_points:
        print(f"note: jetpde ran {', '.join(w for w in workloads if w in odd_points)} on other "
              "point counts than WORKLOADS.md's (--points); those ratios compare unlike runs")

    torch_threads = re.search(r"threads=(\d+)", torch_header or "")
    facts = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cores": os.cpu_count(), "cpu": cpu_model(),
                    "platform": platform.platform(),
                    "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()]},
        "versions": {
            "python": platform.python_version(),
            "torch": version("torch", torch_header, r"^torch (\S+)", bool(torch_times)),
            "jax": version("jax", jax_header, r"^jax (\S+)", bool(jax_times)),
            "jaxlib": version("jaxlib", jax_header, r"jaxlib (\S+)", bool(jax_times)),
        },
        "threads": {
            "jetpde": {e: "one thread (the reference interpreter)" if e == "interpreter"
                       else "as jetpde_bench runs it (see jetpde_runs)" for e in names},
            "torch": (f"torch.set_num_threads({torch_threads.group(1)}) (torch_pinn.py --threads)"
                      if torch_threads else None),
            "jax": jax_header and jax_header.split(" ", 4)[-1],
        },
        "environment": {k: os.environ.get(k, "unset")
                        for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")},
        "peer_headers": {"torch": torch_header, "jax": jax_header},
        "jetpde_runs": jetpde_facts,
        "jetpde_executors": names,
        "jetpde_other_point_counts": [w for w in workloads if w in odd_points],
        "ratio": "fastest peer's seconds per step / jetpde's; > 1 means jetpde is faster",
        "results": rows,
    }
    write_json(a.out, facts)
    v = facts["versions"]
    print(f"\ntorch {v['torch'] or '-'}, jax {v['jax'] or '-'} (jaxlib {v['jaxlib'] or '-'}); "
          f"{facts['machine']['cores']} cores, {facts['machine']['cpu']}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
