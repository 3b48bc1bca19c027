"""solve(..., comm=...): training on the ranks of an mpi4py communicator.

The runs with MPI are in child processes (mpirun, or one process that initializes MPI alone), so
that this process never initializes MPI; they need mpi4py and are skipped, saying so, without it.
"""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import jetpde
from jetpde import _jetpde

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(jetpde.__file__)))
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None

needs_mpi4py = pytest.mark.skipif(
    not HAVE_MPI4PY, reason="mpi4py is not installed (scripts/bootstrap.sh installs it)")
needs_mpi = pytest.mark.skipif(not _jetpde.mpi_built(), reason="this jetpde was built without MPI")


def _ranks_script():
    spec = importlib.util.spec_from_file_location("mpi_ranks", HERE / "mpi_ranks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _env():
    env = dict(os.environ, PYTHONPATH=PACKAGE, OMP_NUM_THREADS="1")
    if os.getuid() == 0:  # Open MPI's mpirun refuses root unless told twice
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _python(code, tmp_path):
    """Runs `code` in a new interpreter (MPI initialized there alone when it imports mpi4py)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_comm_must_be_a_communicator(tiny_problem):
    for wrong in (object(), "MPI.COMM_WORLD", 0):
        with pytest.raises(TypeError, match="comm: expected an mpi4py communicator.*not "):
            jetpde.solve(tiny_problem, comm=wrong)


@pytest.mark.skipif(_jetpde.mpi_built(), reason="this jetpde was built with MPI")
def test_comm_without_mpi_is_an_error(tiny_problem):
    class Handle:  # what solve() reads of a communicator: its Fortran handle
        def py2f(self):
            return 0

    with pytest.raises(jetpde.Error, match="comm: this jetpde was built without MPI"):
        jetpde.solve(tiny_problem, comm=Handle())


@needs_mpi
@needs_mpi4py
def test_mpi4py_uses_the_mpi_library_jetpde_links(tmp_path):
    # Two MPI libraries in one process do not work together: mpi4py must load jetpde's.
    mpi4py = _python("from mpi4py import MPI\n"
                     "print(MPI.Get_library_version().replace(chr(0), '').splitlines()[0])",
                     tmp_path).strip()
    assert mpi4py == _jetpde.mpi_library_version()
    assert mpi4py.startswith("Open MPI")
    if os.path.exists("/proc/self/maps"):
        # And it is the very file jetpde loaded, whichever is imported first (libmpi.so itself:
        # PETSc also loads Open MPI's C++ and Fortran binding libraries beside it).
        for first, second in (("jetpde", "mpi4py.MPI"), ("mpi4py.MPI", "jetpde")):
            files = _python("import importlib, json\n"
                            "importlib.import_module(%r); importlib.import_module(%r)\n"
                            "print(json.dumps(sorted({l.split()[-1] for l in"
                            " open('/proc/self/maps') if '/libmpi.so' in l})))" % (first, second),
                            tmp_path)
            assert len(json.loads(files)) == 1, files


@needs_mpi
@needs_mpi4py
def test_one_rank_communicator_is_the_serial_run(tmp_path):
    # COMM_SELF in a process that initialized MPI alone: MPI's collectives over one rank change
    # nothing, so the run is the serial one, bit for bit.
    code = ("import sys, json; sys.path.insert(0, %r)\n"
            "from mpi4py import MPI\n"
            "import mpi_ranks\n"
            "print(json.dumps(mpi_ranks.record(mpi_ranks.solve('self', comm=MPI.COMM_SELF))))"
            % str(HERE))
    one = json.loads(_python(code, tmp_path).splitlines()[-1])
    # The serial run on as many threads (_env: one): a tiled region's sums are added per thread.
    serial = json.loads(_python("import sys, json; sys.path.insert(0, %r)\n"
                                "import mpi_ranks\n"
                                "print(json.dumps(mpi_ranks.record(mpi_ranks.solve('serial'))))"
                                % str(HERE), tmp_path).splitlines()[-1])
    assert one["loss"] == serial["loss"] and one["theta"] == serial["theta"]
    assert one["u"] == serial["u"]


@needs_mpi
@needs_mpi4py
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun on PATH")
def test_two_ranks_train_as_one(tmp_path):
    # `python -m mpi4py`: an exception on one rank ends both (no rank left waiting).
    out = subprocess.run(["mpirun", "--oversubscribe", "-n", "2", sys.executable, "-m", "mpi4py",
                          str(HERE / "mpi_ranks.py"), str(tmp_path)],
                         capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    ranks = [json.loads((tmp_path / ("rank%d.json" % r)).read_text()) for r in range(2)]
    script = _ranks_script()
    serial = script.record(script.solve(tmp_path / "serial"))

    for r, got in enumerate(ranks):
        assert got["rank"] == r and got["size"] == 2
        # Every rank checked that all hold the same parameters; the hashes it saw agree.
        assert got["digests"] == ranks[0]["digests"] and len(got["digests"]) == 2
        assert got["status"] == "finished" and got["step"] == script.STEPS
        # Each rank trained on its half of the one-rank run's points: the same losses.
        assert len(got["loss"]) == script.STEPS
        np.testing.assert_allclose(got["loss"], serial["loss"], rtol=1e-6, atol=0)
        np.testing.assert_allclose(got["theta"], serial["theta"], rtol=1e-6, atol=1e-9)
        # Validation (split over the ranks): the one-rank run's errors, at steps 10 and 20.
        assert len(got["history_rel_l2"]) == 2
        np.testing.assert_allclose(got["history_rel_l2"], serial["history_rel_l2"], rtol=1e-6)
        assert got["metrics"].keys() == serial["metrics"].keys() == {"rel_l2", "max_abs"}
        for name, value in serial["metrics"].items():
            assert got["metrics"][name] == pytest.approx(value, rel=1e-6)
        # The callback's loss terms reached rank 1 too (rank 0 has them from its history.csv).
        assert got["callbacks"] == script.STEPS
        assert got["callback_losses"] == sorted(serial["loss_terms"])
        assert "null communicator" in got["errors"]["null"]
        assert "intercommunicator" in got["errors"]["inter"]
        assert got["dir"] == str(tmp_path / "run")
        assert got["parts"] == ["stopped", script.STEPS // 2, "finished", script.STEPS, True]
    # Rank 0 loaded the folder it wrote; rank 1 made its Solution in memory: the same values.
    assert ranks[1]["theta"] == ranks[0]["theta"] and ranks[1]["u"] == ranks[0]["u"]
    assert ranks[1]["metrics"] == ranks[0]["metrics"]
    for f in ("config.yaml", "checkpoint.h5", "history.csv", "summary.json"):
        assert (tmp_path / "run" / f).exists(), f
    loaded = jetpde.load_run(tmp_path / "run")
    assert loaded.theta.tolist() == ranks[0]["theta"]
