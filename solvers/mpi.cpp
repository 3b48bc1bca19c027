#include "solvers/mpi.h"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "autodiff/errors.h"

#if JETPDE_HAVE_MPI
#include <mpi.h>
#endif

namespace jetpde::solvers {

bool launched_by_mpi() {
  // Open MPI's mpirun, MPICH's hydra (PMI_RANK), PMIx launchers (srun --mpi=pmix, prterun).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

#if JETPDE_HAVE_MPI

namespace {

// A communicator on its own duplicate of an MPI communicator; the time spent in collectives is
// counted (summary.json's communication seconds).
class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm parent) {
    check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm here = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &here),
          "MPI_Comm_split_type");
    MPI_Comm_size(here, &ranks_here_);
    MPI_Comm_free(&here);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int ranks_here() const override { return ranks_here_; }
  void allreduce_sum(std::span<double> v) const override { reduce(v, MPI_SUM); }
  void allreduce_max(std::span<double> v) const override { reduce(v, MPI_MAX); }
  void broadcast(std::span<double> v, int root) const override {
    const Timer t(seconds_);
    check(MPI_Bcast(v.data(), count(v.size()), MPI_DOUBLE, root, comm_), "MPI_Bcast");
  }
  void barrier() const override {
    const Timer t(seconds_);
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }
  std::vector<double> allgather(std::span<const double> v) const override {
    const Timer t(seconds_);
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(counts.size());
    const int mine = count(v.size());
    check(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    const long long total = prefix(counts, offsets);
    std::vector<double> all(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(v.data(), mine, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                         MPI_DOUBLE, comm_),
          "MPI_Allgatherv");
    return all;
  }
  std::vector<double> gather(std::span<const double> v, int root) const override {
    const Timer t(seconds_);
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(counts.size());
    const int mine = count(v.size());
    check(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
    std::vector<double> all;
    if (rank_ == root) all.resize(static_cast<std::size_t>(prefix(counts, offsets)));
    check(MPI_Gatherv(v.data(), mine, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                      MPI_DOUBLE, root, comm_),
          "MPI_Gatherv");
    return all;
  }
  void exchange(std::span<const Peer> peers) const override {
    const Timer t(seconds_);
    // All receives posted first, then the sends; one wait for all (no ordering between peers).
    std::vector<MPI_Request> requests(2 * peers.size(), MPI_REQUEST_NULL);
    for (std::size_t k = 0; k < peers.size(); ++k)
      check(MPI_Irecv(peers[k].receive.data(), count(peers[k].receive.size()), MPI_DOUBLE,
                      peers[k].rank, kExchangeTag, comm_, &requests[k]),
            "MPI_Irecv");
    for (std::size_t k = 0; k < peers.size(); ++k) {
      check(MPI_Isend(peers[k].send.data(), count(peers[k].send.size()), MPI_DOUBLE, peers[k].rank,
                      kExchangeTag, comm_, &requests[peers.size() + k]),
            "MPI_Isend");
      sent_ += static_cast<double>(peers[k].send.size());
    }
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  }
  double seconds() const override { return seconds_; }
  double values_sent() const override { return sent_; }

 private:
  static constexpr int kExchangeTag = 17;
  struct Timer {
    explicit Timer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
    ~Timer() {
      total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    double& total_;
    std::chrono::steady_clock::time_point start_;
  };
  static int count(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw UserError("mpi: a message of " + std::to_string(n) +
                      " values is more than one MPI call carries");
    return static_cast<int>(n);
  }
  static long long prefix(const std::vector<int>& counts, std::vector<int>& offsets) {
    long long total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      offsets[r] = count(static_cast<std::size_t>(total));
      total += counts[r];
    }
    return total;
  }
  static void check(int code, const char* what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string(what) + " failed: " + std::string(text, length));
  }
  void reduce(std::span<double> v, MPI_Op op) const {
    const Timer t(seconds_);
    sent_ += static_cast<double>(v.size());
    check(MPI_Allreduce(MPI_IN_PLACE, v.data(), count(v.size()), MPI_DOUBLE, op, comm_),
          "MPI_Allreduce");
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, ranks_here_ = 1;
  mutable double seconds_ = 0;
  mutable double sent_ = 0;
};

}  // namespace

bool mpi_built() { return true; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ',' || s.back() == ' ')) s.pop_back();
  return s;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw UserError("mpi: MPI_Init_thread failed");
    finalize_ = true;
  }
  // Errors come back as codes (thrown above), so that a failing call names itself.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
}

MpiSession::~MpiSession() {
  world_.reset();
  if (finalize_) MPI_Finalize();
}

std::unique_ptr<Communicator> communicator_from_fortran(std::int64_t handle) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw UserError("comm: MPI is not initialized (import mpi4py.MPI first, or run under mpirun)");
  const MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(handle));
  if (comm == MPI_COMM_NULL) throw UserError("comm: the null communicator");
  // An intercommunicator's collectives exchange between its two groups, not one group's sums
  // (and Open MPI's MPI_Comm_split_type crashes on one): refused before any is made.
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
    throw UserError("comm: not a communicator (MPI_Comm_test_inter failed)");
  if (inter)
    throw UserError(
        "comm: an intercommunicator; give an intracommunicator (MPI_COMM_WORLD, or a split of "
        "it)");
  return std::make_unique<MpiCommunicator>(comm);
}

void abort_all_ranks(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
}

#else  // no MPI in this build

bool mpi_built() { return false; }
std::string mpi_library_version() { return {}; }

MpiSession::MpiSession(int*, char***) {
  if (launched_by_mpi())
    throw UserError(
        "mpi: started by an MPI launcher, but this jetpde was built without MPI "
        "(JETPDE_WITH_MPI=OFF or no MPI found): every rank would train alone");
}
MpiSession::~MpiSession() = default;

std::unique_ptr<Communicator> communicator_from_fortran(std::int64_t) {
  throw UserError("comm: this jetpde was built without MPI");
}

void abort_all_ranks(int) {}

#endif

const Communicator& MpiSession::world() const { return world_ ? *world_ : serial_communicator(); }

}  // namespace jetpde::solvers
