// SOAP (Vyas et al. 2024, "SOAP: Improving and Stabilizing Shampoo using Adam"): Adam run in the
// eigenbasis of Shampoo's preconditioner, per 2-D weight matrix, on the flat f64 vector.
//
//   nn::Soap soap({.schedule = {.lr = 3e-3}}, layout);   // layout: the parameters' shapes
//   for (...) { g = gradient(theta); soap.step(theta, g); }
//
// For a parameter W (m x n) with gradient G the optimizer keeps the left and right factors
//   L <- beta2 L + (1 - beta2) G G^T   (m x m),   R <- beta2 R + (1 - beta2) G^T G   (n x n)
// and their eigenvectors Q_L, Q_R, recomputed (SelfAdjointEigenSolver) every
// `precondition_frequency` steps and once at the first step, from that step's gradient. The
// update is Adam's with the second moment taken in the rotated space G' = Q_L^T G Q_R:
//   M <- beta1 M + (1 - beta1) G                 (in the parameters' own space, as the paper
//   V' <- beta2 V' + (1 - beta2) G' * G'          keeps it, so a refreshed basis rotates it)
//   W <- W - lr Q_L [ (Q_L^T M Q_R / c1) / (sqrt(V' / c2) + eps) ] Q_R^T
// with Adam's bias corrections c1 = 1 - beta1^t, c2 = 1 - beta2^t. A side whose dimension is 1
// (biases, any row or column vector) or above `max_precondition_dim` has no factor: the identity
// there, so a vector gets plain Adam. A refresh carries V' into the new basis (the diagonal of
// the old estimate rotated, so eigenvectors that swap places keep their moments). Weight decay is
// decoupled (AdamW's), as in the paper. The state (moments, factors, bases, step) is public for
// checkpoints; resuming is bit for bit.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "autodiff/options.h"
#include "nn/parameters.h"
#include "nn/schedule.h"

namespace jetpde::nn {

struct SoapOptions {
  Schedule schedule;
  double beta1 = 0.95, beta2 = 0.95, epsilon = 1e-8;
  double weight_decay = 0.0;         // decoupled: theta shrinks by lr * weight_decay each step
  int precondition_frequency = 10;   // steps between eigenbasis refreshes
  int max_precondition_dim = 10000;  // a longer side gets no factor (the identity)
};

// The keys of a SOAP training stage (training.stages[]): the schedule's and weight_decay (the same
// keys as Adam's), precondition_frequency and max_precondition_dim. The schedule's total_steps is
// the stage's to set; beta1, beta2 and epsilon are not config keys (as for Adam).
const options::Declaration<SoapOptions>& soap_options();

class Soap {
 public:
  // UserError naming a bad option. The layout gives each parameter's shape and place in theta.
  Soap(SoapOptions options, const ParameterLayout& layout);

  // One update of theta from its gradient g; the rate is the schedule's at steps().
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& g);
  int steps() const { return state_.t; }
  double learning_rate() const { return options_.schedule(state_.t); }  // of the next step
  const SoapOptions& options() const { return options_; }

  // One parameter's preconditioner: a side without a factor has 0 x 0 matrices.
  struct Factors {
    Eigen::MatrixXd L, R, QL, QR;
  };
  struct State {
    Eigen::VectorXd m;             // the first moment, in the parameters' space
    Eigen::VectorXd v;             // the second moment, each matrix's in its rotated space
    std::vector<Factors> factors;  // one per layout entry
    int t = 0;
  };
  const State& state() const { return state_; }
  // UserError when the state does not fit the layout.
  void restore(State state);
  // Whether entry i of the layout has a left (right) factor.
  bool has_left(std::size_t i) const;
  bool has_right(std::size_t i) const;
  // Parameter-sized vectors the state holds, counting the factors and bases (memory estimates).
  int state_vectors() const;

 private:
  SoapOptions options_;
  ParameterLayout layout_;
  State state_;
};

}  // namespace jetpde::nn
