"""Python values as YAML text for the config loader (block style, every string quoted).

Only what a config holds: mappings with text keys, lists, text, numbers, booleans. Numbers are
written so that they read back to the same double (repr); numpy scalars and arrays are accepted.
"""

import json
import math
import numbers
import re

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key(key):
    return key if _PLAIN_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _scalar(value, where):
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalar
        value = value.item()
        if isinstance(value, bool):
            return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            raise ValueError("%s: %r is not a finite number" % (where or "value", value))
        return repr(x)
    if isinstance(value, str):
        # JSON's double-quoted strings are YAML double-quoted strings.
        return json.dumps(value, ensure_ascii=False)
    raise TypeError("%s: %r (%s) cannot be written into a config; give text, a number, a "
                    "boolean, a list or a dict" % (where or "value", value, type(value).__name__))


def _flow(value, where):
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join("%s: %s" % (_key(str(k)), _flow(v, "%s.%s" % (where, k)))
                               for k, v in value.items() if v is not None) + "}"
    return _scalar(value, where)


def _block(value, indent, where, out):
    pad = " " * indent
    if isinstance(value, dict):
        for key, v in value.items():
            if v is None:
                continue
            if not isinstance(key, str):
                raise TypeError("%s: the key %r is not text" % (where or "config", key))
            path = "%s.%s" % (where, key) if where else key
            if isinstance(v, dict) and v:
                out.append("%s%s:" % (pad, _key(key)))
                _block(v, indent + 2, path, out)
            elif isinstance(v, (list, tuple)) and any(isinstance(e, dict) for e in v):
                out.append("%s%s:" % (pad, _key(key)))
                _block(v, indent + 2, path, out)
            else:
                out.append("%s%s: %s" % (pad, _key(key), _flow(v, path)))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            path = "%s[%d]" % (where, i)
            if isinstance(v, dict) and v:
                inner = []
                _block(v, indent + 2, path, inner)
                out.append(pad + "- " + inner[0][indent + 2:])
                out.extend(inner[1:])
            else:
                out.append("%s- %s" % (pad, _flow(v, path)))
    else:
        out.append(pad + _flow(value, where))


def dumps(value):
    """A dict as YAML text."""
    out = []
    _block(value, 0, "", out)
    return "\n".join(out) + "\n"


def value_text(value):
    """One value as the text of an override (KEY=VALUE): text as it is, the rest as YAML."""
    if isinstance(value, str):
        return value
    return _flow(value, "override")
