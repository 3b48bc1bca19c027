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
// A chunked term's weights as one value per row: its chunk's weight over the chunk's entries.
std::string row_weight_name(std::size_t term) {
  return "__jetpde_row_weight" + std::to_string(term);
}

// `sum` = v for the first batch, sum += v for the others.
void add_batch(Eigen::VectorXd& sum, Eigen::VectorXd v, int batch) {
  if (batch == 0)
    sum = std::move(v);
  else
    sum += v;
}

// Rows b, b + k, b + 2k, ... of m: batch b of k.
MatrixD batch_rows(const MatrixD& m, int b, int k) {
  MatrixD out(m.rows() / k, m.cols());
  for (Eigen::Index i = 0; i < out.rows(); ++i) out.row(i) = m.row(b + i * k);
  return out;
}

}  // namespace

std::string probe_input(std::size_t term) { return "__jetpde_probe" + std::to_string(term); }

LossPrograms build_loss_programs(const std::vector<LossTerm>& terms,
                                 const std::vector<Var>& params) {
  if (terms.empty()) throw UserError("objective: no loss terms");
  if (params.empty()) throw UserError("objective: no parameters to train");
  LossPrograms out;
  Graph* graph = terms.front().residual.graph;
  std::unordered_set<std::string> names;
  std::vector<Var> slot_losses;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const LossTerm& term = terms[t];
    if (term.name.empty()) throw UserError("objective: a loss term without a name");
    if (!names.insert(term.name).second)
      throw UserError("objective: loss term '" + term.name + "' appears twice");
    if (term.residual.graph != graph)
      throw UserError("objective: loss term '" + term.name + "' belongs to another graph");
    const Shape s = term.residual.shape();
    if (term.chunks < 1 || s.rows % term.chunks != 0)
      throw UserError("objective: loss term '" + term.name + "': " + std::to_string(term.chunks) +
                      " chunks do not divide its " + std::to_string(s.rows) + " rows");
    out.term_losses.push_back(mean_all(square(term.residual)));
    if (term.chunks == 1) {
      out.slot_names.push_back(term.name);
      out.slot_term.push_back(static_cast<int>(t));
      slot_losses.push_back(out.term_losses.back());
      continue;
    }
    const std::int64_t rows = s.rows / term.chunks;
    for (int c = 0; c < term.chunks; ++c) {
      out.slot_names.push_back(term.name + "[" + std::to_string(c) + "]");
      out.slot_term.push_back(static_cast<int>(t));
      slot_losses.push_back(mean_all(square(slice_rows(term.residual, c * rows, rows))));
    }
  }
  // The weighted loss: w_k times the slot's loss; a chunked term's part as one sum over its rows,
  // each weighted by its chunk's weight (an input row_weight_name(t) of one value per row), so
  // that the reverse pass starts with one elementwise product over the rows instead of a slice
  // per chunk, and runs tile by tile with the forward one (compiler/tile_regions.cpp).
  Var total;
  const auto add_part = [&](Var part) { total = total.id < 0 ? part : total + part; };
  for (std::size_t k = 0; k < slot_losses.size(); ++k) {
    const auto t = static_cast<std::size_t>(out.slot_term[k]);
    if (terms[t].chunks > 1) {
      if (k > 0 && out.slot_term[k - 1] == out.slot_term[k]) continue;  // the term's first chunk
      const Var r = terms[t].residual;
      Var w = graph->input(row_weight_name(t), {r.shape().rows, 1}, r.dtype());
      if (r.shape().cols > 1) w = broadcast(w, r.shape());
      add_part(sum_all(w * square(r)));
      continue;
    }
    add_part(graph->input(weight_name(k), {1, 1}, slot_losses[k].dtype()) * slot_losses[k]);
  }
  out.step.push_back(total);
  out.step.insert(out.step.end(), slot_losses.begin(), slot_losses.end());
  for (const Var& g : grad(total, params)) out.step.push_back(g);
  return out;
}

void add_term_gradients(LossPrograms& programs, const std::vector<Var>& params) {
  if (!programs.term_gradients.empty()) return;
  for (const Var& loss : programs.term_losses)
    for (const Var& g : grad(loss, params)) programs.term_gradients.push_back(g);
}

void add_probes(LossPrograms& programs, const std::vector<LossTerm>& terms,
                const std::vector<Var>& params) {
  if (!programs.probes.empty()) return;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const Var r = terms[t].residual;
    const Var v = r.graph->input(probe_input(t), r.shape(), r.dtype());
    for (const Var& g : grad(sum_all(v * r), params)) programs.probes.push_back(g);
  }
}

BatchChoice choose_batches(const std::vector<int>& counts, std::int64_t budget, std::int64_t whole,
                           const std::function<std::int64_t(int batches)>& plan) {
  BatchChoice choice{.batches = 1, .bytes = whole, .fits = whole <= budget};
  if (counts.empty()) return choice;
  const std::int64_t first = plan(counts.front());
  const double c = counts.front();
  const double per_point = static_cast<double>(whole - first) * c / (c - 1.0);
  const double fixed = static_cast<double>(whole) - per_point;
  std::size_t at = 0;
  while (at + 1 < counts.size() && fixed + per_point / counts[at] > static_cast<double>(budget))
    ++at;
  for (; at < counts.size(); ++at) {
    choice.batches = counts[at];
    choice.bytes = at == 0 ? first : plan(counts[at]);
    choice.fits = choice.bytes <= budget;
    if (choice.fits) break;
  }
  return choice;
}

Objective::Objective(std::vector<LossTerm> terms, std::vector<Var> params,
                     compiler::CompileOptions options, const Communicator& communicator,
                     int batches)
    : terms_(std::move(terms)),
      params_(std::move(params)),
      options_(std::move(options)),
      communicator_(&communicator),
      batches_(batches) {
  // The training step's tiles are measured beside this job's other ranks on the machine, and
  // each rank keeps its own (compiler/cpu_compiler.h).
  options_.cpu.ranks_here = communicator.ranks_here();
  options_.cpu.rank = communicator.rank();
  programs_ = build_loss_programs(terms_, params_);
  if (batches_ < 1)
    throw UserError("objective: " + std::to_string(batches_) + " batches (at least 1)");
  layout_ = nn::ParameterLayout(params_);
  for (Var leaf : terms_.front().residual.graph->inputs())
    leaf_shapes_[leaf.node().attrs.name] = leaf.shape();
  batch_inputs_.resize(static_cast<std::size_t>(batches_));
  precision_ = options_.pipeline.precision;
  current_ = &compiled_[precision_];
  current_->step = std::make_unique<compiler::Executable>(programs_.step, options_);
  // Each rank's share of every term's rows (the rows of all ranks together: one allreduce).
  std::vector<double> rows;
  for (std::size_t t = 0; t < terms_.size(); ++t)
    rows.push_back(static_cast<double>(this->rows(t)));
  std::vector<double> all_rows = rows;
  communicator_->allreduce_sum(all_rows);
  for (std::size_t t = 0; t < terms_.size(); ++t) term_share_.push_back(rows[t] / all_rows[t]);
  weights_.assign(programs_.slot_names.size(), 1.0);
  slot_losses_.assign(programs_.slot_names.size(), 0.0);
  set_weights(weights_);
}

Objective::~Objective() = default;

const compiler::Executable& Objective::executable() const { return *current_->step; }

compiler::PrecisionPolicy Objective::resolved(compiler::PrecisionPolicy precision) const {
  compiler::PipelineOptions p = options_.pipeline;
  p.precision = precision;
  return p.resolved(executable().backend());
}

compiler::CompileOptions Objective::options_for(compiler::PrecisionPolicy precision) const {
  compiler::CompileOptions o = options_;
  o.pipeline.precision = precision;
  return o;
}

void Objective::use_precision(compiler::PrecisionPolicy precision) {
  if (precision == precision_) return;
  Compiled& c = compiled_[precision];
  if (!c.step)
    c.step = std::make_unique<compiler::Executable>(programs_.step, options_for(precision));
  // Only the current set is kept bound (set_inputs, set_weights): this one gets what was bound
  // while another was current. Probes are set at every ntk_traces call, parameters at every run,
  // batches at every run of a batch.
  for (compiler::Executable* exe : {c.step.get(), c.term_gradients.get(), c.probes.get()})
    if (exe) bind_whole(*exe);
  precision_ = precision;
  current_ = &c;
  bind_weights();
}

bool Objective::batched(const std::string& input) const {
  return batches_ > 1 && batch_inputs_.front().contains(input);
}

void Objective::bind_whole(compiler::Executable& exe) const {
  for (const auto& [name, value] : inputs_)
    if (!batched(name)) exe.set(name, value);
}

void Objective::bind_batch(compiler::Executable& exe, int b) const {
  if (batches_ > 1) exe.set(batch_inputs_[static_cast<std::size_t>(b)]);
}

void Objective::set_inputs(const Bindings& inputs) {
  for (const auto& [name, value] : inputs) {
    const auto leaf = leaf_shapes_.find(name);
    if (batches_ > 1 && leaf != leaf_shapes_.end() && value.rows() != leaf->second.rows) {
      const Shape s = leaf->second;
      if (value.rows() != s.rows * batches_ || value.cols() != s.cols)
        throw UserError("objective: '" + name + "' " + s.str() + " (one of " +
                        std::to_string(batches_) + " batches) is bound to a value of shape [" +
                        std::to_string(value.rows()) + "," + std::to_string(value.cols()) + "]");
      for (int b = 0; b < batches_; ++b)
        batch_inputs_[static_cast<std::size_t>(b)][name] = batch_rows(value, b, batches_);
      inputs_[name] = value;
      continue;
    }
    for (Bindings& batch : batch_inputs_) batch.erase(name);
    for (compiler::Executable* exe :
         {current_->step.get(), current_->term_gradients.get(), current_->probes.get()})
      if (exe) exe->set(name, value);
    inputs_[name] = value;
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
  // This rank's part of the weighted sum: its share of the slot's rows (1 when serial). A chunked
  // term's rows (one batch's, whose chunks are as contiguous as the whole's) take their chunk's
  // weight over the chunk's entries, as its mean would.
  for (std::size_t k = 0; k < weights_.size();) {
    const auto t = static_cast<std::size_t>(programs_.slot_term[k]);
    const LossTerm& term = terms_[t];
    if (term.chunks == 1) {
      current_->step->set(weight_name(k), MatrixD::Constant(1, 1, weights_[k] * share(k)));
      ++k;
      continue;
    }
    const Shape s = term.residual.shape();
    const std::int64_t rows = s.rows / term.chunks;
    MatrixD w(s.rows, 1);
    for (int c = 0; c < term.chunks; ++c, ++k)
      w.middleRows(c * rows, rows)
          .setConstant(weights_[k] * share(k) / static_cast<double>(rows * s.cols));
    current_->step->set(row_weight_name(t), w);
  }
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
  return term_share_[static_cast<std::size_t>(programs_.slot_term[slot])];
}

void Objective::sum_over_ranks(std::span<double> values) const {
  if (communicator_->size() > 1) communicator_->allreduce_sum(values);
}

double Objective::evaluate(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  compiler::Executable& step = *current_->step;
  bind(step, theta);
  const std::size_t slots = slot_losses_.size();
  double loss = 0;
  for (int b = 0; b < batches_; ++b) {
    bind_batch(step, b);
    step.run();
    const bool first = b == 0;
    loss = first ? step.output(0)(0, 0) : loss + step.output(0)(0, 0);
    for (std::size_t k = 0; k < slots; ++k)
      slot_losses_[k] =
          first ? step.output(1 + k)(0, 0) : slot_losses_[k] + step.output(1 + k)(0, 0);
    if (gradient) add_batch(*gradient, gradient_from(step, 1 + slots), b);
  }
  if (batches_ > 1) {  // every slot's batches hold equal shares of its rows: the mean of means
    const double scale = 1.0 / batches_;
    loss *= scale;
    for (double& l : slot_losses_) l *= scale;
    if (gradient) *gradient *= scale;
  }
  // The one place where the ranks' losses and gradients meet: one message with the loss, the
  // slot losses and the gradient, each rank's part weighted by its share of the rows, summed.
  // Every rank then holds the same numbers, so every optimizer (a line search too) takes the
  // same step everywhere.
  if (exchanging_ && gradient) {  // the gradient by blocks among the neighbours
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
  add_term_gradients(programs_, params_);
  std::unique_ptr<compiler::Executable>& exe = current_->term_gradients;
  if (!exe) {
    exe = std::make_unique<compiler::Executable>(programs_.term_gradients, options_for(precision_));
    bind_whole(*exe);
  }
  bind(*exe, theta);
  std::vector<Eigen::VectorXd> out(terms_.size());
  for (int b = 0; b < batches_; ++b) {
    bind_batch(*exe, b);
    exe->run();
    for (std::size_t t = 0; t < terms_.size(); ++t)
      add_batch(out[t], gradient_from(*exe, t * params_.size()), b);
  }
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    if (batches_ > 1) out[t] /= batches_;
    if (communicator_->size() > 1) out[t] *= term_share_[t];
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
  add_probes(programs_, terms_, params_);
  std::unique_ptr<compiler::Executable>& exe = current_->probes;
  if (!exe) {
    exe = std::make_unique<compiler::Executable>(programs_.probes, options_for(precision_));
    bind_whole(*exe);
  }
  bind(*exe, theta);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(0.5);
  std::vector<double> traces(terms_.size(), 0.0);
  std::vector<MatrixD> v(terms_.size());
  std::vector<Eigen::VectorXd> jv(terms_.size());
  for (int p = 0; p < probes; ++p) {
    // One Rademacher vector over all of a term's rows (the same draws however many batches),
    // J^T v summed over the batches before its norm is taken.
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      v[t].resize(rows(t), terms_[t].residual.shape().cols);
      for (auto& x : v[t].reshaped()) x = coin(rng) ? 1.0 : -1.0;
    }
    for (int b = 0; b < batches_; ++b) {
      for (std::size_t t = 0; t < terms_.size(); ++t)
        exe->set(probe_input(t), batches_ > 1 ? batch_rows(v[t], b, batches_) : v[t]);
      bind_batch(*exe, b);
      exe->run();
      for (std::size_t t = 0; t < terms_.size(); ++t)
        add_batch(jv[t], gradient_from(*exe, t * params_.size()), b);
    }
    for (std::size_t t = 0; t < terms_.size(); ++t)
      traces[t] += jv[t].squaredNorm() / static_cast<double>(v[t].size()) / probes;
  }
  // tr(J J^T) / n over all ranks' rows is the share-weighted sum of the ranks' values.
  if (communicator_->size() > 1) {
    for (std::size_t t = 0; t < traces.size(); ++t) traces[t] *= term_share_[t];
    sum_over_ranks(traces);
  }
  return traces;
}

}  // namespace jetpde::solvers
