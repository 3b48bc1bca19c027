// MPI for data-parallel training (docs/design.md section 14): Open MPI behind the Communicator seam
// (solvers/communicator.h). Nothing here needs mpi.h: a build without MPI has the same functions,
// and they say MPI is not there.
//
//   solvers::MpiSession mpi(&argc, &argv);          // MPI_Init when started by mpirun/srun
//   const solvers::Communicator& comm = mpi.world();  // serial when not started by a launcher
//   solvers::Problem problem(spec, comm);
//
// From Python, mpi4py's communicator enters as its Fortran handle (comm.py2f()), which needs no
// mpi4py headers at build time: communicator_from_fortran.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "solvers/communicator.h"

namespace jetpde::solvers {

// Whether this build has MPI (JETPDE_WITH_MPI and Open MPI found).
bool mpi_built();
// Whether this process was started by an MPI launcher (mpirun/mpiexec of Open MPI or MPICH,
// srun with PMI/PMIx): the environment they set for their ranks.
bool launched_by_mpi();
// The MPI library's version line (empty without MPI).
std::string mpi_library_version();

// MPI for the life of the process, from main(): MPI_Init_thread (funneled: only the thread that
// called it communicates; OpenMP threads compute) when started by a launcher and MPI is not
// initialized yet, MPI_Finalize when destroyed. world() is a duplicate of MPI_COMM_WORLD then,
// else the serial communicator.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  const Communicator& world() const;
  bool active() const { return world_ != nullptr; }

 private:
  std::unique_ptr<Communicator> world_;
  bool finalize_ = false;
};

// A communicator over an existing MPI communicator given by its Fortran handle (MPI_Comm_c2f;
// mpi4py's comm.py2f()); duplicated, so jetpde's messages never mix with the caller's. MPI must be
// initialized (mpi4py does it on import). UserError without MPI, when it is not initialized, for
// the null communicator and for an intercommunicator.
std::unique_ptr<Communicator> communicator_from_fortran(std::int64_t handle);

// Ends every rank of MPI_COMM_WORLD with `code` (MPI_Abort): a rank that cannot go on while the
// others wait in a collective. Returns (does nothing) when MPI is not initialized.
void abort_all_ranks(int code);

}  // namespace jetpde::solvers
