"""jetpde._yaml: Python values as the YAML text the config loader reads."""

import numpy as np
import pytest

import jetpde
from jetpde import _yaml


def _loaded(tree, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(_yaml.dumps(tree))
    return jetpde.load_config(path)


def test_dumps_block_style():
    text = _yaml.dumps({"a": {"b": [1, 2.5]}, "c": [{"d": "x", "e": True}], "f": None})
    assert text == 'a:\n  b: [1, 2.5]\nc:\n  - d: "x"\n    e: true\n'


def test_numbers_read_back_exactly(tmp_path):
    nu = 0.01 / np.pi
    cfg = _loaded({"geometry": {"type": "interval", "min": [-1], "max": [1]},
                   "constants": {"nu": nu}, "equations": [{"expression": "u_xx - nu"}]},
                  tmp_path)
    assert repr(nu) in cfg.yaml


def test_text_that_yaml_would_misread_stays_text():
    for s in ["yes", "0x10", "a: b", "- item", "#comment", "null", "\u00e9t\u00e9", 'q"uote\\']:
        text = _yaml.dumps({"k": s})
        assert text.startswith("k: \"")


def test_numpy_arrays_and_scalars():
    assert _yaml.dumps({"v": np.array([[0, 1], [2, 3]])}) == "v: [[0, 1], [2, 3]]\n"
    assert _yaml.dumps({"v": np.float32(0.5), "w": np.bool_(True)}) == "v: 0.5\nw: true\n"


def test_override_values():
    assert _yaml.value_text([16, 16]) == "[16, 16]"
    assert _yaml.value_text("fp64") == "fp64"
    assert _yaml.value_text(False) == "false"
    assert _yaml.value_text([{"optimizer": "adam", "steps": 3}]) == \
        '[{optimizer: "adam", steps: 3}]'


def test_key_that_is_not_text():
    with pytest.raises(TypeError, match="not text"):
        _yaml.dumps({1: "a"})
