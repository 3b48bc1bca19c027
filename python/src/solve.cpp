// solve(): a run as `jetpde run` does it (io::run: the run folder, progress, history.csv,
// checkpoints, validation, the fields, summary.json), with the GIL released while it trains,
// a Python callback after every few steps, and Ctrl-C stopping it between two steps; on the
// ranks of an mpi4py communicator when one is given.
#include <pybind11/stl.h>

#include <pthread.h>

#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "io/config.h"
#include "io/run.h"
#include "python/src/bindings.h"
#include "python/src/py_solution.h"
#include "python/src/signals.h"
#include "solvers/marching.h"
#include "solvers/mpi.h"
#include "solvers/solve.h"

namespace jetpde::python {

namespace {

// Set by the SIGINT handler below, polled by the trainer after every step.
volatile std::sig_atomic_t g_interrupt = 0;

extern "C" void on_sigint(int) { g_interrupt = 1; }

// While training runs (GIL released), Python's own SIGINT handler would only note the signal for
// the interpreter to act on once training returned. This one sets the trainer's interrupt flag
// instead; the handler that was there before is put back when training ends. Only where Ctrl-C
// would be a KeyboardInterrupt (takes_ctrl_c): a process that ignores SIGINT (started in the
// background by a shell without job control, or under nohup) keeps ignoring it, and a handler of
// the user's own keeps the signal (it runs at the next callback).
// The training threads block SIGINT (signals.h: no handler may run on them), so a thread of the
// guard's own, idle with SIGINT open, is there for the handler to run on.
class SigintGuard {
 public:
  explicit SigintGuard(bool install) : installed_(install) {
    if (!installed_) return;
    g_interrupt = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &previous_) == 0;
    if (!installed_) return;
    catcher_ = std::thread([this] {
      sigset_t sigint;
      sigemptyset(&sigint);
      sigaddset(&sigint, SIGINT);
      pthread_sigmask(SIG_UNBLOCK, &sigint, nullptr);
      std::unique_lock<std::mutex> lock(mutex_);
      ended_.wait(lock, [this] { return end_; });
    });
  }
  ~SigintGuard() {
    if (!installed_) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      end_ = true;
    }
    ended_.notify_one();
    catcher_.join();
    sigaction(SIGINT, &previous_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  bool installed_;
  struct sigaction previous_ {};
  std::thread catcher_;
  std::mutex mutex_;
  std::condition_variable ended_;
  bool end_ = false;
};

bool in_main_thread() {
  const py::module_ threading = py::module_::import("threading");
  return threading.attr("current_thread")().is(threading.attr("main_thread")());
}

// Whether Ctrl-C stops this solve() between two steps: called from the main thread (where Python
// handles signals) while SIGINT's handler is Python's default one, the KeyboardInterrupt.
bool takes_ctrl_c() {
  if (!in_main_thread()) return false;
  const py::module_ signal = py::module_::import("signal");
  return signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler"));
}

// What a callback receives: one step of training.
struct PyStepInfo {
  solvers::StepInfo info;
  std::vector<std::string> slots;
  py::dict named(const std::vector<double>& values) const {
    py::dict d;
    for (std::size_t k = 0; k < slots.size() && k < values.size(); ++k)
      d[slots[k].c_str()] = values[k];
    return d;
  }
};

// history.csv's header line: the loss terms' names (Objective::slot_names) as its loss_*
// columns, then the metrics. io::run writes it before the first step, on rank 0 (the only rank
// that writes); the other ranks get it from rank 0 (broadcast_text), so that they need not see
// its file system. (io::run keeps its Problem to itself; solvers::solve will hand the names over
// directly.)
std::string history_header(const std::string& history_csv) {
  std::ifstream in(history_csv);
  std::string header;
  std::getline(in, header);
  return header;
}

std::vector<std::string> loss_terms_of(const std::string& header) {
  std::string column;
  std::vector<std::string> names;
  std::istringstream columns(header);
  while (std::getline(columns, column, ','))
    if (column.rfind("loss_", 0) == 0) names.push_back(column.substr(5));
  return names;
}

// Rank 0's text on every rank (a Communicator carries doubles: one per character). Collective.
std::string broadcast_text(const solvers::Communicator& comm, const std::string& text) {
  double length = static_cast<double>(text.size());
  comm.broadcast({&length, 1});
  std::vector<double> chars(static_cast<std::size_t>(length));
  if (comm.rank() == 0)
    for (std::size_t i = 0; i < chars.size(); ++i) chars[i] = static_cast<unsigned char>(text[i]);
  comm.broadcast(chars);
  std::string out(chars.size(), '\0');
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<char>(chars[i]);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// jetpde's own communicator over the ranks of an mpi4py communicator (anything with py2f(): its
// Fortran handle, so that no mpi4py headers are needed here), a duplicate (MPI_Comm_dup), freed
// when the solve is over; null for None (one process).
std::unique_ptr<solvers::Communicator> communicator_of(const py::object& comm) {
  if (comm.is_none()) return nullptr;
  if (!py::hasattr(comm, "py2f"))
    throw py::type_error(
        "comm: expected an mpi4py communicator (MPI.COMM_WORLD, or one made from "
        "it: an object with py2f()), not " +
        py::str(py::type::handle_of(comm).attr("__name__")).cast<std::string>());
  const auto handle = comm.attr("py2f")().cast<std::int64_t>();
  // (An intercommunicator is a UserError there.)
  return solvers::communicator_from_fortran(handle);
}

// A rank other than 0 has the same trained parameters as rank 0 but not, on its own file system,
// the run folder that rank 0 wrote: its Solution is made as io::load_run makes one from that
// folder, from the config in memory and the parameters that training left (the same values, so
// the same evaluations).
io::LoadedRun loaded_from_memory(const io::RunConfig& config, const io::RunReport& report) {
  solvers::ProblemSpec spec = config.spec;
  io::choose_device(config, spec, stderr);
  if (config.time_windows > 1) spec = solvers::marched_spec(std::move(spec), config.time_windows);
  std::unique_ptr<solvers::Problem> problem = io::build_problem(config, spec);
  solvers::ExactSolution exact = solvers::exact_solution(config.reference, *problem);
  return {
      .config = config,
      .trained_precision = config.resolved["precision"].as<std::string>(),
      .solution = solvers::Solution(std::move(problem), report.solution.theta(), std::move(exact)),
      .step = report.result().steps};
}

std::unique_ptr<PySolution> solve(const io::RunConfig& config, const py::object& callback,
                                  int every, bool resume, int max_steps, const py::object& comm) {
  if (every < 1) throw UserError("callback_every: " + std::to_string(every) + "; give at least 1");
  if (max_steps < 0)
    throw UserError("max_steps: " + std::to_string(max_steps) + "; give 0 (no cap) or more");
  const std::unique_ptr<solvers::Communicator> communicator = communicator_of(comm);
  const int rank = communicator ? communicator->rank() : 0;
  std::vector<solvers::StepInfo> steps;
  std::string header;  // history.csv's, once the first step is done
  std::vector<std::string> slots;
  std::exception_ptr failure;  // what the callback raised: re-raised once training has ended
  // Ctrl-C reaches the training of the main thread only (takes_ctrl_c); any other has a flag of
  // its own that nothing sets.
  const bool ctrl_c = takes_ctrl_c();
  volatile std::sig_atomic_t never = 0;
  io::RunOptions options{.resume = resume,
                         .max_steps = max_steps,
                         .interrupt = ctrl_c ? &g_interrupt : &never,
                         .communicator = communicator.get()};
  std::optional<ComputeSignals> computing;  // while training: below
  options.on_step = [&](const solvers::StepInfo& info) {
    // Every rank comes here after every step (the trainer's collectives keep them in step), with
    // or without a callback of its own: the one place where rank 0's header can reach them all.
    if (steps.empty()) {
      header = rank == 0 ? history_header(config.output.dir + "/history.csv") : std::string();
      if (communicator) header = broadcast_text(*communicator, header);
      slots = loss_terms_of(header);
    }
    steps.push_back(info);
    if (callback.is_none() || info.step % every != 0) return true;
    py::gil_scoped_acquire acquired;
    const ComputeSignals::Unblocked python_code(*computing);
    try {
      const py::object r = callback(PyStepInfo{info, slots});
      // None (no return statement) goes on; False (or anything false but None) stops.
      return r.is_none() || r.cast<bool>();
    } catch (...) {
      failure = std::current_exception();
      return false;
    }
  };
  start_threads_without_signals(config.threads);
  std::optional<io::RunReport> report;
  std::vector<std::string> files;
  {
    SigintGuard guard(ctrl_c);
    computing.emplace();  // after the guard: SIGINT has a handler then, and is blocked here
    py::gil_scoped_release released;
    report.emplace(io::run(config, options));
    files = report->files;
    // Rank 0's list (the others wrote nothing, so theirs stops before the fields); here, before
    // anything that raises on one rank only (the callback's exception), so that none waits.
    if (communicator) files = lines_of(broadcast_text(*communicator, joined(files)));
    computing.reset();  // before the guard: a SIGINT pending here still sets only the flag
  }
  if (failure) std::rethrow_exception(failure);
  std::unique_ptr<PySolution> s;
  {
    const ComputeSignals loading;
    py::gil_scoped_release released;
    s = std::make_unique<PySolution>(
        rank == 0 ? io::load_run(report->dir) : loaded_from_memory(config, *report), report->dir);
  }
  s->status = solvers::status_name(report->result().status);
  s->message = report->result().message;
  s->metrics = report->solution.metrics();
  s->files = std::move(files);
  s->train_seconds = report->solution.train_seconds();
  s->steps = std::move(steps);
  s->history_header = std::move(header);
  s->rank = rank;
  return s;
}

}  // namespace

void define_solve(py::module_& m) {
  py::class_<PyStepInfo>(m, "StepInfo", "One training step, as a callback sees it.")
      .def_property_readonly("step", [](const PyStepInfo& s) { return s.info.step; })
      .def_property_readonly("stage", [](const PyStepInfo& s) { return s.info.stage; })
      .def_property_readonly("loss", [](const PyStepInfo& s) { return s.info.loss; })
      .def_property_readonly("losses",
                             [](const PyStepInfo& s) { return s.named(s.info.slot_losses); })
      .def_property_readonly("weights", [](const PyStepInfo& s) { return s.named(s.info.weights); })
      .def_property_readonly("learning_rate",
                             [](const PyStepInfo& s) { return s.info.learning_rate; })
      .def_property_readonly("seconds", [](const PyStepInfo& s) { return s.info.run_seconds; })
      .def_property_readonly("metrics", [](const PyStepInfo& s) { return s.info.metrics; })
      .def("__repr__", [](const PyStepInfo& s) {
        return "StepInfo(step=" + std::to_string(s.info.step) + ", stage='" + s.info.stage +
               "', loss=" + py::repr(py::float_(s.info.loss)).cast<std::string>() + ")";
      });
  m.def("solve", &solve, py::arg("config"), py::arg("callback") = py::none(),
        py::arg("callback_every") = 1, py::arg("resume") = false, py::arg("max_steps") = 0,
        py::arg("comm") = py::none());
  m.def("mpi_built", &solvers::mpi_built, "Whether this jetpde was built with MPI.");
  m.def(
      "mpi_library_version",
      [] {
        std::string v = solvers::mpi_library_version();
        // Open MPI counts the terminating zero in the length it reports.
        while (!v.empty() && v.back() == '\0') v.pop_back();
        return v;
      },
      "The first line of the MPI library's version text (empty without MPI): the library "
      "mpi4py must use too.");
}

}  // namespace jetpde::python
