// The PETSc side of the classical solver: the session (PetscInitialize once per process), the
// DMDA, SNES for steady problems and TS for time-dependent ones (classical.h).
#include <petscdmda.h>
#include <petscsnes.h>
#include <petscts.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "autodiff/errors.h"
#include "solvers/classical/classical.h"
#include "solvers/classical/discretization.h"

// Under AddressSanitizer (the asan preset runs the unit tests with leak checking), what MPI_Init
// and MPI_Finalize allocate inside Open MPI's dynamically loaded components, and never free, is
// theirs: it is kept out of the leak report. Everything jetpde and PETSc allocate in between is
// still checked.
#if defined(__SANITIZE_ADDRESS__)
#define JETPDE_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JETPDE_LEAK_CHECKED 1
#endif
#endif
#ifdef JETPDE_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace jetpde::classical {
namespace {

// The first message of the error PETSc is raising (its error handler records it here instead of
// printing PETSc's page of traceback and configure options).
thread_local std::string petsc_message;

PetscErrorCode record_error(MPI_Comm, int, const char* function, const char*, PetscErrorCode code,
                            PetscErrorType kind, const char* message, void*) {
  if (kind == PETSC_ERROR_INITIAL)
    petsc_message =
        std::string(message ? message : "") + " (in " + (function ? function : "?") + ")";
  return code;
}

// A PETSc call that failed: a UserError with PETSc's message.
void check(PetscErrorCode code, const char* call) {
  if (code == 0) return;
  std::string text = petsc_message;
  if (text.empty()) {
    const char* generic = nullptr;
    PetscErrorMessage(code, &generic, nullptr);
    text = generic ? generic : "error " + std::to_string(code);
  }
  petsc_message.clear();
  throw UserError("petsc: " + text + " [" + call + "]");
}
#define JETPDE_PETSC(call) check((call), #call)

// PetscFinalize where MPI ends: from MPI_Finalize's deletion of MPI_COMM_SELF's attributes (MPI
// calls are still allowed there), when MPI was running before PETSc; at exit otherwise (PETSc
// then initialized MPI itself and finalizes it).
struct [[maybe_unused]] MpiOwnAllocations {
#ifdef JETPDE_LEAK_CHECKED
  MpiOwnAllocations() { __lsan_disable(); }
  ~MpiOwnAllocations() { __lsan_enable(); }
#else
  MpiOwnAllocations() {}  // user-provided: not an unused variable when nothing is checked
#endif
};

int finalize_with_mpi(MPI_Comm, int, void*, void*) {
  PetscBool finalized = PETSC_TRUE;
  PetscFinalized(&finalized);
  if (!finalized) {
    MpiOwnAllocations mpi;
    PetscFinalize();
  }
  return MPI_SUCCESS;
}
void finalize_at_exit() { finalize_with_mpi(MPI_COMM_SELF, 0, nullptr, nullptr); }

void start_petsc() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  PetscBool up = PETSC_FALSE;
  PetscInitialized(&up);
  if (up) return;
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  // PETSc installs its own signal handlers; jetpde's (SIGTERM and SIGINT stop training cleanly)
  // stay, and a crash is not reported as a PETSc error.
  struct sigaction saved[NSIG];
  for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &saved[s]);
  PetscErrorCode code = 0;
  {
    MpiOwnAllocations mpi;
    code = PetscInitializeNoArguments();
  }
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &saved[s], nullptr);
  JETPDE_PETSC(code);
  if (mpi_up) {
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_with_mpi, &keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
  } else {
    std::atexit(finalize_at_exit);
  }
}

// The options of one solve: the solver's defaults, the config's text, then PETSC_OPTIONS, in a
// database of their own that is the default one while the solve runs (so that one solve's
// options do not leak into the next).
// PETSc's errors recorded (record_error) while a solve runs.
class ScopedErrorHandler {
 public:
  ScopedErrorHandler() {
    petsc_message.clear();
    PetscPushErrorHandler(record_error, nullptr);
  }
  ~ScopedErrorHandler() { PetscPopErrorHandler(); }
};

class ScopedOptions {
 public:
  // PETSc's own order (a file, then PETSC_OPTIONS, then the command line; a later value of an
  // option replaces an earlier one): the config's text, the environment, the command line's.
  ScopedOptions(const std::string& text, const std::string& command_line) {
    JETPDE_PETSC(PetscOptionsCreate(&options_));
    if (!text.empty()) JETPDE_PETSC(PetscOptionsInsertString(options_, text.c_str()));
    if (const char* env = std::getenv("PETSC_OPTIONS"))
      JETPDE_PETSC(PetscOptionsInsertString(options_, env));
    if (!command_line.empty())
      JETPDE_PETSC(PetscOptionsInsertString(options_, command_line.c_str()));
    JETPDE_PETSC(PetscOptionsPush(options_));
  }
  ~ScopedOptions() {
    PetscOptionsPop();
    PetscOptionsDestroy(&options_);
  }
  std::vector<std::string> unused() const {
    PetscInt n = 0;
    char** names = nullptr;
    char** values = nullptr;
    std::vector<std::string> out;
    if (PetscOptionsLeftGet(options_, &n, &names, &values) != 0) return out;
    for (PetscInt i = 0; i < n; ++i) out.push_back(std::string("-") + names[i]);
    PetscOptionsLeftRestore(options_, &n, &names, &values);
    return out;
  }
  bool has(const char* name) const {
    PetscBool set = PETSC_FALSE;
    PetscOptionsHasName(options_, nullptr, name, &set);
    return set;
  }

 private:
  PetscOptions options_ = nullptr;
};

// The solver types the options name (-snes_type, -ksp_type, -pc_type, -ts_type) checked against
// PETSc's registered ones before any object reads them: a misspelt type is a UserError that lists
// the known ones (and PETSc's own error path, which leaves its half-read options behind, is not
// taken).
void check_solver_types() {
  JETPDE_PETSC(SNESInitializePackage());
  JETPDE_PETSC(KSPInitializePackage());
  JETPDE_PETSC(PCInitializePackage());
  JETPDE_PETSC(TSInitializePackage());
  const struct {
    const char* option;
    PetscFunctionList list;
    const char* what;
  } types[] = {{"-snes_type", SNESList, "SNES"},
               {"-ksp_type", KSPList, "KSP"},
               {"-pc_type", PCList, "PC"},
               {"-ts_type", TSList, "TS"}};
  for (const auto& t : types) {
    char name[256] = "";
    PetscBool set = PETSC_FALSE;
    JETPDE_PETSC(PetscOptionsGetString(nullptr, nullptr, t.option, name, sizeof name, &set));
    if (!set) continue;
    void (*found)(void) = nullptr;
    JETPDE_PETSC(PetscFunctionListFind(t.list, name, &found));
    if (found) continue;
    const char** known = nullptr;
    int n = 0;
    std::string names;
    if (PetscFunctionListGet(t.list, &known, &n) == 0) {
      for (int k = 0; k < n; ++k)
        if (known[k]) names += (names.empty() ? "" : ", ") + std::string(known[k]);
      PetscFree(known);
    }
    throw UserError(std::string("petsc: ") + t.option + " " + name + ": not a " + t.what +
                    " type (known: " + names + ")");
  }
}

template <class T, PetscErrorCode (*destroy)(T*)>
struct Owned {
  T object = nullptr;
  ~Owned() {
    if (object) destroy(&object);
  }
};

struct Callback {
  const Discretization* d = nullptr;
  DM da = nullptr;
  std::exception_ptr error;
};

// Ghosted local arrays of a DMDA as GridArrays.
GridArray ghosted(DM da, const PetscScalar* data, const Discretization& d) {
  PetscInt gs[3], gm[3];
  DMDAGetGhostCorners(da, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]);
  GridArray a;
  a.data = data;
  a.dof = d.dof;
  for (int k = 0; k < 3; ++k) {
    a.start[k] = static_cast<int>(gs[k]);
    a.size[k] = k < d.dim ? static_cast<int>(gm[k]) : 1;
    if (k >= d.dim) a.start[k] = 0;
  }
  return a;
}

// F(t, U, Udot) on this process's points: the residual of every row.
PetscErrorCode evaluate(Callback* cb, double t, Vec U, Vec Udot, Vec F) {
  const Discretization& d = *cb->d;
  DM da = cb->da;
  Vec ul = nullptr, vl = nullptr;
  PetscCall(DMGetLocalVector(da, &ul));
  PetscCall(DMGlobalToLocalBegin(da, U, INSERT_VALUES, ul));
  PetscCall(DMGlobalToLocalEnd(da, U, INSERT_VALUES, ul));
  if (Udot) {
    PetscCall(DMGetLocalVector(da, &vl));
    PetscCall(DMGlobalToLocalBegin(da, Udot, INSERT_VALUES, vl));
    PetscCall(DMGlobalToLocalEnd(da, Udot, INSERT_VALUES, vl));
  }
  const PetscScalar *u = nullptr, *v = nullptr;
  PetscScalar* f = nullptr;
  PetscCall(VecGetArrayRead(ul, &u));
  if (vl) PetscCall(VecGetArrayRead(vl, &v));
  PetscCall(VecGetArray(F, &f));
  PetscInt s[3], m[3];
  PetscCall(DMDAGetCorners(da, &s[0], &s[1], &s[2], &m[0], &m[1], &m[2]));
  int lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = k < d.dim ? static_cast<int>(s[k]) : 0;
    hi[k] = k < d.dim ? static_cast<int>(s[k] + m[k]) : 1;
  }
  PetscErrorCode status = 0;
  try {
    const GridArray ua = ghosted(da, u, d);
    GridArray va;
    if (v) va = ghosted(da, v, d);
    d.residual(ua, v ? &va : nullptr, t, lo, hi, f);
  } catch (...) {
    cb->error = std::current_exception();
    status = PETSC_ERR_USER;
  }
  PetscCall(VecRestoreArray(F, &f));
  if (vl) PetscCall(VecRestoreArrayRead(vl, &v));
  PetscCall(VecRestoreArrayRead(ul, &u));
  if (vl) PetscCall(DMRestoreLocalVector(da, &vl));
  PetscCall(DMRestoreLocalVector(da, &ul));
  return status;
}

PetscErrorCode snes_function(SNES, Vec U, Vec F, void* ctx) {
  return evaluate(static_cast<Callback*>(ctx), 0.0, U, nullptr, F);
}

PetscErrorCode ts_ifunction(TS, PetscReal t, Vec U, Vec Udot, Vec F, void* ctx) {
  return evaluate(static_cast<Callback*>(ctx), t, U, Udot, F);
}

// The defaults of the linear solve: a direct one (robust for the grids a few processes hold),
// PETSc's own LU on one process, MUMPS's on several, and MUMPS's always when the matrix has zero
// diagonal entries that pivoting must avoid (`pivoting`: the rows of a field its own equation
// does not contain, e.g. the continuity rows of the velocity-pressure form; PETSc's LU does not
// pivot and stops at the first zero pivot).
void default_linear_solver(SNES snes, MPI_Comm comm, bool pivoting) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  KSP ksp;
  PC pc;
  JETPDE_PETSC(SNESGetKSP(snes, &ksp));
  JETPDE_PETSC(KSPSetType(ksp, KSPPREONLY));
  JETPDE_PETSC(KSPGetPC(ksp, &pc));
  JETPDE_PETSC(PCSetType(pc, PCLU));
  if (size > 1 || pivoting) JETPDE_PETSC(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
}

std::string describe_solver(SNES snes) {
  SNESType st;
  KSPType kt;
  PCType pt;
  KSP ksp;
  PC pc;
  SNESGetType(snes, &st);
  SNESGetKSP(snes, &ksp);
  KSPGetType(ksp, &kt);
  KSPGetPC(ksp, &pc);
  PCGetType(pc, &pt);
  std::string factor;
  MatSolverType mst = nullptr;
  PetscBool lu = PETSC_FALSE;
  PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), PCLU, &lu);
  if (lu && PCFactorGetMatSolverType(pc, &mst) == 0 && mst && std::string(mst) != "petsc")
    factor = std::string(" (") + mst + ")";
  return std::string("SNES ") + (st ? st : "?") + ", KSP " + (kt ? kt : "?") + ", PC " +
         (pt ? pt : "?") + factor;
}

// MatFDColoringSetFunction takes its function type-erased; void (*)(void) is the cast GCC accepts
// between function types.
template <class F>
PetscErrorCode (*as_petsc_function(F* f))(void) {
  return reinterpret_cast<PetscErrorCode (*)(void)>(reinterpret_cast<void (*)(void)>(f));
}

// The finite-difference Jacobian's coloring: the DMDA's own, except on a periodic axis whose point
// count is not a multiple of 2 w + 1 (w the stencil width), where PETSc 3.18's DMDA coloring is
// not valid (it overruns its arrays); there a distance-2 coloring of the matrix's pattern, which
// DMCreateMatrix fills in.
MatFDColoring make_coloring(const Discretization& d, DM da, Mat J, PetscErrorCode (*f)(void),
                            void* ctx) {
  bool dm_coloring = true;
  for (const Axis& a : d.axes)
    if (a.periodic && a.n % (2 * d.stencil_width + 1) != 0) dm_coloring = false;
  ISColoring iscoloring;
  if (dm_coloring) {
    JETPDE_PETSC(DMCreateColoring(da, IS_COLORING_GLOBAL, &iscoloring));
  } else {
    MatColoring mc;
    JETPDE_PETSC(MatColoringCreate(J, &mc));
    JETPDE_PETSC(MatColoringSetDistance(mc, 2));
    JETPDE_PETSC(MatColoringSetType(mc, MATCOLORINGSL));
    JETPDE_PETSC(MatColoringSetFromOptions(mc));
    JETPDE_PETSC(MatColoringApply(mc, &iscoloring));
    JETPDE_PETSC(MatColoringDestroy(&mc));
  }
  MatFDColoring coloring;
  JETPDE_PETSC(MatFDColoringCreate(J, iscoloring, &coloring));
  JETPDE_PETSC(MatFDColoringSetFunction(coloring, f, ctx));
  JETPDE_PETSC(MatFDColoringSetFromOptions(coloring));
  JETPDE_PETSC(MatFDColoringSetUp(J, iscoloring, coloring));
  JETPDE_PETSC(ISColoringDestroy(&iscoloring));
  return coloring;
}

// The whole grid's values in natural order (x fastest, fields interleaved) on every process: the
// DMDA's global-to-natural permutation, then an all-gather (collective).
std::vector<double> natural_values(const Discretization& d, DM da, Vec U) {
  Owned<Vec, VecDestroy> natural, all;
  Owned<VecScatter, VecScatterDestroy> gather;
  JETPDE_PETSC(DMDACreateNaturalVector(da, &natural.object));
  JETPDE_PETSC(DMDAGlobalToNaturalBegin(da, U, INSERT_VALUES, natural.object));
  JETPDE_PETSC(DMDAGlobalToNaturalEnd(da, U, INSERT_VALUES, natural.object));
  JETPDE_PETSC(VecScatterCreateToAll(natural.object, &gather.object, &all.object));
  JETPDE_PETSC(
      VecScatterBegin(gather.object, natural.object, all.object, INSERT_VALUES, SCATTER_FORWARD));
  JETPDE_PETSC(
      VecScatterEnd(gather.object, natural.object, all.object, INSERT_VALUES, SCATTER_FORWARD));
  std::vector<double> out(static_cast<std::size_t>(d.points() * d.dof));
  const PetscScalar* u = nullptr;
  JETPDE_PETSC(VecGetArrayRead(all.object, &u));
  std::copy(u, u + out.size(), out.begin());
  JETPDE_PETSC(VecRestoreArrayRead(all.object, &u));
  return out;
}

// U from values in natural order (every process holds all of them; each sets its part).
void set_natural_values(DM da, const std::vector<double>& values, Vec U) {
  Owned<Vec, VecDestroy> natural;
  JETPDE_PETSC(DMDACreateNaturalVector(da, &natural.object));
  PetscInt lo = 0, hi = 0;
  JETPDE_PETSC(VecGetOwnershipRange(natural.object, &lo, &hi));
  PetscScalar* u = nullptr;
  JETPDE_PETSC(VecGetArray(natural.object, &u));
  std::copy(values.begin() + lo, values.begin() + hi, u);
  JETPDE_PETSC(VecRestoreArray(natural.object, &u));
  JETPDE_PETSC(DMDANaturalToGlobalBegin(da, natural.object, INSERT_VALUES, U));
  JETPDE_PETSC(DMDANaturalToGlobalEnd(da, natural.object, INSERT_VALUES, U));
}

// Keeps the solution after every `every`-th time step (TSMonitor), and every step's record.
struct Recorder {
  const Discretization* d = nullptr;
  DM da = nullptr;
  std::vector<double>* times = nullptr;
  std::vector<std::vector<double>>* levels = nullptr;
  long long every = 1;
  Report* report = nullptr;  // its history (every step)
  std::chrono::steady_clock::time_point started;
  std::exception_ptr error;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

PetscErrorCode record_step(TS ts, PetscInt step, PetscReal t, Vec U, void* ctx) {
  auto* r = static_cast<Recorder*>(ctx);
  if (step > 0) {
    SNES snes;
    PetscInt its = 0;
    PetscReal norm = 0;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESGetIterationNumber(snes, &its));
    PetscCall(SNESGetFunctionNorm(snes, &norm));
    r->report->history_residual.push_back(norm);
    r->report->history_seconds.push_back(seconds_since(r->started));
    r->report->history_time.push_back(t);
    r->report->history_iterations.push_back(static_cast<int>(its));
  }
  if (step % r->every != 0) return 0;
  try {
    r->times->push_back(t);
    r->levels->push_back(natural_values(*r->d, r->da, U));
  } catch (...) {
    r->error = std::current_exception();
    return PETSC_ERR_USER;
  }
  return 0;
}

// A Newton iteration's record (SNESMonitor).
PetscErrorCode record_iteration(SNES, PetscInt, PetscReal norm, void* ctx) {
  auto* r = static_cast<Recorder*>(ctx);
  r->report->history_residual.push_back(norm);
  r->report->history_seconds.push_back(seconds_since(r->started));
  return 0;
}

}  // namespace

Result solve(const solvers::Mathematics& math, const Options& options) {
  const Discretization d(math, options.grid);
  const auto started = std::chrono::steady_clock::now();
  start_petsc();
  ScopedErrorHandler errors;
  ScopedOptions scoped(options.petsc_options, options.command_line_options);
  check_solver_types();
  // -log_view: PETSc reads it at PetscInitialize and prints at PetscFinalize, neither of which
  // sees a solve's own options; so the logging starts here and the table prints after the solve.
  const bool log_view = scoped.has("-log_view");
  if (log_view) JETPDE_PETSC(PetscLogDefaultBegin());
  // Options::parallel: the DMDA's own decomposition over PETSc's world (every process calls
  // solve() together); else this process alone solves the whole grid.
  const MPI_Comm comm = options.parallel ? PETSC_COMM_WORLD : PETSC_COMM_SELF;
  const DMBoundaryType b[3] = {
      d.dim > 0 && d.axes[0].periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE,
      d.dim > 1 && d.axes[1].periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE,
      d.dim > 2 && d.axes[2].periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE};
  const DMDAStencilType stencil = d.box_stencil ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
  Owned<DM, DMDestroy> da;
  const PetscInt w = d.stencil_width;
  if (d.dim == 1)
    JETPDE_PETSC(DMDACreate1d(comm, b[0], d.count(0), d.dof, w, nullptr, &da.object));
  else if (d.dim == 2)
    JETPDE_PETSC(DMDACreate2d(comm, b[0], b[1], stencil, d.count(0), d.count(1), PETSC_DECIDE,
                              PETSC_DECIDE, d.dof, w, nullptr, nullptr, &da.object));
  else
    JETPDE_PETSC(DMDACreate3d(comm, b[0], b[1], b[2], stencil, d.count(0), d.count(1), d.count(2),
                              PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, d.dof, w, nullptr, nullptr,
                              nullptr, &da.object));
  JETPDE_PETSC(DMSetUp(da.object));
  for (int f = 0; f < d.dof; ++f)
    JETPDE_PETSC(DMDASetFieldName(da.object, f,
                                  math.context.field_names()[static_cast<std::size_t>(f)].c_str()));

  Callback cb{.d = &d, .da = da.object};
  Owned<Vec, VecDestroy> U, F;
  Owned<Mat, MatDestroy> J;
  Owned<MatFDColoring, MatFDColoringDestroy> coloring;
  JETPDE_PETSC(DMCreateGlobalVector(da.object, &U.object));
  JETPDE_PETSC(VecDuplicate(U.object, &F.object));
  JETPDE_PETSC(DMCreateMatrix(da.object, &J.object));

  Report report;
  report.unknowns = d.points() * d.dof;
  report.formulation = d.formulation;
  std::vector<double> times;
  std::vector<std::vector<double>> levels;
  auto rethrow = [&] {
    if (cb.error) std::rethrow_exception(cb.error);
  };

  if (d.time < 0) {
    Owned<SNES, SNESDestroy> snes;
    JETPDE_PETSC(SNESCreate(comm, &snes.object));
    JETPDE_PETSC(SNESSetDM(snes.object, da.object));
    JETPDE_PETSC(SNESSetFunction(snes.object, F.object, snes_function, &cb));
    // The Jacobian by finite differences, one residual evaluation per color (-snes_fd_color).
    coloring.object = make_coloring(d, da.object, J.object, as_petsc_function(snes_function), &cb);
    JETPDE_PETSC(SNESSetJacobian(snes.object, J.object, J.object, SNESComputeJacobianDefaultColor,
                                 coloring.object));
    default_linear_solver(snes.object, comm, d.saddle_point());
    JETPDE_PETSC(SNESSetFromOptions(snes.object));
    // Every Newton iteration's residual norm and time (after the options' own monitors).
    Recorder history{.report = &report, .started = started};
    JETPDE_PETSC(SNESMonitorSet(snes.object, record_iteration, &history, nullptr));
    JETPDE_PETSC(VecSet(U.object, 0.0));
    JETPDE_PETSC(SNESComputeFunction(snes.object, U.object, F.object));
    rethrow();
    JETPDE_PETSC(VecNorm(F.object, NORM_2, &report.initial_residual));
    const PetscErrorCode code = SNESSolve(snes.object, nullptr, U.object);
    rethrow();
    JETPDE_PETSC(code);
    SNESConvergedReason reason;
    PetscInt its = 0, lits = 0, fevals = 0;
    JETPDE_PETSC(SNESGetConvergedReason(snes.object, &reason));
    JETPDE_PETSC(SNESGetIterationNumber(snes.object, &its));
    JETPDE_PETSC(SNESGetLinearSolveIterations(snes.object, &lits));
    JETPDE_PETSC(SNESGetNumberFunctionEvals(snes.object, &fevals));
    JETPDE_PETSC(SNESComputeFunction(snes.object, U.object, F.object));
    JETPDE_PETSC(VecNorm(F.object, NORM_2, &report.final_residual));
    report.method = describe_solver(snes.object);
    report.converged = reason > 0;
    report.reason = SNESConvergedReasons[reason];
    report.iterations = static_cast<int>(its);
    report.linear_iterations = static_cast<int>(lits);
    report.function_evaluations = fevals;
    levels.push_back(natural_values(d, da.object, U.object));
  } else {
    if (options.time_levels < 2)
      throw UserError("the time levels of a time-dependent classical solve: at least 2, not " +
                      std::to_string(options.time_levels));
    Owned<TS, TSDestroy> ts;
    JETPDE_PETSC(TSCreate(comm, &ts.object));
    JETPDE_PETSC(TSSetDM(ts.object, da.object));
    JETPDE_PETSC(TSSetType(ts.object, TSBDF));
    JETPDE_PETSC(TSSetIFunction(ts.object, F.object, ts_ifunction, &cb));
    // TS's finite-difference Jacobian reads the coloring composed on the matrix.
    coloring.object =
        make_coloring(d, da.object, J.object, as_petsc_function(SNESTSFormFunction), ts.object);
    JETPDE_PETSC(PetscObjectCompose(reinterpret_cast<PetscObject>(J.object), "TSMatFDColoring",
                                    reinterpret_cast<PetscObject>(coloring.object)));
    JETPDE_PETSC(
        TSSetIJacobian(ts.object, J.object, J.object, TSComputeIJacobianDefaultColor, nullptr));
    const double interval = (d.t1 - d.t0) / (options.time_levels - 1);
    double h = interval;
    for (const Axis& a : d.axes) h = std::min(h, a.h);
    const double wanted = options.time_step > 0 ? std::min(options.time_step, interval) : h;
    // A whole number of steps per level, so that every level is a step's end.
    const double steps_per_level = std::ceil(interval / wanted - 1e-9);
    JETPDE_PETSC(TSSetTime(ts.object, d.t0));
    JETPDE_PETSC(TSSetTimeStep(ts.object, interval / steps_per_level));
    JETPDE_PETSC(TSSetMaxSteps(ts.object, PETSC_MAX_INT));
    JETPDE_PETSC(TSSetExactFinalTime(ts.object, TS_EXACTFINALTIME_MATCHSTEP));
    // Fixed steps unless the options ask for adaptivity (-ts_adapt_type basic).
    TSAdapt adapt;
    JETPDE_PETSC(TSGetAdapt(ts.object, &adapt));
    JETPDE_PETSC(TSAdaptSetType(adapt, TSADAPTNONE));
    SNES snes;
    JETPDE_PETSC(TSGetSNES(ts.object, &snes));
    default_linear_solver(snes, comm, d.saddle_point());
    JETPDE_PETSC(TSSetFromOptions(ts.object));
    const std::vector<double> u0 = d.initial_values();
    set_natural_values(da.object, u0, U.object);
    // Every step's solution is kept while they fit in options.max_stored_bytes (the grid solution
    // interpolates linearly between kept levels: with every step that costs what the stepping
    // does), else every steps_per_level-th (the output levels).
    const double bytes_per_level = static_cast<double>(u0.size()) * sizeof(double);
    const double total_steps = steps_per_level * (options.time_levels - 1);
    Recorder recorder{.d = &d,
                      .da = da.object,
                      .times = &times,
                      .levels = &levels,
                      .report = &report,
                      .started = started};
    recorder.every = (total_steps + 1) * bytes_per_level <= options.max_stored_bytes
                         ? 1
                         : static_cast<long long>(steps_per_level);
    JETPDE_PETSC(TSMonitorSet(ts.object, record_step, &recorder, nullptr));
    JETPDE_PETSC(TSSetMaxTime(ts.object, d.t1));
    const PetscErrorCode code = TSSolve(ts.object, U.object);
    rethrow();
    if (recorder.error) std::rethrow_exception(recorder.error);
    JETPDE_PETSC(code);
    TSConvergedReason reason = TS_CONVERGED_ITERATING;
    JETPDE_PETSC(TSGetConvergedReason(ts.object, &reason));
    // The last level is t1 whatever the stride.
    PetscReal reached = d.t1;
    JETPDE_PETSC(TSGetTime(ts.object, &reached));
    if (times.empty() || times.back() < reached - 1e-12 * (d.t1 - d.t0)) {
      times.push_back(reached);
      levels.push_back(natural_values(d, da.object, U.object));
    }
    PetscInt steps = 0, its = 0, lits = 0;
    TSType type;
    JETPDE_PETSC(TSGetStepNumber(ts.object, &steps));
    JETPDE_PETSC(TSGetSNESIterations(ts.object, &its));
    JETPDE_PETSC(TSGetKSPIterations(ts.object, &lits));
    JETPDE_PETSC(TSGetType(ts.object, &type));
    report.method = std::string("TS ") + type + ", " + describe_solver(snes);
    report.converged = reason > 0;
    report.reason = TSConvergedReasons[reason];
    report.time_steps = static_cast<int>(steps);
    report.iterations = static_cast<int>(its);
    report.linear_iterations = static_cast<int>(lits);
    if (!report.converged && times.size() < 2)
      throw UserError("petsc: TS stopped before the first time level (" + report.reason + ")");
  }
  if (log_view)
    JETPDE_PETSC(
        PetscLogView(PETSC_VIEWER_STDOUT_(options.parallel ? PETSC_COMM_WORLD : PETSC_COMM_SELF)));
  report.unused_options = scoped.unused();
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return {
      .solution = std::make_shared<GridSolution>(math, d.axes, std::move(times), std::move(levels)),
      .report = std::move(report)};
}

}  // namespace jetpde::classical
