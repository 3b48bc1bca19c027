// jetpde_mpi_pingpong: the latency and bandwidth of the MPI transport that the scaling benchmark
// runs on (bench/scaling/scaling.py feeds them to its communication model), and the time of the
// allreduces one training step makes, measured directly.
//
//   mpirun -n 2 jetpde_mpi_pingpong                      # ping-pong between ranks 0 and 1
//   mpirun -n 4 jetpde_mpi_pingpong --allreduce 2244 --allreduce 1
//
// Ping-pong: rank 0 sends a message of b bytes to rank 1, which sends it back; half the round trip
// is the one-way time t(b). The latency is t(8 B); the bandwidth is taken between the largest
// message and the latency, (b_max) / (t(b_max) - t(8 B)), so that the fixed cost does not pull it
// down. Ranks past 1 wait in the closing barrier. Each size runs for about --seconds after a
// warm-up, in batches whose median is reported (a shared machine's outliers stay out).
//
// Allreduce: MPI_Allreduce (sum, doubles) of `count` values on every rank, the way
// Objective::evaluate sums the loss, the slot losses and the gradient, timed over the same kind of
// batches; reported is the slowest rank's median (the step waits for it).
//
// One JSON object on rank 0's stdout.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Repetitions per batch so that a batch takes about `seconds` / batches, from one trial batch.
int reps_for(double trial_seconds_per_rep, double seconds, int batches) {
  const double per_batch = seconds / batches;
  const double reps = trial_seconds_per_rep > 0 ? per_batch / trial_seconds_per_rep : 1000;
  return static_cast<int>(std::clamp(reps, 1.0, 1e6));
}

// One-way seconds of a `bytes` message between ranks 0 and 1 (the same figure on both; others: 0).
double pingpong(int rank, std::size_t bytes, double seconds, int batches) {
  std::vector<char> buf(std::max<std::size_t>(bytes, 1));
  const int count = static_cast<int>(bytes);
  auto batch = [&](int reps) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int r = 0; r < reps; ++r) {
      if (rank == 0) {
        MPI_Send(buf.data(), count, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), count, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), count, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), count, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    double t = (MPI_Wtime() - t0) / (2.0 * reps);
    // Rank 0's clock decides the repetition count, the same on every rank.
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
  };
  batch(10);  // warm-up: connections, registration of the buffers
  const int reps = reps_for(2 * batch(10), seconds, batches);
  std::vector<double> times;
  for (int b = 0; b < batches; ++b) times.push_back(batch(reps));
  return median(times);
}

// Seconds of one MPI_Allreduce of `count` doubles: the slowest rank's median over batches.
double allreduce(int count, double seconds, int batches) {
  std::vector<double> in(static_cast<std::size_t>(count), 1.0), out(in.size());
  auto batch = [&](int reps) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int r = 0; r < reps; ++r)
      MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / reps, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  };
  batch(10);
  const int reps = reps_for(batch(10), seconds, batches);
  std::vector<double> times;
  for (int b = 0; b < batches; ++b) times.push_back(batch(reps));
  return median(times);
}

[[noreturn]] void usage(int rank, const std::string& why) {
  if (rank == 0)
    std::fprintf(
        stderr,
        "jetpde_mpi_pingpong: %s\n"
        "usage: jetpde_mpi_pingpong [--max-bytes B] [--seconds S] [--allreduce COUNT]...\n",
        why.c_str());
  MPI_Finalize();
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t max_bytes = std::size_t{1} << 22;  // 4 MiB: past the eager limits, into bandwidth
  double seconds = 0.2;                          // per size
  const int batches = 7;
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(rank, "option " + a + " needs a value");
    const std::string v = argv[++i];
    char* end = nullptr;
    if (a == "--max-bytes") {
      max_bytes = std::strtoull(v.c_str(), &end, 10);
      if (*end || max_bytes < 8) usage(rank, "--max-bytes: '" + v + "' is not an integer >= 8");
    } else if (a == "--seconds") {
      seconds = std::strtod(v.c_str(), &end);
      if (*end || !(seconds > 0)) usage(rank, "--seconds: '" + v + "' is not a number > 0");
    } else if (a == "--allreduce") {
      const long c = std::strtol(v.c_str(), &end, 10);
      if (*end || c < 1 || c > (1 << 26))
        usage(rank, "--allreduce: '" + v + "' is not a count from 1 to 2^26");
      counts.push_back(static_cast<int>(c));
    } else {
      usage(rank, "unknown option " + a);
    }
  }

  std::string json = "{\"ranks\": " + std::to_string(size);
  char line[160];
  if (size >= 2) {
    json += ", \"pingpong\": [";
    double latency = 0, last = 0;
    std::size_t last_bytes = 8;
    for (std::size_t b = 8; b <= max_bytes; b *= 8) {
      const double t = pingpong(rank, b, seconds, batches);
      if (b == 8) latency = t;
      last = t;
      last_bytes = b;
      std::snprintf(line, sizeof line, "%s{\"bytes\": %zu, \"seconds\": %.9g}", b == 8 ? "" : ", ",
                    b, t);
      json += line;
    }
    const double bandwidth =
        last > latency ? static_cast<double>(last_bytes) / (last - latency) : 0;
    std::snprintf(line, sizeof line, "], \"latency_s\": %.9g, \"bandwidth_Bps\": %.9g", latency,
                  bandwidth);
    json += line;
  }
  json += ", \"allreduce\": [";
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double t = allreduce(counts[k], seconds, batches);
    std::snprintf(line, sizeof line, "%s{\"count\": %d, \"seconds\": %.9g}", k ? ", " : "",
                  counts[k], t);
    json += line;
  }
  json += "]}";
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s\n", json.c_str());
  MPI_Finalize();
  return 0;
}
