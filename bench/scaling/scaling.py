#!/usr/bin/env python3
"""Strong and weak scaling of data-parallel training (`mpirun -n N jetpde run`), and a model of
its communication that projects the efficiency to many ranks (bench/README.md, "Scaling (MPI)").

    python3 bench/scaling/scaling.py                       # what `make bench` runs
    python3 bench/scaling/scaling.py --ranks 1,2 --repeats 1 --out /tmp/scaling
    python3 bench/scaling/scaling.py --model-only --latency 1.5e-6 --bandwidth 25e9

Measured (the config bench/scaling/poisson2d.yaml, OMP_NUM_THREADS=1 and --threads 1 per rank):
  strong  the same total points at N = 1, 2, 4 ranks (each rank trains on 1/N of them)
  weak    the points per rank fixed (N times the total at N ranks)
  1 rank  also at 1/2, 1/4, 1/16 and 1/64 of the points: compute time per step as a + b * points,
          the model's compute part (a: what does not shrink with the points, the optimizer's update,
          the kernels' fixed costs)
  threads 1 rank with as many OpenMP threads as cores, on the strong total: the other way to use
          the same cores
  alone   N independent 1-rank processes (no MPI) of the weak case's points, started together:
          what the shared caches and memory bandwidth cost weak scaling, communication aside
Rank counts above the cores this process may use run oversubscribed (Open MPI --oversubscribe,
no binding) and are labelled so: their ranks take turns on the cores.

Every run's summary.json gives steps, seconds.train, seconds.communication (rank 0's seconds in
MPI collectives, waiting for the other ranks included) and ranks. The table: seconds per step,
speed-up (strong: t1 / tN; weak, scaled: N t1 / tN), parallel efficiency (speed-up / N) and the
communication fraction (communication / train).

The model (one Adam step = one evaluation of the objective; solvers/objective.cpp, trainer.cpp):
  data parallel  one allreduce (sum) of 1 + slots + parameters doubles (the loss, each loss slot,
                 the gradient), n = 8 (1 + slots + P) bytes per rank, and one allreduce (max) of one
                 double (the ranks agree whether to stop). Allreduce time
                     T(N, n) = 2 ceil(log2 N) alpha + 2 (N - 1) / N * n / beta
                 (the bandwidth term of a ring or Rabenseifner allreduce, which moves 2 (N-1)/N n
                 bytes per rank; the latency term of recursive halving and doubling, 2 log2 N
                 messages); the stop vote ceil(log2 N) alpha (recursive doubling); the reduction's
                 arithmetic is neglected (n / 8 additions, about a microsecond here).
  decomposed     (a config with `decomposition:`; weak scaling, one subdomain network of the
                 bench's size per rank, so S = N networks of p parameters, the points per rank
                 fixed, each point costing what it costs with one network: overlaps ignored)
                 as built (docs/design.md section 9): each rank trains on its own subdomains'
                 points but holds every subdomain's network; the gradient allreduce carries all,
                 T(N, 8 (1 + slots + S p)): the message grows with the rank count.
                 neighbour exchange (built, parallel.exchange: neighbours; solvers/exchange.h):
                 a grid of one subdomain per rank in d dimensions (--dimensions), boxes reaching
                 into the next cells only: each network's gradient block is held by the h =
                 min(3^d, N) ranks around it, a rank holds h blocks and exchanges with the
                 k = min(5^d - 1, N - 1) ranks within two cells, sending h (h - 1) p values per
                 step, all messages posted at once: k alpha + 8 h (h - 1) p / beta (one link, its
                 bandwidth shared); plus T(N, 8 (2 + slots)) (the loss, the slots, the finiteness
                 flag) and the stop vote. With h = N every block is everyone's and goes by the
                 allreduce, as built. Validation and resampling steps add a synchronization (one
                 allreduce of all S p parameters) every so many steps, left out here like the
                 validation itself.
  compute        a + b p at p points per rank, fitted on the 1-rank runs; the ranks are assumed to
                 be balanced (no waiting) and each on cores of its own.
  efficiency     strong: t(1) / (N t(N)), t(N) = a + b P / N + comm(N); weak: t(1) / t(N).
The network (--latency, --bandwidth) defaults to 100 Gb/s InfiniBand HDR (1.5 us, 12.5 GB/s);
HDR200 is --bandwidth 25e9. The model is checked against the 2- and 4-rank runs here with the
shared-memory transport's alpha and beta, measured by jetpde_mpi_pingpong (a ping-pong between two
ranks, and the step's two allreduces timed directly).

Results go to OUT/scaling.json and the run folders to OUT/runs/ (default build/bench/scaling), not
into the source tree. Python 3 standard library only.
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from compare import cpu_model  # noqa: E402  (one reading of /proc/cpuinfo for every benchmark)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def fail(message):
    print(f"scaling.py: {message}", file=sys.stderr)
    sys.exit(1)


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def mlp_parameters(config_path):
    """Weights and biases of the config's plain MLP: inputs from geometry.min, hidden layers, one
    output per field. Refuses configs whose network is anything else (the count would be wrong)."""
    text = open(config_path).read()
    net = re.search(r"^network:\n((?:[ \t]+.*\n|\s*\n)*)", text, re.M)
    if not net:
        fail(f"{config_path}: no network section")
    keys = set(re.findall(r"^\s+(\w+):", net.group(1), re.M))
    if keys - {"hidden", "activation"}:
        fail(f"{config_path}: network has {sorted(keys - {'hidden', 'activation'})}; the "
             "parameter count here knows plain MLPs only (pass --parameters)")
    hidden = re.search(r"hidden:\s*\[([^\]]*)\]", net.group(1)).group(1)
    hidden = [int(h) for h in hidden.split(",")]
    dims = len(re.search(r"^\s+min:\s*\[([^\]]*)\]", text, re.M).group(1).split(","))
    fields = re.search(r"^fields:\s*\[([^\]]*)\]", text, re.M)
    outputs = len(fields.group(1).split(",")) if fields else 1
    widths = [dims] + hidden + [outputs]
    return sum((widths[i] + 1) * widths[i + 1] for i in range(len(widths) - 1))


def mpirun_base(ranks, cores, threads=1):
    """The mpirun command line for `ranks` ranks of `threads` threads on this machine."""
    cmd = ["mpirun", "-n", str(ranks)]
    if ranks * threads > cores:
        cmd += ["--oversubscribe", "--bind-to", "none"]
    else:
        cmd += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
    return cmd


def mpi_env(threads=1):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if os.geteuid() == 0:  # CI runs as root; Open MPI refuses it unless told
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def run_jetpde(args, ranks, interior, boundary, folder, cores, threads):
    """One training run; returns its summary.json (checked)."""
    shutil.rmtree(folder, ignore_errors=True)
    cmd = mpirun_base(ranks, cores, threads) + [
        args.jetpde, "run", args.config, "--output", folder, "--threads", str(threads),
        "--progress", "none", "--set", f"sampling.interior_points={interior}", "--set",
        f"conditions.0.points={boundary}", "--set", f"training.stages.0.steps={args.steps}"]
    p = subprocess.run(cmd, env=mpi_env(threads), cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{p.stdout}{p.stderr}")
    with open(os.path.join(folder, "summary.json")) as f:
        s = json.load(f)
    if s.get("ranks", 1) != ranks or (ranks > 1 and "communication" not in s["seconds"]):
        fail(f"{folder}/summary.json says ranks {s.get('ranks')} for mpirun -n {ranks}: this "
             "jetpde does not train across MPI ranks (it needs `ranks` and "
             "`seconds.communication` in summary.json)")
    if s["steps"] != args.steps:
        fail(f"{folder}: {s['steps']} steps, not {args.steps} ({s['status']}: {s['message']})")
    return s


def run_alone(args, copies, interior, boundary, folder, cores):
    """`copies` independent 1-rank runs (no MPI) started together, each on a core of its own where
    there are enough: what the ranks' shared caches and memory bandwidth cost without any
    communication. Returns the slowest one's summary.json."""
    procs = []
    for c in range(copies):
        out = f"{folder}-{c}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [args.jetpde, "run", args.config, "--output", out, "--threads", "1", "--progress",
               "none", "--set", f"sampling.interior_points={interior}", "--set",
               f"conditions.0.points={boundary}", "--set", f"training.stages.0.steps={args.steps}"]
        pin = (lambda core=c % cores: os.sched_setaffinity(0, {core})) if copies <= cores else None
        procs.append((out, cmd, subprocess.Popen(cmd, env=mpi_env(1), cwd=ROOT, preexec_fn=pin,
                                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 text=True)))
    slowest = None
    for out, cmd, p in procs:
        log = p.communicate()[0]
        if p.returncode != 0:
            fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{log}")
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        if slowest is None or s["seconds"]["train"] > slowest["seconds"]["train"]:
            slowest = s
    return slowest


def cpu_times():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[3] + fields[4], sum(fields[:8])  # idle + iowait, all but guest time


def wait_quiet(seconds):
    """Waits (up to `seconds`) until the machine's CPUs were at least 90% idle for one second:
    on a machine shared with others' builds, a run whose ranks wait for each other measures the
    other processes more than itself. True when it was quiet, False at the time limit."""
    deadline = time.monotonic() + seconds
    while True:
        idle0, total0 = cpu_times()
        time.sleep(1.0)
        idle1, total1 = cpu_times()
        if total1 > total0 and (idle1 - idle0) / (total1 - total0) >= 0.9:
            return True
        if time.monotonic() >= deadline:
            return False


def measure_all(args, plan, cores):
    """Runs every case of `plan` ({key: (label, ranks, interior, boundary, threads)}) --repeats
    times, in rounds (each round runs every case once, in a rotated order, so that a change of
    the machine's load falls on all cases alike). Per case the fastest run is kept: competing
    processes only ever slow a run down, and with ranks that wait for each other one preempted
    rank slows them all."""
    runs = {key: [] for key in plan}
    keys = list(plan)
    for r in range(args.repeats):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            label, ranks, interior, boundary, threads = plan[key]
            folder = os.path.join(args.out, "runs", f"{label}-{ranks}-{r}")
            quiet = wait_quiet(args.wait_quiet) if args.wait_quiet > 0 else None
            if label == "alone":
                s = run_alone(args, ranks, interior, boundary, folder, cores)
            else:
                s = run_jetpde(args, ranks, interior, boundary, folder, cores, threads)
            train = s["seconds"]["train"]
            runs[key].append((train / s["steps"], s["seconds"].get("communication", 0.0) / train
                              if train > 0 else 0.0, quiet))
    out = {}
    for key, (label, ranks, interior, boundary, threads) in plan.items():
        best = min(runs[key], key=lambda run: run[0])
        out[key] = {"ranks": ranks, "threads": threads, "points": interior + boundary,
                    "interior": interior, "boundary": boundary,
                    "oversubscribed": ranks * threads > cores, "seconds_per_step": best[0],
                    "communication_fraction": best[1],
                    "communication_seconds_per_step": best[0] * best[1],
                    "runs": [t for t, _, _ in runs[key]],
                    "communication_fractions": [c for _, c, _ in runs[key]],
                    "quiet": [q for _, _, q in runs[key]]}
    return out


def pingpong(args, ranks, cores, counts):
    """jetpde_mpi_pingpong's JSON at `ranks` ranks (ping-pong when >= 2, the allreduces)."""
    cmd = mpirun_base(ranks, cores) + [args.pingpong, "--seconds", "0.05"]
    for c in counts:
        cmd += ["--allreduce", str(c)]
    p = subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{p.stdout}{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fit_alpha_beta(points):
    """alpha + bytes / beta fitted to the ping-pong times, each weighted by 1 / t (relative
    errors: the small messages decide alpha, the large ones beta)."""
    # Weighted least squares for t = alpha + g b, rows scaled by 1 / t.
    s_aa = s_ag = s_gg = s_at = s_gt = 0.0
    for p in points:
        w = 1.0 / p["seconds"]
        a, g, t = w, w * p["bytes"], w * p["seconds"]
        s_aa += a * a
        s_ag += a * g
        s_gg += g * g
        s_at += a * t
        s_gt += g * t
    det = s_aa * s_gg - s_ag * s_ag
    alpha = (s_at * s_gg - s_ag * s_gt) / det
    g = (s_aa * s_gt - s_ag * s_at) / det
    return max(alpha, 0.0), (1.0 / g if g > 0 else float("inf"))


def fit_compute(samples):
    """Seconds per step at 1 rank as a + b * points: least squares in relative terms (each run
    weighted by 1 / t), so that the small runs, which show the fixed part a, count as much as
    the large ones."""
    s_aa = s_ab = s_bb = s_at = s_bt = 0.0
    for s in samples:
        w = 1.0 / s["seconds_per_step"]
        x, t = w * s["points"], w * s["seconds_per_step"]
        s_aa += w * w
        s_ab += w * x
        s_bb += x * x
        s_at += w * t
        s_bt += x * t
    det = s_aa * s_bb - s_ab * s_ab
    if len(samples) < 2 or det <= 0:
        s = samples[0]
        return 0.0, s["seconds_per_step"] / s["points"]
    a = (s_at * s_bb - s_ab * s_bt) / det
    b = (s_aa * s_bt - s_ab * s_at) / det
    if a < 0:  # no fixed part measurable: proportional
        a, b = 0.0, sum(s["seconds_per_step"] for s in samples) / sum(s["points"] for s in samples)
    return a, b


def allreduce_time(n_ranks, n_bytes, alpha, beta):
    if n_ranks <= 1:
        return 0.0
    return 2 * math.ceil(math.log2(n_ranks)) * alpha + 2 * (n_ranks - 1) / n_ranks * n_bytes / beta


def vote_time(n_ranks, alpha):
    return math.ceil(math.log2(n_ranks)) * alpha if n_ranks > 1 else 0.0


def data_parallel_comm(n_ranks, n_bytes, alpha, beta):
    return allreduce_time(n_ranks, n_bytes, alpha, beta) + vote_time(n_ranks, alpha)


def decomposed_built_comm(n_ranks, p_sub, slots, alpha, beta):
    """As built: the allreduce carries every subdomain's parameters (one network per rank)."""
    return data_parallel_comm(n_ranks, 8 * (1 + slots + n_ranks * p_sub), alpha, beta)


def decomposed_halo_comm(n_ranks, args, p_sub, slots, alpha, beta):
    """The neighbour exchange as built: each gradient block among the ranks that hold it."""
    if n_ranks <= 1:
        return 0.0
    holders = min(3 ** args.dimensions, n_ranks)
    if holders == n_ranks:  # every block is everyone's: the allreduce of all, as built
        return decomposed_built_comm(n_ranks, p_sub, slots, alpha, beta)
    peers = min(5 ** args.dimensions - 1, n_ranks - 1)
    halo = peers * alpha + 8 * holders * (holders - 1) * p_sub / beta
    return halo + allreduce_time(n_ranks, 8 * (2 + slots), alpha, beta) + vote_time(n_ranks, alpha)


def project(args, a, b, p_strong, p_weak, params, slots, alpha, beta):
    rows = []
    n_bytes = 8 * (1 + slots + params)
    t1s, t1w = a + b * p_strong, a + b * p_weak
    for n in args.project:
        comm = data_parallel_comm(n, n_bytes, alpha, beta)
        ts = a + b * p_strong / n + comm
        tw = t1w + comm
        tdb = t1w + decomposed_built_comm(n, params, slots, alpha, beta)
        tdh = t1w + decomposed_halo_comm(n, args, params, slots, alpha, beta)
        rows.append({"ranks": n, "strong_points": p_strong, "strong_seconds_per_step": ts,
                     "strong_efficiency": t1s / (n * ts),
                     "strong_communication_fraction": comm / ts,
                     "weak_points_per_rank": p_weak, "weak_seconds_per_step": tw,
                     "weak_efficiency": t1w / tw, "weak_communication_fraction": comm / tw,
                     "decomposed_built_weak_efficiency": t1w / tdb,
                     "decomposed_exchange_weak_efficiency": t1w / tdh})
    return rows


def fmt_s(x):
    return f"{x * 1e3:.3f} ms" if x >= 1e-4 else f"{x * 1e6:.2f} us"


MARKDOWN = False  # --markdown: the tables as bench/README.md has them


def table(header, rows):
    if MARKDOWN:
        print("| " + " | ".join(str(h) for h in header) + " |")
        print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for r in rows:
            print("| " + " | ".join(str(c) for c in r) + " |")
        return
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))
    print(line(header))
    for r in rows:
        print(line(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.environ.get("BUILD_DIR", "build"))
    ap.add_argument("--jetpde", help="the jetpde binary (default BUILD_DIR/apps/jetpde)")
    ap.add_argument("--pingpong", help="default BUILD_DIR/bench/scaling/jetpde_mpi_pingpong")
    ap.add_argument("--config", default="bench/scaling/poisson2d.yaml")
    ap.add_argument("--out", help="results and run folders (default BUILD_DIR/bench/scaling)")
    ap.add_argument("--ranks", default="1,2,4", help="rank counts (default 1,2,4)")
    ap.add_argument("--interior", type=int, default=4096, help="interior points (strong: total; "
                    "weak: per rank)")
    ap.add_argument("--boundary", type=int, default=512, help="boundary points, the same way")
    ap.add_argument("--steps", type=int, default=400, help="Adam steps per run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per case (the fastest counts)")
    ap.add_argument("--wait-quiet", type=float, default=10,
                    help="before each run wait up to this many seconds for the CPUs to be 90%% "
                    "idle (0: do not wait)")
    ap.add_argument("--latency", type=float, default=1.5e-6, help="network latency alpha, s")
    ap.add_argument("--bandwidth", type=float, default=12.5e9, help="network bandwidth beta, B/s")
    ap.add_argument("--project", default="64,512", help="rank counts to project to")
    ap.add_argument("--project-points", type=int,
                    help="points of the projection (strong: in all, weak: per rank; default: the "
                    "measured runs')")
    ap.add_argument("--parameters", type=int, help="parameter count (default: from the config)")
    ap.add_argument("--dimensions", type=int, default=2,
                    help="decomposed model: the subdomain grid's dimensions (one subdomain a rank)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--model-only", action="store_true",
                    help="no runs: the projection from OUT/scaling.json's measured figures")
    args = ap.parse_args()
    global MARKDOWN
    MARKDOWN = args.markdown
    os.chdir(ROOT)
    args.jetpde = args.jetpde or os.path.join(args.build_dir, "apps", "jetpde")
    args.pingpong = args.pingpong or os.path.join(args.build_dir, "bench", "scaling",
                                                  "jetpde_mpi_pingpong")
    args.out = args.out or os.path.join(args.build_dir, "bench", "scaling")
    args.jetpde, args.pingpong, args.out = (os.path.abspath(p) for p in
                                            (args.jetpde, args.pingpong, args.out))
    try:
        ranks = sorted({int(r) for r in args.ranks.split(",")})
        args.project = [int(r) for r in args.project.split(",")]
    except ValueError:
        fail(f"--ranks '{args.ranks}' / --project '{args.project}': comma-separated integers")
    if ranks[0] != 1 or any(r < 1 for r in args.project):
        fail("--ranks must include 1 (the baseline) and every rank count must be >= 1")
    for name, v in (("--interior", args.interior), ("--boundary", args.boundary),
                    ("--steps", args.steps), ("--repeats", args.repeats)):
        if v < 1:
            fail(f"{name} {v}: must be at least 1")
    if not (args.latency >= 0 and args.bandwidth > 0):
        fail("--latency must be >= 0 and --bandwidth > 0")
    params = args.parameters or mlp_parameters(args.config)
    cores = usable_cores()
    result_path = os.path.join(args.out, "scaling.json")

    if args.model_only:
        if not os.path.exists(result_path):
            fail(f"--model-only: no {result_path} (run without it first)")
        with open(result_path) as f:
            res = json.load(f)
        params = args.parameters or res["parameters"]
    else:
        for tool in ("mpirun", args.jetpde, args.pingpong):
            if not shutil.which(tool):
                fail(f"{tool} not found (build the jetpde and jetpde_mpi_pingpong targets; MPI "
                     "must be installed)")
        os.makedirs(args.out, exist_ok=True)
        # A compile cache of this run's own (JETPDE_CACHE_DIR where set), emptied first: each
        # program compiled and its tiles measured in its first run (the fastest run counts), not
        # taken from what earlier runs on this machine cached (bench/README.md, "Tiles measured
        # under load").
        if "JETPDE_CACHE_DIR" not in os.environ:
            cache = os.path.join(args.out, "compile-cache")
            shutil.rmtree(cache, ignore_errors=True)
            os.environ["JETPDE_CACHE_DIR"] = cache
        cpu = cpu_model()
        mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True,
                             env=mpi_env()).stdout.splitlines()[0]
        version = subprocess.run([args.jetpde, "--version"], capture_output=True,
                                 text=True).stdout.strip()
        print(f"scaling: {args.config}, {args.steps} Adam steps, fastest of {args.repeats}; "
              f"{cpu}, {cores} cores; {mpi}; {version}; one thread per rank")
        res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "cpu": cpu, "cores": cores, "mpi": mpi, "jetpde": version, "config": args.config,
               "steps": args.steps, "repeats": args.repeats, "parameters": params}
        b, i = args.boundary, args.interior
        plan = {("strong", n): ("strong", n, i, b, 1) for n in ranks}
        plan.update({("weak", n): ("weak", n, n * i, n * b, 1) for n in ranks[1:]})
        # The 1-rank compute line: the strong runs' per-rank point counts, and those of 16 and 64
        # ranks (the fixed part of a step shows at few points), at one rank.
        shares = sorted(set(ranks[1:]) | {16, 64})
        plan.update({("compute", n): (f"compute{n}", 1, i // n, max(b // n, 1), 1)
                     for n in shares})
        # Weak scaling's processes without MPI: N independent 1-rank runs at once.
        plan.update({("alone", n): ("alone", n, i, b, 1) for n in ranks[1:]})
        # The same cores as threads of one rank instead of ranks: which way to use a node's cores.
        if cores > 1:
            plan[("threads", cores)] = ("threads", 1, i, b, cores)
        load = [os.getloadavg()[0]]
        m = measure_all(args, plan, cores)
        load.append(os.getloadavg()[0])
        res["end"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        res["wait_quiet"] = args.wait_quiet
        strong = [m[("strong", n)] for n in ranks]
        weak = [strong[0]] + [m[("weak", n)] for n in ranks[1:]]
        fit = [strong[0]] + [m[("compute", n)] for n in shares]
        threads = [m[("threads", cores)]] if cores > 1 else []
        alone = [m[("alone", n)] for n in ranks[1:]]
        with open(os.path.join(args.out, "runs", "strong-1-0", "summary.json")) as f:
            slots = len(json.load(f)["losses"])
        res.update(strong=strong, weak=weak, compute=fit, threads=threads, alone=alone, slots=slots,
                   load_average=load)
        # The transport here: ping-pong at 2 ranks, the step's allreduces at every rank count.
        n_doubles = 1 + slots + params
        res["transport"] = {str(n): pingpong(args, n, cores, [n_doubles, 1])
                            for n in ranks if n > 1}

    slots = res["slots"]
    n_bytes = 8 * (1 + slots + params)
    a, b = fit_compute(res["compute"])
    strong, weak = res["strong"], res["weak"]
    t1 = strong[0]["seconds_per_step"]

    cases = strong + weak[1:] + res["compute"][1:] + res.get("threads", [])
    cases += res.get("alone", [])
    flags = [q for c in cases for q in c.get("quiet", [])]
    quiet = (f"; {sum(1 for q in flags if q)} of {len(flags)} runs started on idle CPUs"
             if any(q is not None for q in flags) else "")
    print(f"\nMeasured ({res['date']} to {res.get('end', '?')}, {res['cpu']}, {res['cores']} "
          f"cores, {res['mpi']}; fastest of {res['repeats']} runs{quiet}; load average "
          f"{res['load_average'][0]:.1f} before, {res['load_average'][1]:.1f} after):")
    rows = []
    for kind, runs in (("strong", strong), ("weak", weak)):
        for r in runs:
            n, t = r["ranks"], r["seconds_per_step"]
            speedup = t1 / t if kind == "strong" else n * t1 / t
            label = f"{n}" + (" (oversubscribed)" if r["oversubscribed"] else "")
            rows.append([kind, label, r["points"], r["points"] // n, fmt_s(t), f"{speedup:.2f}",
                         f"{speedup / n:.2f}", f"{100 * r['communication_fraction']:.1f}%"])
    for r in res.get("alone", []):
        n = r["ranks"]
        label = f"{n} x 1 rank" + (" (oversubscribed)" if r["oversubscribed"] else "")
        rows.append(["alone", label,
                     r["points"] * n, r["points"], fmt_s(r["seconds_per_step"]),
                     f"{n * t1 / r['seconds_per_step']:.2f}",
                     f"{t1 / r['seconds_per_step']:.2f}", "-"])
    for r in res.get("threads", []):
        speedup = t1 / r["seconds_per_step"]
        rows.append(["threads", f"1 x {r['threads']} threads", r["points"], r["points"],
                     fmt_s(r["seconds_per_step"]), f"{speedup:.2f}",
                     f"{speedup / r['threads']:.2f}", "-"])
    table(["scaling", "ranks", "points", "per rank", "s/step", "speed-up", "efficiency",
           "comm"], rows)
    print(f"\nCompute at 1 rank: {fmt_s(a)} + {b * 1e9:.1f} ns x points per step "
          f"(fitted on {', '.join(str(c['points']) for c in res['compute'])} points)")
    print(f"Gradient allreduce: 8 x (1 loss + {slots} slots + {params} parameters) = {n_bytes} "
          "bytes per rank per step, plus the 8-byte stop vote")

    if "transport" in res and "2" in res["transport"]:
        pp = res["transport"]["2"]["pingpong"]
        alpha, beta = fit_alpha_beta(pp)
        res["transport_fit"] = {"latency_s": alpha, "bandwidth_Bps": beta}
        print(f"\nShared-memory transport (jetpde_mpi_pingpong, 2 ranks): t(8 B) = "
              f"{fmt_s(pp[0]['seconds'])}; fit alpha = {fmt_s(alpha)}, "
              f"beta = {beta / 1e9:.2f} GB/s")
        rows = []
        for r in strong + weak[1:]:
            n = r["ranks"]
            if n == 1:
                continue
            direct = sum(x["seconds"] for x in res["transport"][str(n)]["allreduce"])
            model = data_parallel_comm(n, n_bytes, alpha, beta)
            t = r["seconds_per_step"]
            rows.append([f"{n}" + (" (oversubscribed)" if r["oversubscribed"] else ""),
                         r["points"], fmt_s(r["communication_seconds_per_step"]),
                         f"{100 * r['communication_fraction']:.1f}%", fmt_s(direct),
                         fmt_s(model), f"{100 * model / t:.1f}%"])
        print("Model against the measured communication per step:")
        table(["ranks", "points", "measured", "measured %", "allreduces timed", "model",
               "model %"], rows)

    p_strong = args.project_points or strong[0]["points"]
    p_weak = args.project_points or strong[0]["points"]
    proj = project(args, a, b, p_strong, p_weak, params, slots, args.latency, args.bandwidth)
    res["model"] = {"latency_s": args.latency, "bandwidth_Bps": args.bandwidth,
                    "bytes_per_step": n_bytes, "compute_fixed_s": a, "compute_per_point_s": b,
                    "decomposed_dimensions": args.dimensions, "projection": proj}
    print(f"\nProjection (alpha {fmt_s(args.latency)}, beta {args.bandwidth / 1e9:g} GB/s; "
          f"strong: {p_strong} points in all, weak: {p_weak} per rank; decomposed: a network of "
          f"{params} parameters per rank on a {args.dimensions}-D grid of subdomains):")
    table(["ranks", "strong s/step", "strong eff.", "strong comm", "weak s/step", "weak eff.",
           "weak comm", "decomposed (allreduce) weak eff.", "decomposed (neighbours) weak eff."],
          [[r["ranks"], fmt_s(r["strong_seconds_per_step"]), f"{r['strong_efficiency']:.2f}",
            f"{100 * r['strong_communication_fraction']:.1f}%", fmt_s(r["weak_seconds_per_step"]),
            f"{r['weak_efficiency']:.2f}", f"{100 * r['weak_communication_fraction']:.1f}%",
            f"{r['decomposed_built_weak_efficiency']:.2f}",
            f"{r['decomposed_exchange_weak_efficiency']:.2f}"] for r in proj])

    os.makedirs(args.out, exist_ok=True)
    with open(result_path, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print(f"\nscaling: wrote {result_path}")


if __name__ == "__main__":
    main()
