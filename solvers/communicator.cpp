#include "solvers/communicator.h"

namespace jetpde::solvers {

const Communicator& serial_communicator() {
  static const SerialCommunicator serial;
  return serial;
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
