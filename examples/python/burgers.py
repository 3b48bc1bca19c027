"""Burgers' equation in Python, no YAML: u_t + u u_x = nu u_xx on [-1, 1] x [0, 1],
u(x, 0) = -sin(pi x), u(+-1, t) = 0, measured against the exact solution (Cole-Hopf). The
conditions are loss terms here (examples/burgers.yaml builds them into the network and trains a
larger one for longer: 8e-4). Expect a relative L2 error of about 4e-2 (measured: 3.6e-2, most of
it at the shock) in about 6 s on one core.

    PYTHONPATH=build/python python examples/python/burgers.py [--steps N]
"""
import argparse

import numpy as np

import jetpde

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=0, help="cap every stage at N steps (0: none)")
parser.add_argument("--output", default="runs/burgers_python", help="the run folder")
args = parser.parse_args()

problem = jetpde.Problem(
    name="burgers_python",
    domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
    equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.01 / np.pi},
    conditions=[jetpde.InitialValue("-sin(pi*x)"), jetpde.Dirichlet("0", on="spatial")],
    network=jetpde.Network(hidden=[20] * 4), reference={"exact": "burgers_sine"})
sol = jetpde.solve(problem, stages=[jetpde.Adam(steps=2000), jetpde.LBFGS(steps=2000)], seed=0,
                   max_steps=args.steps, output_dir=args.output)
x = np.linspace(-1, 1, 5)
print(sol.evaluate(np.column_stack([x, np.full_like(x, 0.5)]), ["u", "u_x"]))
print("relative L2 error %.3g after %d steps (%s)" % (sol.metrics["rel_l2"], sol.step, sol.dir))
