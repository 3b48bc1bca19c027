"""load_config, overrides, jetpde.Problem -> config, errors."""

import subprocess

import numpy as np
import pytest

import jetpde
from conftest import EXAMPLES


def test_load_config_reads_the_example():
    cfg = jetpde.load_config(EXAMPLES / "burgers.yaml")
    assert cfg.name == "burgers"
    assert cfg.fields == ["u"]
    assert cfg.coordinates == ["x", "t"]
    assert cfg.output_dir == "runs/burgers"
    assert "burgers_sine" in cfg.yaml


def test_overrides_as_a_dict_and_as_texts_agree():
    a = jetpde.load_config(EXAMPLES / "burgers.yaml", overrides={"training.stages.0.steps": 200,
                                                                "network.hidden": [16, 16]})
    b = jetpde.load_config(EXAMPLES / "burgers.yaml",
                           overrides=["training.stages.0.steps=200", "network.hidden=[16,16]"])
    assert a.yaml == b.yaml
    assert "steps: 200" in a.yaml
    assert a.yaml != jetpde.load_config(EXAMPLES / "burgers.yaml").yaml


def test_one_override_text_is_refused():
    with pytest.raises(TypeError):
        jetpde.load_config(EXAMPLES / "burgers.yaml", overrides="seed=1")


def test_error_is_a_value_error_with_the_key_path():
    with pytest.raises(jetpde.Error) as e:
        jetpde.load_config(EXAMPLES / "burgers.yaml", overrides={"training.stages.0.lr": 1})
    assert isinstance(e.value, ValueError)
    assert "training.stages[0].lr: unknown key" in str(e.value)


def test_error_message_is_the_clis(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((EXAMPLES / "burgers.yaml").read_text().replace("activation: tanh",
                                                                    "activation: tanhh"))
    with pytest.raises(jetpde.Error) as e:
        jetpde.load_config(bad)
    run = subprocess.run([cli, "run", str(bad), "--check"], capture_output=True, text=True)
    assert run.returncode != 0
    assert str(e.value) in run.stderr
    assert "%s:" % bad in str(e.value) and "network.activation" in str(e.value)


def test_missing_file_is_an_error():
    with pytest.raises(jetpde.Error, match="no_such.yaml"):
        jetpde.load_config("no_such.yaml")


def test_problem_error_points_at_the_column():
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx + foo"])
    with pytest.raises(jetpde.Error) as e:
        jetpde.solve(p)
    text = str(e.value)
    assert "equations[0].expression" in text and "column 8" in text and "unknown name 'foo'" in text


def test_problem_unknown_key_names_it():
    # The keywords are the declared keys: the misspelt one is refused when the network is made.
    with pytest.raises(jetpde.Error, match=r"network.activaton: unknown key"):
        jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       network=jetpde.Network(hidden=[4], activaton="tanh"))
    # A key the Python classes do not model is still checked by the loader.
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       network={"hidden": [4], "activaton": "tanh"})
    with pytest.raises(jetpde.Error, match=r"network.activaton: unknown key"):
        jetpde.solve(p)


def test_problem_bad_boundary_piece():
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       conditions=[jetpde.Dirichlet(0, on="top")])
    with pytest.raises(jetpde.Error, match=r"conditions\[0\]"):
        jetpde.solve(p, max_steps=1)


def test_problem_and_yaml_give_the_same_config(tmp_path):
    yaml = tmp_path / "same.yaml"
    yaml.write_text("""name: same
geometry:
  type: interval
  min: [-1]
  max: [1]
  time: [0, 1]
constants:
  nu: 0.1
equations:
  - expression: u_t + u*u_x - nu*u_xx
conditions:
  - kind: initial_value
    value: -sin(pi*x)
  - kind: dirichlet
    value: 0
    on: spatial
network:
  hidden: [20, 20]
training:
  stages:
    - optimizer: adam
      steps: 100
""")
    p = jetpde.Problem(name="same", domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
                       equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.1},
                       conditions=[jetpde.InitialValue("-sin(pi*x)"),
                                   jetpde.Dirichlet("0", on="spatial")],
                       network=jetpde.Network(hidden=[20, 20]),
                       training={"stages": [jetpde.Adam(steps=100).to_dict()]})
    from jetpde._api import _problem_config
    a = _problem_config(p, None, tmp_path).yaml
    b = jetpde.load_config(yaml).yaml
    assert a == b


def test_problem_yaml_quotes_text_and_keeps_numbers():
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=['u_xx - "q"'],
                       constants={"c": np.float64(0.25), "n": np.int64(3)})
    text = p.to_yaml()
    assert 'expression: "u_xx - \\"q\\""' in text
    assert "c: 0.25" in text and "n: 3" in text


def test_problem_yaml_refuses_what_is_not_a_config_value():
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       constants={"c": object()})
    with pytest.raises(TypeError, match="constants.c"):
        p.to_yaml()
    q = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       constants={"c": float("nan")})
    with pytest.raises(ValueError, match="not a finite number"):
        q.to_yaml()


def test_geometry_combinations_and_bounds():
    shape = jetpde.geometry.Rectangle([0, 0], [2, 1]) - jetpde.geometry.Disk([1, 0.5], 0.25)
    p = jetpde.Problem(domain=shape, equations=["laplacian(u)"],
                       conditions=[jetpde.Dirichlet(0)])
    from jetpde._api import _problem_config
    cfg = _problem_config(p, None)
    lo, hi = cfg.bounds()
    np.testing.assert_array_equal(lo, [0, 0])
    np.testing.assert_array_equal(hi, [2, 1])
    pts = cfg.sample_interior(500, seed=1)
    assert pts.shape == (500, 2) and pts.dtype == np.float64
    assert np.all(np.hypot(pts[:, 0] - 1, pts[:, 1] - 0.5) >= 0.25)


def test_boundary_pieces_and_samples():
    cfg = jetpde.load_config(EXAMPLES / "burgers.yaml")
    pieces = cfg.boundary_pieces()
    assert {"left", "right", "initial"} <= set(pieces)
    pts, normals = cfg.sample_boundary(64, on="left")
    assert pts.shape == (64, 2) and normals.shape == (64, 2)
    np.testing.assert_array_equal(pts[:, 0], -1.0)
    with pytest.raises(jetpde.Error):
        cfg.sample_boundary(8, on="nowhere")
    with pytest.raises(jetpde.Error, match="n: 0 points"):
        cfg.sample_interior(0)


def test_with_overrides_keeps_the_source():
    cfg = jetpde.load_config(EXAMPLES / "burgers.yaml", overrides={"seed": 5})
    more = cfg.with_overrides({"network.hidden": [4]})
    assert more.seed == 5 and more.source == cfg.source
    assert cfg.with_overrides({}) is cfg


def test_a_problem_without_stages_gets_the_default_recipe(tmp_path):
    # No stages: the recipe chooses (and says what); with stages given it stays out.
    p = jetpde.Problem(domain=jetpde.geometry.Interval(0, 1).times_time(0, 1),
                       equations=["u_t - 0.1*u_xx"],
                       conditions=[jetpde.InitialValue("sin(pi*x)"), jetpde.Dirichlet()])
    path = tmp_path / "p.yaml"
    path.write_text(p.to_yaml())
    cfg = jetpde.load_config(path)
    assert cfg.recipe.startswith("recipe auto: time-dependent (t in [0, 1])")
    assert "chose sampling.time_chunks: 32" in cfg.recipe
    assert "recipe: auto" in cfg.yaml
    staged = cfg.with_overrides({"training.stages": [{"optimizer": "adam", "steps": 3}]})
    assert staged.recipe is None
