// A small language of conditions on a point's coordinates, used to select part of a boundary
// (boundary.h):
//
//   x == 0        y >= 0.5 and x < 1        not (x == 0 or x == 1)        0 < t <= pi / 2
//
// Grammar (keywords and, or, not; names are the geometry's coordinate names, and pi):
//   predicate  := conjunct ("or" conjunct)*
//   conjunct   := negation ("and" negation)*
//   negation   := "not" negation | "(" predicate ")" | comparison
//   comparison := sum (op sum)+        op := == | != | < | <= | > | >=     (0 < x < 1 chains)
//   sum        := product (("+" | "-") product)*
//   product    := unary (("*" | "/") unary)*
//   unary      := "-" unary | number | name | "(" sum ")"
//
// Comparisons allow a tolerance `tol` (a relative 1e-7 of the domain's size, in boundary.h), so
// that points computed on a face compare equal to the face's coordinate: a == b means
// |a - b| <= tol, a <= b means a <= b + tol, a < b means a < b - tol (the negation of a >= b),
// and != is the negation of ==.
//
// Parse errors are UserErrors that name the predicate and the 1-based column:
//   predicate 'x === 0', column 5: unexpected '='
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "geometry/geometry.h"

namespace jetpde::geometry {

using PointPredicate = std::function<bool(Point)>;

// `names` are the columns of the points the predicate will see.
PointPredicate compile_predicate(const std::string& text, const std::vector<std::string>& names,
                                 double tolerance);

}  // namespace jetpde::geometry
