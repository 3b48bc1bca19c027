"""The keyword arguments of jetpde.Network, jetpde.Adam, jetpde.Dirichlet, ... are the config keys
their C++ modules declare (_jetpde.option_keys): exactly those, documented from the declarations."""

import pytest

import jetpde
from jetpde import _jetpde


def names(rows):
    return [r[0] for r in rows]


def test_declarations_are_exposed():
    network = _jetpde.option_keys("network")
    assert names(network) == ["architecture", "hidden", "activation", "init", "normalize",
                              "fourier_features", "fourier_sigma", "periodic", "rwf"]
    activation = [r for r in network if r[0] == "activation"][0]
    assert activation[1:3] == ("choice", "tanh")
    assert activation[4] == ["tanh", "sin", "silu", "sigmoid", "softplus"]
    assert names(_jetpde.optimizer_keys("lbfgs")) == [
        "name", "optimizer", "steps", "history", "gradient_tolerance", "function_tolerance",
        "max_evaluations", "precision", "time_share", "resample_every", "average",
        "average_last", "hand_on"]
    assert "learning_rate" in names(_jetpde.optimizer_keys("adamw"))
    assert _jetpde.optimizer_names() == sorted(_jetpde.optimizer_names())
    kind = _jetpde.option_keys("conditions[]")[0]
    assert kind[0] == "kind" and kind[5] is True and "dirichlet" in kind[4]
    with pytest.raises(jetpde.Error, match="no key 'netwrk'"):
        _jetpde.option_keys("netwrk")
    with pytest.raises(jetpde.Error, match="a value, not a mapping"):
        _jetpde.option_keys("network.hidden")
    with pytest.raises(jetpde.Error, match=r"unknown optimizer 'sgd' \(known: adam, adamw, lbfgs"):
        _jetpde.optimizer_keys("sgd")


def test_declared_keywords_are_accepted():
    assert jetpde.LBFGS(steps=5, history=7, max_evaluations=9).to_dict() == {
        "optimizer": "lbfgs", "steps": 5, "history": 7, "max_evaluations": 9}
    assert jetpde.Adam(schedule="cosine", min_learning_rate=1e-5).to_dict()["schedule"] == "cosine"
    assert jetpde.LBFGS(steps=5, precision="fp64").to_dict() == {
        "optimizer": "lbfgs", "steps": 5, "precision": "fp64"}
    assert jetpde.Network(hidden=[4], init="he_normal", fourier_features=8).to_dict()["init"] == \
        "he_normal"
    assert jetpde.Robin(1, alpha=2, beta=3, on="left", points=16).to_dict()["points"] == 16
    data = jetpde.Data("u.csv", field="u", noise=0.1, samples=10).to_dict()
    assert data["data"] == {"file": "u.csv", "noise": 0.1, "samples": 10}
    assert jetpde.HardConstraint(value="0", on="left").to_dict() == {"value": "0", "on": "left"}


def test_unknown_keywords_name_the_known_ones_and_the_closest():
    with pytest.raises(jetpde.Error) as e:
        jetpde.Adam(steps=10, learnig_rate=1e-3)
    text = str(e.value)
    assert text.startswith("training.stages[] (adam).learnig_rate: unknown key (known here: name, "
                           "steps, learning_rate, schedule")
    assert text.endswith("did you mean 'learning_rate'?")
    # An Adam key is not an L-BFGS one.
    with pytest.raises(jetpde.Error, match=r"\(lbfgs\)\.learning_rate: unknown key"):
        jetpde.LBFGS(learning_rate=1e-3)
    with pytest.raises(jetpde.Error, match="network.activaton: unknown key.*did you mean "
                                           "'activation'"):
        jetpde.Network(activaton="tanh")
    with pytest.raises(jetpde.Error, match=r"conditions\[\] \(dirichlet\)\.weigth: unknown key"):
        jetpde.Dirichlet(0, weigth=2)
    with pytest.raises(jetpde.Error, match=r"conditions\[\]\.data\.nois: unknown key"):
        jetpde.Data("u.csv", nois=0.1)
    with pytest.raises(jetpde.Error, match=r"hard_constraints\[\]\.valeu: unknown key"):
        jetpde.HardConstraint(valeu="0")
    with pytest.raises(jetpde.Error, match="unknown optimizer 'sgd'"):
        jetpde.Stage("sgd", steps=3)
    with pytest.raises(jetpde.Error, match=r"config\.precison: unknown key.*'precision'"):
        jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"],
                       precison="fp64")


def test_docstrings_come_from_the_declarations():
    for cls, rows in ((jetpde.Adam, _jetpde.optimizer_keys("adam")),
                      (jetpde.LBFGS, _jetpde.optimizer_keys("lbfgs")),
                      (jetpde.SOAP, _jetpde.optimizer_keys("soap")),
                      (jetpde.Network, _jetpde.option_keys("network")),
                      (jetpde.Dirichlet, _jetpde.option_keys("conditions[]")[1:])):
        for name, _type, _default, doc, _choices, _required in rows:
            if name == "optimizer":
                continue
            assert "    %s (" % name in cls.__doc__, (cls, name)
            assert doc in cls.__doc__, (cls, name)
    assert "learning_rate (number, default 1e-3): Adam, SOAP: the (initial) learning rate." in \
        jetpde.Adam.__doc__
    assert "activation (tanh | sin | silu | sigmoid | softplus, default tanh)" in \
        jetpde.Network.__doc__
    assert "precision (fp64 | fp32 | bf16 | bf16_wgrad | fp16 | auto, default fp32)" in jetpde.Problem.__doc__
