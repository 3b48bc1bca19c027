#include "geometry/boundary.h"

#include <algorithm>
#include <cctype>

#include "autodiff/errors.h"
#include "geometry/measure.h"

namespace jetpde::geometry {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

BoundaryPiece BoundaryPiece::named(std::string name) {
  BoundaryPiece piece;
  piece.name_ = std::move(name);
  return piece;
}

BoundaryPiece BoundaryPiece::where(std::string predicate) {
  return BoundaryPiece().and_where(std::move(predicate));
}

BoundaryPiece BoundaryPiece::where(PointPredicate predicate, std::string label) {
  return BoundaryPiece().and_where(std::move(predicate), std::move(label));
}

BoundaryPiece BoundaryPiece::and_where(std::string predicate) const {
  BoundaryPiece piece = *this;
  piece.conditions_.push_back({std::move(predicate), nullptr});
  return piece;
}

BoundaryPiece BoundaryPiece::and_where(PointPredicate predicate, std::string label) const {
  if (!predicate) throw UserError("boundary piece '" + label + "': the predicate is empty");
  BoundaryPiece piece = *this;
  piece.conditions_.push_back({std::move(label), std::move(predicate)});
  return piece;
}

BoundaryPiece BoundaryPiece::parse(const Geometry& geometry, const std::string& text) {
  const auto names = geometry.piece_names();
  if (std::find(names.begin(), names.end(), text) != names.end()) return named(text);
  if (is_identifier(text))  // a bare word that is no piece name: most likely a misspelt name
    throw UserError(geometry.describe() + " has no boundary piece '" + text + "'; its pieces are " +
                    join(names));
  return where(text);
}

std::string BoundaryPiece::label() const {
  if (name_.empty() && conditions_.empty()) return "the boundary";
  std::string out = "boundary piece '" + (name_.empty() ? conditions_[0].text : name_) + "'";
  const std::size_t first = name_.empty() ? 1 : 0;
  for (std::size_t i = first; i < conditions_.size(); ++i)
    out += (i == 0 ? " where '" : " and '") + conditions_[i].text + "'";
  return out;
}

ResolvedPiece resolve_piece(const Geometry& geometry, const BoundaryPiece& piece) {
  ResolvedPiece out;
  out.label = piece.label() + " of " + geometry.describe();
  std::vector<PointPredicate> predicates;
  for (const auto& condition : piece.conditions())
    predicates.push_back(condition.fn
                             ? condition.fn
                             : compile_predicate(condition.text, geometry.coordinate_names(),
                                                 kPredicateRelativeTolerance * geometry.size()));
  std::vector<BoundaryPatch> patches = geometry.boundary_patches();
  if (!piece.name().empty()) {
    std::erase_if(patches, [&](const BoundaryPatch& patch) {
      return std::find(patch.names.begin(), patch.names.end(), piece.name()) == patch.names.end();
    });
    if (patches.empty())
      throw UserError(geometry.describe() + " has no boundary piece '" + piece.name() +
                      "'; its pieces are " + join(geometry.piece_names()));
  }
  out.measure_exact = true;
  for (BoundaryPatch& patch : patches) {
    if (!predicates.empty()) {
      patch.keep = [inner = std::move(patch.keep), predicates](Point point, Point normal) {
        if (inner && !inner(point, normal)) return false;
        return std::all_of(predicates.begin(), predicates.end(),
                           [&](const PointPredicate& p) { return p(point); });
      };
      patch.kept_measure = -1;
    }
    if (patch.keep && patch.kept_measure < 0) {
      patch.kept_measure = estimate_kept_measure(patch);
      patch.kept_measure_exact = false;
    }
    const bool exact = !patch.keep || patch.kept_measure_exact;
    out.measure += patch.keep ? patch.kept_measure : patch.measure;
    out.measure_exact = out.measure_exact && exact;
  }
  // Patches that keep nothing are dropped, so that samplers do not draw from them in vain.
  std::erase_if(patches,
                [](const BoundaryPatch& patch) { return patch.keep && patch.kept_measure <= 0; });
  if (out.measure <= 0 || patches.empty())
    throw EmptyPieceError(out.label +
                          " is empty: no boundary point lies on it (or it has measure zero)");
  out.patches = std::move(patches);
  return out;
}

}  // namespace jetpde::geometry
