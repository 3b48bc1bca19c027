#!/usr/bin/env python3
"""Writes washer.stl, the part of washer.yaml: a flat ring (a washer), outer radius 1, inner
radius 0.4, z in [0, 0.5], its round walls cut into 48 flat facets, as binary STL (384
triangles, 19 KB). Plain Python, no dependencies: python3 examples/make_washer_stl.py [OUT]."""
import math
import struct
import sys

R_OUT, R_IN, HEIGHT, SEGMENTS = 1.0, 0.4, 0.5, 48


def main(path):
    ring = [(math.cos(2 * math.pi * i / SEGMENTS), math.sin(2 * math.pi * i / SEGMENTS))
            for i in range(SEGMENTS)]
    # Each vertex once, so that neighbouring triangles share exactly the same coordinates.
    def vertex(radius, i, z):
        c, s = ring[i % SEGMENTS]
        return (radius * c, radius * s, z)

    triangles = []
    for i in range(SEGMENTS):
        ob, ob1 = vertex(R_OUT, i, 0.0), vertex(R_OUT, i + 1, 0.0)
        ot, ot1 = vertex(R_OUT, i, HEIGHT), vertex(R_OUT, i + 1, HEIGHT)
        ib, ib1 = vertex(R_IN, i, 0.0), vertex(R_IN, i + 1, 0.0)
        it, it1 = vertex(R_IN, i, HEIGHT), vertex(R_IN, i + 1, HEIGHT)
        # Counter-clockwise seen from outside the solid (outward normals).
        triangles += [(ob, ob1, ot1), (ob, ot1, ot)]  # outer wall, normal away from the axis
        triangles += [(ib, it1, ib1), (ib, it, it1)]  # inner wall, normal towards the axis
        triangles += [(ot, ot1, it1), (ot, it1, it)]  # top, +z
        triangles += [(ob, ib1, ob1), (ob, ib, ib1)]  # bottom, -z
    with open(path, "wb") as out:
        out.write(b"washer.stl for jetpde's examples/washer.yaml".ljust(80, b" "))
        out.write(struct.pack("<I", len(triangles)))
        for a, b, c in triangles:
            u = [b[k] - a[k] for k in range(3)]
            v = [c[k] - a[k] for k in range(3)]
            n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
            length = math.sqrt(sum(x * x for x in n))
            out.write(struct.pack("<3f", *(x / length for x in n)))
            for p in (a, b, c):
                out.write(struct.pack("<3f", *p))
            out.write(struct.pack("<H", 0))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "washer.stl")
