// Which part of a geometry's boundary to sample: all of it, a named piece, the points that
// satisfy a predicate, or a named piece cut by a predicate.
//
//   BoundaryPiece::whole()                      the whole boundary
//   BoundaryPiece::named("left")                a piece by name (Geometry::piece_names())
//   BoundaryPiece::where("x == 0 and y > 0.5")  by a predicate over the coordinate names
//                                               (predicate.h); == within 1e-7 x size()
//   BoundaryPiece::where(fn, "inflow")          by a C++ predicate on a point, with a label for
//                                               messages
//   BoundaryPiece::parse(geometry, text)        a piece name when `text` is one, else a predicate
//   piece.and_where(...)                        cut a piece further
//
// resolve_piece() turns a piece into the patches a sampler draws from and the piece's measure
// (exact when nothing is cut by CSG or a predicate, else a deterministic quasi-Monte Carlo
// estimate, see measure.h). An unknown name, a bad predicate and an empty piece (measure zero)
// are UserErrors that name the piece and the geometry.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "geometry/geometry.h"
#include "geometry/predicate.h"

namespace jetpde::geometry {

class BoundaryPiece {
 public:
  BoundaryPiece() = default;  // the whole boundary
  static BoundaryPiece whole() { return {}; }
  static BoundaryPiece named(std::string name);
  static BoundaryPiece where(std::string predicate);
  static BoundaryPiece where(PointPredicate predicate, std::string label);
  static BoundaryPiece parse(const Geometry& geometry, const std::string& text);

  BoundaryPiece and_where(std::string predicate) const;
  BoundaryPiece and_where(PointPredicate predicate, std::string label) const;

  const std::string& name() const { return name_; }  // empty: no name restriction
  bool has_predicate() const { return !conditions_.empty(); }
  // How messages name the piece: "boundary piece 'left'", "the boundary", ...
  std::string label() const;

  // A condition: a predicate's text (compiled against the geometry when resolved) or a C++
  // predicate (`fn` set) with its label.
  struct Condition {
    std::string text;
    PointPredicate fn;
  };
  const std::vector<Condition>& conditions() const { return conditions_; }

 private:
  std::string name_;
  std::vector<Condition> conditions_;
};

struct ResolvedPiece {
  std::vector<BoundaryPatch> patches;  // keep functions include the piece's predicates
  double measure = 0;                  // of the piece
  bool measure_exact = false;
  std::string label;  // "boundary piece 'left' of rectangle [0, 1] x [0, 1]"
};

// The UserError of a piece that no boundary point lies on, or of measure zero (a corner
// `x == 0 and y == 0` of a rectangle): callers may add how to say what they meant.
class EmptyPieceError : public UserError {
 public:
  using UserError::UserError;
};

// EmptyPieceError for an empty piece.
ResolvedPiece resolve_piece(const Geometry& geometry, const BoundaryPiece& piece);

// The relative tolerance of == in predicates (times Geometry::size()).
inline constexpr double kPredicateRelativeTolerance = 1e-7;

}  // namespace jetpde::geometry
