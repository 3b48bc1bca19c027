"""jetpde: physics-informed neural networks, compiled (Python API; python/README.md).

    import jetpde, numpy as np
    cfg = jetpde.load_config("examples/burgers.yaml", overrides={"training.stages.0.steps": 200})
    sol = jetpde.solve(cfg)
    u = sol.evaluate(np.array([[0.1, 0.5]]), ["u", "u_x", "d(u, x, 2)"])
"""

import os as _os

# jetpde's OpenMP wait policy (compiler/openmp_env.h): the jetpde command re-executes itself with
# GOMP_SPINCOUNT=1000 when the user chose no policy. A module cannot re-execute the interpreter;
# libgomp reads its environment once, when it is loaded, so the variable is set here, before the
# extension (which loads libgomp) is imported. Too late if libgomp is already loaded in this
# process (another OpenMP extension imported first): then libgomp's own default holds.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "1000"

from . import _jetpde  # noqa: E402
from ._jetpde import Error, StepInfo  # noqa: E402
from ._api import Config, Solution, load_config, load_run, solve  # noqa: E402
from ._problem import (  # noqa: E402
    Adam,
    AdamW,
    Condition,
    Data,
    Dirichlet,
    HardConstraint,
    InitialRate,
    InitialValue,
    LBFGS,
    Network,
    Neumann,
    Periodic,
    Problem,
    Residual,
    Robin,
    SOAP,
    Stage,
)
from . import geometry  # noqa: E402

Error.__module__ = "jetpde"
StepInfo.__module__ = "jetpde"

__version__ = "0.1.0"

__all__ = [
    "Adam", "AdamW", "Condition", "Config", "Data", "Dirichlet", "Error", "HardConstraint",
    "InitialRate", "InitialValue", "LBFGS", "Network", "Neumann", "Periodic", "Problem",
    "Residual", "Robin", "SOAP", "Solution", "Stage", "StepInfo", "geometry", "load_config",
    "load_run", "solve",
]
