// The neighbour exchange of a decomposed model's gradient (docs/design.md section 14): the
// parameter vector cut into blocks (one per subdomain network, one for everything else), each
// block held by the ranks whose points reach it (its own rank and the neighbours whose points lie
// in its overlap). A rank computes its points' contribution to the blocks it holds; the sum over
// a block's holders is all the block needs, so instead of one allreduce of the whole vector each
// rank sends each neighbour the blocks the two share, and adds what it receives. Blocks every
// rank holds (the PDE's own parameters, a network every rank reaches) go with the loss in the one
// allreduce that remains.
//
//   ParameterExchange x(blocks, communicator);   // blocks: ranges of theta and their holders
//   x.sum(gradient, extra);                      // the holders' sum of every held block, and
//                                                // the allreduce of `extra` (loss, slot losses)
//   x.synchronize(theta);                        // every block from its owner, on every rank
//
// Between synchronizations a rank's copy of a block it does not hold is stale: optimizers that
// work elementwise (Adam) leave it untouched (its gradient is zero here), and whatever reads the
// whole vector (validation, checkpoints, a line search) synchronizes first. Every holder adds the
// same contributions in the same order (by rank), so the holders of a block keep bit-identical
// copies of it and take identical steps.
#pragma once

#include <Eigen/Core>
#include <span>
#include <string>
#include <vector>

#include "solvers/communicator.h"

namespace jetpde::solvers {

struct ParameterBlock {
  std::string name;                                           // "sd3" or "shared": for messages
  std::vector<std::pair<Eigen::Index, Eigen::Index>> ranges;  // {offset, count} in theta
  std::vector<int> holders;                                   // ranks, increasing; not empty
};

class ParameterExchange {
 public:
  // UserError for a range outside `size`, ranges that overlap, entries no block covers, or a
  // block without holders. Every rank passes the same blocks (the same holders).
  ParameterExchange(std::vector<ParameterBlock> blocks, Eigen::Index size,
                    const Communicator& communicator);

  // In place: every block this rank holds becomes the sum of its holders' values (the others
  // zero), and `extra` the sum over all ranks (one allreduce, together with the blocks every
  // rank holds). A collective.
  void sum(Eigen::VectorXd& gradient, std::span<double> extra) const;
  // Every block's values as its owner (its first holder) has them, on every rank: one allreduce
  // of the vector (exact: the other ranks add zeros). A collective.
  void synchronize(Eigen::VectorXd& theta) const;

  const std::vector<ParameterBlock>& blocks() const { return blocks_; }
  bool holds(std::size_t block) const;
  // The ranks this one exchanges with, and the values it sends per sum(): a neighbour sum of
  // each shared block, plus the allreduce of the extra values and the everyone-blocks.
  const std::vector<int>& peers() const { return peers_; }
  Eigen::Index values_per_sum(std::size_t extra) const;

 private:
  void pack(const Eigen::VectorXd& v, const std::vector<std::size_t>& blocks,
            std::vector<double>& out) const;

  std::vector<ParameterBlock> blocks_;
  Eigen::Index size_ = 0;
  const Communicator* communicator_;
  std::vector<std::size_t> everyone_;             // blocks every rank holds
  std::vector<int> peers_;                        // the other holders of this rank's blocks
  std::vector<std::vector<std::size_t>> shared_;  // per peer: the blocks both hold, in order
};

}  // namespace jetpde::solvers
