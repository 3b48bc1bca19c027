// The communicator seam: what training needs from a group of processes that train one model
// together (data parallelism, docs/design.md section 14), with the serial implementation every
// run uses by default. The MPI one is solvers/mpi.h; tests also use ranks as threads.
//
//   solvers::MpiSession mpi(&argc, &argv);        // solvers/mpi.h
//   solvers::Problem problem(spec, mpi.world());  // each rank its share of every point count
//   solvers::Trainer trainer(problem.objective(), stages);   // uses the objective's
//
// Every rank holds the same parameters and takes the same steps; each evaluates the loss on its
// own points. The ranks meet in one place, Objective::evaluate, where the loss, the per-slot
// losses and the gradient, each rank's weighted by its share of the rows, are summed
// (allreduce_sum): so an optimizer, L-BFGS's line search included, sees one objective on every
// rank. The per-term gradients and NTK traces of the loss weighting are reduced the same way,
// and the trainer's stop conditions are agreed on (allreduce_max) so that every rank stops after
// the same step. Every call here is a collective: all ranks make it, in the same order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace jetpde::solvers {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;  // >= 1
  // In place, elementwise over all ranks; every rank passes the same count.
  virtual void allreduce_sum(std::span<double> values) const = 0;
  virtual void allreduce_max(std::span<double> values) const = 0;
  // Rank `root`'s values on every rank.
  virtual void broadcast(std::span<double> values, int root = 0) const = 0;
  virtual void barrier() const = 0;
  // Every rank's values (counts may differ) end to end in rank order, on every rank. The default
  // is built from allreduce_sum (every rank's block at its offset, zeros elsewhere).
  virtual std::vector<double> allgather(std::span<const double> values) const;
  // The same on `root` only (empty elsewhere): what a writer on one rank needs from all.
  virtual std::vector<double> gather(std::span<const double> values, int root = 0) const;
  // Point to point with a few peers (neighbours): each peer's `send` goes to rank `rank`, and
  // `receive` (sized by the caller, as the peer's send to this rank is sized) is filled from it.
  // Both sides list each other with matching sizes. Every rank calls it (with no peers if it has
  // none): the default is a collective over all ranks built from allgather; MPI's talks to the
  // peers only.
  struct Peer {
    int rank = 0;
    std::span<const double> send;
    std::span<double> receive;
  };
  virtual void exchange(std::span<const Peer> peers) const;
  // Wall seconds this process spent in collectives (waiting for the others included).
  virtual double seconds() const { return 0; }
  // The ranks on this machine, this one included: they share its cores (1 serial, and for ranks
  // that are threads of one process).
  virtual int ranks_here() const { return 1; }
  // Values this process has put into messages: its part of every collective (n values for an
  // allreduce of n) and everything it sent to peers. For the log and the scaling benchmark.
  virtual double values_sent() const { return 0; }
};

// One process: rank 0 of 1, every collective a no-op.
class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(std::span<double>) const override {}
  void allreduce_max(std::span<double>) const override {}
  void broadcast(std::span<double>, int) const override {}
  void barrier() const override {}
  std::vector<double> allgather(std::span<const double> v) const override {
    return {v.begin(), v.end()};
  }
  std::vector<double> gather(std::span<const double> v, int) const override {
    return {v.begin(), v.end()};
  }
  void exchange(std::span<const Peer> peers) const override;
};

// The process-wide serial communicator (the default of Problem and Objective).
const Communicator& serial_communicator();

// The seed of `rank`'s random draws (its points) from a run's seed: rank 0 keeps `seed`, so a
// serial run draws what it always drew; other ranks get well-separated streams.
std::uint64_t rank_seed(std::uint64_t seed, int rank);

// Rank `rank`'s share of n items split over `size` ranks as evenly as they go: the first n % size
// ranks take one more. {first, count}.
struct Share {
  std::int64_t first = 0, count = 0;
};
Share share_of(std::int64_t n, int rank, int size);

}  // namespace jetpde::solvers
