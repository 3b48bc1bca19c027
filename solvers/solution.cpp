#include "solvers/solution.h"

#include "autodiff/errors.h"
#include "compiler/passes.h"

namespace jetpde::solvers {
namespace {

// One level's arrays at `points` (GridFields' order).
std::vector<NamedValues> arrays_at(const FieldSource& source, const MatrixD& points,
                                   const GridFieldOptions& o) {
  const std::vector<std::string>& fields = source.field_names();
  std::vector<NamedValues> out;
  const MatrixD u = source.fields(points);
  for (std::size_t f = 0; f < fields.size(); ++f)
    out.push_back({fields[f], u.col(static_cast<Eigen::Index>(f))});
  if (o.exact) {
    const MatrixD exact = o.exact(points);
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const auto c = static_cast<Eigen::Index>(f);
      out.push_back({fields[f] + "_exact", exact.col(c)});
      out.push_back({fields[f] + "_error", u.col(c) - exact.col(c)});
    }
  }
  std::vector<std::string> names = o.quantities, texts = o.quantities;
  if (o.residuals)
    for (const auto& [name, text] : source.residuals()) {
      names.push_back(name);
      texts.push_back(text);
    }
  if (!texts.empty()) {
    const MatrixD q = source.evaluate(points, texts);
    for (std::size_t k = 0; k < texts.size(); ++k)
      out.push_back({names[k], q.col(static_cast<Eigen::Index>(k))});
  }
  if (!source.domain().is_box()) {
    const MatrixD sd = source.domain().signed_distance(points);
    MatrixD inside(points.rows(), 1);
    for (Eigen::Index i = 0; i < points.rows(); ++i) inside(i, 0) = sd(i, 0) <= 0 ? 1.0 : 0.0;
    out.push_back({"inside", inside});
  }
  return out;
}

}  // namespace

GridFields FieldSource::fields_on_grid(const GridFieldOptions& o) const {
  GridFields g;
  g.bounds = domain().bounds();
  g.space = spatial_grid(domain(), o.grid, has_time(), &g.dims, &g.times);
  const std::size_t levels = has_time() ? g.times.size() : 1;
  for (std::size_t level = 0; level < levels; ++level) {
    MatrixD points(g.space.rows(), g.space.cols() + (has_time() ? 1 : 0));
    points.leftCols(g.space.cols()) = g.space;
    if (has_time()) points.col(g.space.cols()).setConstant(g.times[level]);
    g.levels.push_back(arrays_at(*this, points, o));
  }
  return g;
}

Solution::Solution(std::unique_ptr<Problem> problem, Eigen::VectorXd theta, ExactSolution exact)
    : problem_(std::move(problem)), theta_(std::move(theta)), exact_(std::move(exact)) {
  if (!problem_) throw UserError("Solution: no problem");
  const Eigen::Index n = problem_->objective().layout().size();
  if (theta_.size() != n)
    throw UserError("Solution: theta has " + std::to_string(theta_.size()) +
                    " parameters but the problem's network has " + std::to_string(n));
}

Solution::Solution(std::shared_ptr<const FieldSource> source, TrainResult result,
                   ExactSolution exact, long long validation_points)
    : source_(std::move(source)),
      exact_(std::move(exact)),
      result_(std::move(result)),
      validation_points_(validation_points),
      train_seconds_(result_.seconds) {
  if (!source_) throw UserError("Solution: no field source");
}

Problem& Solution::problem() const {
  if (!problem_)
    throw UserError("this solution was computed by a classical solver: it has no network problem");
  return *problem_;
}

Solution::Solution(Solution&&) noexcept = default;
Solution& Solution::operator=(Solution&&) noexcept = default;
Solution::~Solution() = default;

const geometry::Geometry& Solution::domain() const {
  return source_ ? source_->domain() : *problem_->math().domain;
}

const std::vector<std::string>& Solution::coordinate_names() const {
  if (source_) return source_->coordinate_names();
  return problem_->math().domain->coordinate_names();
}

const std::vector<std::string>& Solution::field_names() const {
  if (source_) return source_->field_names();
  return problem_->math().context.field_names();
}

bool Solution::has_time() const {
  return source_ ? source_->has_time() : problem_->math().context.time_index() >= 0;
}

MatrixD Solution::fields(const MatrixD& points) const {
  return source_ ? source_->fields(points) : problem_->evaluate(theta_, points);
}

MatrixD Solution::evaluate(const MatrixD& points,
                           const std::vector<std::string>& expressions) const {
  if (source_) return source_->evaluate(points, expressions);
  return problem_->evaluate_expressions(theta_, points, expressions);
}

std::vector<std::pair<std::string, std::string>> Solution::residuals() const {
  if (source_) return source_->residuals();
  const Mathematics& math = problem_->math();
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t e = 0; e < math.equations.size(); ++e)
    out.emplace_back(
        "residual_" +
            (math.equation_names.empty()
                 ? (math.equations.size() == 1 ? std::string("pde") : "pde" + std::to_string(e + 1))
                 : math.equation_names[e]),
        math.equations[e]);
  return out;
}

std::map<std::string, double> Solution::parameters() const {
  std::map<std::string, double> out;
  if (source_) return out;
  for (const equations::Symbol* s : problem_->math().context.symbols(equations::SymbolKind::param))
    out[s->name] = problem_->param(theta_, s->name);
  return out;
}

std::vector<std::pair<std::string, double>> Solution::losses() const {
  if (source_) return {};
  const Objective& objective = problem_->objective();
  std::vector<std::pair<std::string, double>> out;
  const auto& names = objective.slot_names();
  const auto& values = objective.slot_losses();
  for (std::size_t s = 0; s < names.size(); ++s)
    out.emplace_back(names[s], s < values.size() ? values[s] : 0.0);
  return out;
}

std::string Solution::precision() const {
  if (source_) return "fp64";
  return compiler::precision_name(
      problem_->objective().resolved(problem_->spec().compile.pipeline.precision));
}

std::string Solution::stage_precision(const Stage& stage) const {
  if (source_) return "fp64";
  const Objective& objective = problem_->objective();
  const compiler::PrecisionPolicy run = problem_->spec().compile.pipeline.precision;
  return compiler::precision_name(objective.resolved(
      stage_start_precision(stage, run, objective.resolved(compiler::PrecisionPolicy::automatic))));
}

compiler::Backend Solution::backend() const {
  return source_ ? compiler::Backend::cpu : problem_->objective().executable().backend();
}

}  // namespace jetpde::solvers
