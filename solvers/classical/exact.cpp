#include <cmath>
#include <cstdlib>

#include "autodiff/errors.h"
#include "solvers/classical/classical.h"
#include "solvers/classical/discretization.h"
#include "solvers/exact_solutions.h"

namespace jetpde::classical {

void check(const solvers::Mathematics& math, const Options& options) {
  const Discretization d(math, options.grid);
  (void)d;
}

solvers::Mathematics with_pinn_conditions(const solvers::Mathematics& math,
                                          const solvers::PinnOptions& pinn) {
  solvers::Mathematics out = math;
  const geometry::Bounds bounds = math.domain->bounds();
  for (std::size_t k = 0; k < pinn.network.periodic.size(); ++k) {
    const nn::PeriodicInput& p = pinn.network.periodic[k];
    const std::string& name =
        math.context.coordinate_names().at(static_cast<std::size_t>(p.column));
    const double length = bounds.hi[static_cast<std::size_t>(p.column)] -
                          bounds.lo[static_cast<std::size_t>(p.column)];
    if (std::abs(p.period - length) > 1e-9 * length)
      throw UserError("network.periodic[" + std::to_string(k) + "]: a period of " +
                      geometry::format_number(p.period) + " along " + name +
                      " is not the domain's length " + geometry::format_number(length) +
                      ", which is what the petsc solver's periodic axes are");
    out.conditions.push_back({.kind = solvers::Condition::Kind::periodic,
                              .name = "network.periodic[" + std::to_string(k) + "]",
                              .coordinate = name});
  }
  const std::vector<solvers::HardConstraint>& constraints = pinn.hard_constraints;
  const bool time = math.context.time_index() >= 0;
  for (std::size_t k = 0; k < constraints.size(); ++k) {
    const solvers::HardConstraint& h = constraints[k];
    const std::string where = "hard_constraints[" + std::to_string(k) + "]";
    // A constant nonzero distance (ldc.yaml's "1": the field is a known part plus the network)
    // constrains nothing: the grid's field is free.
    if (!h.distance.empty()) {
      char* end = nullptr;
      const double dist = std::strtod(h.distance.c_str(), &end);
      while (end && (*end == ' ' || *end == '\t')) ++end;
      if (end && *end == '\0' && end != h.distance.c_str() && dist != 0 && std::isfinite(dist))
        continue;
    }
    if (!h.distance.empty())
      throw UserError(where +
                      ": a constraint with its own distance D holds where D = 0, which the "
                      "petsc solver cannot place on its grid: write it as conditions");
    // The pieces, comma-separated ("" alone: the whole boundary).
    std::vector<std::string> pieces;
    std::string rest = h.on;
    for (std::size_t at; (at = rest.find(',')) != std::string::npos; rest = rest.substr(at + 1))
      pieces.push_back(rest.substr(0, at));
    pieces.push_back(rest);
    for (std::string piece : pieces) {
      piece.erase(0, piece.find_first_not_of(" \t"));
      piece.erase(piece.find_last_not_of(" \t") + 1);
      const auto add = [&](solvers::Condition::Kind kind, const std::string& on) {
        out.conditions.push_back(
            {.kind = kind, .name = where, .field = h.field, .on = on, .value = h.value});
      };
      if (piece == "final")
        throw UserError(where +
                        ": a value at the final time is not a condition time stepping "
                        "can impose");
      if (piece == "initial") {
        add(solvers::Condition::Kind::initial_value, "");
      } else if (piece.empty() && time) {
        add(solvers::Condition::Kind::initial_value, "");
        add(solvers::Condition::Kind::dirichlet, "spatial");
      } else {
        add(solvers::Condition::Kind::dirichlet, piece);
      }
    }
  }
  return out;
}

solvers::ExactSolution exact_solution(const solvers::Reference& ref,
                                      const solvers::Mathematics& math) {
  if (ref.function) return ref.function;
  solvers::BuiltinExact builtin = solvers::BuiltinExact::none;
  try {
    builtin = solvers::builtin_exact_names().from_name(ref.exact);
  } catch (const UserError& e) {
    throw UserError(std::string("reference.exact: ") + e.what());
  }
  if (builtin == solvers::BuiltinExact::burgers_sine) {
    const equations::Symbol* nu = math.context.find("nu");
    if (!nu)
      throw UserError("reference.exact: burgers_sine takes nu from the constants: declare nu");
    const double value = nu->value;
    return [value](const MatrixD& points) { return solvers::burgers_sine_exact(points, value); };
  }
  if (ref.expressions.empty()) return {};
  const std::vector<std::string>& fields = math.context.field_names();
  std::vector<equations::Equation> exprs;
  for (const std::string& f : fields) {
    const auto e = ref.expressions.find(f);
    if (e == ref.expressions.end())
      throw UserError("reference.expressions: no exact solution for field '" + f +
                      "' (give one per field)");
    exprs.push_back(equations::parse(e->second, math.context, "reference.expressions." + f));
    // Only coordinates and constants: no grid to take fields or derivatives from.
    const auto walk = [&](auto&& self, const equations::Expr& x) -> void {
      using equations::ExprKind;
      if (x->kind == ExprKind::field || x->kind == ExprKind::derivative ||
          x->kind == ExprKind::laplacian || x->kind == ExprKind::param ||
          x->kind == ExprKind::normal_component)
        throw UserError("reference.expressions." + f + ": '" + e->second +
                        "' is not a function of the coordinates and constants alone");
      for (const auto& a : x->args) self(self, a);
    };
    walk(walk, exprs.back().core);
  }
  // The evaluator's grid is not used by these expressions; it only needs the axes' count.
  std::vector<Axis> axes(math.context.spatial().size());
  auto evaluator = std::make_shared<StencilEvaluator>(axes, math.context);
  return [evaluator, exprs](const MatrixD& points) {
    MatrixD out(points.rows(), static_cast<Eigen::Index>(exprs.size()));
    EvalPoint p;
    p.coordinates.resize(static_cast<std::size_t>(points.cols()));
    for (Eigen::Index r = 0; r < points.rows(); ++r) {
      for (Eigen::Index c = 0; c < points.cols(); ++c)
        p.coordinates[static_cast<std::size_t>(c)] = points(r, c);
      for (std::size_t f = 0; f < exprs.size(); ++f)
        out(r, static_cast<Eigen::Index>(f)) = (*evaluator)(exprs[f].core, p);
    }
    return out;
  };
}

}  // namespace jetpde::classical
