"""load_config, solve, load_run and the Config and Solution they return."""

import csv
import json
import math
import os
import sys

import numpy as np

from . import _jetpde, _yaml
from ._problem import Problem

_PYTHON_SOURCE = "<jetpde.Problem>"


def _override_list(overrides):
    """{"training.stages.0.steps": 200} or ["training.stages.0.steps=200"] -> KEY=VALUE texts."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise TypeError("overrides: give a dict {key: value} or a list of 'key=value' texts, "
                        "not one text")
    if isinstance(overrides, dict):
        return ["%s=%s" % (key, _yaml.value_text(value)) for key, value in overrides.items()]
    return [str(o) for o in overrides]


class _Names:
    """The problem's field and coordinate names, for the classes that wrap a native object."""

    @property
    def fields(self):
        return list(self._native.fields)

    @property
    def coordinates(self):
        """The coordinate names, in the order of the columns of points."""
        return list(self._native.coordinates)


class Config(_Names):
    """A checked config (every default filled in); load_config() or a jetpde.Problem makes one."""

    def __init__(self, native, remake):
        self._native = native
        self._remake = remake  # overrides -> Config: the same source with more overrides

    @property
    def name(self):
        return self._native.name

    @property
    def source(self):
        return self._native.source

    @property
    def output_dir(self):
        return self._native.output_dir

    @property
    def seed(self):
        return self._native.seed

    @property
    def yaml(self):
        """The resolved config as YAML: what the run folder's config.yaml will hold."""
        return self._native.yaml

    @property
    def recipe(self):
        """What the default recipe read of the problem and chose (docs/config.md, the default
        recipe), as the run prints it; None when the config gives its training stages."""
        return self._native.recipe

    def with_overrides(self, overrides):
        """This config with more overrides ({key.path: value}), checked again."""
        extra = _override_list(overrides)
        return self._remake(extra) if extra else self

    def bounds(self):
        """The domain's bounding box (lo, hi) over every coordinate, time included."""
        lo, hi = _jetpde.domain_bounds(self._native)
        return np.array(lo), np.array(hi)

    def boundary_pieces(self):
        """The names `on:` accepts for this domain (left, right, initial, ...)."""
        return list(_jetpde.domain_pieces(self._native))

    def sample_interior(self, n, method="sobol", seed=0):
        """n points [n, coordinates] in the domain."""
        return _jetpde.sample_interior(self._native, n, method, seed)

    def sample_boundary(self, n, on="", method="sobol", seed=0):
        """n points on a boundary piece (a name or a predicate; "": the whole boundary) and
        their outward normals."""
        return _jetpde.sample_boundary(self._native, n, on, method, seed)

    def __repr__(self):
        return "jetpde.Config(name=%r, source=%r, output_dir=%r)" % (
            self.name, self.source, self.output_dir)


def load_config(path, overrides=None):
    """Reads a YAML config: the schema's checks and defaults, `overrides` applied as
    `jetpde run --set` does ({"training.stages.0.steps": 200}). jetpde.Error for bad input, with
    the file:line:column and key path the jetpde command prints."""
    path = os.fspath(path)
    base = _override_list(overrides)

    def remake(extra):
        return load_config(path, base + extra)

    return Config(_jetpde.load_config(path, base), remake)


def _problem_config(problem, overrides, base_dir=None):
    text = problem.to_yaml()
    base_dir = os.getcwd() if base_dir is None else os.fspath(base_dir)
    base = _override_list(overrides)

    def remake(extra):
        return Config(_jetpde.config_from_text(text, _PYTHON_SOURCE, base_dir, base + extra),
                      remake)

    return Config(_jetpde.config_from_text(text, _PYTHON_SOURCE, base_dir, base), remake)


def _read_history(path):
    """history.csv as {column: array} (stage: a list of texts); {} when there is none."""
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    header, body = rows[0], rows[1:]
    out = {}
    for k, name in enumerate(header):
        column = [r[k] if k < len(r) else "" for r in body]
        if name == "stage":
            out[name] = column
        elif name == "step":
            out[name] = np.array([int(v) for v in column], dtype=np.int64)
        else:
            out[name] = np.array([float(v) if v != "" else math.nan for v in column])
    return out


class Solution(_Names):
    """A trained problem: evaluate it anywhere, write it for ParaView, read its losses.

    From solve(): history has every step; from load_run(): history.csv's rows (every
    output.history_every steps), metrics and status from summary.json."""

    def __init__(self, native, history=None, summary=None):
        self._native = native
        self._history = history
        self._summary = summary or {}

    def evaluate(self, points, expressions=None):
        """Expressions of the fields ("u", "u_x", "d(u, x, 2)", "laplacian(u)", a residual) at
        points [n, coordinates] (columns in Solution.coordinates order) -> float64 [n, k].
        Default: the fields. One text is a list of one."""
        if isinstance(expressions, str):
            expressions = [expressions]
        return self._native.evaluate(points, list(expressions or []))

    def __call__(self, points, expressions=None):
        return self.evaluate(points, expressions)

    def write_vtk(self, path, grid=None, quantities=()):
        """The fields and `quantities` on a uniform grid over the domain's bounding box, time as
        an axis, in one .vti file. grid: points per coordinate (one count: every axis; default:
        the config's output.grid and output.time_steps)."""
        if grid is not None and not isinstance(grid, (list, tuple, np.ndarray)):
            grid = [grid]
        self._native.write_vti(os.fspath(path), [int(g) for g in (grid or [])], list(quantities))

    def export(self, dir=None, grid=None, time_steps=None, quantities=()):
        """What `jetpde export` writes (fields.vti or one .vti per time level and fields.pvd,
        fields.h5) into `dir` (default: the run folder). Returns the files written."""
        if grid is not None and not isinstance(grid, (list, tuple, np.ndarray)):
            grid = [grid]
        return list(self._native.export_fields(
            os.fspath(dir) if dir is not None else self.dir, [int(g) for g in (grid or [])],
            int(time_steps or 0), list(quantities)))

    @property
    def metrics(self):
        """Errors against the reference at the end ({"rel_l2": ..., "max_abs": ...})."""
        if self._summary:
            return dict(self._summary.get("metrics", {}))
        return dict(self._native.metrics)

    @property
    def parameters(self):
        """Trained constants (`parameters:`) by name."""
        return dict(self._native.parameters)

    @property
    def history(self):
        """{column: array}: step, stage, seconds, loss, learning_rate, loss_TERM, weight_TERM,
        metrics (NaN where not measured); history.csv's columns. A classical solve (solver:
        {type: petsc}): one row per Newton iteration (stage "newton", loss the residual's 2-norm)
        or per time step (stage "time_step", loss the step's last Newton residual, metrics t and
        newton_iterations), the run's metrics on the last row; empty after load_run."""
        if self._history is None:
            self._history = self._native.history()
        return self._history

    @property
    def status(self):
        """finished, stopped (a callback), interrupted (Ctrl-C), time_limit, target_reached,
        non_finite."""
        return self._summary.get("status", self._native.status)

    @property
    def message(self):
        return self._summary.get("message", self._native.message)

    @property
    def dir(self):
        return self._native.dir

    @property
    def step(self):
        return self._native.step

    @property
    def loss_terms(self):
        """The training loss's terms (equations, conditions); [] for a classical solve, which
        minimizes no weighted loss."""
        return list(self._native.loss_terms)

    @property
    def theta(self):
        """The trained parameters (network weights, then trainable constants), a copy."""
        return self._native.theta

    @property
    def files(self):
        return list(self._native.files) or list(self._summary.get("files", []))

    @property
    def config(self):
        native = self._native.config
        return Config(native, lambda extra: load_run(self.dir, extra).config)

    def __repr__(self):
        return "jetpde.Solution(dir=%r, step=%d, status=%r)" % (self.dir, self.step, self.status)


def solve(problem, *, stages=None, seed=None, output_dir=None, progress=None, threads=None,
          memory_budget=None, overrides=None, callback=None, callback_every=1, max_steps=0,
          resume=False, base_dir=None, comm=None):
    """Trains a problem as `jetpde run` does and returns its Solution.

    `problem`: a Config (load_config) or a jetpde.Problem. stages ([jetpde.Adam(...),
    jetpde.LBFGS(...)]), seed, output_dir, progress ("auto", "plain", "none"), threads and
    memory_budget ("2 GB", "25%", "auto": over it each step runs in batches of the points)
    override the config's; `overrides` more keys. The run folder (output_dir, default runs/NAME)
    gets config.yaml, checkpoint.h5, history.csv, the fields and summary.json.

    callback(info) runs every `callback_every` steps with a jetpde.StepInfo (step, stage, loss,
    losses, weights, learning_rate, seconds, metrics); returning False stops training (status
    "stopped"); an exception it raises stops training and is raised from solve().
    Ctrl-C stops training after the current step: solve() returns the Solution with the
    parameters of that step and status "interrupted" (everything written as for a finished run).
    max_steps > 0 caps every stage (quick checks); resume continues from the run folder's
    checkpoint.

    comm: an mpi4py communicator (MPI.COMM_WORLD, or one made from it) to train on its ranks,
    every rank calling solve() with the same problem (run the script with `mpirun -n N`). Point
    counts are totals, each rank trains on its share (`parallel.points`: local draws, or global:
    the points of a one-rank run); the ranks average losses and gradients, so that every rank
    takes the same steps and returns a Solution with the same parameters. Only rank 0 writes the
    run folder and prints progress. A callback runs on every rank that passes one; its False on
    any rank stops them all. TypeError for an object that is not a communicator, jetpde.Error
    when jetpde was built without MPI. None: this process alone."""
    extra = {}
    if stages is not None:
        extra["training.stages"] = [s.to_dict() if hasattr(s, "to_dict") else dict(s)
                                    for s in stages]
    for key, value in (("seed", seed), ("output.dir", output_dir), ("output.progress", progress),
                       ("threads", threads), ("memory_budget", memory_budget)):
        if value is not None:
            extra[key] = os.fspath(value) if key == "output.dir" else value
    more = _override_list(extra) + _override_list(overrides)
    if isinstance(problem, Problem):
        config = _problem_config(problem, None, base_dir).with_overrides(more)
    elif isinstance(problem, Config):
        config = problem.with_overrides(more)
    elif isinstance(problem, (str, os.PathLike)):
        config = load_config(problem, more)
    else:
        raise TypeError("solve: expected a jetpde.Config, a jetpde.Problem or a config file's "
                        "path, not %s" % type(problem).__name__)
    native = _jetpde.solve(config._native, callback, callback_every, resume, max_steps, comm)
    solution = Solution(native)
    if solution.status == "interrupted" and native.rank == 0:
        print("jetpde: interrupted at step %d; the solution holds that step's parameters "
              "(resume=True continues)" % solution.step, file=sys.stderr)
    return solution


def load_run(dir, overrides=None):
    """A finished (or checkpointed) run folder as a Solution: its config.yaml and checkpoint.h5,
    evaluable again; `overrides` as for `jetpde eval --set` ({"precision": "fp64"})."""
    dir = os.fspath(dir)
    native = _jetpde.load_run(dir, _override_list(overrides))
    summary = {}
    try:
        with open(os.path.join(dir, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = {"status": "checkpoint", "message": ""}
    return Solution(native, _read_history(os.path.join(dir, "history.csv")), summary)
