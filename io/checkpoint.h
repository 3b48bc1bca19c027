// Checkpoints: everything a run needs to continue exactly where it stopped, in one HDF5 file
// written to a temporary name and renamed (a crash, even kill -9, leaves the previous checkpoint
// whole). Layout of checkpoint.h5:
//
//   config                 the resolved config (YAML text) the run was started with
//   step, stage, stage_step, loss, endings
//   handed_steps           the stage's steps from the stage before (Stage::hand_on), when any
//   seconds                the whole run's training time up to this state (resumed parts added)
//   theta                  the parameters (network, then trainable constants), f64
//   weights/term, weights/slot, slot_losses
//   optimizer              the kind of the stage's optimizer state ("adam", "lbfgs"; "" when it
//                          was as constructed), whose values follow in its group:
//   <kind>/<name>          each value of the state (OptimizerState: the writer knows no kinds)
//   <kind>/entries         "<name> <type>" lines: real, integer, integers, vector, matrix, text
//     adam/m, adam/v, adam/t                                 (Adam and AdamW)
//     lbfgs/s, lbfgs/y [pairs, n], lbfgs/g, lbfgs/f, lbfgs/counts, lbfgs/detail     (L-BFGS)
//   average/sum, average/runs   Stage::average: the finished runs' ends summed, their count
//   average/ends           with Stage::average_last: the last finished runs' ends [runs, n]
//   inputs/<name>          the point sets bound at that step; inputs/names lists them
//   rng/seed, rng/step     every random draw (points, resampling, NTK probes) is a function of
//                          the seed and the step number, so these two are the whole RNG state
// The format attribute is "jetpde checkpoint 2". Format 1 files (before optimizer states were
// named values: both adam/ and lbfgs/ always written, without `optimizer` and the index) are
// read too: their filled group is the state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "solvers/solve.h"
#include "solvers/trainer.h"

namespace jetpde::io {

struct Checkpoint {
  solvers::TrainerState state;
  std::string config;  // resolved YAML
  std::uint64_t seed = 0;
  int ranks = 1;  // that wrote it; with several, state.inputs are theirs end to end
  std::map<std::string, std::vector<std::int64_t>> rows;  // per input, its rows on each rank
};

// Writes atomically (temporary file + rename). UserError naming the path when it cannot.
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);
// UserError naming the path and the missing dataset when the file is not a jetpde checkpoint.
Checkpoint read_checkpoint(const std::string& path);

// The checkpoint of a state of `comm`'s ranks (a collective: every rank calls it with its own
// state): on rank 0 with every rank's inputs (the only part that differs) joined, elsewhere
// without inputs. Serial: the state as it is.
Checkpoint gather_checkpoint(const solvers::TrainerState& state, const std::string& config,
                             std::uint64_t seed, const solvers::Communicator& comm);
// This rank's state in a checkpoint: its own inputs when the checkpoint has as many ranks (a
// resume bit for bit); with another rank count none (each rank keeps the points it drew: the
// run continues correctly, not bit for bit; `note` says so). UserError for inconsistent counts.
solvers::TrainerState rank_state(const Checkpoint& checkpoint, const solvers::Communicator& comm,
                                 std::string* note = nullptr);

// solve()'s checkpoints as this file: every state saved is written to `path` with the config and
// seed given here. With several ranks every rank saves (a collective) and rank 0 writes.
class CheckpointFile : public solvers::CheckpointSink {
 public:
  CheckpointFile(std::string path, std::string config, std::uint64_t seed,
                 const solvers::Communicator& comm = solvers::serial_communicator())
      : path_(std::move(path)), config_(std::move(config)), seed_(seed), comm_(&comm) {}
  void save(const solvers::TrainerState& state) override {
    const Checkpoint c = gather_checkpoint(state, config_, seed_, *comm_);
    if (comm_->rank() == 0) write_checkpoint(path_, c);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, config_;
  std::uint64_t seed_;
  const solvers::Communicator* comm_;
};

}  // namespace jetpde::io
