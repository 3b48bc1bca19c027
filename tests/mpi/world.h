// The ranks of the MPI test binary (tests/mpi/main.cpp). A test runs on every rank at once: it
// must not return early on one rank (ASSERT_*) before a collective the others enter, so the tests
// use EXPECT_* before their last collective.
#pragma once

#include "solvers/mpi.h"

namespace jetpde::testing {

// MPI_COMM_WORLD's duplicate (serial when the binary runs without mpirun).
const solvers::Communicator& world();

}  // namespace jetpde::testing
