#include "io/run.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "autodiff/errors.h"
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

// Points to measure the error at: the reference data, or a fine grid for an exact solution.
MatrixD validation_points(const RunConfig& c) {
  if (c.reference.data) return c.reference.data->points;
  const bool has_time = c.spec.context.time_index() >= 0;
  std::vector<int> dims;
  std::vector<double> times;
  const int space = c.spec.domain->bounds().dim() - (has_time ? 1 : 0);
  GridSpec g{.counts = {space == 1 ? 256 : space == 2 ? 101 : 31}, .time_steps = 101};
  const MatrixD grid = spatial_grid(*c.spec.domain, g, has_time, &dims, &times);
  if (!has_time) return grid;
  MatrixD out(grid.rows() * static_cast<Eigen::Index>(times.size()), grid.cols() + 1);
  for (std::size_t l = 0; l < times.size(); ++l) {
    auto block = out.middleRows(static_cast<Eigen::Index>(l) * grid.rows(), grid.rows());
    block.leftCols(grid.cols()) = grid;
    block.col(grid.cols()).setConstant(times[l]);
  }
  return out;
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
  j["status"] = res.status == solvers::TrainResult::Status::finished  ? "finished"
                : res.status == solvers::TrainResult::Status::stopped ? "stopped"
                                                                      : "non_finite";
  j["message"] = res.message;
  j["steps"] = res.steps;
  if (r.resumed_from >= 0) j["resumed_from_step"] = r.resumed_from;
  j["loss"] = res.loss;
  nlohmann::ordered_json losses;
  const auto& names = p.objective().slot_names();
  for (std::size_t s = 0; s < names.size(); ++s) losses[names[s]] = p.objective().slot_losses()[s];
  j["losses"] = losses;
  j["metrics"] = r.metrics;
  if (!r.parameters.empty()) j["parameters"] = r.parameters;
  const double steps_run = res.steps - std::max(0, r.resumed_from);
  j["seconds"] = {{"setup", r.setup_seconds},
                  {"train", r.train_seconds},
                  {"output", r.output_seconds},
                  {"steps_per_second", r.train_seconds > 0 ? steps_run / r.train_seconds : 0.0}};
  j["backend"] = compiler::backend_name(p.objective().executable().backend());
  j["precision"] = c.resolved["precision"].as<std::string>();
  j["files"] = r.files;
  // A name that is not UTF-8 (a file name from another system) is written with U+FFFD for the
  // bytes that are not: summary.json is still written. (The config's texts are checked up front.)
  write_text_atomically(path,
                        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// Validation against the reference every reference.every steps (else at the end): the error
// metrics of the compared fields. Returns the metric names (history.csv's columns).
std::vector<std::string> attach_validation(const RunConfig& c, solvers::Problem& problem,
                                           const std::function<MatrixD(const MatrixD&)>& exact,
                                           int total, solvers::Trainer& trainer) {
  if (!c.reference.any()) return {};
  const std::vector<std::string> fields =
      c.reference.data ? c.reference.data->fields : c.spec.context.field_names();
  std::vector<Eigen::Index> columns;
  for (const std::string& f : fields) columns.push_back(c.spec.context.field_index(f));
  const MatrixD points = validation_points(c);
  const MatrixD values = c.reference.data ? c.reference.data->values : exact(points);
  trainer.validate_every(c.reference.every > 0 ? c.reference.every : total + 1,
                         [&problem, fields, columns, points, values](const Eigen::VectorXd& th) {
                           const MatrixD u = problem.evaluate(th, points);
                           MatrixD picked(u.rows(), static_cast<Eigen::Index>(columns.size()));
                           for (std::size_t f = 0; f < columns.size(); ++f)
                             picked.col(static_cast<Eigen::Index>(f)) = u.col(columns[f]);
                           return error_metrics_per_field(picked, values, fields);
                         });
  std::vector<std::string> names{"rel_l2", "max_abs"};
  if (fields.size() > 1)
    for (const auto& f : fields) names.push_back("rel_l2_" + f);
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
      s.adam.schedule.total_steps = std::min(s.adam.schedule.total_steps, max_steps);
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
  solvers::Problem problem(spec);
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
      attach_validation(c, problem, exact, total, trainer);
  const auto& slots = problem.objective().slot_names();
  Progress progress(Progress::mode_from_name(c.output.progress, o.log), total,
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
  const double t1 = now();
  report.result = trainer.train(theta, resume ? &resume->state : nullptr);
  progress.finish();
  report.train_seconds = now() - t1;
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
  run.config = load_run_config(config, overrides);
  // Relative data paths in config.yaml were resolved against the original config's folder.
  solvers::ProblemSpec spec = run.config.spec;
  choose_device(run.config, spec, stderr);
  run.problem = std::make_unique<solvers::Problem>(spec);
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
