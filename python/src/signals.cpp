#include "python/src/signals.h"

#include <pthread.h>

#include <initializer_list>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace jetpde::python {

sigset_t asynchronous_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM})
    sigaddset(&set, signo);
  return set;
}

namespace {

sigset_t handled_signals() {
  const sigset_t all = asynchronous_signals();
  sigset_t set;
  sigemptyset(&set);
  for (int signo = 1; signo < NSIG; ++signo) {
    if (sigismember(&all, signo) != 1) continue;
    struct sigaction now {};
    if (sigaction(signo, nullptr, &now) != 0) continue;
    const bool handler = (now.sa_flags & SA_SIGINFO) != 0 ||
                         (now.sa_handler != SIG_DFL && now.sa_handler != SIG_IGN);
    if (handler) sigaddset(&set, signo);
  }
  return set;
}

}  // namespace

ComputeSignals::ComputeSignals() {
  const sigset_t handled = handled_signals();
  pthread_sigmask(SIG_BLOCK, &handled, &before_);
}

ComputeSignals::~ComputeSignals() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }

ComputeSignals::Unblocked::Unblocked(const ComputeSignals& c) {
  pthread_sigmask(SIG_SETMASK, &c.before_, &computing_);
}

ComputeSignals::Unblocked::~Unblocked() { pthread_sigmask(SIG_SETMASK, &computing_, nullptr); }

void start_threads_without_signals(int n) {
#ifdef _OPENMP
  if (n > 0) omp_set_num_threads(n);
  const sigset_t all = asynchronous_signals();
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &all, &before);
  // The pool's threads start here, inheriting this mask, and stay for later parallel regions.
  // (Not an empty region: GCC drops those.)
  volatile int started = 0;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) started = omp_get_num_threads();
  }
  (void)started;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
#else
  (void)n;
#endif
}

}  // namespace jetpde::python
