"""solver: {type: petsc} through jetpde.solve: the Solution of a classical solve has a history of
its Newton iterations (or time steps) and no loss terms; fields and metrics as a trained one's."""

import numpy as np
import pytest

import jetpde
from conftest import EXAMPLES


def test_steady_history_is_the_newton_residuals(tmp_path):
    # The cavity's config without its reference data (../shared/data may be absent).
    text = (EXAMPLES / "ldc_petsc.yaml").read_text()
    text = text[:text.index("reference:")] + text[text.index("output:"):]
    (tmp_path / "ldc.yaml").write_text(text)
    cfg = jetpde.load_config(str(tmp_path / "ldc.yaml"),
                             {"solver.grid": [17, 17], "output.progress": "none",
                              "output.grid": [9]})
    try:
        sol = jetpde.solve(cfg, output_dir=tmp_path / "run")
    except jetpde.Error as e:
        if "without PETSc" in str(e):
            pytest.skip(str(e))
        raise
    assert sol.status == "finished"
    assert sol.loss_terms == []
    h = sol.history
    n = len(h["step"])
    assert n >= 3  # Navier-Stokes at Re 100 from rest: several Newton iterations
    assert list(h["step"]) == list(range(1, n + 1))
    assert set(h["stage"]) == {"newton"}
    # Newton converges: the last residual is far below the first, and the seconds grow.
    assert h["loss"][-1] < 1e-6 * h["loss"][0]
    assert np.all(np.diff(h["seconds"]) >= 0)
    assert not any(k.startswith("loss_") for k in h)
    # The fields are there: the lid moves the top row, the walls hold.
    u = sol.evaluate(np.array([[0.5, 1.0], [0.5, 0.0]]), ["u"])[:, 0]
    np.testing.assert_allclose(u, [1.0, 0.0], atol=1e-12)


def test_time_history_is_the_steps(tmp_path):
    cfg = jetpde.load_config(str(EXAMPLES / "heat.yaml"),
                             {"solver.type": "petsc", "solver.grid": [33],
                              "output.progress": "none", "output.grid": [9],
                              "output.time_steps": 3})
    try:
        sol = jetpde.solve(cfg, output_dir=tmp_path / "run")
    except jetpde.Error as e:
        if "without PETSc" in str(e):
            pytest.skip(str(e))
        raise
    h = sol.history
    assert set(h["stage"]) == {"time_step"}
    t = h["t"]
    assert np.all(np.diff(t) > 0)
    assert t[-1] == pytest.approx(1.0)  # heat.yaml's final time
    assert np.all(h["newton_iterations"] >= 1)
    assert sol.loss_terms == []
    assert h["rel_l2"][-1] == pytest.approx(sol.metrics["rel_l2"])
    assert np.isnan(h["rel_l2"][0])
