"""A problem written in Python: jetpde.Problem and its parts build the config tree that a YAML
file holds (docs/config.md lists the keys), and the config loader checks it with the same schema,
defaults and errors. Keyword arguments are config keys: anything the schema knows can be given,
a key it does not know is a jetpde.Error naming it.
"""

import copy

from . import _yaml


def _entry(**keys):
    return {k: v for k, v in keys.items() if v is not None}


def _text(value):
    """An expression given as a number (0, 1.5) is the text of that number."""
    if value is None or isinstance(value, str):
        return value
    return _yaml._scalar(value, "value")


class _Entry:
    """A config entry (a mapping); to_dict() is what goes into the config."""

    def __init__(self, **keys):
        self._entry = _entry(**keys)

    def to_dict(self):
        return copy.deepcopy(self._entry)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__,
                           ", ".join("%s=%r" % kv for kv in self._entry.items()))


class Condition(_Entry):
    """Any condition: Condition("dirichlet", value="0", on="left"); see the subclasses."""

    def __init__(self, kind, **keys):
        super().__init__(kind=kind, **keys)


class Dirichlet(Condition):
    """field = value on a boundary piece (`on`: a name or a predicate; None: the whole boundary)
    or at fixed points (`at`: [[x, y], ...])."""

    def __init__(self, value="0", on=None, field=None, **keys):
        super().__init__("dirichlet", value=_text(value), on=on, field=field, **keys)


class Neumann(Condition):
    """du/dn = value on a boundary piece."""

    def __init__(self, value="0", on=None, field=None, **keys):
        super().__init__("neumann", value=_text(value), on=on, field=field, **keys)


class Robin(Condition):
    """alpha u + beta du/dn = value on a boundary piece."""

    def __init__(self, value="0", alpha=None, beta=None, on=None, field=None, **keys):
        super().__init__("robin", value=_text(value), alpha=alpha, beta=beta, on=on,
                         field=field, **keys)


class Periodic(Condition):
    """The field (and its derivatives up to `derivatives`) equal on the two faces of
    `coordinate`."""

    def __init__(self, coordinate, derivatives=None, field=None, **keys):
        super().__init__("periodic", coordinate=coordinate, derivatives=derivatives,
                         field=field, **keys)


class InitialValue(Condition):
    """field(x, t0) = value."""

    def __init__(self, value, field=None, **keys):
        super().__init__("initial_value", value=_text(value), field=field, **keys)


class InitialRate(Condition):
    """d field / dt (x, t0) = value."""

    def __init__(self, value, field=None, **keys):
        super().__init__("initial_rate", value=_text(value), field=field, **keys)


class Residual(Condition):
    """Any expression = 0 on a boundary piece."""

    def __init__(self, expression, on=None, **keys):
        super().__init__("residual", expression=expression, on=on, **keys)


class Data(Condition):
    """Measurements to fit, from a data file (the keys of conditions[].data: columns,
    coordinates, points, fields, samples, noise, seed)."""

    def __init__(self, file, field=None, name=None, weight=None, **data):
        super().__init__("data", field=field, name=name, weight=weight,
                         data=_entry(file=str(file), **data))


class HardConstraint(_Entry):
    """field = value + D * network, exact where D = 0 (on the pieces `on`, or D = distance)."""

    def __init__(self, value="0", on=None, field=None, distance=None):
        super().__init__(value=_text(value), on=on, field=field, distance=distance)


class Network(_Entry):
    """network: hidden=[64]*4, activation="tanh", architecture, init, normalize,
    fourier_features, fourier_sigma, periodic."""

    def __init__(self, hidden=None, activation=None, **keys):
        super().__init__(hidden=list(hidden) if hidden is not None else None,
                         activation=activation, **keys)


class Stage(_Entry):
    """One training stage: Stage("adam", steps=1000, learning_rate=1e-3, ...)."""

    def __init__(self, optimizer, steps=None, **keys):
        super().__init__(optimizer=optimizer, steps=steps, **keys)


class Adam(Stage):
    def __init__(self, steps=None, learning_rate=None, **keys):
        super().__init__("adam", steps=steps, learning_rate=learning_rate, **keys)


class AdamW(Stage):
    def __init__(self, steps=None, learning_rate=None, **keys):
        super().__init__("adamw", steps=steps, learning_rate=learning_rate, **keys)


class LBFGS(Stage):
    def __init__(self, steps=None, **keys):
        super().__init__("lbfgs", steps=steps, **keys)


def _dict_of(value):
    return value.to_dict() if hasattr(value, "to_dict") else copy.deepcopy(value)


class Problem:
    """A whole config in Python. `domain` is a jetpde.geometry shape (or a geometry dict),
    `equations` residual texts (or equation dicts: {"library": "navier_stokes", ...}),
    `conditions` jetpde.Dirichlet(...) and friends. Every other keyword is a top-level config key
    (sampling={"interior_points": 4096}, reference={"expressions": {"u": "..."}}, training={...},
    precision="fp64", ...)."""

    def __init__(self, domain, equations, *, constants=None, parameters=None, fields=None,
                 conditions=(), hard_constraints=(), network=None, name=None, **config):
        # The run folder is runs/NAME unless output_dir says otherwise.
        tree = {"name": name if name is not None else "problem"}
        tree["geometry"] = _dict_of(domain)
        if fields is not None:
            tree["fields"] = [fields] if isinstance(fields, str) else list(fields)
        if constants:
            tree["constants"] = dict(constants)
        if parameters:
            tree["parameters"] = dict(parameters)
        if isinstance(equations, str):
            equations = [equations]
        tree["equations"] = [{"expression": e} if isinstance(e, str) else _dict_of(e)
                             for e in equations]
        if conditions:
            tree["conditions"] = [_dict_of(c) for c in conditions]
        if hard_constraints:
            tree["hard_constraints"] = [_dict_of(h) for h in hard_constraints]
        if network is not None:
            tree["network"] = _dict_of(network)
        for key, value in config.items():
            if value is not None:
                tree[key] = _dict_of(value)
        self._tree = tree

    def to_dict(self):
        return copy.deepcopy(self._tree)

    def to_yaml(self):
        """The config as YAML text: what the loader checks (error positions refer to it)."""
        return _yaml.dumps(self._tree)

    def __repr__(self):
        return "jetpde.Problem(%r)" % (self._tree,)
