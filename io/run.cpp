#include "io/run.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include <unistd.h>

#include "autodiff/errors.h"
#include "io/checkpoint.h"
#include "io/grid_output.h"
#include "io/progress.h"
#include "io/text_file.h"
#include "solvers/grid.h"
#include "solvers/marching.h"
#ifdef JETPDE_HAVE_CLASSICAL
#include "solvers/classical/classical.h"
#endif

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

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

void write_summary(const std::string& path, const RunConfig& c, const RunReport& r,
                   const nlohmann::ordered_json* solver = nullptr,
                   const nlohmann::ordered_json* reference_solver = nullptr) {
  const solvers::Solution& s = r.solution;
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["config"] = c.source;
  const auto& res = s.result();
  j["status"] = solvers::status_name(res.status);
  j["message"] = res.message;
  j["steps"] = res.steps;
  if (s.resumed_from() >= 0) j["resumed_from_step"] = s.resumed_from();
  j["loss"] = res.loss;
  nlohmann::ordered_json losses = nlohmann::ordered_json::object();  // {} for a classical solve
  for (const auto& [slot, loss] : s.losses()) losses[slot] = loss;
  j["losses"] = losses;
  j["metrics"] = s.metrics();
  if (s.validation_points() > 0) j["validation_points"] = s.validation_points();
  if (const auto parameters = s.parameters(); !parameters.empty()) j["parameters"] = parameters;
  // training.weighting.causal_scale initial: what each chunked term's losses were measured against.
  if (!res.causal_scales.empty()) j["causal_scales"] = res.causal_scales;
  // precision: auto: each check of 16-bit against fp32 ([step, drift]) and the switch, if any.
  if (!res.precision_checks.empty()) {
    j["precision_checks"] = res.precision_checks;
    if (res.precision_switched_at >= 0)
      j["precision_switched_to_fp32_at_step"] = res.precision_switched_at;
  }
  if (!s.time_windows().empty()) {
    // Time marching: each window's interval, training and own validation (over its slab).
    nlohmann::ordered_json windows = nlohmann::ordered_json::array();
    for (const solvers::WindowRecord& w : s.time_windows())
      windows.push_back({{"t0", w.t0},
                         {"t1", w.t1},
                         {"steps", w.steps},
                         {"status", solvers::status_name(w.status)},
                         {"loss", w.loss},
                         {"train_seconds", w.seconds},
                         {"metrics", w.metrics}});
    j["time_windows"] = windows;
  }
  // This part (the process that wrote the file) and the whole run (resumed parts included).
  const double train = s.train_seconds();
  j["seconds"] = {{"setup", s.setup_seconds()},
                  {"train", train},
                  {"output", r.output_seconds},
                  {"steps_per_second", train > 0 ? r.part_steps() / train : 0.0}};
  j["this_part"] = {{"steps", r.part_steps()}, {"train_seconds", train}};
  j["whole_run"] = {{"steps", res.steps}, {"train_seconds", res.run_seconds}};
  j["seconds"]["communication"] = r.communication_seconds;
  j["ranks"] = r.ranks;
  if (r.ranks > 1)
    j["communication"] = {{"gradient_exchange", r.gradient_exchange},
                          {"values_sent", r.values_sent}};
  j["backend"] = compiler::backend_name(s.backend());
  j["precision"] = s.precision();
  if (!s.other_source()) {  // memory_budget: what the plan chose, and the step's arena as built
    const solvers::Problem::MemoryReport& m = s.problem().memory();
    j["memory"] = {{"budget_bytes", m.budget},
                   {"planned_bytes", m.planned_bytes},
                   {"all_points_bytes", m.whole_bytes},
                   {"recompute_fraction", m.fraction},
                   {"recomputed_buffers", s.problem().objective().executable().stats().recomputed},
                   {"batches", m.batches},
                   {"points_left_out", m.left_out},
                   {"step_arena_bytes", s.problem().objective().executable().stats().arena_bytes}};
    // The training step's compile (the current precision's): from the cache or not, and its
    // tiled regions' tiles, measured by this run or read from the cache, and how many of them
    // took the preferred tile because other processes kept the cores busy while measured.
    const compiler::CompileStats& st = s.problem().objective().executable().stats();
    j["compile"] = {
        {"seconds", st.total_seconds},
        {"from_cache", st.cache_hit},
        {"kernels", st.kernels},
        {"gemms", st.gemms},
        {"tiled_regions", s.problem().objective().executable().program().regions.size()},
        {"tiles_measured", st.tiles_measured},
        {"tiles_busy", st.tiles_busy},
        {"tile_file", st.tile_file}};
  }
  // Each stage with the precision its step started in (a stage without its own: the run's; under
  // auto resolved to 16-bit, fp32 for a line search; a switch to fp32 is in
  // precision_switched_to_fp32_at_step). A classical solve (`solver`) has no stages.
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  if (!solver)
    for (const solvers::Stage& stage : c.stages)
      stages.push_back({{"name", stage.name},
                        {"optimizer", stage.optimizer},
                        {"steps", stage.steps},
                        {"precision", s.stage_precision(stage)}});
  j["stages"] = stages;
  j["files"] = r.files;
  if (c.recipe.applied) {
    nlohmann::ordered_json chosen = nlohmann::ordered_json::object();
    for (const auto& [key, value] : c.recipe.chosen) chosen[key] = value;
    j["recipe"] = {{"facts", c.recipe.facts}, {"chosen", chosen}, {"kept", c.recipe.kept}};
  }
  if (solver) j["solver"] = *solver;
  if (reference_solver) j["reference_solver"] = *reference_solver;
  // A name that is not UTF-8 (a file name from another system) is written with U+FFFD for the
  // bytes that are not: summary.json is still written. (The config's texts are checked up front.)
  write_text_atomically(path,
                        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// The config less what does not change the numbers (the output section: where and how often to
// write, how to show progress; the thread count: a resumed run may use others, at the price of
// bit-for-bit equality; the time budget: a batch job's next part has a limit of its own), as text.
std::string computed_part(const std::string& resolved) {
  YAML::Node c = YAML::Load(resolved);
  c.remove("output");
  c.remove("threads");
  c.remove("memory_budget");  // batches change the numbers by rounding only
  if (c["training"] && c["training"].IsMap()) c["training"].remove("max_time");
  return dump(c);
}

#ifdef JETPDE_HAVE_CLASSICAL
// The points an exact solution is compared with (solvers::Reference::points 0): a grid over the
// bounding box, 256, 101 x 101 or 31^3 spatial points, 101 time levels.
MatrixD validation_grid(const geometry::Geometry& domain, bool has_time) {
  const int space = domain.dim() - (has_time ? 1 : 0);
  const int counts = space == 1 ? 256 : space == 2 ? 101 : 31;
  std::vector<int> dims;
  std::vector<double> times;
  const MatrixD xs = solvers::spatial_grid(domain, {.counts = {counts}, .time_steps = 101},
                                           has_time, &dims, &times);
  return has_time ? solvers::with_times(xs, times) : xs;
}

solvers::Metrics compare(const MatrixD& u, const MatrixD& ref,
                         const std::vector<std::string>& fields) {
  solvers::Metrics m = solvers::error_metrics(u, ref);
  if (fields.size() > 1)
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const auto col = static_cast<Eigen::Index>(f);
      m["rel_l2_" + fields[f]] = solvers::error_metrics(u.col(col), ref.col(col)).at("rel_l2");
    }
  return m;
}

std::string scientific(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", v);
  return buffer;
}

#endif

// The fields on the output grid into the run folder (their files, then summary.json's name, to
// report.files; the time to report.output_seconds): what every kind of run writes last.
void write_fields(const RunConfig& c, const solvers::ExactSolution& exact, RunReport& report) {
  const double t0 = solvers::clock_seconds();
  const std::vector<std::string> grid_files =
      write_grid_output(report.solution, c.output.dir,
                        {.grid = {c.output.grid, c.output.time_steps},
                         .quantities = c.output.quantities,
                         .residuals = c.output.residuals,
                         .vtk = c.output.vtk,
                         .hdf5 = c.output.hdf5,
                         .exact = exact});
  report.files.insert(report.files.end(), grid_files.begin(), grid_files.end());
  report.files.push_back("summary.json");
  report.output_seconds = solvers::clock_seconds() - t0;
}

#ifdef JETPDE_HAVE_CLASSICAL
// The problem the classical solver takes from a config, checked as solve() checks it (the
// shape, the equations and conditions, the grid) and the reference's exact solution (into
// *exact, when not null); UserErrors prefixed by the config and what it is for. What a PINN
// config builds into its network (hard constraints, periodic inputs) are conditions here.
solvers::Mathematics classical_mathematics(const RunConfig& c, const classical::Options& options,
                                           solvers::ExactSolution* exact,
                                           const std::string& what = "solver (petsc)") {
  try {
    solvers::Mathematics math = classical::with_pinn_conditions(c.spec.math, c.spec.pinn);
    classical::check(math, options);
    if (exact) *exact = classical::exact_solution(c.reference, math);
    return math;
  } catch (const UserError& e) {
    throw UserError(c.source + ": " + what + ": " + e.what());
  }
}

// `solver: {type: petsc}`: the problem solved by finite differences (solvers/classical), written
// like a trained run: config.yaml, the fields on the output grid, summary.json (with the solve's
// iterations, residual norms and time under "solver"). No checkpoint or history: nothing trains.
RunReport run_classical(const RunConfig& c, const RunOptions& o) {
  const solvers::Communicator& comm =
      o.communicator ? *o.communicator : solvers::serial_communicator();
  const bool writer = comm.rank() == 0;
  const double started = solvers::clock_seconds();
  const classical::Options options{.grid = c.solver.grid,
                                   .petsc_options = c.solver.options,
                                   .command_line_options = o.petsc_options,
                                   .time_levels = c.output.time_steps,
                                   .time_step = c.solver.time_step,
                                   .parallel = comm.size() > 1};
  const auto in_config = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const UserError& e) {
      throw UserError(c.source + ": solver (petsc): " + e.what());
    }
  };
  // What the solver refuses is found before the run folder is touched (check_classical).
  solvers::ExactSolution exact;
  const solvers::Mathematics math = classical_mathematics(c, options, &exact);
  if (writer) prepare_folder(c.output.dir);
  comm.barrier();
  const std::string config_text = dump(c.resolved);
  if (writer) write_text_atomically(c.output.dir + "/config.yaml", config_text);
  classical::Result solved;
  in_config([&] { solved = classical::solve(math, options); });
  const classical::Report& rep = solved.report;
  if (writer && !rep.unused_options.empty()) {
    std::string names;
    for (const std::string& n : rep.unused_options) names += (names.empty() ? "" : " ") + n;
    std::fprintf(o.log, "jetpde: warning: PETSc did not use the options %s (misspelt?)\n",
                 names.c_str());
  }

  // The error against the reference, as a trained run measures it (the data when given, else the
  // exact solution on the validation grid).
  const std::vector<std::string>& fields = c.spec.math.context.field_names();
  const bool has_time = c.spec.math.context.time_index() >= 0;
  solvers::TrainResult result;
  long long compared = 0;
  if (exact && !c.reference.data) {
    const MatrixD points = validation_grid(*c.spec.math.domain, has_time);
    result.metrics = compare(solved.solution->fields(points), exact(points), fields);
    compared = points.rows();
  } else if (c.reference.data) {
    const solvers::PointData& data = *c.reference.data;
    std::vector<Eigen::Index> columns;
    for (const std::string& f : data.fields) columns.push_back(c.spec.math.context.field_index(f));
    const MatrixD all = solved.solution->fields(data.points);
    MatrixD u(all.rows(), static_cast<Eigen::Index>(columns.size()));
    for (std::size_t k = 0; k < columns.size(); ++k)
      u.col(static_cast<Eigen::Index>(k)) = all.col(columns[k]);
    result.metrics = compare(u, data.values, data.fields);
    compared = data.points.rows();
  }
  // A solve that did not converge ends as a training that met a non-finite loss does: its outputs
  // are written, and `jetpde run` exits with status 3.
  result.status = rep.converged ? solvers::TrainResult::Status::finished
                                : solvers::TrainResult::Status::non_finite;
  result.steps = rep.time_steps > 0 ? rep.time_steps : rep.iterations;
  result.loss = rep.final_residual;
  std::string grid;
  for (const classical::Axis& a : solved.solution->axes())
    grid += (grid.empty() ? "" : " x ") + std::to_string(a.n);
  result.message =
      "petsc (" + rep.method + ") on a " + grid +
      " grid: " + (rep.converged ? "converged" : "did not converge") + " (" + rep.reason + ")" +
      (rep.time_steps > 0
           ? " after " + std::to_string(rep.time_steps) + " time steps"
           : " in " + std::to_string(rep.iterations) + " Newton iterations, residual " +
                 scientific(rep.initial_residual) + " -> " + scientific(rep.final_residual)) +
      ", " + std::to_string(rep.unknowns) + " unknowns";
  result.seconds = result.run_seconds = rep.seconds;

  // A caller's on_step (the Python module's history and callbacks) sees the solve's record after
  // it: one step per Newton iteration (stage "newton", the loss the residual's 2-norm) or per
  // time step (stage "time_step", the step's last Newton residual, metrics t and its Newton
  // iterations); the last step carries the run's metrics.
  if (o.on_step) {
    const bool steps_in_time = !rep.history_time.empty();
    const std::size_t first = steps_in_time ? 0 : 1;  // SNES's entry 0 is the initial guess
    for (std::size_t k = first; k < rep.history_residual.size(); ++k) {
      solvers::StepInfo info;
      info.step = static_cast<int>(k + 1 - first);
      info.stage = steps_in_time ? "time_step" : "newton";
      info.loss = rep.history_residual[k];
      info.seconds = info.run_seconds = rep.history_seconds[k];
      if (steps_in_time) {
        info.metrics["t"] = rep.history_time[k];
        info.metrics["newton_iterations"] = rep.history_iterations[k];
      }
      if (k + 1 == rep.history_residual.size())
        for (const auto& [name, value] : result.metrics) info.metrics[name] = value;
      if (!o.on_step(info)) break;
    }
  }
  RunReport report{.dir = c.output.dir,
                   .solution = solvers::Solution(solved.solution, result, exact, compared)};
  report.ranks = comm.size();
  report.files = {"config.yaml"};
  if (!writer) return report;
  const double t2 = solvers::clock_seconds();  // setup and solve end here
  write_fields(c, exact, report);
  nlohmann::ordered_json s;
  s["type"] = "petsc";
  s["method"] = rep.method;
  if (!rep.formulation.empty()) s["formulation"] = rep.formulation;
  s["converged"] = rep.converged;
  s["reason"] = rep.reason;
  std::vector<int> counts;
  for (const classical::Axis& a : solved.solution->axes()) counts.push_back(a.n);
  s["grid"] = counts;
  s["unknowns"] = rep.unknowns;
  s["iterations"] = rep.iterations;
  s["linear_iterations"] = rep.linear_iterations;
  if (has_time) s["time_steps"] = rep.time_steps;
  if (!has_time) {
    s["function_evaluations"] = rep.function_evaluations;
    s["residual_norm"] = {{"initial", rep.initial_residual}, {"final", rep.final_residual}};
  }
  s["seconds"] = rep.seconds;
  s["options"] = c.solver.options;
  if (!o.petsc_options.empty()) s["command_line_options"] = o.petsc_options;
  s["unused_options"] = rep.unused_options;
  s["setup_and_solve_seconds"] = t2 - started;
  write_summary(c.output.dir + "/summary.json", c, report, &s);
  return report;
}
#endif

}  // namespace

void choose_device(const RunConfig& config, solvers::ProblemSpec& spec, std::FILE* log) {
  solvers::choose_device(solvers::device_from_name(config.device), config.require_device, spec,
                         [log](const std::string& message) {
                           std::fprintf(log, "jetpde: warning: %s\n", message.c_str());
                         });
}

solvers::SolveOptions solve_options(const RunConfig& c, const RunOptions& o) {
  solvers::SolveOptions s;
  s.stages = c.stages;
  if (o.max_steps > 0)
    for (solvers::Stage& stage : s.stages) {
      stage.steps = std::min(stage.steps, o.max_steps);
      if (auto* adam = std::any_cast<nn::AdamOptions>(&stage.options))
        adam->schedule.total_steps = std::min(adam->schedule.total_steps, o.max_steps);
    }
  s.weighting = c.weighting;
  s.precision_check = c.precision_check;
  s.seed = c.seed;
  s.resample_every = c.resample_every;
  s.adaptive = c.adaptive;
  s.adaptive_candidates = c.adaptive_candidates;
  s.reference = c.reference;
  s.device = solvers::device_from_name(c.device);
  s.require_device = c.require_device;
  s.interrupt = o.interrupt;
  s.max_time = c.max_time;
  s.target_error = c.target_error;
  s.time_windows = c.time_windows;
  s.window_shares = c.window_shares;
  return s;
}

#ifdef JETPDE_HAVE_CLASSICAL
// `reference: {solver: petsc}`: the classical solution, solved now, as the reference's function;
// `record` gets what summary.json says of it.
solvers::ExactSolution classical_reference(const RunConfig& c, std::FILE* log,
                                           nlohmann::ordered_json* record, bool parallel,
                                           const std::string& command_line_options) {
  const classical::Options options{.grid = c.reference_solver.grid,
                                   .petsc_options = c.reference_solver.options,
                                   .command_line_options = command_line_options,
                                   .time_levels = c.output.time_steps,
                                   .parallel = parallel};
  classical::Result solved;
  try {
    solved = classical::solve(classical::with_pinn_conditions(c.spec.math, c.spec.pinn), options);
  } catch (const UserError& e) {
    throw UserError(c.source + ": reference.solver (petsc): " + e.what());
  }
  const classical::Report& rep = solved.report;
  if (!rep.converged)
    throw UserError(c.source + ": reference.solver (petsc): " + rep.method + " did not converge (" +
                    rep.reason + "): no reference to validate against");
  std::vector<int> counts;
  for (const classical::Axis& a : solved.solution->axes()) counts.push_back(a.n);
  std::string grid;
  for (int n : counts) grid += (grid.empty() ? "" : " x ") + std::to_string(n);
  std::fprintf(log, "jetpde: reference: petsc (%s) on a %s grid: %s in %.2f s\n",
               rep.method.c_str(), grid.c_str(), rep.reason.c_str(), rep.seconds);
  (*record)["solver"] = "petsc";
  (*record)["method"] = rep.method;
  (*record)["reason"] = rep.reason;
  (*record)["grid"] = counts;
  (*record)["iterations"] = rep.iterations;
  if (rep.time_steps > 0) (*record)["time_steps"] = rep.time_steps;
  (*record)["seconds"] = rep.seconds;
  std::shared_ptr<const classical::GridSolution> solution = solved.solution;
  return [solution](const MatrixD& points) { return solution->fields(points); };
}
#endif

std::string check_classical(const RunConfig& c) {
  const std::string missing =
      "this jetpde was built without PETSc (install petsc-dev, or scripts/bootstrap.sh, and "
      "configure again)";
  // (Unused in a build without PETSc.)
  [[maybe_unused]] const std::size_t dim = c.spec.math.context.spatial().size();
  [[maybe_unused]] const auto describe = [dim](const std::vector<int>& grid) {
    std::string s;
    for (std::size_t a = 0; a < (grid.size() == 1 ? dim : grid.size()); ++a)
      s += (s.empty() ? "" : " x ") + std::to_string(grid.size() == 1 ? grid[0] : grid[a]);
    return s;
  };
  std::string out;
  if (c.solver.type == "petsc") {
#ifdef JETPDE_HAVE_CLASSICAL
    classical_mathematics(c, {.grid = c.solver.grid}, nullptr);
    out = "the petsc solver takes it on a " + describe(c.solver.grid) + " grid";
#else
    throw UserError(c.source + ": solver.type: petsc: " + missing);
#endif
  }
  if (c.reference_solver.solver == "petsc") {
#ifdef JETPDE_HAVE_CLASSICAL
    classical_mathematics(c, {.grid = c.reference_solver.grid}, nullptr,
                          "reference.solver (petsc)");
    out += std::string(out.empty() ? "" : "; ") + "the petsc solver takes its reference on a " +
           describe(c.reference_solver.grid) + " grid";
#else
    throw UserError(c.source + ": reference.solver: petsc: " + missing);
#endif
  }
  return out;
}

RunReport run(const RunConfig& c, const RunOptions& o) {
  if (c.solver.type == "petsc") {
#ifdef JETPDE_HAVE_CLASSICAL
    return run_classical(c, o);
#else
    throw UserError(c.source +
                    ": solver.type: petsc: this jetpde was built without PETSc "
                    "(install petsc-dev, or scripts/bootstrap.sh, and configure again)");
#endif
  }
  const solvers::Communicator& comm =
      o.communicator ? *o.communicator : solvers::serial_communicator();
  const bool writer = comm.rank() == 0;  // the rank that writes the run folder and the log
  solvers::SolveOptions options = solve_options(c, o);
  // The time budget counts from here: the problem's compilation is part of a batch job's time.
  options.started_at = solvers::clock_seconds();
  nlohmann::ordered_json reference_record;
  if (c.reference_solver.solver == "petsc") {
#ifdef JETPDE_HAVE_CLASSICAL
    options.reference.function =
        classical_reference(c, o.log, &reference_record, comm.size() > 1, o.petsc_options);
#else
    throw UserError(c.source +
                    ": reference.solver: petsc: this jetpde was built without PETSc "
                    "(install petsc-dev, or scripts/bootstrap.sh, and configure again)");
#endif
  }
  const std::string config_text = dump(c.resolved);
  CheckpointFile checkpoint(c.output.dir + "/checkpoint.h5", config_text, c.seed, comm);
  options.checkpoint = &checkpoint;
  options.checkpoint_every = c.output.checkpoint_every;
  // The progress line and history.csv follow every step; they are made once the folder is.
  std::optional<Progress> progress;
  std::optional<HistoryWriter> history;
  int total = 0;
  for (const auto& s : options.stages) total += s.steps;
  total *= std::max(1, options.time_windows);  // time marching: all the stages in every window
  options.on_step = [&](const solvers::StepInfo& info) {
    const bool last = info.step == total;
    if (progress) progress->update(info, last);
    if (history) history->record(info, last);
    return o.on_step ? o.on_step(info) : true;
  };
  // The problem and the solver first: what they reject (a boundary piece, a weighting, a
  // validation set too large) is found before the run folder is touched.
  solvers::ProblemSpec spec = c.spec;
  choose_device(c, spec, o.log);
  // The stages as the progress line sees them: once per time window when marching.
  std::vector<solvers::Stage> stages;
  for (int w = 0; w < std::max(1, options.time_windows); ++w)
    for (solvers::Stage stage : options.stages) {
      if (options.time_windows > 1) stage.name = "w" + std::to_string(w + 1) + "/" + stage.name;
      stages.push_back(std::move(stage));
    }
  if (o.resume && options.time_windows > 1)
    throw UserError(c.source +
                    ": --resume: resuming a time-marched run (training.time_windows) is not "
                    "supported yet; run it again without --resume");
  solvers::Solver solver(build_problem(c, spec, comm), std::move(options));
  if (writer) prepare_folder(c.output.dir);
  comm.barrier();  // the folder exists before any rank looks into it
  std::optional<solvers::TrainerState> resume;
  if (o.resume) {
    if (!fs::exists(checkpoint.path()))
      throw UserError("--resume: no checkpoint in '" + c.output.dir + "' (nothing to resume)");
    const Checkpoint saved = read_checkpoint(checkpoint.path());
    if (computed_part(saved.config) != computed_part(config_text))
      throw UserError("--resume: the config differs from the one '" + checkpoint.path() +
                      "' was written with (compare it with " + c.output.dir + "/config.yaml)");
    std::string note;
    resume = rank_state(saved, comm, &note);
    if (writer && !note.empty()) std::fprintf(o.log, "jetpde: --resume: %s\n", note.c_str());
  }
  const auto& slots = solver.problem().objective().slot_names();
  if (writer) {
    if (c.recipe.applied) std::fprintf(o.log, "jetpde: %s\n", c.recipe.describe().c_str());
    write_text_atomically(c.output.dir + "/config.yaml", config_text);
    progress.emplace(Progress::mode_from_name(c.output.progress, o.log), stages,
                     c.output.progress_every, slots, o.log, &comm);
    history.emplace(c.output.dir + "/history.csv", slots, solver.metric_names(),
                    c.output.history_every, resume ? resume->step : -1);
  }
  // Before run(), which moves the problem into the solution.
  const char* exchange = solver.problem().objective().exchange() ? "neighbours" : "allreduce";
  RunReport report{.dir = c.output.dir, .solution = solver.run(resume ? &*resume : nullptr)};
  report.ranks = comm.size();
  report.communication_seconds = comm.seconds();
  report.values_sent = comm.values_sent();
  report.gradient_exchange = exchange;
  if (progress) progress->finish();
  report.files = {"config.yaml", "checkpoint.h5", "history.csv"};
  if (!writer) return report;  // the other ranks hold the same solution and write nothing
  if (!report.solution.other_source())
    if (const compiler::CompileStats& st =
            report.solution.problem().objective().executable().stats();
        st.tiles_busy > 0)
      std::fprintf(o.log,
                   "jetpde: note: the tiles of %d region%s of the training step were measured "
                   "while other processes kept the cores busy; not trusting that measurement, "
                   "%s the default tile (%lld points, fewer where a region has under twice as "
                   "many), which can be slower than a quiet measurement's choice (1.3x a step on "
                   "the cavity example). Delete %s%s to measure again.\n",
                   st.tiles_busy, st.tiles_busy == 1 ? "" : "s",
                   st.tiles_busy == 1 ? "it runs in" : "they run in",
                   static_cast<long long>(compiler::kPreferredTile), st.tile_file.c_str(),
                   comm.size() > 1 ? " (and the other ranks' -rank-N files beside it)" : "");

  write_fields(c, report.solution.exact(), report);
  write_summary(c.output.dir + "/summary.json", c, report, nullptr,
                reference_record.empty() ? nullptr : &reference_record);
  return report;
}

LoadedRun load_run(const std::string& dir, const std::vector<std::string>& overrides) {
  const std::string config = dir + "/config.yaml", checkpoint = dir + "/checkpoint.h5";
  if (!fs::exists(config)) throw UserError("'" + dir + "' is not a run folder: no config.yaml");
  const std::string trained_precision =
      load_run_config(config).resolved["precision"].as<std::string>();
  RunConfig run_config = load_run_config(config, overrides);
  if (run_config.solver.type == "petsc") {
#ifdef JETPDE_HAVE_CLASSICAL
    // A classical run keeps no state: its solution is solved again from config.yaml (a direct,
    // deterministic solve: the same numbers, in the seconds the run took).
    const classical::Options options{.grid = run_config.solver.grid,
                                     .petsc_options = run_config.solver.options,
                                     .time_levels = run_config.output.time_steps,
                                     .time_step = run_config.solver.time_step};
    classical::Result solved;
    solvers::ExactSolution exact;
    try {
      const solvers::Mathematics math =
          classical::with_pinn_conditions(run_config.spec.math, run_config.spec.pinn);
      exact = classical::exact_solution(run_config.reference, math);
      solved = classical::solve(math, options);
    } catch (const UserError& e) {
      throw UserError(config + ": solver (petsc): " + e.what());
    }
    solvers::TrainResult result;
    result.steps =
        solved.report.time_steps > 0 ? solved.report.time_steps : solved.report.iterations;
    result.seconds = result.run_seconds = solved.report.seconds;
    const int steps = result.steps;
    run_config.resolved["precision"] = "fp64";  // what the grid solution is evaluated in
    return {.config = std::move(run_config),
            .trained_precision = "fp64",
            .solution = solvers::Solution(solved.solution, std::move(result), std::move(exact)),
            .step = steps};
#else
    throw UserError("'" + dir +
                    "' holds a classical (petsc) run, and this jetpde was built "
                    "without PETSc");
#endif
  }
  if (!fs::exists(checkpoint))
    throw UserError("'" + dir + "' is not a run folder: no checkpoint.h5");
  // Relative data paths in config.yaml were resolved against the original config's folder.
  solvers::ProblemSpec spec = run_config.spec;
  choose_device(run_config, spec, stderr);
  // A time-marched run's parameters are those of its combined (windowed) model.
  if (run_config.time_windows > 1)
    spec = solvers::marched_spec(std::move(spec), run_config.time_windows);
  std::unique_ptr<solvers::Problem> problem = build_problem(run_config, spec);
  const Checkpoint c = read_checkpoint(checkpoint);
  if (c.state.theta.size() != problem->objective().layout().size())
    throw UserError("'" + checkpoint + "' holds " + std::to_string(c.state.theta.size()) +
                    " parameters but the config's network has " +
                    std::to_string(problem->objective().layout().size()));
  solvers::ExactSolution exact = solvers::exact_solution(run_config.reference, *problem);
  return {.config = std::move(run_config),
          .trained_precision = trained_precision,
          .solution = solvers::Solution(std::move(problem), c.state.theta, std::move(exact)),
          .step = c.state.step};
}

}  // namespace jetpde::io
