// Signals and the computing threads. oneDNN's JIT fp32 GEMM kernels (Debian's 2.x) point the
// stack pointer into the heap while they run, so a signal handler that runs on a thread inside one
// pushes its frame over heap memory: from Python, a Ctrl-C (a Jupyter interrupt is one) during
// fp32 training corrupted the heap in about a third of the tries (apps/commands.cpp has the same
// story for the command). So no handler may run on a thread that computes:
// - ComputeSignals, around every call that computes (with the GIL released), blocks in the
//   calling thread the asynchronous signals that have a handler; they wait, pending, until the
//   call returns (or reach another thread), and Python then runs its handlers as usual. Signals
//   at their default action stay unblocked: a scheduler's SIGTERM still ends the process at once.
// - The OpenMP threads are started with all of them blocked (start_threads_without_signals), and
//   threads started inside a call inherit the calling thread's blocked set.
#pragma once

#include <csignal>

namespace jetpde::python {

// The asynchronous signals a user, a terminal or a batch system sends.
sigset_t asynchronous_signals();

// Blocks, in this thread, those of asynchronous_signals() that have a handler; the mask as it was
// is back at the end (and for a Python callback in between: Unblocked).
class ComputeSignals {
 public:
  ComputeSignals();
  ~ComputeSignals();
  ComputeSignals(const ComputeSignals&) = delete;
  ComputeSignals& operator=(const ComputeSignals&) = delete;

  // The mask as it was before the ComputeSignals, while Python code runs inside the call (a
  // callback): a pending signal reaches Python's handler there.
  class Unblocked {
   public:
    explicit Unblocked(const ComputeSignals& c);
    ~Unblocked();
    Unblocked(const Unblocked&) = delete;
    Unblocked& operator=(const Unblocked&) = delete;

   private:
    sigset_t computing_;
  };

 private:
  sigset_t before_;
};

// Sets the number of OpenMP threads (n > 0; otherwise leaves it) and starts the pool with every
// asynchronous signal blocked in its threads.
void start_threads_without_signals(int n);

}  // namespace jetpde::python
