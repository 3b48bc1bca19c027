"""Data-parallel training from Python: Burgers' equation (the problem of burgers.py) on the ranks
of MPI.COMM_WORLD, through mpi4py.

    PYTHONPATH=build/python mpirun -n 2 python examples/python/mpi_solve.py [--steps N]
    PYTHONPATH=build/python mpirun -n 2 python -m mpi4py examples/python/mpi_solve.py

(`python -m mpi4py` ends every rank when one raises; without it the others would wait.)

Every rank runs this script and calls jetpde.solve() with the same problem and comm. Point counts
are totals: each rank trains on its share of the 4096 interior points (drawn with a seed of its
own: `parallel.points: local`), the ranks average losses and gradients after every evaluation, so
they take the same steps and each returns a Solution with the same parameters. Rank 0 writes the
run folder and prints progress; here it prints the result too. Run without mpirun, it is one rank.
Expect a relative L2 error of about 1e-2 (measured: 7.0e-3 on 2 ranks, 5.2e-3 on one: the points
differ) in half a minute on 2 cores.
"""
import argparse
import hashlib

import numpy as np

import jetpde

try:
    from mpi4py import MPI
except ImportError:
    raise SystemExit("mpi_solve.py needs mpi4py (scripts/bootstrap.sh installs it)")

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=0, help="cap every stage at N steps (0: none)")
parser.add_argument("--output", default="runs/burgers_mpi", help="the run folder (rank 0's)")
args = parser.parse_args()

world = MPI.COMM_WORLD
problem = jetpde.Problem(
    name="burgers_mpi",
    domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
    equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.01 / np.pi},
    conditions=[jetpde.InitialValue("-sin(pi*x)"), jetpde.Dirichlet("0", on="spatial")],
    network=jetpde.Network(hidden=[20] * 4), reference={"exact": "burgers_sine"},
    sampling={"interior_points": 4096}, parallel={"points": "local"})
sol = jetpde.solve(problem, stages=[jetpde.Adam(steps=2000), jetpde.LBFGS(steps=2000)], seed=0,
                   max_steps=args.steps, output_dir=args.output, comm=world)

# Every rank holds the trained network: each can evaluate it (here: check they agree).
digests = world.allgather(hashlib.sha256(sol.theta.tobytes()).hexdigest())
u = sol.evaluate(np.array([[0.5, 0.5]]), "u")[0, 0]
if world.Get_rank() == 0:
    print("ranks: %d, %s parameters on all; u(0.5, 0.5) = %.6f" % (
        world.Get_size(), "the same" if len(set(digests)) == 1 else "DIFFERENT", u))
    print("relative L2 error %.3g after %d steps (%s)" % (sol.metrics["rel_l2"], sol.step,
                                                         sol.dir))
