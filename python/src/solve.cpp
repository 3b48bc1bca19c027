// solve(): a run as `jetpde run` does it (io::run: the run folder, progress, history.csv,
// checkpoints, validation, the fields, summary.json), with the GIL released while it trains,
// a Python callback after every few steps, and Ctrl-C stopping it between two steps.
#include <pybind11/stl.h>

#include <csignal>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "io/run.h"
#include "python/src/bindings.h"
#include "python/src/py_solution.h"

namespace jetpde::python {

namespace {

// Set by the SIGINT handler below, polled by the trainer after every step.
volatile std::sig_atomic_t g_interrupt = 0;

extern "C" void on_sigint(int) { g_interrupt = 1; }

// While training runs (GIL released), Python's own SIGINT handler would only note the signal for
// the interpreter to act on once training returned. This one sets the trainer's interrupt flag
// instead; the handler that was there before is put back when training ends. Only in the main
// thread, where Python handles signals (from another thread, Ctrl-C goes to Python as usual).
class SigintGuard {
 public:
  explicit SigintGuard(bool install) : installed_(install) {
    if (!installed_) return;
    g_interrupt = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &previous_) == 0;
  }
  ~SigintGuard() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  bool installed_;
  struct sigaction previous_ {};
};

bool in_main_thread() {
  const py::module_ threading = py::module_::import("threading");
  return threading.attr("current_thread")().is(threading.attr("main_thread")());
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

// The loss terms' names (Objective::slot_names) of the run io::run is training: the loss_*
// columns of the header it wrote into history.csv before the first step. (io::run keeps its
// Problem to itself; solvers::solve will hand them over directly.)
std::vector<std::string> loss_terms(const std::string& history_csv) {
  std::ifstream in(history_csv);
  std::string header, column;
  std::getline(in, header);
  std::vector<std::string> names;
  std::istringstream columns(header);
  while (std::getline(columns, column, ','))
    if (column.rfind("loss_", 0) == 0) names.push_back(column.substr(5));
  return names;
}

void set_threads(int threads) {
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

std::unique_ptr<PySolution> solve(const io::RunConfig& config, const py::object& callback,
                                  int every, bool resume, int max_steps) {
  if (every < 1) throw UserError("callback_every: " + std::to_string(every) + "; give at least 1");
  if (max_steps < 0)
    throw UserError("max_steps: " + std::to_string(max_steps) + "; give 0 (no cap) or more");
  std::vector<solvers::StepInfo> steps;
  std::vector<std::string> slots;
  std::exception_ptr failure;  // what the callback raised: re-raised once training has ended
  // Ctrl-C reaches the training of the main thread only; one in another thread has a flag of
  // its own that nothing sets.
  const bool main_thread = in_main_thread();
  volatile std::sig_atomic_t never = 0;
  io::RunOptions options{
      .resume = resume, .max_steps = max_steps, .interrupt = main_thread ? &g_interrupt : &never};
  options.on_step = [&](const solvers::StepInfo& info) {
    steps.push_back(info);
    if (callback.is_none() || info.step % every != 0) return true;
    py::gil_scoped_acquire acquired;
    try {
      if (slots.empty()) slots = loss_terms(config.output.dir + "/history.csv");
      const py::object r = callback(PyStepInfo{info, slots});
      // None (no return statement) goes on; False (or anything false but None) stops.
      return r.is_none() || r.cast<bool>();
    } catch (...) {
      failure = std::current_exception();
      return false;
    }
  };
  set_threads(config.threads);
  std::optional<io::RunReport> report;
  {
    SigintGuard guard(main_thread);
    py::gil_scoped_release released;
    report.emplace(io::run(config, options));
  }
  if (failure) std::rethrow_exception(failure);
  std::unique_ptr<PySolution> s;
  {
    py::gil_scoped_release released;
    s = std::make_unique<PySolution>(io::load_run(report->dir), report->dir);
  }
  s->status = solvers::status_name(report->result().status);
  s->message = report->result().message;
  s->metrics = report->solution.metrics();
  s->files = report->files;
  s->train_seconds = report->solution.train_seconds();
  s->steps = std::move(steps);
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
        py::arg("callback_every") = 1, py::arg("resume") = false, py::arg("max_steps") = 0);
}

}  // namespace jetpde::python
