#include "solvers/spec.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "autodiff/ops.h"
#include "nn/detail/names.h"

namespace jetpde::solvers {
namespace {

using Kind = Condition::Kind;

std::string number(double x) { return nn::detail::short_number(x, 17); }

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The residual builders. Most kinds are an expression of the field at the condition's points,
// lowered there with its normals; "(field)" and "(value)" keep the user's text one operand.
std::string field_of(const ConditionGraph& g) { return "(" + g.condition.field + ")"; }
std::string value_of(const ConditionGraph& g) { return "(" + g.condition.value + ")"; }

Var value_residual(const ConditionGraph& g) {  // dirichlet, initial_value: u - g
  return g.lower_here(field_of(g) + " - " + value_of(g));
}

Var neumann_residual(const ConditionGraph& g) {
  return g.lower_here("dot(n, grad" + field_of(g) + ") - " + value_of(g));
}

Var robin_residual(const ConditionGraph& g) {
  const Condition& c = g.condition;
  return g.lower_here(number(c.alpha) + "*" + field_of(g) + " + " + number(c.beta) +
                      "*dot(n, grad" + field_of(g) + ") - " + value_of(g));
}

Var rate_residual(const ConditionGraph& g) {  // initial_rate: u_t - g
  const equations::Context& ctx = g.context;
  return g.lower_here("d(" + g.condition.field + ", " +
                      ctx.coordinate_names()[static_cast<std::size_t>(ctx.time_index())] +
                      ", 1) - " + value_of(g));
}

Var expression_residual(const ConditionGraph& g) { return g.lower_here(g.condition.expression); }

// d^k u/dc^k on the lower face minus the same on the upper face, k = 0..derivatives, one column
// each.
Var periodic_residual(const ConditionGraph& g) {
  const Condition& c = g.condition;
  std::vector<std::string> texts;
  for (int d = 0; d <= c.derivatives; ++d)
    texts.push_back(d == 0 ? c.field
                           : "d(" + c.field + ", " + c.coordinate + ", " + std::to_string(d) + ")");
  const std::vector<Var> a = g.lower(g.points, texts, Var{}),
                         b = g.lower(g.input("upper"), texts, Var{});
  std::vector<Var> diffs;
  for (std::size_t d = 0; d < a.size(); ++d) diffs.push_back(a[d] - b[d]);
  return diffs.size() == 1 ? diffs[0] : concat_cols(diffs);
}

Var data_residual(const ConditionGraph& g) {
  // With an expression the values are of it (time marching hands a window's u_t over this way).
  if (!g.condition.expression.empty())
    return g.lower_here("(" + g.condition.expression + ")") - g.input("values");
  return col(g.fields(g.points), g.context.field_index(g.condition.field)) - g.input("values");
}

void check_periodic(const Condition& c, const Mathematics& math) {
  const equations::Context& ctx = math.context;
  if (ctx.coordinate_index(c.coordinate) < 0)
    throw UserError("unknown coordinate '" + c.coordinate +
                    "' (coordinates: " + joined(ctx.coordinate_names()) + ")");
  if (!math.domain->is_box())
    throw UserError("periodic conditions need an axis-aligned box domain, not " +
                    math.domain->describe());
  if (c.derivatives < 0) throw UserError("derivatives must not be negative");
}

void check_data(const Condition& c, const Mathematics& math) {
  const auto dim = static_cast<Eigen::Index>(math.context.coordinate_names().size());
  if (c.data_points.cols() != dim || c.data_points.rows() < 1 ||
      c.data_values.rows() != c.data_points.rows() || c.data_values.cols() != 1)
    throw UserError("data needs points [m, " + std::to_string(dim) +
                    "] and values [m, 1] with m >= 1");
}

using P = ConditionPoints;
// {kind, name, meaning, takes_field, needs_normals, needs_time, points, check, residual}
constexpr ConditionKind kKinds[] = {
    {Kind::dirichlet, "dirichlet", "field = value", true, false, false, P::piece, nullptr,
     value_residual},
    {Kind::neumann, "neumann", "d field / dn = value", true, true, false, P::piece, nullptr,
     neumann_residual},
    {Kind::robin, "robin", "alpha field + beta d field / dn = value", true, true, false, P::piece,
     nullptr, robin_residual},
    {Kind::periodic, "periodic", "equal values (and derivatives) on paired faces", true, false,
     false, P::periodic_pairs, check_periodic, periodic_residual},
    {Kind::initial_value, "initial_value", "field = value at the initial time", true, false, true,
     P::initial_face, nullptr, value_residual},
    {Kind::initial_rate, "initial_rate", "d field / dt = value at the initial time", true, false,
     true, P::initial_face, nullptr, rate_residual},
    {Kind::data, "data", "fit measured values", true, false, false, P::data, check_data,
     data_residual},
    {Kind::residual, "residual", "any expression = 0", false, true, false, P::piece, nullptr,
     expression_residual},
};

}  // namespace

std::span<const ConditionKind> condition_kinds() { return kKinds; }

const options::EnumTable<Condition::Kind>& condition_kind_names() {
  // The same rows, as the enum table that options and docs read.
  static constexpr auto rows = [] {
    std::array<options::EnumName<Condition::Kind>, std::size(kKinds)> out{};
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = {kKinds[i].kind, kKinds[i].name, kKinds[i].meaning};
    return out;
  }();
  static constexpr options::EnumTable<Condition::Kind> table("condition", rows);
  return table;
}

namespace {
constexpr std::array<options::EnumName<RankPoints>, 2> kRankPoints{{
    {RankPoints::local, "local", "each rank draws its share with a seed of its own"},
    {RankPoints::global, "global",
     "each rank draws the whole sets from the run's seed and keeps its share (the points of one "
     "rank, whatever the rank count)"},
}};
}  // namespace

const options::EnumTable<RankPoints>& rank_points_names() {
  static constexpr options::EnumTable<RankPoints> table("parallel.points", kRankPoints);
  return table;
}

namespace {
constexpr std::array<options::EnumName<GradientExchange>, 2> kExchanges{{
    {GradientExchange::neighbours, "neighbours",
     "a decomposed model's gradient summed per subdomain network among the ranks whose points "
     "reach it (stages without a line search)"},
    {GradientExchange::allreduce, "allreduce", "the whole gradient summed over all ranks"},
}};
}  // namespace

const options::EnumTable<GradientExchange>& gradient_exchange_names() {
  static constexpr options::EnumTable<GradientExchange> table("parallel.exchange", kExchanges);
  return table;
}

const ConditionKind& condition_kind(Condition::Kind kind) {
  for (const ConditionKind& k : kKinds)
    if (k.kind == kind) return k;
  throw InternalError("condition_kind: a kind without a record in the table");
}

Condition::Kind condition_kind_from_name(const std::string& name) {
  return condition_kind_names().from_name(name);
}

std::string condition_kind_name(Condition::Kind kind) { return condition_kind(kind).name; }

std::string condition_label(const Condition& c, std::size_t k) {
  return "condition " + std::to_string(k + 1) + " (" + condition_kind_name(c.kind) +
         (c.name.empty() ? "" : " '" + c.name + "'") + ")";
}

void check_fixed_points(const Condition& c, const geometry::Geometry& domain) {
  if (condition_kind(c.kind).points != ConditionPoints::piece) {
    std::string kinds;
    for (const ConditionKind& k : kKinds)
      if (k.points == ConditionPoints::piece)
        kinds += (kinds.empty() ? "" : ", ") + std::string(k.name);
    const std::size_t last = kinds.rfind(", ");
    if (last != std::string::npos) kinds.replace(last, 2, " and ");
    throw UserError("`at` (fixed points) is for " + kinds + " conditions, not " +
                    condition_kind_name(c.kind));
  }
  if (!c.on.empty())
    throw UserError("give either `on` (a boundary piece) or `at` (points), not both");
  const std::vector<std::string>& names = domain.coordinate_names();
  if (c.at.cols() != domain.dim())
    throw UserError("the points `at` have " + std::to_string(c.at.cols()) +
                    " coordinates, the domain has " + std::to_string(domain.dim()) + " (" +
                    joined(names) + ")");
  const geometry::Bounds b = domain.bounds();
  const double tol = 1e-9 * domain.size();
  for (Eigen::Index i = 0; i < c.at.rows(); ++i) {
    std::string point;
    for (Eigen::Index j = 0; j < c.at.cols(); ++j)
      point += (j ? ", " : "") + geometry::format_number(c.at(i, j));
    point = "point " + std::to_string(i + 1) + " (" + point + ")";
    for (Eigen::Index j = 0; j < c.at.cols(); ++j) {
      const auto k = static_cast<std::size_t>(j);
      if (!std::isfinite(c.at(i, j))) throw UserError(point + " is not finite");
      if (c.at(i, j) < b.lo[k] - tol || c.at(i, j) > b.hi[k] + tol)
        throw UserError(point + " lies outside the domain's bounds: " + names[k] + " must be in [" +
                        geometry::format_number(b.lo[k]) + ", " + geometry::format_number(b.hi[k]) +
                        "]");
    }
    const double d = domain.signed_distance(geometry::Point(&c.at(i, 0), names.size()));
    if (d > tol)
      throw UserError(point + " lies outside " + domain.describe() + " (at distance " +
                      geometry::format_number(d) + ")");
  }
}

void check_mathematics(const Mathematics& math) {
  if (!math.domain) throw UserError("problem: no domain");
  const equations::Context& ctx = math.context;
  if (ctx.coordinate_names() != math.domain->coordinate_names())
    throw UserError("problem: the equations' coordinates (" + joined(ctx.coordinate_names()) +
                    ") differ from the domain's (" + joined(math.domain->coordinate_names()) +
                    ", " + math.domain->describe() + ")");
  if (ctx.field_names().empty()) throw UserError("problem: no fields");
  if (math.equations.empty()) throw UserError("problem: no equations");
  if (!math.equation_names.empty() && math.equation_names.size() != math.equations.size())
    throw UserError("problem: " + std::to_string(math.equation_names.size()) +
                    " equation names for " + std::to_string(math.equations.size()) + " equations");
  for (std::size_t k = 0; k < math.conditions.size(); ++k) {
    const Condition& c = math.conditions[k];
    const ConditionKind& kind = condition_kind(c.kind);
    try {
      if (kind.takes_field && ctx.field_index(c.field) < 0)
        throw UserError("unknown field '" + c.field + "' (fields: " + joined(ctx.field_names()) +
                        ")");
      if (kind.needs_time && ctx.time_index() < 0)
        throw UserError("an initial condition needs a time coordinate");
      if (c.at.rows() > 0) check_fixed_points(c, *math.domain);
      if (kind.check) kind.check(c, math);
    } catch (const UserError& e) {
      throw SpecError("conditions[" + std::to_string(k) + "]", condition_label(c, k), e.what());
    }
  }
}

compiler::CompileOptions default_compile_options() {
  compiler::CompileOptions o = compiler::CompileOptions::from_environment();
  o.pipeline.precision = compiler::PrecisionPolicy::fp32;
  return o;
}

}  // namespace jetpde::solvers
