"""Shared fixtures: a tiny Burgers run (trained once per session), the jetpde command of the
same build folder (for the eval comparisons), the repository's paths."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import jetpde

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# A few steps of each stage, few points, a small network: seconds, not minutes.
TINY = {
    "training.stages.0.steps": 20,
    "training.stages.1.steps": 5,
    "sampling.interior_points": 256,
    "sampling.resample_every": 0,
    "network.hidden": [8, 8],
    "output.grid": [21],
    "output.time_steps": 3,
    "output.progress": "none",
    "reference.every": 10,
}
TINY_STEPS = 25


def cli_path():
    """build/apps/jetpde next to the build/python this jetpde was imported from (or
    $JETPDE_CLI); None when there is none (an installed package)."""
    if os.environ.get("JETPDE_CLI"):
        return os.environ["JETPDE_CLI"]
    # Not resolved: in a build folder the .py files are links into the sources.
    build = pathlib.Path(os.path.abspath(jetpde.__file__)).parents[2]
    exe = build / "apps" / "jetpde"
    return str(exe) if exe.exists() else shutil.which("jetpde")


@pytest.fixture(scope="session")
def cli():
    exe = cli_path()
    if exe is None:
        pytest.skip("no jetpde command next to this jetpde package (set JETPDE_CLI)")
    return exe


@pytest.fixture(scope="session")
def burgers_run(tmp_path_factory):
    """(Solution, run folder) of examples/burgers.yaml cut down to TINY."""
    out = tmp_path_factory.mktemp("burgers") / "run"
    cfg = jetpde.load_config(EXAMPLES / "burgers.yaml", overrides=TINY)
    sol = jetpde.solve(cfg, output_dir=out)
    return sol, out


@pytest.fixture
def tiny_problem():
    """Burgers written in Python, soft conditions (three loss terms), tiny."""
    return jetpde.Problem(
        name="tiny",
        domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
        equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.01 / np.pi},
        conditions=[jetpde.InitialValue("-sin(pi*x)"), jetpde.Dirichlet("0", on="spatial")],
        network=jetpde.Network(hidden=[8, 8]), sampling={"interior_points": 128},
        output={"progress": "none", "grid": [11], "time_steps": 2})
