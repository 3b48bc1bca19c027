// The main of the MPI test binary, run by ctest as `mpirun --oversubscribe -n N mpi_tests`: MPI
// for the whole binary, results printed by rank 0, and the exit status the worst of all ranks'.
#include <gtest/gtest.h>

#include <vector>

#include "tests/mpi/world.h"

namespace jetpde::testing {
namespace {
const solvers::MpiSession* g_session = nullptr;
}  // namespace

const solvers::Communicator& world() { return g_session->world(); }

}  // namespace jetpde::testing

int main(int argc, char** argv) {
  jetpde::solvers::MpiSession mpi(&argc, &argv);
  jetpde::testing::g_session = &mpi;
  ::testing::InitGoogleTest(&argc, argv);
  const jetpde::solvers::Communicator& world = mpi.world();
  if (world.rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  std::vector<double> status{static_cast<double>(RUN_ALL_TESTS())};
  world.allreduce_max(status);
  return static_cast<int>(status[0]);
}
