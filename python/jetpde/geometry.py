"""Domains for jetpde.Problem: each shape is the `geometry:` entry of a config (docs/config.md).

    jetpde.geometry.Interval(-1, 1).times_time(0, 1)          # x in [-1, 1], t in [0, 1]
    jetpde.geometry.Rectangle([0, 0], [1, 1]) - jetpde.geometry.Disk([0.5, 0.5], 0.2)
"""

import copy as _copy


class Shape:
    """A geometry entry; combine with | (union), & (intersection), - (difference)."""

    def __init__(self, type, **keys):
        self._entry = {"type": type}
        for key, value in keys.items():
            if value is not None:
                self._entry[key] = value

    def to_dict(self):
        return _copy.deepcopy(self._entry)

    def times_time(self, t0, t1, name=None):
        """This shape times the time interval [t0, t1] (time coordinate `name`, default t)."""
        out = _copy.deepcopy(self)
        out._entry["time"] = [t0, t1]
        if name is not None:
            out._entry["time_coordinate"] = name
        return out

    def with_coordinates(self, *names):
        """The spatial coordinates' names (default x, y, z)."""
        out = _copy.deepcopy(self)
        out._entry["coordinates"] = list(names)
        return out

    def __or__(self, other):
        return Union(self, other)

    def __and__(self, other):
        return Intersection(self, other)

    def __sub__(self, other):
        return Difference(self, other)

    def __repr__(self):
        return "jetpde.geometry.Shape(%r)" % (self._entry,)


def _list(values):
    return [v for v in values]


class Interval(Shape):
    def __init__(self, lo, hi):
        super().__init__("interval", min=[lo], max=[hi])


class Rectangle(Shape):
    def __init__(self, lo, hi):
        super().__init__("rectangle", min=_list(lo), max=_list(hi))


class Box(Shape):
    def __init__(self, lo, hi):
        super().__init__("box", min=_list(lo), max=_list(hi))


class Hypercube(Shape):
    def __init__(self, lo, hi):
        super().__init__("hypercube", min=_list(lo), max=_list(hi))


class Disk(Shape):
    def __init__(self, center, radius):
        super().__init__("disk", center=_list(center), radius=radius)


class Sphere(Shape):
    def __init__(self, center, radius):
        super().__init__("sphere", center=_list(center), radius=radius)


class Polygon(Shape):
    """Vertices counter-clockwise, as pairs [(x0, y0), (x1, y1), ...] or flattened."""

    def __init__(self, vertices):
        flat = []
        for v in vertices:
            if isinstance(v, (list, tuple)):
                flat.extend(v)
            else:
                flat.append(v)
        super().__init__("polygon", vertices=flat)


class Stl(Shape):
    def __init__(self, file):
        super().__init__("stl", file=str(file))


class _Combination(Shape):
    def __init__(self, type, shapes):
        super().__init__(type)
        self._entry["of"] = [s.to_dict() for s in shapes]


class Union(_Combination):
    def __init__(self, *shapes):
        super().__init__("union", shapes)


class Intersection(_Combination):
    def __init__(self, *shapes):
        super().__init__("intersection", shapes)


class Difference(_Combination):
    """The first shape minus the others."""

    def __init__(self, *shapes):
        super().__init__("difference", shapes)
