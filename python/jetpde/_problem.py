"""A problem written in Python: jetpde.Problem and its parts build the config tree that a YAML
file holds (docs/config.md lists the keys), and the config loader checks it with the same schema,
defaults and errors. Keyword arguments are config keys, exactly those the C++ modules declare
(_jetpde.option_keys, _jetpde.optimizer_keys): a keyword no declaration has is a jetpde.Error
naming the known ones (and the closest), raised when the object is made. The docstrings list the
declared keys with their types, defaults and meanings.
"""

import copy
import difflib

from . import _jetpde, _yaml


def _entry(**keys):
    return {k: v for k, v in keys.items() if v is not None}


def _text(value):
    """An expression given as a number (0, 1.5) is the text of that number."""
    if value is None or isinstance(value, str):
        return value
    return _yaml._scalar(value, "value")


class _Keys:
    """The keys of one config mapping as the C++ modules declare them (_jetpde.option_keys):
    the keyword arguments a class accepts and the text of its docstring."""

    def __init__(self, label, rows, exclude=()):
        self.label = label
        self.rows = [r for r in rows if r[0] not in exclude]
        self.names = [r[0] for r in self.rows]

    def check(self, keys, label=None):
        for name in keys:
            if name not in self.names:
                close = difflib.get_close_matches(name, self.names, n=1)
                raise _jetpde.Error("%s.%s: unknown key (known here: %s)%s" % (
                    label or self.label, name, ", ".join(self.names),
                    "; did you mean '%s'?" % close[0] if close else ""))

    def doc(self):
        lines = []
        for name, type_, default, doc, choices, required in self.rows:
            what = " | ".join(choices) if choices else type_
            if required:
                what += ", required"
            elif default:
                what += ", default " + default
            lines.append("    %s (%s): %s" % (name, what, doc))
        return "\n".join(lines)


def _documented(cls, keys, heading="Keywords"):
    cls.__doc__ = "%s\n\n%s (declared by jetpde's modules; docs/config.md):\n%s\n" % (
        (cls.__doc__ or "").rstrip(), heading, keys.doc())
    return cls


class _Entry:
    """A config entry (a mapping); to_dict() is what goes into the config."""

    def __init__(self, **keys):
        self._entry = _entry(**keys)

    def to_dict(self):
        return copy.deepcopy(self._entry)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__,
                           ", ".join("%s=%r" % kv for kv in self._entry.items()))


_CONDITION_KEYS = _Keys("conditions[]", _jetpde.option_keys("conditions[]"), exclude=("kind",))
_DATA_KEYS = _Keys("conditions[].data", _jetpde.option_keys("conditions[].data"),
                   exclude=("file",))


class Condition(_Entry):
    """Any condition: Condition("dirichlet", value="0", on="left"); see the subclasses."""

    def __init__(self, kind, **keys):
        _CONDITION_KEYS.check(keys, "conditions[] (%s)" % kind)
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


for _cls in (Condition, Dirichlet, Neumann, Robin, Periodic, InitialValue, InitialRate, Residual):
    _documented(_cls, _CONDITION_KEYS)


class Data(Condition):
    """Measurements to fit, from a data file: field, name and weight are the condition's, every
    other keyword a key of conditions[].data."""

    def __init__(self, file, field=None, name=None, weight=None, **data):
        _DATA_KEYS.check(data)
        super().__init__("data", field=field, name=name, weight=weight,
                         data=_entry(file=str(file), **data))


_documented(Data, _DATA_KEYS, "Data keywords")


class HardConstraint(_Entry):
    """field = value + D * network, exact where D = 0 (on the pieces `on`, or D = distance)."""

    _keys = _Keys("hard_constraints[]", _jetpde.option_keys("hard_constraints[]"))

    def __init__(self, value="0", on=None, field=None, distance=None, **keys):
        self._keys.check(keys)
        super().__init__(value=_text(value), on=on, field=field, distance=distance, **keys)


_documented(HardConstraint, HardConstraint._keys)


class Network(_Entry):
    """The network mapping: Network(hidden=[64] * 4, activation="tanh", ...)."""

    _keys = _Keys("network", _jetpde.option_keys("network"))

    def __init__(self, hidden=None, activation=None, **keys):
        self._keys.check(keys)
        super().__init__(hidden=list(hidden) if hidden is not None else None,
                         activation=activation, **keys)


_documented(Network, Network._keys)


def _stage_keys(optimizer):
    return _Keys("training.stages[] (%s)" % optimizer, _jetpde.optimizer_keys(optimizer),
                 exclude=("optimizer",))


class Stage(_Entry):
    """One training stage: Stage("adam", steps=1000, learning_rate=1e-3, ...); the keywords are
    those the optimizer's kind declares (jetpde.Adam, jetpde.LBFGS, ... list them)."""

    def __init__(self, optimizer, steps=None, **keys):
        _stage_keys(optimizer).check(keys)
        super().__init__(optimizer=optimizer, steps=steps, **keys)


class Adam(Stage):
    """An Adam stage."""

    def __init__(self, steps=None, learning_rate=None, **keys):
        super().__init__("adam", steps=steps, learning_rate=learning_rate, **keys)


class AdamW(Stage):
    """An AdamW stage: Adam with decoupled weight decay."""

    def __init__(self, steps=None, learning_rate=None, **keys):
        super().__init__("adamw", steps=steps, learning_rate=learning_rate, **keys)


class LBFGS(Stage):
    """An L-BFGS stage (steps: iterations, at most)."""

    def __init__(self, steps=None, **keys):
        super().__init__("lbfgs", steps=steps, **keys)


class SOAP(Stage):
    """A SOAP stage: Adam in the eigenbasis of each weight matrix's Shampoo preconditioner."""

    def __init__(self, steps=None, learning_rate=None, **keys):
        super().__init__("soap", steps=steps, learning_rate=learning_rate, **keys)


for _cls, _name in ((Adam, "adam"), (AdamW, "adamw"), (LBFGS, "lbfgs"), (SOAP, "soap")):
    _documented(_cls, _stage_keys(_name))

_TOP_KEYS = _Keys("config", _jetpde.option_keys(""), exclude=("geometry",))


def _dict_of(value):
    # Shapes (and stages, networks, ...) anywhere in a value become their dicts: a
    # decomposition's pieces are jetpde.geometry shapes inside a dict's list.
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _dict_of(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_dict_of(v) for v in value]
    return copy.deepcopy(value)


class Problem:
    """A whole config in Python. `domain` is a jetpde.geometry shape (or a geometry dict),
    `equations` residual texts (or equation dicts: {"library": "navier_stokes", ...}),
    `conditions` jetpde.Dirichlet(...) and friends. Every other keyword is a top-level config key
    (sampling={"interior_points": 4096}, reference={"expressions": {"u": "..."}}, training={...},
    precision="fp64", ...)."""

    def __init__(self, domain, equations, *, constants=None, parameters=None, fields=None,
                 conditions=(), hard_constraints=(), network=None, name=None, **config):
        # The run folder is runs/NAME unless output_dir says otherwise.
        _TOP_KEYS.check(config)
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


_documented(Problem, _TOP_KEYS, "Top-level keys")
