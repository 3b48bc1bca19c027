"""examples/python/*.py at a few steps each (what `make test` checks of them)."""

import os
import subprocess
import sys

import pytest
from conftest import REPO

import jetpde


def _run(name, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # The package this test imported, for the example's own process.
    package = os.path.dirname(os.path.dirname(os.path.abspath(jetpde.__file__)))
    env["PYTHONPATH"] = package + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(REPO / "examples" / "python" / name), "--steps",
                          "3", "--output", str(tmp_path / "out")], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_burgers_example(tmp_path):
    text = _run("burgers.py", tmp_path)
    assert "relative L2 error" in text and "after 6 steps" in text
    assert (tmp_path / "out" / "summary.json").exists()


def test_inverse_example(tmp_path):
    text = _run("inverse.py", tmp_path)
    assert text.startswith("k = ") and "(true 0.10000" in text
    assert (tmp_path / "out" / "measurements.csv").exists()


def test_sweep_example(tmp_path):
    text = _run("sweep.py", tmp_path)
    assert text.count("relative L2 error") == 4
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in text
    else:
        assert (tmp_path / "out" / "sweep.png").exists()


def test_mpi_example(tmp_path):
    # One rank (MPI initialized by the script's process alone); test_mpi.py runs two.
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (scripts/bootstrap.sh)")
    if not jetpde._jetpde.mpi_built():
        pytest.skip("this jetpde was built without MPI")
    text = _run("mpi_solve.py", tmp_path)
    assert "ranks: 1, the same parameters on all" in text and "after 6 steps" in text
    assert (tmp_path / "out" / "summary.json").exists()
