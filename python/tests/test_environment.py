"""import jetpde: the OpenMP wait policy the jetpde command starts with, unless the user chose."""

import os
import subprocess
import sys

import jetpde

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(jetpde.__file__)))


def _after_import(**env):
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    base.update(env, PYTHONPATH=PACKAGE)
    out = subprocess.run([sys.executable, "-c", "import jetpde, os; "
                          "print(os.environ.get('GOMP_SPINCOUNT'))"],
                         capture_output=True, text=True, env=base, check=True)
    return out.stdout.strip()


def test_spincount_is_set_when_no_policy_is():
    assert _after_import() == "1000"


def test_a_users_policy_is_left_alone():
    assert _after_import(OMP_WAIT_POLICY="passive") == "None"
    assert _after_import(GOMP_SPINCOUNT="5") == "5"


def test_version_and_exports():
    assert jetpde.__version__ == "0.1.0"
    for name in jetpde.__all__:
        assert hasattr(jetpde, name), name
    assert issubclass(jetpde.Error, ValueError) and jetpde.Error.__module__ == "jetpde"
