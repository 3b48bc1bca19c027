// A PINN loss as one compiled training step (docs/design.md section 9): loss terms, each the mean
// square of a residual graph, weighted and summed; the step returns the weighted loss, every
// term's loss and the gradient with respect to every parameter, from one compiled Executable.
//
//   solvers::Objective obj({{"pde", r}, {"bc", u_bc - g_bc}}, net.params());
//   obj.set_inputs({{"x", interior}, {"xb", boundary}});
//   obj.set_weights({1.0, 10.0});
//   double loss = obj.evaluate(theta, &gradient);
//
// Weights are inputs of the compiled step, not constants: changing them, or rebinding points of
// the same counts (resampling), never recompiles. A term may be split into `chunks` equal
// contiguous blocks of rows, each with its own loss and weight (causal weighting over time
// slabs). Two more compiled steps are built on first use: per-term gradients (learning-rate
// annealing) and Hutchinson probes of the per-term NTK traces (NTK weighting).
//
// The step runs in the precision of the compile options (the run's) until use_precision() asks
// for another: the same graph is then compiled again with that policy on first use and kept, one
// set of executables per precision (the step, and the term-gradient and NTK programs once asked
// for), so that a stage in fp64 after stages in fp32 (an L-BFGS polish where f32 no longer
// changes the loss) costs one compilation, and switching back costs none. What is bound (inputs,
// weights) follows into whichever set is current; theta is double throughout and bound at every
// evaluation, so the parameters pass between precisions unrounded except by the f32 arithmetic
// itself.
//
// With several ranks (a Communicator of size > 1) each rank binds its own share of every term's
// rows, and evaluate() is the one place where the ranks meet: each rank weights its slots by its
// share of their rows (rows here / rows of all ranks, known at construction), and one
// allreduce_sum of the loss, the slot losses and the gradient then gives the mean over all
// points, whatever the shares (unequal ones included, or a small set every rank holds whole:
// then each share is 1 / ranks). term_gradients and ntk_traces reduce the same way. Serial
// (size 1) the shares are 1 and nothing is reduced.
//
// Under a memory budget the step runs in batches (Problem chooses how many, docs/design.md
// section 9): the residual graphs are then built for one batch, and every input bound with
// `batches` times its leaf's rows is split among them, batch b taking rows b, b + batches, ...
// (so a chunked term's contiguous chunks stay contiguous chunks in every batch). evaluate(),
// term_gradients() and ntk_traces() run the batches one after another through the same compiled
// program and average (each slot's loss is a mean over equal shares of its rows), so that the
// result is the unbatched one up to rounding while the program's arena is that of one batch.
//
// A decomposed model's gradient can go by a ParameterExchange instead (solvers/exchange.h): each
// subdomain network's block summed over the ranks that hold it, the neighbours, while the loss
// and the slot losses keep their allreduce. The trainer turns it on for stages without a line
// search (Adam) and synchronizes the parameters wherever the whole vector is read.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "compiler/executable.h"
#include "compiler/passes.h"
#include "nn/parameters.h"
#include "solvers/communicator.h"
#include "solvers/exchange.h"

namespace jetpde::solvers {

struct LossTerm {
  std::string name;
  Var residual;    // [n, c]; the term's loss is the mean of residual^2 over all entries
  int chunks = 1;  // > 1: rows split into this many equal blocks (n divisible by it)
};

// What an Objective compiles, built into the terms' graph: the slots, the step's outputs (the
// weighted loss, each slot's loss, the gradient; the weights are inputs), and on request the
// per-term gradients' and the NTK probes' programs. Problem builds them on a graph of its own to
// plan the memory before choosing how many batches the objective runs in. UserError as for the
// Objective's constructor.
struct LossPrograms {
  std::vector<std::string> slot_names;
  std::vector<int> slot_term;               // the term of each slot
  std::vector<Var> term_losses;             // per term, unweighted
  std::vector<Var> step;                    // {weighted loss, slot losses..., gradient by param...}
  std::vector<Var> term_gradients, probes;  // empty until added
};
LossPrograms build_loss_programs(const std::vector<LossTerm>& terms,
                                 const std::vector<Var>& params);
// The gradients of every term's unweighted loss, term after term, each by param.
void add_term_gradients(LossPrograms& programs, const std::vector<Var>& params);
// Per term t, the gradient of sum(v_t * residual_t) with v_t an input named probe_input(t).
void add_probes(LossPrograms& programs, const std::vector<LossTerm>& terms,
                const std::vector<Var>& params);
std::string probe_input(std::size_t term);

// How many batches an objective runs in under a memory budget: the fewest of `counts` (batch
// counts the points allow, ascending, each above 1) whose planned bytes fit `budget`, given the
// plan over all points (`whole`) and `plan(batches)`. The arenas are a fixed part (parameters,
// gradients) and a part per point: the plan for counts[0] gives both, the first count predicted
// to fit is planned to check, and the counts after it until one fits. `fits` false: none did
// (`batches` and `bytes` are then the last count's); no counts: batches 1.
struct BatchChoice {
  int batches = 1;
  std::int64_t bytes = 0;
  bool fits = false;
};
BatchChoice choose_batches(const std::vector<int>& counts, std::int64_t budget, std::int64_t whole,
                           const std::function<std::int64_t(int batches)>& plan);

class Objective {
 public:
  // UserError for an empty or repeated name, residuals of different graphs, a chunk count that
  // does not divide the rows, or no parameters. The communicator is not owned: it must outlive
  // the objective.
  // `batches` > 1: the residuals are one batch's (see above).
  Objective(std::vector<LossTerm> terms, std::vector<Var> params,
            compiler::CompileOptions options = compiler::CompileOptions::from_environment(),
            const Communicator& communicator = serial_communicator(), int batches = 1);
  ~Objective();

  // Binds inputs (points, normals, data) by leaf name; UserError for an unknown name or shape
  // (in batches: rows that are neither the leaf's nor batches() times them).
  void set_inputs(const Bindings& inputs);
  const Bindings& inputs() const { return inputs_; }  // everything bound so far, by leaf name
  // One weight per slot (a term, or a term's chunk); UserError for the wrong count.
  void set_weights(const std::vector<double>& weights);
  const std::vector<double>& weights() const { return weights_; }

  // Slots: "pde", or "pde[0]", "pde[1]", ... for a chunked term.
  int slots() const { return static_cast<int>(programs_.slot_names.size()); }
  const std::vector<std::string>& slot_names() const { return programs_.slot_names; }
  const std::vector<int>& slot_term() const { return programs_.slot_term; }  // each slot's term
  const std::vector<LossTerm>& terms() const { return terms_; }
  // How many batches a step runs in, and this rank's rows of term t over all of them.
  int batches() const { return batches_; }
  std::int64_t rows(std::size_t term) const {
    return terms_[term].residual.shape().rows * batches_;
  }

  // The weighted loss at theta; the gradient too when asked. Then slot_losses() holds each
  // slot's unweighted loss. All of them averaged over the ranks (see above).
  double evaluate(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient = nullptr);
  const std::vector<double>& slot_losses() const { return slot_losses_; }
  // Puts back slot losses saved from an earlier evaluation (a trainer resuming from a checkpoint:
  // causal weights are computed from the previous step's losses). UserError for the wrong count.
  void restore_slot_losses(const std::vector<double>& losses);

  // The gradient of each term's unweighted loss (one vector per term).
  std::vector<Eigen::VectorXd> term_gradients(const Eigen::VectorXd& theta);
  // Per term, an estimate of the mean diagonal of its NTK block, tr(J J^T) / n with J the
  // residual's Jacobian with respect to the parameters: the average over `probes` Rademacher
  // vectors v of |J^T v|^2 / n (Hutchinson; unbiased).
  std::vector<double> ntk_traces(const Eigen::VectorXd& theta, int probes, std::uint64_t seed);

  // The precision evaluate(), term_gradients() and ntk_traces() run in: the compile options'
  // (run_precision()) until use_precision() picks another. Switching to a precision for the first
  // time compiles the step for it (the term-gradient and NTK programs follow on their first use
  // there) and binds everything bound so far; switching back reuses what was compiled.
  void use_precision(compiler::PrecisionPolicy precision);
  compiler::PrecisionPolicy precision() const { return precision_; }
  compiler::PrecisionPolicy run_precision() const { return options_.pipeline.precision; }
  // `precision` with auto resolved as this objective's programs resolve it: the compile options'
  // auto_as, else resolve_auto's choice for the backend that runs the step.
  compiler::PrecisionPolicy resolved(compiler::PrecisionPolicy precision) const;

  const nn::ParameterLayout& layout() const { return layout_; }
  const std::vector<Var>& params() const { return params_; }
  // The current precision's step (its program, memory plan and backend).
  const compiler::Executable& executable() const;
  const Communicator& communicator() const { return *communicator_; }

  // The neighbour exchange (see above): set once (Problem does, for a decomposed model on several
  // ranks), then on or off. While on, evaluate() leaves the blocks a rank does not hold stale
  // (zero gradient); synchronize() makes a vector whole again (a collective; nothing to do while
  // off).
  void set_exchange(std::unique_ptr<ParameterExchange> exchange);
  const ParameterExchange* exchange() const { return exchange_.get(); }
  void use_exchange(bool on);
  bool exchanging() const { return exchanging_; }
  void synchronize(Eigen::VectorXd& theta) const;

 private:
  // The executables of one precision; term_gradients and probes built on first use.
  struct Compiled {
    std::unique_ptr<compiler::Executable> step, term_gradients, probes;
  };
  compiler::CompileOptions options_for(compiler::PrecisionPolicy precision) const;
  // Binds the weights (times this rank's shares) into the current step.
  void bind_weights();
  void bind(compiler::Executable& exe, const Eigen::VectorXd& theta);
  Eigen::VectorXd gradient_from(const compiler::Executable& exe, std::size_t first) const;
  // Binds into `exe` what is bound whole (every input unbatched), or batch b's rows of each
  // batched input.
  void bind_whole(compiler::Executable& exe) const;
  void bind_batch(compiler::Executable& exe, int b) const;
  bool batched(const std::string& input) const;
  // This rank's share of slot `slot`'s rows (1 serial).
  double share(std::size_t slot) const;
  // The sum over the ranks of `values`, in place (nothing to do with one rank).
  void sum_over_ranks(std::span<double> values) const;

  std::vector<LossTerm> terms_;
  std::vector<Var> params_;
  nn::ParameterLayout layout_;
  compiler::CompileOptions options_;
  const Communicator* communicator_;
  std::vector<double> weights_, slot_losses_;
  std::vector<double> term_share_;  // per term: this rank's rows / all ranks' rows
  Bindings inputs_;
  int batches_ = 1;
  std::map<std::string, Shape> leaf_shapes_;  // every input leaf's (one batch's rows)
  // Batched: each batch's rows of every input bound with batches_ times its leaf's rows.
  std::vector<Bindings> batch_inputs_;
  // The graphs' outputs, built once (each precision compiles the same nodes): the step's, and
  // the term-gradient and NTK programs' (empty until first asked for).
  LossPrograms programs_;
  std::map<compiler::PrecisionPolicy, Compiled> compiled_;  // by precision
  compiler::PrecisionPolicy precision_;
  Compiled* current_ = nullptr;  // compiled_[precision_] (std::map: the address is stable)
  std::unique_ptr<ParameterExchange> exchange_;
  bool exchanging_ = false;
};

}  // namespace jetpde::solvers
