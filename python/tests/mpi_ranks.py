"""The script test_mpi.py runs under `mpirun -n 2` (and imports, for the one-rank run it compares
with): a tiny Burgers problem trained for STEPS steps on the ranks of MPI.COMM_WORLD.

    mpirun -n 2 python -m mpi4py python/tests/mpi_ranks.py OUT_DIR

Each rank checks that every rank holds bit-identical parameters (an allgather of their hash) and
writes what it got to OUT_DIR/rank<R>.json for the test to compare; the run folder is OUT_DIR/run
(OUT_DIR/parts: the same run stopped halfway by rank 1's callback, then resumed).
`parallel.points: global` gives each rank its share of the one-rank run's points, so the losses
are that run's (to rounding); fp64 keeps the rounding far below the test's tolerance.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import jetpde

STEPS = 20
# Where both ranks evaluate their Solution (x, t).
POINTS = np.array([[x, t] for x in np.linspace(-1, 1, 5) for t in (0.0, 0.5, 1.0)])


def problem():
    return jetpde.Problem(
        name="ranks",
        domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
        equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.01 / np.pi},
        conditions=[jetpde.InitialValue("-sin(pi*x)"), jetpde.Dirichlet("0", on="spatial")],
        network=jetpde.Network(hidden=[8, 8]), sampling={"interior_points": 128},
        parallel={"points": "global"}, precision="fp64",
        reference={"exact": "burgers_sine", "points": 512, "every": 10},
        output={"progress": "none", "grid": [11], "time_steps": 2})


def solve(out, comm=None, callback=None):
    return jetpde.solve(problem(), stages=[jetpde.Adam(steps=STEPS)], seed=0,
                        output_dir=out, comm=comm, callback=callback)


def record(sol):
    """What the test compares: the losses of every step, the parameters, values at POINTS."""
    return {"loss": [float(v) for v in sol.history["loss"]], "theta": sol.theta.tolist(),
            "u": sol.evaluate(POINTS).tolist(), "status": sol.status, "step": sol.step,
            "dir": sol.dir, "loss_terms": sol.loss_terms, "metrics": sol.metrics,
            "history_rel_l2": [float(v) for v in sol.history["rel_l2"] if v == v]}


def main():
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    out = pathlib.Path(sys.argv[1])
    result = {"rank": world.Get_rank(), "size": world.Get_size(), "errors": {}}

    # Communicators solve() refuses, on every rank alike (so no rank is left waiting).
    try:
        jetpde.solve(problem(), comm=MPI.COMM_NULL)
    except jetpde.Error as e:
        result["errors"]["null"] = str(e)
    local = world.Split(world.Get_rank() % 2)
    # Group g's leader is world rank g: the remote leader is the other group's.
    inter = local.Create_intercomm(0, world, 1 - world.Get_rank() % 2)
    try:
        jetpde.solve(problem(), comm=inter)
    except jetpde.Error as e:
        result["errors"]["inter"] = str(e)
    inter.Free()
    local.Free()

    seen = []
    sol = solve(out / "run", comm=world, callback=lambda info: seen.append(sorted(info.losses)))
    digest = hashlib.sha256(sol.theta.tobytes()).hexdigest()
    digests = world.allgather(digest)
    assert digests == [digest] * world.Get_size(), "ranks differ: %s" % digests
    result.update(record(sol), digests=digests, callback_losses=seen[-1] if seen else [],
                  callbacks=len(seen))

    # Stopped halfway by one rank's callback (every rank stops), then resumed on both: the
    # parameters of the uninterrupted run, bit for bit.
    stop = (lambda info: info.step < STEPS // 2) if world.Get_rank() == 1 else None
    part = solve(out / "parts", comm=world, callback=stop)
    rest = jetpde.solve(problem(), stages=[jetpde.Adam(steps=STEPS)], seed=0,
                        output_dir=out / "parts", comm=world, resume=True)
    result["parts"] = [part.status, part.step, rest.status, rest.step,
                       rest.theta.tolist() == sol.theta.tolist()]
    with open(out / ("rank%d.json" % world.Get_rank()), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
