"""Solution: evaluate (shapes, dtypes, values against `jetpde eval`), history, metrics, VTK,
export, load_run."""

import csv
import json
import subprocess

import numpy as np
import pytest

import jetpde
from conftest import TINY_STEPS

POINTS = np.array([[0.1, 0.5], [-0.7, 0.25], [0.9, 1.0], [-1.0, 0.0]])
EXPRESSIONS = ["u", "u_x", "d(u, x, 2)", "u_t + u*u_x - nu*u_xx"]


def test_evaluate_shape_and_dtype(burgers_run):
    sol, _ = burgers_run
    u = sol.evaluate(np.array([[0.1, 0.5]]), ["u", "u_x", "d(u, x, 2)"])
    assert u.shape == (1, 3) and u.dtype == np.float64
    assert u.flags["C_CONTIGUOUS"]
    assert np.all(np.isfinite(u))


def test_evaluate_defaults_to_the_fields(burgers_run):
    sol, _ = burgers_run
    assert sol.evaluate(POINTS).shape == (4, 1)
    np.testing.assert_array_equal(sol.evaluate(POINTS), sol.evaluate(POINTS, "u"))


def test_evaluate_converts_lists_ints_and_fortran_order(burgers_run):
    sol, _ = burgers_run
    ref = sol.evaluate(POINTS, ["u", "u_x"])
    np.testing.assert_array_equal(sol.evaluate(POINTS.tolist(), ["u", "u_x"]), ref)
    np.testing.assert_array_equal(sol.evaluate(np.asfortranarray(POINTS), ["u", "u_x"]), ref)
    np.testing.assert_array_equal(sol.evaluate(POINTS.astype(np.float32).astype(np.float64),
                                               ["u"]), sol.evaluate(POINTS, ["u"]))
    ints = np.array([[0, 0], [1, 1]])
    np.testing.assert_array_equal(sol.evaluate(ints), sol.evaluate(ints.astype(float)))


def test_evaluate_no_points(burgers_run):
    sol, _ = burgers_run
    out = sol.evaluate(np.zeros((0, 2)), ["u", "u_x"])
    assert out.shape == (0, 2) and out.dtype == np.float64


def test_evaluate_second_derivative_two_ways(burgers_run):
    sol, _ = burgers_run
    v = sol.evaluate(POINTS, ["u_xx", "d(u, x, 2)"])
    np.testing.assert_array_equal(v[:, 0], v[:, 1])


def test_evaluate_rows_are_independent(burgers_run):
    sol, _ = burgers_run
    all_rows = sol.evaluate(POINTS, ["u", "u_x"])
    for i in range(len(POINTS)):
        np.testing.assert_allclose(sol.evaluate(POINTS[i:i + 1], ["u", "u_x"])[0], all_rows[i],
                                   rtol=1e-12, atol=1e-14)


def test_evaluate_wrong_columns_is_an_error(burgers_run):
    sol, _ = burgers_run
    with pytest.raises(jetpde.Error, match=r"expected an array \[n, 2\] \(columns x, t\), got "
                                           r"shape \(3, 3\)"):
        sol.evaluate(np.zeros((3, 3)))
    with pytest.raises(jetpde.Error, match=r"got shape \(2,\)"):
        sol.evaluate(np.zeros(2))
    with pytest.raises(jetpde.Error, match="expected an array of numbers"):
        sol.evaluate([["a", "b"]])


def test_evaluate_bad_expression_names_the_column(burgers_run):
    sol, _ = burgers_run
    with pytest.raises(jetpde.Error, match=r"in 'v_x': column 1: unknown field 'v'"):
        sol.evaluate(POINTS, ["u", "v_x"])


def _cli_eval(cli, run_dir, points, expressions, tmp_path):
    pts = tmp_path / "points.csv"
    np.savetxt(pts, points, delimiter=",", header="x,t", comments="", fmt="%.17g")
    out = tmp_path / "values.csv"
    subprocess.run([cli, "eval", str(run_dir), "--points", str(pts), "--output", str(out)]
                   + [a for e in expressions for a in ("--fields", e)],
                   check=True, capture_output=True, text=True)  # this process's threads
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["x", "t"] + expressions
    return np.array([[float(v) for v in r] for r in rows[1:]])


def test_evaluate_is_bit_equal_to_the_cli(burgers_run, cli, tmp_path):
    sol, run_dir = burgers_run
    got = sol.evaluate(POINTS, EXPRESSIONS)
    table = _cli_eval(cli, run_dir, POINTS, EXPRESSIONS, tmp_path)
    np.testing.assert_array_equal(table[:, :2], POINTS)
    # 17 significant digits read back to the same double: bit for bit.
    assert np.array_equal(table[:, 2:], got), (table[:, 2:] - got)


def test_load_run_is_bit_equal_to_the_cli(burgers_run, cli, tmp_path):
    _, run_dir = burgers_run
    sol = jetpde.load_run(run_dir)
    rng = np.random.default_rng(0)
    pts = np.column_stack([rng.uniform(-1, 1, 50), rng.uniform(0, 1, 50)])
    assert np.array_equal(sol.evaluate(pts, EXPRESSIONS),
                          _cli_eval(cli, run_dir, pts, EXPRESSIONS, tmp_path)[:, 2:])


def test_status_steps_and_run_folder(burgers_run):
    sol, run_dir = burgers_run
    assert sol.status == "finished"
    assert sol.step == TINY_STEPS
    assert sol.dir == str(run_dir)
    for f in ("config.yaml", "checkpoint.h5", "history.csv", "summary.json", "fields.h5"):
        assert (run_dir / f).exists(), f
    assert "summary.json" in sol.files


def test_history_has_every_step(burgers_run):
    sol, _ = burgers_run
    h = sol.history
    np.testing.assert_array_equal(h["step"], np.arange(1, TINY_STEPS + 1))
    assert h["stage"][0] == "adam" and h["stage"][-1] == "lbfgs"
    assert len(h["loss"]) == TINY_STEPS and np.all(np.isfinite(h["loss"]))
    assert sol.history["loss"][-1] == h["loss_pde"][-1] * h["weight_pde"][-1]
    # Validation every 10 steps and at the end: NaN elsewhere.
    measured = np.flatnonzero(np.isfinite(h["rel_l2"])) + 1
    np.testing.assert_array_equal(measured, [10, 20, TINY_STEPS])


def test_history_matches_history_csv(burgers_run):
    sol, run_dir = burgers_run
    with open(run_dir / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0].keys()) == list(sol.history.keys())
    for r in rows:
        i = int(r["step"]) - 1
        assert float(r["loss"]) == sol.history["loss"][i]
        assert r["stage"] == sol.history["stage"][i]


def test_metrics_are_the_summarys(burgers_run):
    sol, run_dir = burgers_run
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(sol.metrics) == {"rel_l2", "max_abs"}
    assert sol.metrics == summary["metrics"]
    assert sol.metrics["rel_l2"] == sol.history["rel_l2"][-1]
    assert sol.parameters == {}


def test_theta_is_a_copy(burgers_run):
    sol, _ = burgers_run
    theta = sol.theta
    assert theta.dtype == np.float64 and theta.ndim == 1
    assert theta.size == 2 * 8 + 8 + 8 * 8 + 8 + 8 + 1
    theta[:] = 0
    assert np.any(sol.theta != 0)


def test_write_vtk(burgers_run, tmp_path):
    sol, _ = burgers_run
    out = tmp_path / "out.vti"
    sol.write_vtk(out, grid=[101, 101], quantities=["u_x"])
    text = out.read_bytes()
    assert b'WholeExtent="0 100 0 100 0 0"' in text
    assert b'Name="u"' in text and b'Name="u_x"' in text


def test_write_vtk_default_grid_and_errors(burgers_run, tmp_path):
    sol, _ = burgers_run
    sol.write_vtk(tmp_path / "d.vti")  # output.grid [21] and output.time_steps 3
    assert b'WholeExtent="0 20 0 2 0 0"' in (tmp_path / "d.vti").read_bytes()
    with pytest.raises(jetpde.Error, match="expected a .vti file name"):
        sol.write_vtk(tmp_path / "out.vtu")
    with pytest.raises(jetpde.Error, match="3 counts for a domain of 2 coordinates"):
        sol.write_vtk(tmp_path / "out.vti", grid=[5, 5, 5])
    with pytest.raises(jetpde.Error, match=r"grid\[1\]: 1 points"):
        sol.write_vtk(tmp_path / "out.vti", grid=[5, 1])


def test_export_like_the_cli(burgers_run, tmp_path):
    sol, _ = burgers_run
    files = sol.export(tmp_path / "exported", grid=11, time_steps=4, quantities=["u_x"])
    assert "fields.h5" in files and "fields.pvd" in files
    assert sum(f.startswith("fields_") for f in files) == 4
    for f in files:
        assert (tmp_path / "exported" / f).exists()


def test_load_run_round_trip(burgers_run):
    sol, run_dir = burgers_run
    again = jetpde.load_run(run_dir)
    assert again.step == sol.step and again.status == "finished"
    assert np.array_equal(again.theta, sol.theta)
    assert np.array_equal(again.evaluate(POINTS, EXPRESSIONS), sol.evaluate(POINTS, EXPRESSIONS))
    assert again.metrics == sol.metrics
    # history.csv: every output.history_every (10) steps, the last and the validation steps.
    np.testing.assert_array_equal(again.history["step"], [10, 20, TINY_STEPS])
    assert again.history["loss"][-1] == sol.history["loss"][-1]
    assert again.config.name == "burgers"


def test_load_run_in_fp64(burgers_run):
    sol, run_dir = burgers_run
    fp64 = jetpde.load_run(run_dir, overrides={"precision": "fp64"})
    a, b = fp64.evaluate(POINTS), sol.evaluate(POINTS)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_load_run_of_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(jetpde.Error, match="is not a run folder: no config.yaml"):
        jetpde.load_run(tmp_path)


def test_solution_from_a_python_problem(tiny_problem, tmp_path):
    sol = jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=6), jetpde.LBFGS(steps=2)],
                       seed=0, output_dir=tmp_path / "run")
    assert sol.loss_terms == ["pde", "initial_value_u", "dirichlet_u"]
    assert sol.step == 8 and sol.history["stage"] == ["adam"] * 6 + ["lbfgs"] * 2
    assert sol.coordinates == ["x", "t"] and sol.fields == ["u"]
    assert "initial_value" in (tmp_path / "run" / "config.yaml").read_text()


def test_seed_decides_the_parameters(tiny_problem, tmp_path):
    runs = [jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=3)], seed=s,
                         output_dir=tmp_path / ("r%d" % k)) for k, s in enumerate([1, 1, 2])]
    assert np.array_equal(runs[0].theta, runs[1].theta)
    assert not np.array_equal(runs[0].theta, runs[2].theta)


def test_trainable_parameters(tmp_path):
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx + k*u"],
                       parameters={"k": 2.5}, conditions=[jetpde.Dirichlet(0)],
                       network=jetpde.Network(hidden=[4]), sampling={"interior_points": 32},
                       output={"progress": "none"})
    sol = jetpde.solve(p, stages=[jetpde.Adam(steps=3, learning_rate=0.1)],
                       output_dir=tmp_path / "k")
    assert set(sol.parameters) == {"k"}
    assert sol.parameters["k"] != 2.5 and abs(sol.parameters["k"] - 2.5) < 1
    assert jetpde.load_run(tmp_path / "k").parameters == sol.parameters
    summary = json.loads((tmp_path / "k" / "summary.json").read_text())
    assert summary["parameters"] == sol.parameters
