#include "io/run.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "autodiff/errors.h"
#include "equations/analysis.h"
#include "geometry/sampler.h"
#include "io/checkpoint.h"
#include "io/grid_output.h"
#include "io/progress.h"
#include "io/text_file.h"
#include "nn/detail/names.h"
#include "solvers/exact_solutions.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string dump(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

void prepare_folder(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UserError("output.dir: cannot create the run folder '" + dir +
                    "': " + (ec ? ec.message() : "a file of that name is in the way"));
  // Write access, checked now rather than after hours of training.
  const std::string probe = dir + "/.jetpde-write-test-" + std::to_string(::getpid());
  std::ofstream out(probe);
  if (!out)
    throw UserError("output.dir: cannot write into the run folder '" + dir +
                    "': " + std::strerror(errno));
  out.close();
  fs::remove(probe, ec);
  // Temporaries of atomic writes that a killed run (kill -9, a node failure) left behind: the
  // files they were to replace are whole, these are garbage.
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename().string().find(".tmp-") != std::string::npos)
      fs::remove(e.path(), ec);
}

}  // namespace

std::function<MatrixD(const MatrixD&)> exact_solution(const RunConfig& c, solvers::Problem& p) {
  const Reference& ref = c.reference;
  if (ref.exact == "burgers_sine") {
    const double nu = c.spec.context.find("nu")->value;
    return [nu](const MatrixD& points) { return solvers::burgers_sine_exact(points, nu); };
  }
  if (ref.expressions.empty()) return {};
  const std::vector<std::string>& fields = c.spec.context.field_names();
  for (const std::string& f : fields)
    if (!ref.expressions.count(f))
      throw UserError("reference.expressions: no exact solution for field '" + f +
                      "' (give one per field)");
  return [&p, &ref, fields](const MatrixD& points) {
    std::vector<std::string> texts;
    for (const std::string& f : fields) texts.push_back(ref.expressions.at(f));
    return p.evaluate_expressions(Eigen::VectorXd::Zero(p.objective().layout().size()), points,
                                  texts);
  };
}

namespace {

constexpr int kSampledValidationPoints = 100000;  // reference.points: 0 above 3 dimensions
constexpr Eigen::Index kValidationBlock = 16384;  // points per evaluation (bounds its memory)

// The grid of an exact-solution validation up to 3 dimensions: points per spatial axis, and the
// time levels (0: no time).
GridSpec validation_grid(const RunConfig& c, bool has_time) {
  const int space = c.spec.domain->bounds().dim() - (has_time ? 1 : 0);
  return {.counts = {space == 1 ? 256 : space == 2 ? 101 : 31}, .time_steps = has_time ? 101 : 0};
}

// How many points an exact-solution validation uses: reference.points sampled ones, else a grid
// up to 3 dimensions (time included), kSampledValidationPoints sampled ones above.
long long validation_point_count(const RunConfig& c) {
  if (c.reference.points > 0) return c.reference.points;
  const int dims = c.spec.domain->bounds().dim();
  if (dims > 3) return kSampledValidationPoints;
  const bool has_time = c.spec.context.time_index() >= 0;
  const GridSpec g = validation_grid(c, has_time);
  long long n = 1;
  for (int d = 0; d < dims - (has_time ? 1 : 0); ++d) n *= g.counts[0];
  return has_time ? n * g.time_steps : n;
}

// The memory this machine has available now, in bytes (0: unknown).
double available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  double kb = 0;
  while (meminfo >> name >> kb >> unit)
    if (name == "MemAvailable:") return kb * 1024;
  return 0;
}

// Before training: `points` points of `per_point` values (8 bytes each) fit in half the memory
// available, or a UserError under `key` says how many points fit.
void check_memory(const std::string& key, const std::string& what, long long points,
                  double per_point, const std::string& advice) {
  const double available = available_memory();
  const double needed = static_cast<double>(points) * per_point * 8;
  if (available <= 0 || needed <= available / 2) return;
  const auto gb = [](double bytes) { return nn::detail::short_number(bytes / 1e9, 3) + " GB"; };
  const auto fit = static_cast<long long>(available / 2 / (per_point * 8));
  throw UserError(key + ": " + what + " at " + std::to_string(points) + " points needs about " +
                  gb(needed) + " of memory, more than half of the " + gb(available) +
                  " available; " + advice + " (" + std::to_string(fit) + " points fit)");
}

void check_validation_size(const RunConfig& c, long long points) {
  const auto dims = static_cast<double>(c.spec.domain->bounds().dim());
  const auto fields = static_cast<double>(c.spec.context.field_names().size());
  check_memory("reference.points", "validating", points, dims + 3 * fields,
               "give fewer points (reference.points)");
}

// Points to measure the error at: the reference data, or for an exact solution
// validation_point_count() points (a grid, or sampled in the domain).
MatrixD validation_points(const RunConfig& c) {
  if (c.reference.data) return c.reference.data->points;
  const long long n = validation_point_count(c);
  check_validation_size(c, n);
  const bool has_time = c.spec.context.time_index() >= 0;
  if (c.reference.points > 0 || c.spec.domain->bounds().dim() > 3)
    return geometry::sample_interior(*c.spec.domain, static_cast<std::size_t>(n),
                                     {.method = geometry::SampleMethod::sobol, .seed = c.seed})
        .points;
  std::vector<int> dims;
  std::vector<double> times;
  const MatrixD grid =
      spatial_grid(*c.spec.domain, validation_grid(c, has_time), has_time, &dims, &times);
  if (!has_time) return grid;
  MatrixD out(grid.rows() * static_cast<Eigen::Index>(times.size()), grid.cols() + 1);
  for (std::size_t l = 0; l < times.size(); ++l) {
    auto block = out.middleRows(static_cast<Eigen::Index>(l) * grid.rows(), grid.rows());
    block.leftCols(grid.cols()) = grid;
    block.col(grid.cols()).setConstant(times[l]);
  }
  return out;
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

solvers::Metrics error_metrics_per_field(const MatrixD& u, const MatrixD& ref,
                                         const std::vector<std::string>& fields) {
  solvers::Metrics m = solvers::error_metrics(u, ref);
  if (fields.size() > 1)
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const auto c = static_cast<Eigen::Index>(f);
      const solvers::Metrics one = solvers::error_metrics(u.col(c), ref.col(c));
      m["rel_l2_" + fields[f]] = one.at("rel_l2");
    }
  return m;
}

void write_summary(const std::string& path, const RunConfig& c, const RunReport& r,
                   solvers::Problem& p) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["config"] = c.source;
  const auto& res = r.result;
  j["status"] = solvers::status_name(res.status);
  j["message"] = res.message;
  j["steps"] = res.steps;
  if (r.resumed_from >= 0) j["resumed_from_step"] = r.resumed_from;
  j["loss"] = res.loss;
  nlohmann::ordered_json losses;
  const auto& names = p.objective().slot_names();
  for (std::size_t s = 0; s < names.size(); ++s) losses[names[s]] = p.objective().slot_losses()[s];
  j["losses"] = losses;
  j["metrics"] = r.metrics;
  if (r.validation_points > 0) j["validation_points"] = r.validation_points;
  if (!r.parameters.empty()) j["parameters"] = r.parameters;
  // This part (the process that wrote the file) and the whole run (resumed parts included).
  j["seconds"] = {
      {"setup", r.setup_seconds},
      {"train", r.train_seconds},
      {"output", r.output_seconds},
      {"steps_per_second", r.train_seconds > 0 ? r.part_steps() / r.train_seconds : 0.0}};
  j["this_part"] = {{"steps", r.part_steps()}, {"train_seconds", r.train_seconds}};
  j["whole_run"] = {{"steps", res.steps}, {"train_seconds", r.run_train_seconds}};
  j["backend"] = compiler::backend_name(p.objective().executable().backend());
  j["precision"] = c.resolved["precision"].as<std::string>();
  j["files"] = r.files;
  // A name that is not UTF-8 (a file name from another system) is written with U+FFFD for the
  // bytes that are not: summary.json is still written. (The config's texts are checked up front.)
  write_text_atomically(path,
                        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// Derived metrics (reference.metrics): each expression of the network's fields against the same
// expression of the reference, NAME_rel_l2 and NAME_max_abs. The reference side once, before
// training: an exact solution given as expressions is substituted (derivatives included), else
// the reference values at the points are (values only).
struct DerivedMetrics {
  std::vector<std::string> names, texts;
  MatrixD reference;  // [points, metrics]

  DerivedMetrics(const RunConfig& c, solvers::Problem& problem, const MatrixD& points,
                 const std::vector<std::string>& fields, const MatrixD& values) {
    if (c.reference.metrics.empty()) return;
    for (const auto& [name, text] : c.reference.metrics) {
      names.push_back(name);
      texts.push_back(text);
      // The reference side has no value for a trainable constant (the network side's changes).
      const auto used = equations::analyze(equations::parse(text, c.spec.context), c.spec.context);
      if (!used.params.empty())
        throw UserError("reference.metrics." + name + ": '" + text +
                        "' uses the trainable constant '" + *used.params.begin() +
                        "', which the reference has no value for");
    }
    std::map<std::string, Eigen::Index> columns;
    for (std::size_t f = 0; f < fields.size(); ++f)
      columns[fields[f]] = static_cast<Eigen::Index>(f);
    const bool substitute = c.reference.exact == "none" && !c.reference.data;
    const Eigen::VectorXd theta = problem.initial_theta(c.seed);
    std::size_t k = 0;
    try {
      MatrixD ref(points.rows(), static_cast<Eigen::Index>(texts.size()));
      for (k = 0; k < texts.size(); ++k)
        ref.col(static_cast<Eigen::Index>(k)) =
            in_blocks(points, values, [&](const MatrixD& block, const MatrixD& given) {
              return substitute ? problem.evaluate_expressions_given(
                                      theta, block, {texts[k]}, c.reference.expressions, {}, {})
                                : problem.evaluate_expressions_given(theta, block, {texts[k]}, {},
                                                                     columns, given);
            });
      reference = ref;
    } catch (const UserError& e) {
      throw UserError("reference.metrics." + names[k] + ": " + e.what());
    }
  }

  void add(solvers::Problem& problem, const Eigen::VectorXd& theta, const MatrixD& points,
           solvers::Metrics& m) const {
    if (names.empty()) return;
    const MatrixD u = in_blocks(points, [&](const MatrixD& block) {
      return problem.evaluate_expressions(theta, block, texts);
    });
    for (std::size_t k = 0; k < names.size(); ++k) {
      const auto col = static_cast<Eigen::Index>(k);
      const solvers::Metrics one = solvers::error_metrics(u.col(col), reference.col(col));
      m[names[k] + "_rel_l2"] = one.at("rel_l2");
      m[names[k] + "_max_abs"] = one.at("max_abs");
    }
  }
};

// Validation against the reference every reference.every steps (else at the end): the error
// metrics of the compared fields and the derived metrics. Returns the metric names
// (history.csv's columns).
std::vector<std::string> attach_validation(const RunConfig& c, solvers::Problem& problem,
                                           const std::function<MatrixD(const MatrixD&)>& exact,
                                           int total, solvers::Trainer& trainer,
                                           long long& point_count) {
  if (!c.reference.any()) return {};
  const std::vector<std::string> fields =
      c.reference.data ? c.reference.data->fields : c.spec.context.field_names();
  std::vector<Eigen::Index> columns;
  for (const std::string& f : fields) columns.push_back(c.spec.context.field_index(f));
  const MatrixD points = validation_points(c);
  point_count = points.rows();
  const MatrixD values = c.reference.data ? c.reference.data->values : in_blocks(points, exact);
  auto derived = std::make_shared<const DerivedMetrics>(c, problem, points, fields, values);
  trainer.validate_every(
      c.reference.every > 0 ? c.reference.every : total + 1,
      [&problem, fields, columns, points, values, derived](const Eigen::VectorXd& th) {
        const MatrixD u =
            in_blocks(points, [&](const MatrixD& block) { return problem.evaluate(th, block); });
        MatrixD picked(u.rows(), static_cast<Eigen::Index>(columns.size()));
        for (std::size_t f = 0; f < columns.size(); ++f)
          picked.col(static_cast<Eigen::Index>(f)) = u.col(columns[f]);
        solvers::Metrics m = error_metrics_per_field(picked, values, fields);
        derived->add(problem, th, points, m);
        return m;
      });
  std::vector<std::string> names{"rel_l2", "max_abs"};
  if (fields.size() > 1)
    for (const auto& f : fields) names.push_back("rel_l2_" + f);
  for (const std::string& n : derived->names) {
    names.push_back(n + "_rel_l2");
    names.push_back(n + "_max_abs");
  }
  return names;
}

// The config less what does not change the numbers (the output section: where and how often to
// write, how to show progress; the thread count: a resumed run may use others, at the price of
// bit-for-bit equality), as text.
std::string computed_part(const std::string& resolved) {
  YAML::Node c = YAML::Load(resolved);
  c.remove("output");
  c.remove("threads");
  return dump(c);
}

std::vector<solvers::Stage> capped(std::vector<solvers::Stage> stages, int max_steps) {
  if (max_steps > 0)
    for (solvers::Stage& s : stages) {
      s.steps = std::min(s.steps, max_steps);
      if (auto* adam = std::any_cast<nn::AdamOptions>(&s.options))
        adam->schedule.total_steps = std::min(adam->schedule.total_steps, max_steps);
    }
  return stages;
}

}  // namespace

void choose_device(const RunConfig& config, solvers::ProblemSpec& spec, std::FILE* log) {
  spec.backend = compiler::Backend::cpu;
  if (config.device == "cpu") return;
  std::string why;
  const bool cuda = compiler::backend_can_run(compiler::Backend::cuda, {}, &why);
  if (cuda) {
    spec.backend = compiler::Backend::cuda;
    return;
  }
  if (config.device == "auto") return;
  if (config.require_device)
    throw UserError("device: cuda is required (require_device: true) but cannot run here: " + why);
  std::fprintf(log, "jetpde: warning: device: cuda cannot run here (%s); running on the CPU\n",
               why.c_str());
}

RunReport run(const RunConfig& c, const RunOptions& o) {
  const double t0 = now();
  RunReport report;
  report.dir = c.output.dir;
  // The problem and the trainer first: what they reject (a boundary piece, a weighting) is found
  // before the run folder is touched.
  solvers::ProblemSpec spec = c.spec;
  choose_device(c, spec, o.log);
  const std::unique_ptr<solvers::Problem> built = build_problem(c, spec);
  solvers::Problem& problem = *built;
  Eigen::VectorXd theta = problem.initial_theta(c.seed);
  const std::vector<solvers::Stage> stages = capped(c.stages, o.max_steps);
  solvers::Trainer trainer(problem.objective(), stages, c.weighting);
  prepare_folder(c.output.dir);
  const std::string config_text = dump(c.resolved);
  const std::string checkpoint_path = c.output.dir + "/checkpoint.h5";
  std::optional<Checkpoint> resume;
  if (o.resume) {
    if (!fs::exists(checkpoint_path))
      throw UserError("--resume: no checkpoint in '" + c.output.dir + "' (nothing to resume)");
    resume = read_checkpoint(checkpoint_path);
    if (computed_part(resume->config) != computed_part(config_text))
      throw UserError("--resume: the config differs from the one '" + checkpoint_path +
                      "' was written with (compare it with " + c.output.dir + "/config.yaml)");
    report.resumed_from = resume->state.step;
  }
  write_text_atomically(c.output.dir + "/config.yaml", config_text);

  int total = 0;
  for (const auto& s : stages) total += s.steps;

  if (c.resample_every > 0)
    trainer.resample_every(c.resample_every, [&](int step, const Eigen::VectorXd& th) {
      const std::uint64_t seed = c.seed + static_cast<std::uint64_t>(step);
      if (!c.adaptive) return problem.resample(seed);
      Bindings b = problem.resample(seed);
      const int candidates =
          c.adaptive_candidates > 0 ? c.adaptive_candidates : 8 * spec.interior_points;
      for (auto& [name, value] : problem.adaptive_interior(th, candidates, seed)) b[name] = value;
      return b;
    });
  const auto exact = exact_solution(c, problem);
  const std::vector<std::string> metric_names =
      attach_validation(c, problem, exact, total, trainer, report.validation_points);
  const auto& slots = problem.objective().slot_names();
  Progress progress(Progress::mode_from_name(c.output.progress, o.log), stages,
                    c.output.progress_every, slots, o.log);
  HistoryWriter history(c.output.dir + "/history.csv", slots, metric_names, c.output.history_every,
                        resume ? resume->state.step : -1);
  trainer.on_step([&](const solvers::StepInfo& info) {
    const bool last = info.step == total;
    progress.update(info, last);
    history.record(info, last);
    return true;
  });
  trainer.checkpoint_every(std::max(1, c.output.checkpoint_every),
                           [&](const solvers::TrainerState& state) {
                             write_checkpoint(checkpoint_path, {state, config_text, c.seed});
                           });
  report.setup_seconds = now() - t0;
  // The time budget counts from the start of the run (setup included): a batch job's limit does.
  trainer.stop_when({.interrupt = o.interrupt,
                     .max_seconds = c.max_time > 0 ? std::max(1e-9, c.max_time - (now() - t0)) : 0,
                     .target_error = c.target_error});
  const double t1 = now();
  report.result = trainer.train(theta, resume ? &resume->state : nullptr);
  progress.finish();
  report.train_seconds = now() - t1;
  report.run_train_seconds = report.result.run_seconds;
  report.metrics = report.result.metrics;
  for (const equations::Symbol* s : c.spec.context.symbols(equations::SymbolKind::param))
    report.parameters[s->name] = problem.param(theta, s->name);

  const double t2 = now();
  report.files = {"config.yaml", "checkpoint.h5", "history.csv"};
  const std::vector<std::string> grid_files =
      write_grid_output(problem, theta, c.output.dir,
                        {.grid = {c.output.grid, c.output.time_steps},
                         .quantities = c.output.quantities,
                         .residuals = c.output.residuals,
                         .vtk = c.output.vtk,
                         .hdf5 = c.output.hdf5,
                         .exact = exact});
  report.files.insert(report.files.end(), grid_files.begin(), grid_files.end());
  report.files.push_back("summary.json");
  report.output_seconds = now() - t2;
  write_summary(c.output.dir + "/summary.json", c, report, problem);
  return report;
}

LoadedRun load_run(const std::string& dir, const std::vector<std::string>& overrides) {
  const std::string config = dir + "/config.yaml", checkpoint = dir + "/checkpoint.h5";
  for (const std::string& f : {config, checkpoint})
    if (!fs::exists(f))
      throw UserError("'" + dir + "' is not a run folder: no " + fs::path(f).filename().string());
  LoadedRun run;
  run.trained_precision = load_run_config(config).resolved["precision"].as<std::string>();
  run.config = load_run_config(config, overrides);
  // Relative data paths in config.yaml were resolved against the original config's folder.
  solvers::ProblemSpec spec = run.config.spec;
  choose_device(run.config, spec, stderr);
  run.problem = build_problem(run.config, spec);
  const Checkpoint c = read_checkpoint(checkpoint);
  run.theta = c.state.theta;
  run.step = c.state.step;
  if (run.theta.size() != run.problem->objective().layout().size())
    throw UserError("'" + checkpoint + "' holds " + std::to_string(run.theta.size()) +
                    " parameters but the config's network has " +
                    std::to_string(run.problem->objective().layout().size()));
  return run;
}

}  // namespace jetpde::io
