#include "solvers/communicator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace jetpde::solvers {

const Communicator& serial_communicator() {
  static const SerialCommunicator serial;
  return serial;
}

std::vector<double> Communicator::allgather(std::span<const double> values) const {
  std::vector<double> counts(static_cast<std::size_t>(size()), 0.0);
  counts[static_cast<std::size_t>(rank())] = static_cast<double>(values.size());
  allreduce_sum(counts);
  std::size_t offset = 0, total = 0;
  for (int r = 0; r < size(); ++r) {
    if (r == rank()) offset = total;
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  }
  std::vector<double> all(total, 0.0);
  std::copy(values.begin(), values.end(), all.begin() + static_cast<std::ptrdiff_t>(offset));
  allreduce_sum(all);
  return all;
}

std::vector<double> Communicator::gather(std::span<const double> values, int root) const {
  std::vector<double> all = allgather(values);
  if (rank() != root) all.clear();
  return all;
}

void Communicator::exchange(std::span<const Peer> peers) const {
  // Every rank's messages as [to, count, values...] records, gathered by all; each keeps those
  // addressed to it. Slow (everything goes everywhere) but needs nothing beyond allgather.
  std::vector<double> mine;
  for (const Peer& p : peers) {
    mine.push_back(p.rank);
    mine.push_back(static_cast<double>(p.send.size()));
    mine.insert(mine.end(), p.send.begin(), p.send.end());
  }
  std::vector<double> counts(static_cast<std::size_t>(size()), 0.0);
  counts[static_cast<std::size_t>(rank())] = static_cast<double>(mine.size());
  allreduce_sum(counts);
  const std::vector<double> all = allgather(mine);
  std::size_t at = 0;
  for (int from = 0; from < size(); ++from) {
    const std::size_t end = at + static_cast<std::size_t>(counts[static_cast<std::size_t>(from)]);
    while (at < end) {
      const int to = static_cast<int>(all[at]);
      const auto n = static_cast<std::size_t>(all[at + 1]);
      at += 2;
      if (to == rank())
        for (const Peer& p : peers)
          if (p.rank == from) {
            if (p.receive.size() != n)
              throw std::logic_error("Communicator::exchange: rank " + std::to_string(from) +
                                     " sent " + std::to_string(n) + " values, " +
                                     std::to_string(p.receive.size()) + " expected");
            std::copy(all.begin() + static_cast<std::ptrdiff_t>(at),
                      all.begin() + static_cast<std::ptrdiff_t>(at + n), p.receive.begin());
          }
      at += n;
    }
  }
}

void SerialCommunicator::exchange(std::span<const Peer> peers) const {
  for (const Peer& p : peers)  // only to itself
    std::copy(p.send.begin(), p.send.end(), p.receive.begin());
}

Share share_of(std::int64_t n, int rank, int size) {
  const std::int64_t base = n / size, extra = n % size;
  return {.first = rank * base + std::min<std::int64_t>(rank, extra),
          .count = base + (rank < extra ? 1 : 0)};
}

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  if (rank == 0) return seed;
  // A splitmix64 finalizer of the rank, added to the seed: consecutive run seeds (seed + step,
  // as resampling uses) on different ranks do not land on each other's streams.
  std::uint64_t z = static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return seed + (z ^ (z >> 31));
}

}  // namespace jetpde::solvers
