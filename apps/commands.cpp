#include "apps/commands.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "autodiff/errors.h"
#include "autodiff/options.h"
#include "compiler/cpu_compiler.h"
#include "compiler/cpu_gemm.h"
#include "compiler/executable.h"
#include "compiler/library.h"
#include "compiler/openmp_env.h"
#include "equations/library.h"
#include "equations/parser.h"
#include "io/config.h"
#include "io/config_schema.h"
#include "io/data_files.h"
#include "io/grid_output.h"
#include "io/hdf5_read.h"
#include "io/hdf5_write.h"
#include "io/progress.h"
#include "io/run.h"
#include "io/text_file.h"
#include "io/vtk_write.h"
#include "nn/detail/names.h"
#include "solvers/solve.h"

namespace jetpde::app {
namespace {

namespace fs = std::filesystem;

std::string sci(double x) { return nn::detail::short_number(x, 3); }

// The points of an eval, from any data file (io/data_files.h): an array "points" [n, dims] where
// the file has one and not the coordinates by name, else a column or array per coordinate.
MatrixD read_points(const std::string& file, const std::vector<std::string>& coords) {
  if (!fs::exists(file)) throw UserError("--points: no such file: " + file);
  if (fs::is_directory(file))
    throw UserError("--points: '" + file + "' is a folder; give a data file");
  try {
    const std::unique_ptr<io::DataSource> source = io::open_data_file(file);
    const bool by_name = std::all_of(coords.begin(), coords.end(),
                                     [&](const std::string& c) { return source->contains(c); });
    return io::read_point_data(*source,
                               {.points = by_name || !source->contains("points") ? "" : "points",
                                .coordinates = coords})
        .points;
  } catch (const UserError& e) {
    throw UserError(std::string("--points: ") + e.what());
  }
}

void write_eval(const std::string& out, const MatrixD& points, const MatrixD& values,
                const std::vector<std::string>& coords, const std::vector<std::string>& names) {
  const std::string ext = out.empty() ? ".csv" : fs::path(out).extension().string();
  if (ext == ".h5" || ext == ".hdf5") {
    io::Hdf5Writer h5(out);
    h5.write("points", points);
    for (std::size_t k = 0; k < names.size(); ++k)
      h5.write(names[k], MatrixD(values.col(static_cast<Eigen::Index>(k))));
    h5.commit();
    return;
  }
  if (ext == ".vtu") {
    std::vector<io::VtkArray> arrays;
    for (std::size_t k = 0; k < names.size(); ++k)
      arrays.push_back({names[k], values.col(static_cast<Eigen::Index>(k))});
    io::write_vtu(out, points, arrays);
    return;
  }
  if (ext != ".csv") throw UserError("--output: '" + out + "': expected .csv, .h5 or .vtu");
  // A name with a comma or a quote (d(u, x, 2)) is quoted as RFC 4180 says.
  const auto header = [](const std::string& name) {
    if (name.find_first_of(",\"") == std::string::npos) return name;
    std::string q = "\"";
    for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::ostringstream s;
  for (std::size_t c = 0; c < coords.size(); ++c) s << (c ? "," : "") << coords[c];
  for (const auto& n : names) s << "," << header(n);
  s << "\n";
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    for (Eigen::Index c = 0; c < points.cols(); ++c)
      s << (c ? "," : "") << nn::detail::short_number(points(i, c), 17);
    for (Eigen::Index k = 0; k < values.cols(); ++k)
      s << "," << nn::detail::short_number(values(i, k), 17);
    s << "\n";
  }
  if (out.empty()) {
    std::fputs(s.str().c_str(), stdout);
    return;
  }
  io::write_text_atomically(out, s.str());
}

// SIGTERM (what SLURM and PBS send before a kill, and mpirun passes on to its ranks) and SIGINT
// (Ctrl-C). They are blocked in every thread from the start of main (block_stop_signals; threads
// inherit the mask) and taken by one thread of their own with sigwait: a signal handler running
// on a computing thread is not safe here, since oneDNN's JIT fp32 GEMM kernels point the stack
// pointer into the heap while they run, and the kernel would push the handler's frame over heap
// memory (oneDNN issue #4845, fixed after the 2.6 Debian ships: it corrupted the heap in about a
// fifth of SIGTERMs to fp32 runs). During `run` the first signal sets the flag the trainer polls
// after every step; otherwise, or at the second, the signal takes its default action at once.
volatile std::sig_atomic_t g_stop_signal = 0;
std::atomic<bool> g_graceful_stop{false};

// The two, less any the process was started ignoring (a shell without job control starts its
// background commands with SIGINT ignored): blocked, an ignored signal would still reach sigwait.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signo : {SIGTERM, SIGINT}) {
    struct sigaction now {};
    if (sigaction(signo, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
    sigaddset(&set, signo);
  }
  return set;
}

void catch_stop_signals() { g_graceful_stop = true; }

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int signo = 0;
      if (sigwait(&set, &signo) != 0) continue;
      if (g_graceful_stop && g_stop_signal == 0) {
        g_stop_signal = signo;
        continue;
      }
      // The default action (the process ends), from this thread, the one that takes it.
      std::signal(signo, SIG_DFL);
      pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
      std::raise(signo);
    }
  }).detach();
}

namespace {

// The exit status of a run (apps/README.md lists them).
int exit_status(solvers::TrainResult::Status status) {
  using S = solvers::TrainResult::Status;
  switch (status) {
    case S::non_finite:
      return 3;
    case S::time_limit:
      return 4;
    case S::interrupted:
      return 128 + (g_stop_signal ? static_cast<int>(g_stop_signal) : SIGTERM);
    default:
      return 0;
  }
}

}  // namespace

void set_threads(int threads) {
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

int run(const RunArgs& a, const solvers::Communicator& comm) {
  std::vector<std::string> overrides = a.overrides;
  if (!a.output.empty()) overrides.push_back("output.dir=" + a.output);
  if (!a.progress.empty()) overrides.push_back("output.progress=" + a.progress);
  if (a.threads >= 0) overrides.push_back("threads=" + std::to_string(a.threads));
  const io::RunConfig config = io::load_run_config(a.config, overrides);
  // Rank 0 speaks for all ranks.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet(
      comm.rank() == 0 ? nullptr : std::fopen("/dev/null", "w"), &std::fclose);
  std::FILE* log = quiet ? quiet.get() : stderr;
  set_threads(config.threads);
  if (a.check) {
    // Everything run() checks before it touches the run folder: the config, the problem, the
    // solver (the trainer's stages and weighting, the validation set and derived metrics); for
    // the classical solver what it refuses of the problem and grid.
    const std::string classical = io::check_classical(config);
    if (config.solver.type == "petsc") {
      std::fprintf(log, "jetpde: %s: the config is valid: %s; nothing was run\n", a.config.c_str(),
                   classical.c_str());
      return 0;
    }
    solvers::ProblemSpec spec = config.spec;
    io::choose_device(config, spec, log);
    solvers::Solver solver(io::build_problem(config, spec, comm), io::solve_options(config));
    if (config.recipe.applied) std::fprintf(log, "jetpde: %s\n", config.recipe.describe().c_str());
    const std::size_t terms = solver.problem().objective().slot_names().size();
    std::fprintf(log, "jetpde: %s: the config is valid (%zu loss term%s%s); nothing was run\n",
                 a.config.c_str(), terms, terms == 1 ? "" : "s",
                 classical.empty() ? "" : ("; " + classical).c_str());
    return 0;
  }
  std::fprintf(
      log, "jetpde: %s%s -> %s%s\n", a.config.c_str(), a.resume ? " (resuming)" : "",
      config.output.dir.c_str(),
      comm.size() > 1 ? (" on " + std::to_string(comm.size()) + " MPI ranks").c_str() : "");
  catch_stop_signals();
  const io::RunReport r = io::run(config, {.resume = a.resume,
                                           .max_steps = a.max_steps,
                                           .log = log,
                                           .interrupt = &g_stop_signal,
                                           .communicator = &comm,
                                           .petsc_options = a.petsc_options});
  const solvers::Solution& solution = r.solution;
  std::fprintf(log, "jetpde: %s\n", r.result().message.c_str());
  const auto& m = solution.metrics();
  if (m.count("rel_l2")) {
    const std::string against = config.reference.exact != "none"
                                    ? "the exact solution (" + config.reference.exact + ")"
                                : config.reference.data ? "the reference data"
                                                        : "the exact solution";
    std::fprintf(log, "jetpde: relative L2 error against %s: %s (max abs %s)\n", against.c_str(),
                 sci(m.at("rel_l2")).c_str(), sci(m.at("max_abs")).c_str());
  }
  for (const auto& [name, value] : solution.parameters())
    std::fprintf(log, "jetpde: trained %s = %s\n", name.c_str(),
                 nn::detail::short_number(value, 6).c_str());
  // A resumed run: the whole run's steps and time, then this part's.
  const std::string part = r.resumed_from() < 0
                               ? ""
                               : "; this part " + std::to_string(r.part_steps()) + " steps in " +
                                     io::format_duration(solution.train_seconds());
  std::fprintf(log, "jetpde: %d steps in %s (%ssetup %s, output %s); wrote %s/{", r.result().steps,
               io::format_duration(r.result().run_seconds).c_str(),
               part.empty() ? "" : (part.substr(2) + ", ").c_str(),
               io::format_duration(solution.setup_seconds()).c_str(),
               io::format_duration(r.output_seconds).c_str(), r.dir.c_str());
  std::string files;
  std::size_t series = 0;  // fields_NNNN.vti, shown as one range
  for (const std::string& f : r.files) {
    if (f.rfind("fields_", 0) == 0 && ++series > 1) continue;
    files += (files.empty() ? "" : ",") + f;
  }
  if (series > 1) {
    char range[64];
    std::snprintf(range, sizeof range, "fields_0000..%04zu.vti", series - 1);
    files.replace(files.find("fields_0000.vti"), 15, range);
  }
  std::fprintf(log, "%s}\n", files.c_str());
  if (r.result().status == solvers::TrainResult::Status::interrupted ||
      r.result().status == solvers::TrainResult::Status::time_limit)
    std::fprintf(log, "jetpde: %s at step %d: run it again with --resume to continue\n",
                 solvers::status_name(r.result().status), r.result().steps);
  return exit_status(r.result().status);
}

namespace {

io::LoadedRun load(const std::string& dir, const LoadArgs& a) {
  std::vector<std::string> overrides = a.overrides;
  if (!a.precision.empty()) overrides.push_back("precision=" + a.precision);
  return io::load_run(dir, overrides);
}

// "in fp64 (trained in fp32)", or "in fp32" when they are the same.
std::string precision_note(const io::LoadedRun& run) {
  // A classical run's values come from its grid: say how (solvers/classical's GridSolution).
  if (run.config.solver.type == "petsc")
    return "from the finite-difference grid solution (values interpolated multilinearly, "
           "derivatives by 2nd-order stencils on the grid, then interpolated)";
  const std::string used = run.config.resolved["precision"].as<std::string>();
  return "in " + used +
         (used == run.trained_precision ? "" : " (trained in " + run.trained_precision + ")");
}

}  // namespace

int eval(const EvalArgs& a) {
  // Checked before anything is computed: a folder, or a folder that does not exist.
  if (!a.output.empty()) {
    std::error_code ec;
    if (fs::is_directory(a.output, ec))
      throw UserError("--output: '" + a.output +
                      "' is a folder; give a file name ending in .csv, .h5 or .vtu");
    const fs::path parent = fs::path(a.output).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw UserError("--output: '" + a.output + "': no folder '" + parent.string() + "'");
  }
  io::LoadedRun run = load(a.run_dir, a.load);
  set_threads(run.config.threads);
  const std::vector<std::string>& coords = run.config.spec.math.domain->coordinate_names();
  const MatrixD points = read_points(a.points, coords);
  const std::vector<std::string> names =
      a.fields.empty() ? run.config.spec.math.context.field_names() : a.fields;
  for (const std::string& f : names) try {
      equations::parse(f, run.config.spec.math.context);
    } catch (const UserError& e) {
      throw UserError("--fields: " + std::string(e.what()));
    }
  const MatrixD values = run.solution.evaluate(points, names);
  write_eval(a.output, points, values, coords, names);
  std::fflush(stdout);
  std::string what;
  for (const std::string& n : names) what += (what.empty() ? "" : ", ") + n;
  std::fprintf(stderr, "jetpde: step %d of %s: %s at %lld points %s\n", run.step, a.run_dir.c_str(),
               what.c_str(), static_cast<long long>(points.rows()), precision_note(run).c_str());
  return 0;
}

// A YAML list of texts, each quoted: `d(u, x, 2)` stays one entry.
std::string yaml_texts(const std::vector<std::string>& texts) {
  std::string out = "[";
  for (const std::string& t : texts) {
    out += out.size() > 1 ? ", \"" : "\"";
    for (char c : t) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    out += "\"";
  }
  return out + "]";
}

namespace {

// export --library: the program eval runs, for blocks of a.block points, in fp64 (the library's
// arithmetic), as a library for the CPU or a CUDA GPU.
int export_library(const ExportArgs& a) {
  if (!a.grid.empty() || a.time_steps > 0 || !a.quantities.empty() || !a.output.empty())
    throw UserError(
        "--library writes a library, not grid files: --grid, --time-steps, "
        "--quantities and --output do not go with it (--fields chooses what it "
        "computes)");
  if (!a.load.precision.empty() && a.load.precision != "fp64")
    throw UserError("--library: the library computes in fp64 (--precision " + a.load.precision +
                    " is not available for it yet)");
  if (!a.cuda_arch.empty() && a.device != "cuda")
    throw UserError("--cuda-arch goes with --device cuda");
  LoadArgs options = a.load;
  options.precision = "fp64";
  io::LoadedRun run = load(a.run_dir, options);
  if (run.config.solver.type == "petsc")
    throw UserError("--library: '" + a.run_dir +
                    "' is a classical (solver: petsc) run: a grid, not a network, to export");
  const equations::Context& ctx = run.config.spec.math.context;
  const std::vector<std::string> names = a.fields.empty() ? ctx.field_names() : a.fields;
  for (const std::string& f : names) try {
      equations::parse(f, ctx);
    } catch (const UserError& e) {
      throw UserError("--fields: " + std::string(e.what()));
    }
  compiler::LibrarySpec spec{.name = a.name,
                             .coordinates = run.config.spec.math.domain->coordinate_names(),
                             .outputs = names,
                             .description = "step " + std::to_string(run.step) + " of " +
                                            fs::absolute(a.run_dir).lexically_normal().string()};
  const compiler::LibraryOptions library{
      .backend = a.device == "cuda" ? compiler::Backend::cuda : compiler::Backend::cpu,
      .block_rows = a.block,
      .cuda_arch = a.cuda_arch};
  const solvers::Problem::ExportedProgram exported = run.solution.problem().exported_program(
      run.solution.theta(), a.block, names, library.backend);
  const std::vector<std::string> files =
      compiler::export_library(exported.program, exported.values, spec, library, a.library);
  std::string written;
  for (std::size_t i = 0; i < files.size(); ++i)
    written += (i == 0 ? "" : i + 1 == files.size() ? " and " : ", ") + files[i];
  std::fprintf(stderr,
               "jetpde: step %d of %s: wrote %s in %s: %s at points (%s) in fp64 on the %s, %ld "
               "points a block (trained in %s)\n",
               run.step, a.run_dir.c_str(), written.c_str(), a.library.c_str(),
               options::joined(names).c_str(), options::joined(spec.coordinates).c_str(),
               a.device == "cuda" ? "GPU (device pointers)" : "CPU", a.block,
               run.trained_precision.c_str());
  return 0;
}

}  // namespace

int export_fields(const ExportArgs& a) {
  if (!a.library.empty()) return export_library(a);
  // The options become overrides of the run's output settings: checked (ranges, the grid's
  // memory, the quantities' names) before anything is computed, like the config's own.
  LoadArgs options = a.load;
  std::vector<std::string>& overrides = options.overrides;
  if (!a.grid.empty()) {
    std::string grid;
    for (int g : a.grid) grid += (grid.empty() ? "" : ",") + std::to_string(g);
    overrides.push_back("output.grid=[" + grid + "]");
  }
  if (a.time_steps > 0) overrides.push_back("output.time_steps=" + std::to_string(a.time_steps));
  if (!a.quantities.empty()) overrides.push_back("output.quantities=" + yaml_texts(a.quantities));
  io::LoadedRun run = load(a.run_dir, options);
  set_threads(run.config.threads);
  const std::string dir = a.output.empty() ? a.run_dir : a.output;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("--output: cannot create '" + dir + "': " + ec.message());
  const io::OutputOptions& o = run.config.output;
  const std::vector<std::string> files = io::write_grid_output(run.solution, dir,
                                                               {.grid = {o.grid, o.time_steps},
                                                                .quantities = o.quantities,
                                                                .residuals = o.residuals,
                                                                .vtk = true,
                                                                .hdf5 = true,
                                                                .exact = run.solution.exact()});
  std::fprintf(stderr, "jetpde: step %d of %s: wrote", run.step, a.run_dir.c_str());
  for (const auto& f : files) std::fprintf(stderr, " %s", f.c_str());
  std::fprintf(stderr, " in %s, %s\n", dir.c_str(), precision_note(run).c_str());
  return 0;
}

int info(const InfoArgs& a) {
  if (a.config_reference) {
    std::fputs(io::schema_markdown().c_str(), stdout);
    return 0;
  }
  if (a.equations) {
    for (const std::string& name : equations::library_names()) {
      const equations::LibraryInfo& i = equations::library_info(name);
      std::printf("%s: %s\n", name.c_str(), i.description.c_str());
      for (const auto& p : i.parameters)
        std::printf("    %s = %s  %s\n", p.name.c_str(),
                    p.default_value.empty() ? "(unset)" : p.default_value.c_str(),
                    p.meaning.c_str());
    }
    return 0;
  }
  compiler::CompileOptions options = compiler::CompileOptions::from_environment();
  std::string why_cpu, why_cuda;
  const bool cpu = compiler::backend_can_run(compiler::Backend::cpu, options, &why_cpu);
  const bool cuda = compiler::backend_can_run(compiler::Backend::cuda, options, &why_cuda);
  std::printf("jetpde %s\n", JETPDE_VERSION);
  std::printf("backends:\n");
  std::printf("  cpu          %s\n", cpu ? "yes (generated C++ kernels, host compiler found)"
                                         : ("no: " + why_cpu).c_str());
  std::printf("  cuda         %s\n", cuda ? "yes" : ("no: " + why_cuda).c_str());
  std::printf("  interpreter  yes (reference)\n");
  std::printf("gemm:          %s\n", compiler::sgemm_library());
  std::printf("bf16 gemm:     %s\n", !compiler::native_bf16_gemm_available() ? "emulated"
                                     : compiler::cpu_has_amx_bf16()          ? "native (AMX)"
                                                                    : "native (AVX512-BF16)");
  std::printf("precision auto: %s on cpu, %s on cuda\n",
              compiler::precision_name(compiler::resolve_auto(compiler::PrecisionPolicy::automatic,
                                                              compiler::Backend::cpu))
                  .c_str(),
              compiler::precision_name(compiler::resolve_auto(compiler::PrecisionPolicy::automatic,
                                                              compiler::Backend::cuda))
                  .c_str());
  std::printf("BLAS:          %s\n", JETPDE_BLAS);
  const std::string mpi = JETPDE_MPI_VERSION;
  std::printf("MPI:           %s\n", mpi.empty() ? "not found at build time"
                                                 : ("MPI " + mpi + " found at build time").c_str());
#ifdef _OPENMP
  std::printf("threads:       %d (OpenMP)\n", omp_get_max_threads());
#endif
  std::printf("OpenMP wait:   %s\n", compiler::openmp_wait_policy().c_str());
  const compiler::CacheContents cache = compiler::cache_contents(options.cpu);
  const std::int64_t limit = compiler::cache_max_bytes(options.cpu);
  std::printf("compile cache: %s (%d program%s, %d tile file%s; %.0f MB, %s)\n",
              compiler::cache_directory(options.cpu).c_str(), cache.programs,
              cache.programs == 1 ? "" : "s", cache.tile_files, cache.tile_files == 1 ? "" : "s",
              static_cast<double>(cache.bytes) / (1 << 20),
              limit > 0
                  ? ("limit " + std::to_string(limit >> 20) + " MB: JETPDE_CACHE_MAX_MB").c_str()
                  : "no limit: JETPDE_CACHE_MAX_MB=0");
  if (cache.busy_regions > 0) {
    std::printf(
        "  tiles measured under load: %d region%s, in the default tile; delete to measure "
        "again:\n",
        cache.busy_regions, cache.busy_regions == 1 ? "" : "s");
    for (const std::string& f : cache.busy_files) std::printf("    %s\n", f.c_str());
  }
  return 0;
}

}  // namespace jetpde::app
