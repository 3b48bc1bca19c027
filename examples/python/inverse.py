"""An inverse problem: the diffusivity k of the heat equation u_t = k u_xx from noisy
measurements. The data are made here from the exact solution u = exp(-k pi^2 t) sin(pi x)
(k = 0.1) with 1% noise and written to a CSV file; k starts at 0.3 and is trained with the
network. No initial or boundary condition is given: the data pin the solution down. Expect k
within 0.1% (measured: 0.10001) and u within 1e-3 of the exact solution (measured: 5.4e-4) in a
few seconds on one core.

    PYTHONPATH=build/python python examples/python/inverse.py [--steps N]
"""
import argparse
import os

import numpy as np

import jetpde

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=0, help="cap every stage at N steps (0: none)")
parser.add_argument("--output", default="runs/heat_inverse_python", help="the run folder")
args = parser.parse_args()

K_TRUE = 0.1
rng = np.random.default_rng(3)
x, t = rng.uniform(0, 1, 1000), rng.uniform(0, 1, 1000)
u = np.exp(-K_TRUE * np.pi**2 * t) * np.sin(np.pi * x)
u += 0.01 * u.std() * rng.standard_normal(u.shape)
os.makedirs(args.output, exist_ok=True)
data = os.path.abspath(os.path.join(args.output, "measurements.csv"))
np.savetxt(data, np.column_stack([x, t, u]), delimiter=",", header="x,t,u", comments="")

problem = jetpde.Problem(
    name="heat_inverse_python",
    domain=jetpde.geometry.Interval(0, 1).times_time(0, 1),
    equations=["u_t - k*u_xx"], parameters={"k": 0.3},
    conditions=[jetpde.Data(data, field="u")],
    network=jetpde.Network(hidden=[20] * 3), sampling={"interior_points": 2000},
    reference={"expressions": {"u": "exp(-%r*pi^2*t)*sin(pi*x)" % K_TRUE}})
sol = jetpde.solve(problem, stages=[jetpde.Adam(steps=3000), jetpde.LBFGS(steps=3000)], seed=0,
                   max_steps=args.steps, output_dir=args.output)
k = sol.parameters["k"]
print("k = %.5f (true %.5f, %.2f%% off); u within %.3g (relative L2) after %d steps"
      % (k, K_TRUE, 100 * abs(k - K_TRUE) / K_TRUE, sol.metrics["rel_l2"], sol.step))
