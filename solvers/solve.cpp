#include "solvers/solve.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "autodiff/errors.h"
#include "equations/analysis.h"
#include "equations/parser.h"
#include "geometry/sampler.h"
#include "nn/detail/names.h"
#include "solvers/exact_solutions.h"
#include "solvers/marching.h"

namespace jetpde::solvers {
namespace {

constexpr int kSampledValidationPoints = 100000;  // Reference::points: 0 above 3 dimensions
constexpr Eigen::Index kValidationBlock = 16384;  // points per evaluation (bounds its memory)

// The grid of an exact-solution validation up to 3 dimensions: points per spatial axis, and the
// time levels (0: no time).
GridSpec validation_grid(const Mathematics& math, bool has_time) {
  const int space = math.domain->bounds().dim() - (has_time ? 1 : 0);
  return {.counts = {space == 1 ? 256 : space == 2 ? 101 : 31}, .time_steps = has_time ? 101 : 0};
}

// How many points an exact-solution validation uses: reference.points sampled ones, else a grid
// up to 3 dimensions (time included), kSampledValidationPoints sampled ones above.
long long validation_point_count(const Reference& ref, const Mathematics& math) {
  if (ref.points > 0) return ref.points;
  const int dims = math.domain->bounds().dim();
  if (dims > 3) return kSampledValidationPoints;
  const bool has_time = math.context.time_index() >= 0;
  const GridSpec g = validation_grid(math, has_time);
  long long n = 1;
  for (int d = 0; d < dims - (has_time ? 1 : 0); ++d) n *= g.counts[0];
  return has_time ? n * g.time_steps : n;
}

// Before training: a validation at `points` points fits in half the memory available, or a
// UserError says how many points fit.
void check_validation_size(const Mathematics& math, long long points) {
  const auto dims = static_cast<double>(math.domain->bounds().dim());
  const auto fields = static_cast<double>(math.context.field_names().size());
  const double per_point = dims + 3 * fields;  // values of 8 bytes per point
  const auto available = static_cast<double>(compiler::available_memory(compiler::Backend::cpu));
  const double needed = static_cast<double>(points) * per_point * 8;
  if (available <= 0 || needed <= available / 2) return;
  const auto gb = [](double bytes) { return nn::detail::short_number(bytes / 1e9, 3) + " GB"; };
  const auto fit = static_cast<long long>(available / 2 / (per_point * 8));
  throw UserError("reference.points: validating at " + std::to_string(points) +
                  " points needs about " + gb(needed) + " of memory, more than half of the " +
                  gb(available) + " available; give fewer points (reference.points) (" +
                  std::to_string(fit) + " points fit)");
}

// Points to measure the error at: the reference data's, or for an exact solution
// validation_point_count() points (a grid, or sampled in the domain).
MatrixD validation_set(const Reference& ref, const Mathematics& math, std::uint64_t seed) {
  if (ref.data) return ref.data->points;
  const long long n = validation_point_count(ref, math);
  check_validation_size(math, n);
  const bool has_time = math.context.time_index() >= 0;
  if (ref.points > 0 || math.domain->bounds().dim() > 3)
    return geometry::sample_interior(*math.domain, static_cast<std::size_t>(n),
                                     {.method = geometry::SampleMethod::sobol, .seed = seed})
        .points;
  std::vector<int> dims;
  std::vector<double> times;
  const MatrixD grid =
      spatial_grid(*math.domain, validation_grid(math, has_time), has_time, &dims, &times);
  const MatrixD all = with_times(grid, times);
  if (math.domain->is_box()) return all;
  // The grid spans the bounding box; the error is measured in the closed domain only (a hole,
  // the corners around a disk or an STL part are not trained, and would dominate it).
  const MatrixD d = math.domain->signed_distance(all);
  const auto count = static_cast<Eigen::Index>((d.array() <= 0).count());
  if (count == 0)  // a domain too thin for the grid: points sampled in it instead
    return geometry::sample_interior(*math.domain, static_cast<std::size_t>(n),
                                     {.method = geometry::SampleMethod::sobol, .seed = seed})
        .points;
  MatrixD inside(count, all.cols());
  for (Eigen::Index i = 0, k = 0; i < all.rows(); ++i)
    if (d(i, 0) <= 0) inside.row(k++) = all.row(i);
  return inside;
}

// f over the rows of `points` (and of `rows`, the same count, when given) in blocks of
// kValidationBlock rows, the last one padded with copies of its first row so that one compiled
// program of one size serves every block.
MatrixD in_blocks(const MatrixD& points, const MatrixD& rows,
                  const std::function<MatrixD(const MatrixD&, const MatrixD&)>& f) {
  if (points.rows() <= kValidationBlock) return f(points, rows);
  const auto block_of = [](const MatrixD& m, Eigen::Index begin, Eigen::Index n) {
    MatrixD block(kValidationBlock, m.cols());
    block.topRows(n) = m.middleRows(begin, n);
    for (Eigen::Index i = n; i < kValidationBlock; ++i) block.row(i) = m.row(begin);
    return block;
  };
  MatrixD out;
  for (Eigen::Index begin = 0; begin < points.rows(); begin += kValidationBlock) {
    const Eigen::Index n = std::min(kValidationBlock, points.rows() - begin);
    const MatrixD values =
        f(block_of(points, begin, n), rows.size() ? block_of(rows, begin, n) : MatrixD());
    if (out.size() == 0) out.resize(points.rows(), values.cols());
    out.middleRows(begin, n) = values.topRows(n);
  }
  return out;
}

MatrixD in_blocks(const MatrixD& points, const std::function<MatrixD(const MatrixD&)>& f) {
  return in_blocks(points, MatrixD(),
                   [&](const MatrixD& block, const MatrixD&) { return f(block); });
}

// f over the rows of `points` split over `comm`'s ranks: each rank evaluates its share (in blocks)
// and every rank gets all rows back (one allgather), so the metrics computed from them are the
// same everywhere. Serial: in_blocks.
MatrixD over_ranks(const Communicator& comm, const MatrixD& points,
                   const std::function<MatrixD(const MatrixD&)>& f) {
  if (comm.size() == 1) return in_blocks(points, f);
  const Share mine = share_of(points.rows(), comm.rank(), comm.size());
  MatrixD part;
  if (mine.count > 0) part = in_blocks(points.middleRows(mine.first, mine.count), f);
  const std::vector<double> all =
      comm.allgather({part.data(), static_cast<std::size_t>(part.size())});
  const auto cols = static_cast<Eigen::Index>(all.size()) / points.rows();
  return Eigen::Map<const MatrixD>(all.data(), points.rows(), cols);
}

Metrics error_metrics_per_field(const MatrixD& u, const MatrixD& ref,
                                const std::vector<std::string>& fields) {
  Metrics m = error_metrics(u, ref);
  if (fields.size() > 1)
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const auto c = static_cast<Eigen::Index>(f);
      const Metrics one = error_metrics(u.col(c), ref.col(c));
      m["rel_l2_" + fields[f]] = one.at("rel_l2");
    }
  return m;
}

// Derived metrics (Reference::metrics): each expression of the network's fields against the same
// expression of the reference, NAME_rel_l2 and NAME_max_abs. The reference side once, before
// training: an exact solution given as expressions is substituted (derivatives included), else
// the reference values at the points are (values only).
struct DerivedMetrics {
  std::vector<std::string> names, texts;
  MatrixD reference;  // [points, metrics]

  DerivedMetrics(const Reference& r, std::uint64_t seed, Problem& problem, const MatrixD& points,
                 const std::vector<std::string>& fields, const MatrixD& values) {
    if (r.metrics.empty()) return;
    const equations::Context& context = problem.math().context;
    for (const auto& [name, text] : r.metrics) {
      names.push_back(name);
      texts.push_back(text);
      // The reference side has no value for a trainable constant (the network side's changes).
      const auto used = equations::analyze(equations::parse(text, context), context);
      if (!used.params.empty())
        throw UserError("reference.metrics." + name + ": '" + text +
                        "' uses the trainable constant '" + *used.params.begin() +
                        "', which the reference has no value for");
    }
    std::map<std::string, Eigen::Index> columns;
    for (std::size_t f = 0; f < fields.size(); ++f)
      columns[fields[f]] = static_cast<Eigen::Index>(f);
    const bool substitute = r.exact == "none" && !r.function && !r.data;
    const Eigen::VectorXd theta = problem.initial_theta(seed);
    std::size_t k = 0;
    try {
      MatrixD ref(points.rows(), static_cast<Eigen::Index>(texts.size()));
      for (k = 0; k < texts.size(); ++k)
        ref.col(static_cast<Eigen::Index>(k)) =
            in_blocks(points, values, [&](const MatrixD& block, const MatrixD& given) {
              return substitute ? problem.evaluate_expressions_given(theta, block, {texts[k]},
                                                                     r.expressions, {}, {})
                                : problem.evaluate_expressions_given(theta, block, {texts[k]}, {},
                                                                     columns, given);
            });
      reference = ref;
    } catch (const UserError& e) {
      throw UserError("reference.metrics." + names[k] + ": " + e.what());
    }
  }

  void add(Problem& problem, const Eigen::VectorXd& theta, const MatrixD& points,
           Metrics& m) const {
    if (names.empty()) return;
    const MatrixD u = over_ranks(problem.communicator(), points, [&](const MatrixD& block) {
      return problem.evaluate_expressions(theta, block, texts);
    });
    for (std::size_t k = 0; k < names.size(); ++k) {
      const auto col = static_cast<Eigen::Index>(k);
      const Metrics one = error_metrics(u.col(col), reference.col(col));
      m[names[k] + "_rel_l2"] = one.at("rel_l2");
      m[names[k] + "_max_abs"] = one.at("max_abs");
    }
  }
};

}  // namespace

double clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ExactSolution exact_solution(const Reference& ref, Problem& p) {
  const Mathematics& math = p.math();
  if (ref.function) return ref.function;
  BuiltinExact builtin = BuiltinExact::none;
  try {
    builtin = builtin_exact_names().from_name(ref.exact);
  } catch (const UserError& e) {
    throw UserError(std::string("reference.exact: ") + e.what());
  }
  if (builtin == BuiltinExact::burgers_sine) {
    const equations::Symbol* nu = math.context.find("nu");
    if (!nu)
      throw UserError("reference.exact: burgers_sine takes nu from the constants: declare nu");
    const double value = nu->value;
    return [value](const MatrixD& points) { return burgers_sine_exact(points, value); };
  }
  if (ref.expressions.empty()) return {};
  const std::vector<std::string>& fields = math.context.field_names();
  std::vector<std::string> texts;
  for (const std::string& f : fields) {
    const auto e = ref.expressions.find(f);
    if (e == ref.expressions.end())
      throw UserError("reference.expressions: no exact solution for field '" + f +
                      "' (give one per field)");
    texts.push_back(e->second);
  }
  return [&p, texts](const MatrixD& points) {
    return p.evaluate_expressions(Eigen::VectorXd::Zero(p.objective().layout().size()), points,
                                  texts);
  };
}

namespace {
constexpr std::array<options::EnumName<Device>, 3> kDevices{{
    {Device::automatic, "auto", "a CUDA GPU when one answers, else the CPU"},
    {Device::cpu, "cpu", "the CPU"},
    {Device::cuda, "cuda", "the GPU, falling back to the CPU with a warning when none answers"},
}};
}  // namespace

const options::EnumTable<Device>& device_names() {
  static constexpr options::EnumTable<Device> table("device", kDevices);
  return table;
}

Device device_from_name(const std::string& name) {
  try {
    return device_names().from_name(name);
  } catch (const UserError& e) {
    throw UserError(std::string("device: ") + e.what());
  }
}

void choose_device(Device device, bool required, ProblemSpec& spec,
                   const std::function<void(const std::string&)>& warn) {
  spec.compile.backend = compiler::Backend::cpu;
  if (device == Device::cpu) return;
  std::string why;
  if (compiler::backend_can_run(compiler::Backend::cuda, {}, &why)) {
    spec.compile.backend = compiler::Backend::cuda;
    return;
  }
  if (device == Device::automatic) return;
  if (required)
    throw UserError("device: cuda is required (require_device: true) but cannot run here: " + why);
  const std::string message = "device: cuda cannot run here (" + why + "); running on the CPU";
  if (warn)
    warn(message);
  else
    std::fprintf(stderr, "jetpde: warning: %s\n", message.c_str());
}

Solver::Solver(std::unique_ptr<Problem> problem, SolveOptions options)
    : problem_(std::move(problem)), options_(std::move(options)) {
  started_ = options_.started_at >= 0 ? options_.started_at : clock_seconds();
  if (!problem_) throw UserError("Solver: no problem");
  Problem& p = *problem_;
  const SolveOptions& o = options_;
  trainer_ = std::make_unique<Trainer>(p.objective(), o.stages, o.weighting);
  trainer_->check_precision(o.precision_check, [warn = o.warn](const std::string& line) {
    if (warn)
      warn(line);
    else
      std::fprintf(stderr, "jetpde: %s\n", line.c_str());
  });
  for (const Stage& s : o.stages) total_steps_ += s.steps;
  if (o.time_windows < 1)
    throw UserError("training.time_windows: " + std::to_string(o.time_windows) +
                    "; give 1 (no time marching) or more windows");
  if (o.time_windows > 1) {
    // Time marching: the windows' problems are built as they come (each needs the previous
    // window's solution); the combined solution's solver now, so that what it rejects is found
    // before training, and its validation (over the whole domain) is the run's.
    check_time_windows(p.spec(), o.time_windows);
    SolveOptions combined = o;
    combined.time_windows = 1;
    combined.on_step = {};
    combined.checkpoint = nullptr;
    combined.resume = nullptr;
    combined_ = std::make_unique<Solver>(
        std::make_unique<Problem>(marched_spec(p.spec(), o.time_windows), p.communicator()),
        std::move(combined));
    exact_ = combined_->exact_;
    metric_names_ = combined_->metric_names_;
    validation_points_ = combined_->validation_points_;
    return;
  }
  if (o.resample_every > 0 || std::any_of(o.stages.begin(), o.stages.end(),
                                          [](const Stage& s) { return s.resample_every > 0; })) {
    const int candidates =
        o.adaptive_candidates > 0 ? o.adaptive_candidates : 8 * p.spec().pinn.interior_points;
    trainer_->resample_every(o.resample_every, [&p, seed = o.seed, adaptive = o.adaptive,
                                                candidates](int step, const Eigen::VectorXd& th) {
      const std::uint64_t at = seed + static_cast<std::uint64_t>(step);
      if (!adaptive) return p.resample(at);
      Bindings b = p.resample(at);
      for (auto& [name, value] : p.adaptive_interior(th, candidates, at)) b[name] = value;
      return b;
    });
  }
  exact_ = exact_solution(o.reference, p);
  if (o.reference.any()) {
    // Validation: the error metrics of the compared fields and the derived metrics, every
    // reference.every steps (else at the end).
    const Reference& ref = o.reference;
    const equations::Context& context = p.math().context;
    const std::vector<std::string> fields = ref.data ? ref.data->fields : context.field_names();
    std::vector<Eigen::Index> columns;
    for (const std::string& f : fields) columns.push_back(context.field_index(f));
    const MatrixD points = validation_set(ref, p.math(), o.seed);
    validation_points_ = points.rows();
    const MatrixD values = ref.data ? ref.data->values : in_blocks(points, exact_);
    auto derived = std::make_shared<const DerivedMetrics>(ref, o.seed, p, points, fields, values);
    validation_ = [&p, fields, columns, points, values, derived](const Eigen::VectorXd& th) {
      // Each rank its share of the points (with several ranks), the metrics from all.
      const MatrixD u = over_ranks(p.communicator(), points,
                                   [&](const MatrixD& block) { return p.evaluate(th, block); });
      MatrixD picked(u.rows(), static_cast<Eigen::Index>(columns.size()));
      for (std::size_t f = 0; f < columns.size(); ++f)
        picked.col(static_cast<Eigen::Index>(f)) = u.col(columns[f]);
      Metrics m = error_metrics_per_field(picked, values, fields);
      derived->add(p, th, points, m);
      return m;
    };
    trainer_->validate_every(ref.every > 0 ? ref.every : total_steps_ + 1, validation_);
    metric_names_ = {"rel_l2", "max_abs"};
    if (fields.size() > 1)
      for (const auto& f : fields) metric_names_.push_back("rel_l2_" + f);
    for (const std::string& n : derived->names) {
      metric_names_.push_back(n + "_rel_l2");
      metric_names_.push_back(n + "_max_abs");
    }
  }
  if (o.on_step) trainer_->on_step(o.on_step);
  if (o.checkpoint)
    trainer_->checkpoint_every(std::max(1, o.checkpoint_every),
                               [sink = o.checkpoint](const TrainerState& s) { sink->save(s); });
}

Solver::~Solver() = default;

Solution Solver::run(const TrainerState* resume) {
  if (!trainer_) throw UserError("Solver::run: called twice (a Solver solves once)");
  if (options_.time_windows > 1) {
    if (resume)
      throw UserError(
          "training.time_windows: resuming a time-marched run is not supported yet (its "
          "checkpoint holds the combined parameters, not the window's optimizer state); run it "
          "again without --resume");
    return march();
  }
  Eigen::VectorXd theta = problem_->initial_theta(options_.seed);
  if (!resume)
    if (const int n = problem_->fit_output_layer(theta);
        n > 0 && problem_->communicator().rank() == 0)
      std::cout << "network: pirate, last layer fitted by least squares to " << n
                << " initial/boundary points" << std::endl;
  return train(std::move(theta), resume);
}

Solution Solver::run_from(Eigen::VectorXd theta) {
  if (!trainer_) throw UserError("Solver::run: called twice (a Solver solves once)");
  if (options_.time_windows > 1)
    throw UserError("Solver::run_from: a time-marched solve starts each window itself (run())");
  if (theta.size() != problem_->objective().layout().size())
    throw UserError("Solver::run_from: " + std::to_string(theta.size()) + " parameters for a " +
                    "problem of " + std::to_string(problem_->objective().layout().size()));
  return train(std::move(theta), nullptr);
}

Metrics Solver::validate(const Eigen::VectorXd& theta) const {
  if (combined_) return combined_->validate(theta);  // marching: theta is the combined one's
  return validation_ ? validation_(theta) : Metrics{};
}

Solution Solver::train(Eigen::VectorXd theta, const TrainerState* resume) {
  const SolveOptions& o = options_;
  const double setup = clock_seconds() - started_;
  // The time budget counts from the start (setup included): a batch job's limit does.
  trainer_->stop_when(
      {.interrupt = o.interrupt,
       .max_seconds =
           o.max_time > 0 ? std::max(1e-9, o.max_time - (clock_seconds() - started_)) : 0,
       .target_error = o.target_error});
  const double t1 = clock_seconds();
  TrainResult result = trainer_->train(theta, resume);
  const double train_seconds = clock_seconds() - t1;
  // A run stopped early (time budget, interrupt, callback) between validations is measured as a
  // finished one is: its last parameters validated once more (on every rank alike: the ranks
  // agreed on the stop). A non-finite end keeps what it had.
  if (validation_ && result.metrics.empty() && result.status != TrainResult::Status::non_finite)
    result.metrics = validation_(theta);
  Solution s(std::move(problem_), std::move(theta), exact_);
  s.result_ = std::move(result);
  s.history_ = trainer_->history();
  s.validation_points_ = validation_points_;
  s.resumed_from_ = resume ? resume->step : -1;
  s.setup_seconds_ = setup;
  s.train_seconds_ = train_seconds;
  trainer_.reset();
  return s;
}

void count_training_programs(const SolveOptions& options, ProblemSpec& spec) {
  MemoryOptions& m = spec.pinn.memory;
  const compiler::PrecisionPolicy run = spec.compile.pipeline.precision;
  // What auto stands for on the backend asked for (the programs are not compiled yet).
  compiler::PipelineOptions automatic = spec.compile.pipeline;
  automatic.precision = compiler::PrecisionPolicy::automatic;
  const compiler::PrecisionPolicy auto_as = automatic.resolved(spec.compile.backend);
  for (const Stage& stage : options.stages) {
    const compiler::PrecisionPolicy p = stage_start_precision(stage, run, auto_as);
    if (p != run && std::find(m.precisions.begin(), m.precisions.end(), p) == m.precisions.end())
      m.precisions.push_back(p);
  }
  // precision auto's check compares with fp32 (PrecisionCheck), which may take the run over.
  const bool checked = run == compiler::PrecisionPolicy::automatic &&
                       auto_as != compiler::PrecisionPolicy::fp32 &&
                       options.precision_check.every > 0;
  if (checked && std::find(m.precisions.begin(), m.precisions.end(),
                           compiler::PrecisionPolicy::fp32) == m.precisions.end())
    m.precisions.push_back(compiler::PrecisionPolicy::fp32);
  const Weighting::Kind kind = options.weighting.kind;
  m.term_gradients =
      m.term_gradients || kind == Weighting::Kind::annealing || kind == Weighting::Kind::gradnorm;
  m.probes = m.probes || kind == Weighting::Kind::ntk;
}

Solution solve(ProblemSpec spec, const SolveOptions& options) {
  const double started = options.started_at >= 0 ? options.started_at : clock_seconds();
  choose_device(options.device, options.require_device, spec, options.warn);
  count_training_programs(options, spec);
  SolveOptions o = options;
  o.started_at = started;
  const Communicator& comm = o.communicator ? *o.communicator : serial_communicator();
  Solver solver(std::make_unique<Problem>(std::move(spec), comm), std::move(o));
  return solver.run(options.resume);
}

}  // namespace jetpde::solvers
