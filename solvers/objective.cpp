#include "solvers/objective.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>

#include "autodiff/errors.h"
#include "autodiff/grad.h"
#include "autodiff/ops.h"

namespace jetpde::solvers {
namespace {

std::string weight_name(std::size_t slot) { return "__jetpde_weight" + std::to_string(slot); }
std::string probe_name(std::size_t term) { return "__jetpde_probe" + std::to_string(term); }

}  // namespace

Objective::Objective(std::vector<LossTerm> terms, std::vector<Var> params,
                     compiler::CompileOptions options, const Communicator& communicator)
    : terms_(std::move(terms)),
      params_(std::move(params)),
      options_(std::move(options)),
      communicator_(&communicator) {
  if (terms_.empty()) throw UserError("objective: no loss terms");
  if (params_.empty()) throw UserError("objective: no parameters to train");
  layout_ = nn::ParameterLayout(params_);
  Graph* graph = terms_.front().residual.graph;
  std::unordered_set<std::string> names;
  std::vector<Var> slot_losses;
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    const LossTerm& term = terms_[t];
    if (term.name.empty()) throw UserError("objective: a loss term without a name");
    if (!names.insert(term.name).second)
      throw UserError("objective: loss term '" + term.name + "' appears twice");
    if (term.residual.graph != graph)
      throw UserError("objective: loss term '" + term.name + "' belongs to another graph");
    const Shape s = term.residual.shape();
    if (term.chunks < 1 || s.rows % term.chunks != 0)
      throw UserError("objective: loss term '" + term.name + "': " + std::to_string(term.chunks) +
                      " chunks do not divide its " + std::to_string(s.rows) + " rows");
    term_losses_.push_back(mean_all(square(term.residual)));
    if (term.chunks == 1) {
      slot_names_.push_back(term.name);
      slot_term_.push_back(static_cast<int>(t));
      slot_losses.push_back(term_losses_.back());
      continue;
    }
    const std::int64_t rows = s.rows / term.chunks;
    for (int c = 0; c < term.chunks; ++c) {
      slot_names_.push_back(term.name + "[" + std::to_string(c) + "]");
      slot_term_.push_back(static_cast<int>(t));
      slot_losses.push_back(mean_all(square(slice_rows(term.residual, c * rows, rows))));
    }
  }
  std::vector<Var>& outputs = step_outputs_;
  Var total;
  for (std::size_t k = 0; k < slot_losses.size(); ++k) {
    const Var w = graph->input(weight_name(k), {1, 1}, slot_losses[k].dtype());
    total = k == 0 ? w * slot_losses[k] : total + w * slot_losses[k];
  }
  outputs.push_back(total);
  outputs.insert(outputs.end(), slot_losses.begin(), slot_losses.end());
  for (const Var& g : grad(total, params_)) outputs.push_back(g);
  precision_ = options_.pipeline.precision;
  current_ = &compiled_[precision_];
  current_->step = std::make_unique<compiler::Executable>(outputs, options_);
  // Each rank's share of every term's rows (the rows of all ranks together: one allreduce).
  std::vector<double> rows;
  for (const LossTerm& term : terms_)
    rows.push_back(static_cast<double>(term.residual.shape().rows));
  std::vector<double> all_rows = rows;
  communicator_->allreduce_sum(all_rows);
  for (std::size_t t = 0; t < terms_.size(); ++t) term_share_.push_back(rows[t] / all_rows[t]);
  weights_.assign(slot_losses.size(), 1.0);
  slot_losses_.assign(slot_losses.size(), 0.0);
  set_weights(weights_);
}

Objective::~Objective() = default;

const compiler::Executable& Objective::executable() const { return *current_->step; }

compiler::CompileOptions Objective::options_for(compiler::PrecisionPolicy precision) const {
  compiler::CompileOptions o = options_;
  o.pipeline.precision = precision;
  return o;
}

void Objective::use_precision(compiler::PrecisionPolicy precision) {
  if (precision == precision_) return;
  Compiled& c = compiled_[precision];
  if (!c.step)
    c.step = std::make_unique<compiler::Executable>(step_outputs_, options_for(precision));
  // Only the current set is kept bound (set_inputs, set_weights): this one gets what was bound
  // while another was current. Probes are set at every ntk_traces call, parameters at every run.
  for (compiler::Executable* exe : {c.step.get(), c.term_gradients.get(), c.probes.get()})
    if (exe)
      for (const auto& [name, value] : inputs_) exe->set(name, value);
  precision_ = precision;
  current_ = &c;
  bind_weights();
}

void Objective::set_inputs(const Bindings& inputs) {
  for (const auto& [name, value] : inputs) {
    inputs_[name] = value;
    current_->step->set(name, value);
    if (current_->term_gradients) current_->term_gradients->set(name, value);
    if (current_->probes) current_->probes->set(name, value);
  }
}

void Objective::restore_slot_losses(const std::vector<double>& losses) {
  if (losses.size() != slot_losses_.size())
    throw UserError("objective: " + std::to_string(losses.size()) + " saved losses for " +
                    std::to_string(slot_losses_.size()) + " loss slots");
  slot_losses_ = losses;
}

void Objective::set_weights(const std::vector<double>& weights) {
  if (weights.size() != weights_.size())
    throw UserError("objective: " + std::to_string(weights.size()) + " weights for " +
                    std::to_string(weights_.size()) + " loss slots");
  weights_ = weights;
  bind_weights();
}

void Objective::bind_weights() {
  // This rank's part of the weighted sum: its share of the slot's rows (1 when serial).
  for (std::size_t k = 0; k < weights_.size(); ++k)
    current_->step->set(weight_name(k), MatrixD::Constant(1, 1, weights_[k] * share(k)));
}

void Objective::bind(compiler::Executable& exe, const Eigen::VectorXd& theta) {
  for (const auto& [name, value] : layout_.unflatten(theta)) exe.set(name, value);
}

Eigen::VectorXd Objective::gradient_from(const compiler::Executable& exe, std::size_t first) const {
  Eigen::VectorXd g(layout_.size());
  for (std::size_t p = 0; p < layout_.entries().size(); ++p) {
    const auto& e = layout_.entries()[p];
    g.segment(e.offset, e.shape.size()) = exe.output(first + p).reshaped().matrix();
  }
  return g;
}

double Objective::share(std::size_t slot) const {
  return term_share_[static_cast<std::size_t>(slot_term_[slot])];
}

void Objective::sum_over_ranks(std::span<double> values) const {
  if (communicator_->size() > 1) communicator_->allreduce_sum(values);
}

double Objective::evaluate(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  compiler::Executable& step = *current_->step;
  bind(step, theta);
  step.run();
  for (std::size_t k = 0; k < slot_losses_.size(); ++k) slot_losses_[k] = step.output(1 + k)(0, 0);
  if (gradient) *gradient = gradient_from(step, 1 + slot_losses_.size());
  double loss = step.output(0)(0, 0);
  // The one place where the ranks' losses and gradients meet: one message with the loss, the
  // slot losses and the gradient, each rank's part weighted by its share of the rows, summed.
  // Every rank then holds the same numbers, so every optimizer (a line search too) takes the
  // same step everywhere.
  if (exchanging_ && gradient) {  // the gradient by blocks among the neighbours
    const std::size_t slots = slot_losses_.size();
    // The last value: whether this rank's part of the gradient is finite (a rank that alone
    // saw a NaN in a block its neighbours do not hold must not stop alone).
    std::vector<double> extra(2 + slots);
    extra[0] = loss;
    for (std::size_t k = 0; k < slots; ++k) extra[1 + k] = slot_losses_[k] * share(k);
    extra[1 + slots] = gradient->allFinite() ? 0.0 : 1.0;
    exchange_->sum(*gradient, extra);
    loss = extra[0];
    std::copy(extra.begin() + 1, extra.begin() + 1 + static_cast<std::ptrdiff_t>(slots),
              slot_losses_.begin());
    if (extra[1 + slots] > 0) gradient->setConstant(std::nan(""));
  } else if (communicator_->size() > 1) {
    const std::size_t slots = slot_losses_.size();
    const Eigen::Index n = gradient ? gradient->size() : 0;
    std::vector<double> all(1 + slots + static_cast<std::size_t>(n));
    all[0] = loss;  // the weights bound already carry the shares
    for (std::size_t k = 0; k < slots; ++k) all[1 + k] = slot_losses_[k] * share(k);
    if (gradient) std::copy(gradient->data(), gradient->data() + n, all.begin() + 1 + slots);
    sum_over_ranks(all);
    loss = all[0];
    std::copy(all.begin() + 1, all.begin() + 1 + slots, slot_losses_.begin());
    if (gradient) std::copy(all.begin() + 1 + slots, all.end(), gradient->data());
  }
  return loss;
}

void Objective::set_exchange(std::unique_ptr<ParameterExchange> exchange) {
  if (exchange && exchange->blocks().empty())
    throw InternalError("objective: a parameter exchange without blocks");
  exchange_ = std::move(exchange);
  exchanging_ = false;
}

void Objective::use_exchange(bool on) { exchanging_ = on && exchange_ != nullptr; }

void Objective::synchronize(Eigen::VectorXd& theta) const {
  if (exchanging_) exchange_->synchronize(theta);
}

std::vector<Eigen::VectorXd> Objective::term_gradients(const Eigen::VectorXd& theta) {
  if (term_gradient_outputs_.empty())
    for (const Var& loss : term_losses_)
      for (const Var& g : grad(loss, params_)) term_gradient_outputs_.push_back(g);
  std::unique_ptr<compiler::Executable>& exe = current_->term_gradients;
  if (!exe) {
    exe = std::make_unique<compiler::Executable>(term_gradient_outputs_, options_for(precision_));
    for (const auto& [name, value] : inputs_) exe->set(name, value);
  }
  bind(*exe, theta);
  exe->run();
  std::vector<Eigen::VectorXd> out;
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    out.push_back(gradient_from(*exe, t * params_.size()));
    if (communicator_->size() > 1) out.back() *= term_share_[t];
  }
  if (communicator_->size() > 1) {  // one message for all terms
    const auto n = static_cast<std::size_t>(layout_.size());
    std::vector<double> all(n * out.size());
    for (std::size_t t = 0; t < out.size(); ++t)
      std::copy(out[t].data(), out[t].data() + n, all.begin() + static_cast<std::ptrdiff_t>(t * n));
    sum_over_ranks(all);
    for (std::size_t t = 0; t < out.size(); ++t)
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(t * n),
                all.begin() + static_cast<std::ptrdiff_t>((t + 1) * n), out[t].data());
  }
  return out;
}

std::vector<double> Objective::ntk_traces(const Eigen::VectorXd& theta, int probes,
                                          std::uint64_t seed) {
  if (probes < 1) throw UserError("objective: ntk_traces needs at least one probe");
  // The probe inputs join the graph once, whatever the precisions compiled from it.
  if (probe_outputs_.empty())
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      const Var r = terms_[t].residual;
      const Var v = r.graph->input(probe_name(t), r.shape(), r.dtype());
      for (const Var& g : grad(sum_all(v * r), params_)) probe_outputs_.push_back(g);
    }
  std::unique_ptr<compiler::Executable>& exe = current_->probes;
  if (!exe) {
    exe = std::make_unique<compiler::Executable>(probe_outputs_, options_for(precision_));
    for (const auto& [name, value] : inputs_) exe->set(name, value);
  }
  bind(*exe, theta);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(0.5);
  std::vector<double> traces(terms_.size(), 0.0);
  for (int p = 0; p < probes; ++p) {
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      const Shape s = terms_[t].residual.shape();
      MatrixD v(s.rows, s.cols);
      for (auto& x : v.reshaped()) x = coin(rng) ? 1.0 : -1.0;
      exe->set(probe_name(t), v);
    }
    exe->run();
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      const double n = static_cast<double>(terms_[t].residual.shape().size());
      traces[t] += gradient_from(*exe, t * params_.size()).squaredNorm() / n / probes;
    }
  }
  // tr(J J^T) / n over all ranks' rows is the share-weighted sum of the ranks' values.
  if (communicator_->size() > 1) {
    for (std::size_t t = 0; t < traces.size(); ++t) traces[t] *= term_share_[t];
    sum_over_ranks(traces);
  }
  return traces;
}

}  // namespace jetpde::solvers
