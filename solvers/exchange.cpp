#include "solvers/exchange.h"

#include <algorithm>
#include <map>

#include "autodiff/errors.h"

namespace jetpde::solvers {

ParameterExchange::ParameterExchange(std::vector<ParameterBlock> blocks, Eigen::Index size,
                                     const Communicator& communicator)
    : blocks_(std::move(blocks)), size_(size), communicator_(&communicator) {
  std::vector<int> cover(static_cast<std::size_t>(size), 0);
  const int me = communicator_->rank(), ranks = communicator_->size();
  std::map<int, std::vector<std::size_t>> shared;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    ParameterBlock& block = blocks_[b];
    std::sort(block.holders.begin(), block.holders.end());
    block.holders.erase(std::unique(block.holders.begin(), block.holders.end()),
                        block.holders.end());
    if (block.holders.empty() || block.holders.front() < 0 || block.holders.back() >= ranks)
      throw UserError("parameter exchange: block '" + block.name +
                      "' has no holders among the ranks");
    for (const auto& [offset, count] : block.ranges) {
      if (offset < 0 || count < 0 || offset + count > size)
        throw UserError("parameter exchange: block '" + block.name + "' reaches past the " +
                        std::to_string(size) + " parameters");
      for (Eigen::Index i = offset; i < offset + count; ++i)
        if (++cover[static_cast<std::size_t>(i)] > 1)
          throw UserError("parameter exchange: parameter " + std::to_string(i) +
                          " is in two blocks");
    }
    if (static_cast<int>(block.holders.size()) == ranks) {
      everyone_.push_back(b);
      continue;
    }
    if (!holds(b)) continue;
    for (int h : block.holders)
      if (h != me) shared[h].push_back(b);
  }
  for (std::size_t i = 0; i < cover.size(); ++i)
    if (cover[i] == 0)
      throw UserError("parameter exchange: parameter " + std::to_string(i) + " is in no block");
  for (auto& [peer, list] : shared) {
    peers_.push_back(peer);
    shared_.push_back(std::move(list));
  }
}

bool ParameterExchange::holds(std::size_t block) const {
  const std::vector<int>& h = blocks_[block].holders;
  return std::binary_search(h.begin(), h.end(), communicator_->rank());
}

void ParameterExchange::pack(const Eigen::VectorXd& v, const std::vector<std::size_t>& blocks,
                             std::vector<double>& out) const {
  for (std::size_t b : blocks)
    for (const auto& [offset, count] : blocks_[b].ranges)
      out.insert(out.end(), v.data() + offset, v.data() + offset + count);
}

Eigen::Index ParameterExchange::values_per_sum(std::size_t extra) const {
  Eigen::Index n = static_cast<Eigen::Index>(extra);
  const auto add = [&](const std::vector<std::size_t>& list) {
    for (std::size_t b : list)
      for (const auto& range : blocks_[b].ranges) n += range.second;
  };
  add(everyone_);
  for (const auto& list : shared_) add(list);
  return n;
}

void ParameterExchange::sum(Eigen::VectorXd& gradient, std::span<double> extra) const {
  if (gradient.size() != size_)
    throw InternalError("parameter exchange: a gradient of " + std::to_string(gradient.size()) +
                        " values for " + std::to_string(size_) + " parameters");
  using Peer = Communicator::Peer;
  // The neighbours' parts of the shared blocks, one message each way per neighbour.
  std::vector<std::vector<double>> sends(peers_.size()), receives(peers_.size());
  std::vector<Peer> peers;
  for (std::size_t k = 0; k < peers_.size(); ++k) {
    pack(gradient, shared_[k], sends[k]);
    receives[k].resize(sends[k].size());
    peers.push_back({.rank = peers_[k], .send = sends[k], .receive = receives[k]});
  }
  communicator_->exchange(peers);
  // The extra values and the blocks every rank holds: one allreduce.
  std::vector<double> all(extra.begin(), extra.end());
  pack(gradient, everyone_, all);
  communicator_->allreduce_sum(all);
  std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(extra.size()), extra.begin());
  std::size_t at = extra.size();
  for (std::size_t b : everyone_)
    for (const auto& [offset, count] : blocks_[b].ranges) {
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(at),
                all.begin() + static_cast<std::ptrdiff_t>(at) + count, gradient.data() + offset);
      at += static_cast<std::size_t>(count);
    }
  // Each held block: the holders' parts added in rank order (this rank's own in its place), so
  // that every holder computes the same sum bit for bit.
  const int me = communicator_->rank();
  std::vector<std::size_t> cursor(peers_.size(), 0);  // where block b starts in receive k
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const ParameterBlock& block = blocks_[b];
    if (static_cast<int>(block.holders.size()) == communicator_->size()) continue;
    if (!holds(b)) {
      for (const auto& [offset, count] : block.ranges) gradient.segment(offset, count).setZero();
      continue;
    }
    Eigen::Index width = 0;
    for (const auto& range : block.ranges) width += range.second;
    Eigen::VectorXd total = Eigen::VectorXd::Zero(width);
    for (int h : block.holders) {
      Eigen::Index at_block = 0;
      if (h == me) {
        for (const auto& [offset, count] : block.ranges) {
          total.segment(at_block, count) += gradient.segment(offset, count);
          at_block += count;
        }
        continue;
      }
      const auto k = static_cast<std::size_t>(std::lower_bound(peers_.begin(), peers_.end(), h) -
                                              peers_.begin());
      total += Eigen::Map<const Eigen::VectorXd>(receives[k].data() + cursor[k], width);
    }
    for (int h : block.holders)
      if (h != me)
        cursor[static_cast<std::size_t>(std::lower_bound(peers_.begin(), peers_.end(), h) -
                                        peers_.begin())] += static_cast<std::size_t>(width);
    Eigen::Index at_block = 0;
    for (const auto& [offset, count] : block.ranges) {
      gradient.segment(offset, count) = total.segment(at_block, count);
      at_block += count;
    }
  }
}

void ParameterExchange::synchronize(Eigen::VectorXd& theta) const {
  if (theta.size() != size_)
    throw InternalError("parameter exchange: " + std::to_string(theta.size()) +
                        " values to synchronize for " + std::to_string(size_) + " parameters");
  Eigen::VectorXd owned = Eigen::VectorXd::Zero(size_);
  for (const ParameterBlock& block : blocks_)
    if (block.holders.front() == communicator_->rank())
      for (const auto& [offset, count] : block.ranges)
        owned.segment(offset, count) = theta.segment(offset, count);
  communicator_->allreduce_sum({owned.data(), static_cast<std::size_t>(owned.size())});
  theta = owned;
}

}  // namespace jetpde::solvers
