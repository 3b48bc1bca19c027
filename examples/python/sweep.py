"""A parameter sweep: Burgers' equation at several viscosities, each trained the same way, the
error against the exact solution per viscosity printed and, when matplotlib is installed,
plotted to sweep.png in the output folder. The error falls as the shock widens: measured 2.5e-2,
2.3e-3, 6.5e-4 and 2.9e-4 for nu = 0.01/pi ... 0.1/pi, in about 10 s on one core.

    PYTHONPATH=build/python python examples/python/sweep.py [--steps N]
"""
import argparse
import os

import numpy as np

import jetpde

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=0, help="cap every stage at N steps (0: none)")
parser.add_argument("--output", default="runs/burgers_sweep", help="folder of the runs")
args = parser.parse_args()

viscosities = [0.01 / np.pi, 0.02 / np.pi, 0.05 / np.pi, 0.1 / np.pi]
errors = []
for i, nu in enumerate(viscosities):
    problem = jetpde.Problem(
        name="burgers_nu%d" % i,
        domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
        equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": nu},
        hard_constraints=[jetpde.HardConstraint("-sin(pi*x)", on="initial, spatial")],
        network=jetpde.Network(hidden=[20] * 4), sampling={"interior_points": 2000},
        reference={"exact": "burgers_sine"}, output={"progress": "none"})
    sol = jetpde.solve(problem, stages=[jetpde.Adam(steps=1000), jetpde.LBFGS(steps=1000)],
                       seed=0, max_steps=args.steps,
                       output_dir=os.path.join(args.output, problem.to_dict()["name"]))
    errors.append(sol.metrics["rel_l2"])
    print("nu = %.5f: relative L2 error %.3g after %d steps" % (nu, errors[-1], sol.step))

try:
    import matplotlib
except ImportError:
    print("matplotlib is not installed: no plot")
else:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.loglog(viscosities, errors, "o-")
    ax.set_xlabel("viscosity nu")
    ax.set_ylabel("relative L2 error")
    ax.set_title("Burgers: PINN error against the exact solution")
    fig.tight_layout()
    path = os.path.join(args.output, "sweep.png")
    fig.savefig(path, dpi=120)
    print("wrote", path)
