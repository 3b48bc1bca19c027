// SOAP (nn::Soap, the `soap` optimizer kind): on a quadratic with a Kronecker-factored Hessian,
// the one Shampoo's factors capture, it converges far faster than Adam and its factors take the
// Hessian's eigenvectors; its first step in closed form (both factors, one, none); a state taken
// mid-run resumes bit for bit; its options and config keys; a short training of a 1-D Poisson
// problem.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <cmath>
#include <iostream>
#include <numbers>
#include <random>
#include <tuple>

#include "autodiff/ops.h"
#include "autodiff/taylor.h"
#include "nn/adam.h"
#include "nn/network.h"
#include "nn/soap.h"
#include "solvers/objective.h"
#include "solvers/optimizer.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;

// A random orthogonal matrix (the Q of a Gaussian matrix's QR).
Eigen::MatrixXd orthogonal(int n, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(n, n);
  for (double& e : x.reshaped()) e = normal(rng);
  return Eigen::HouseholderQR<Eigen::MatrixXd>(x).householderQ();
}

// f(W, b) = 1/2 tr((W - W*)^T A (W - W*) B) + 1/2 sum_j c_j (b_j - b*_j)^2 with A = U diag(a) U^T
// and B = V diag(b) V^T: the Hessian of vec(W) is B (x) A (column-major vec), the Kronecker
// product that Shampoo's two factors model; the bias b a vector SOAP leaves to Adam.
struct Quadratic {
  int m, n;
  Eigen::MatrixXd U, V, A, B, W_star;
  Eigen::VectorXd a, bdiag, c, b_star;
  Graph g{DType::f64};
  Var W, bias;
  nn::ParameterLayout layout;

  Quadratic(int m_, int n_, std::uint32_t seed, double ka = 100, double kb = 30) : m(m_), n(n_) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    U = orthogonal(m, rng);
    V = orthogonal(n, rng);
    // Spectra spread evenly on a log scale: condition numbers 100 (A) and 30 (B), 3000 jointly.
    a = Eigen::VectorXd::LinSpaced(m, 0, std::log10(ka)).unaryExpr([](double e) {
      return std::pow(10, e);
    });
    bdiag = Eigen::VectorXd::LinSpaced(n, 0, std::log10(kb)).unaryExpr([](double e) {
      return std::pow(10, e);
    });
    A = U * a.asDiagonal() * U.transpose();
    B = V * bdiag.asDiagonal() * V.transpose();
    W_star = Eigen::MatrixXd(m, n);
    for (double& e : W_star.reshaped()) e = normal(rng);
    c = Eigen::VectorXd::LinSpaced(n, 1, 10);
    b_star = Eigen::VectorXd(n);
    for (double& e : b_star) e = normal(rng);
    W = g.param("W", {m, n});
    bias = g.param("b", {1, n});
    const std::vector<Var> params{W, bias};
    layout = nn::ParameterLayout(params);
  }
  // The flat vector of (W, b), W column by column.
  Eigen::VectorXd pack(const Eigen::MatrixXd& w, const Eigen::VectorXd& b) const {
    Eigen::VectorXd theta(m * n + n);
    theta << w.reshaped(), b;
    return theta;
  }
  double evaluate(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) const {
    const Eigen::MatrixXd E = theta.head(m * n).reshaped(m, n) - W_star;
    const Eigen::VectorXd e = theta.tail(n) - b_star;
    const Eigen::MatrixXd G = A * E * B;
    grad = pack(G, c.cwiseProduct(e));
    return 0.5 * (E.transpose() * G).trace() + 0.5 * e.dot(c.cwiseProduct(e));
  }
  Evaluate evaluator() const {
    return [this](const Eigen::VectorXd& t, Eigen::VectorXd& gr) { return evaluate(t, gr); };
  }
};

// A start whose error W - W* = U D V^T (D diagonal) lies along the Hessian's eigenvectors.
Eigen::VectorXd aligned_start(const Quadratic& q) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(q.m, q.n);
  for (int i = 0; i < std::min(q.m, q.n); ++i) D(i, i) = 1.0 + 0.5 * i;
  return q.pack(q.W_star + q.U * D * q.V.transpose(),
                q.b_star + Eigen::VectorXd::Constant(q.n, 0.5));
}

// Off-diagonal part relative to the largest entry.
double off_diagonal(const Eigen::MatrixXd& x) {
  Eigen::MatrixXd o = x;
  o.diagonal().setZero();
  return o.cwiseAbs().maxCoeff() / x.cwiseAbs().maxCoeff();
}

// Steps until f falls below `target` (at most `limit`), from theta0; `each` sees every iterate.
template <class Opt, class Each>
int steps_to(const Quadratic& q, Opt& opt, Eigen::VectorXd theta, double target, int limit,
             Each each) {
  Eigen::VectorXd grad;
  for (int k = 0; k < limit; ++k) {
    if (q.evaluate(theta, grad) < target) return k;
    opt.step(theta, grad);
    each(theta);
  }
  return limit;
}

// What the factors are on this quadratic: G = A E B, so
//   L_t = (1 - beta2) sum_k beta2^(t-k) G_k G_k^T = A S_t A,  S_t = sum_k w_k E_k B^2 E_k^T,
//   R_t = B T_t B,  T_t = sum_k w_k E_k^T A^2 E_k,
// with E_k the error at the iterate the k-th step started from; the test sums S_t and T_t from
// the iterates and checks L and R against them to rounding. For an error along the
// eigenvectors, E = U D V^T with D diagonal, G G^T = U diag(a_i^2 b_i^2 d_i^2) U^T: A's
// eigenvectors exactly (B's for G^T G), which is the basis the first step takes, Shampoo's
// picture of the Hessian B (x) A. Adam on this rotated problem (condition 1e5) has no such basis
// and, at the same rate and schedule, needs several times the steps. (Later, as the
// coordinates converge at their own pace, eigenvalues of L cross, and near a crossing its basis
// turns within the pair: the error does not stay exactly aligned, nor L exactly A's.)
TEST(Soap, OnAKroneckerQuadraticItTakesTheHessiansFactorsAndBeatsAdam) {
  const nn::Schedule schedule{
      .kind = nn::Schedule::Kind::exponential, .lr = 1e-2, .gamma = 0.5, .decay_steps = 300};
  for (const std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    const Quadratic q(5, 5, seed, 1e3, 1e2);
    const Eigen::VectorXd theta0 = aligned_start(q);
    Eigen::VectorXd grad;
    const double target = 1e-8 * q.evaluate(theta0, grad);
    nn::Soap soap({.schedule = schedule}, q.layout);
    const double b2 = soap.options().beta2;
    Eigen::MatrixXd S = Eigen::MatrixXd::Zero(q.m, q.m), T = Eigen::MatrixXd::Zero(q.n, q.n);
    double worst_l = 0, worst_r = 0, first_basis = 0;
    const auto error = [&](const Eigen::VectorXd& t) -> Eigen::MatrixXd {
      return t.head(q.m * q.n).reshaped(q.m, q.n) - q.W_star;
    };
    Eigen::MatrixXd E = error(theta0);  // the error the coming step's gradient is taken at
    const int soap_steps = steps_to(q, soap, theta0, target, 20000, [&](const Eigen::VectorXd& t) {
      S = b2 * S + (1 - b2) * E * q.B * q.B * E.transpose();
      T = b2 * T + (1 - b2) * E.transpose() * q.A * q.A * E;
      const nn::Soap::Factors& f = soap.state().factors[0];
      const Eigen::MatrixXd pl = q.A * S * q.A, pr = q.B * T * q.B;
      worst_l = std::max(worst_l, (f.L - pl).norm() / pl.norm());
      worst_r = std::max(worst_r, (f.R - pr).norm() / pr.norm());
      if (soap.steps() == 1)
        first_basis = std::max(off_diagonal(f.QL.transpose() * q.A * f.QL),
                               off_diagonal(f.QR.transpose() * q.B * f.QR));
      E = error(t);
    });
    nn::Adam adam({.schedule = schedule, .beta1 = 0.95, .beta2 = 0.95});
    const int adam_steps = steps_to(q, adam, theta0, target, 20000, [](const Eigen::VectorXd&) {});
    const std::string msg = "seed " + std::to_string(seed) + ": f below 1e-8 of its start after " +
                            std::to_string(soap_steps) + " SOAP steps, " +
                            std::to_string(adam_steps) + " Adam steps (lr 1e-2, halved every 300)";
    std::cout << "  " << msg << "\n";
    EXPECT_LT(soap_steps, 1000) << msg;
    EXPECT_LE(3 * soap_steps, adam_steps) << msg;
    EXPECT_LT(worst_l, 1e-12) << msg;  // rounding only
    EXPECT_LT(worst_r, 1e-12) << msg;
    // The eigenvectors of L's smallest eigenvalues are found to about eps * (its eigenvalue
    // spread, (a_max b_max d_max / a_min b_min d_min)^2 = 1e11) / gap: 1e-5 relative.
    EXPECT_LT(first_basis, 1e-4) << msg << ": " << first_basis;
  }
}

// The first step in closed form: the bases are those of G G^T and G^T G, the bias-corrected
// moments are G' = Q_L^T G Q_R and G'^2, so the step is -lr Q_L [G' / (|G'| + eps)] Q_R^T, sign
// descent in the gradient's own bases. A side above max_precondition_dim has the identity
// instead of its basis; a vector gets plain Adam's step. In the gradient's singular bases G' is
// diagonal: its other entries are rounding, which eps must dwarf for the step to be defined by
// the gradient rather than by its rounding, so the start is near the optimum (|G| ~ 1e-3, its
// rounding ~1e-19); and each factor's side has a gradient of full rank (a 6 x 4 gradient with
// both factors would leave two rows of G' at rounding level too).
TEST(Soap, TheFirstStepIsSignDescentInTheGradientsBases) {
  for (const auto& [m, n, max_dim] : {std::tuple{5, 5, 10000}, std::tuple{6, 4, 5}}) {
    const Quadratic q(m, n, 5);
    nn::Soap soap({.schedule = {.lr = 0.1}, .max_precondition_dim = max_dim}, q.layout);
    const bool left = m <= max_dim;
    EXPECT_EQ(soap.has_left(0), left);
    EXPECT_TRUE(soap.has_right(0));
    EXPECT_FALSE(soap.has_left(1) || soap.has_right(1));  // the bias
    const Eigen::MatrixXd off = 1e-6 * q.W_star;          // Gaussian: of full rank
    const Eigen::VectorXd start =
        q.pack(q.W_star + off, q.b_star + Eigen::VectorXd::LinSpaced(n, 1e-6, -1e-6));
    Eigen::VectorXd theta = start, grad;
    q.evaluate(theta, grad);
    soap.step(theta, grad);
    const Eigen::VectorXd moved = theta - start;
    const Eigen::MatrixXd G = grad.head(m * n).reshaped(m, n);
    // Its bases, checked to be eigenvectors of G G^T and G^T G (to their rounding), then used
    // for the expected step, so that the step's check does not compare two eigensolvers'
    // rounding (eps * |G|^2 / gap, large where singular values are close).
    const nn::Soap::Factors& f = soap.state().factors[0];
    const auto eigenvectors_of = [](const Eigen::MatrixXd& q, const Eigen::MatrixXd& x) {
      const Eigen::MatrixXd d = q.transpose() * x * q;
      return off_diagonal(d) < 1e-12 &&
             (q.transpose() * q - Eigen::MatrixXd::Identity(q.rows(), q.cols())).norm() < 1e-13;
    };
    EXPECT_TRUE(eigenvectors_of(f.QR, G.transpose() * G));
    if (left) {
      EXPECT_TRUE(eigenvectors_of(f.QL, G * G.transpose()));
    }
    const Eigen::MatrixXd QL = left ? f.QL : Eigen::MatrixXd::Identity(m, m);
    const Eigen::MatrixXd QR = f.QR;
    const Eigen::ArrayXXd r = (QL.transpose() * G * QR).array();
    const Eigen::MatrixXd expected_w = -0.1 * QL * (r / (r.abs() + 1e-8)).matrix() * QR.transpose();
    const Eigen::ArrayXd gb = grad.tail(n).array();
    const Eigen::VectorXd expected_b = -0.1 * (gb / (gb.abs() + 1e-8)).matrix();
    const std::string msg = std::to_string(m) + " x " + std::to_string(n) +
                            ", max_precondition_dim " + std::to_string(max_dim);
    // G''s rounding-level entries (~1e-19) over eps (1e-8) differ by about 1e-11 between two
    // evaluations of the same product, summed through the rotation back: 1e-10 bounds it.
    EXPECT_LT((moved.head(m * n).reshaped(m, n) - expected_w).cwiseAbs().maxCoeff(), 1e-10) << msg;
    EXPECT_LT((moved.tail(n) - expected_b).cwiseAbs().maxCoeff(), 1e-12) << msg;
    EXPECT_EQ(soap.state().factors[0].L.size(), left ? m * m : 0) << msg;
  }
}

// The `soap` kind through the registry: stopped mid-run (between refreshes of the bases, with
// precondition_frequency 4) and restored from its named state, it ends bit for bit where an
// uninterrupted run does; states that do not fit are refused.
TEST(Soap, ResumesFromItsStateBitForBit) {
  const Quadratic q(6, 4, 7, 1e2, 30);
  const Stage stage{
      .optimizer = "soap",
      .steps = 30,
      .options = nn::SoapOptions{
          .schedule = {.lr = 3e-2}, .weight_decay = 1e-3, .precondition_frequency = 4}};
  const Evaluate evaluate = q.evaluator();
  const Eigen::VectorXd theta0 = Eigen::VectorXd::Zero(q.layout.size());
  Eigen::VectorXd full = theta0;
  const std::unique_ptr<Optimizer> a = make_optimizer(stage, q.layout);
  OptimizerState saved;
  Eigen::VectorXd at_save;
  for (int k = 0; k < 30; ++k) {
    if (k == 13) {
      saved = a->state();
      at_save = full;
    }
    ASSERT_EQ(a->step(evaluate, full).kind, Optimizer::Step::Kind::stepped);
  }
  EXPECT_EQ(saved.kind, "soap");
  EXPECT_EQ(saved.get<std::int64_t>("t"), 13);
  EXPECT_EQ(saved.get<MatrixD>("L0").rows(), 6);  // W: both factors; b (1 x 4): none
  EXPECT_EQ(saved.get<MatrixD>("QR0").rows(), 4);
  EXPECT_EQ(saved.values.count("L1"), 0u);
  EXPECT_EQ(a->state_vectors(), 2 + 4);  // 2 x (36 + 16) factor entries on 28 parameters

  const std::unique_ptr<Optimizer> b = make_optimizer(stage, q.layout);
  b->restore(saved);
  Eigen::VectorXd resumed = at_save;
  for (int k = 13; k < 30; ++k) b->step(evaluate, resumed);
  EXPECT_TRUE(resumed == full) << (resumed - full).norm();
  // Without the state it is another run.
  const std::unique_ptr<Optimizer> c = make_optimizer(stage, q.layout);
  Eigen::VectorXd fresh = at_save;
  for (int k = 13; k < 30; ++k) c->step(evaluate, fresh);
  EXPECT_FALSE(fresh == full);

  expect_user_error([&] { b->restore({.kind = "adam", .values = {}}); },
                    "soap: cannot restore the state of a 'adam' optimizer");
  OptimizerState missing = saved;
  missing.values.erase("QL0");
  expect_user_error([&] { b->restore(missing); }, "optimizer state 'soap': no value 'QL0'");
  const Quadratic other(5, 4, 7);
  expect_user_error([&] { make_optimizer(stage, other.layout)->restore(saved); },
                    "soap: the saved state does not fit the parameters (moments of 28 entries "
                    "for 24 parameters)");
  OptimizerState wrong = saved;
  wrong.values["QR0"] = MatrixD(MatrixD::Zero(3, 3));
  expect_user_error([&] { b->restore(wrong); },
                    "soap: the saved state does not fit the parameters (the preconditioner of "
                    "'W')");
}

TEST(Soap, OptionsAndConfigKeys) {
  expect_user_error([] { nn::Soap({.beta2 = 1.0}, {}); },
                    "soap: beta1 and beta2 must be in [0, 1)");
  expect_user_error([] { nn::Soap({.precondition_frequency = 0}, {}); },
                    "soap: precondition_frequency must be at least 1");
  expect_user_error([] { nn::Soap({.schedule = {.lr = -1}}, {}); },
                    "schedule: lr must be positive");
  std::vector<std::string> names;
  for (const auto& k : stage_keys("soap")) names.push_back(k->name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "name", "optimizer", "steps", "learning_rate", "schedule", "decay_rate",
                       "decay_steps", "min_learning_rate", "warmup_steps", "weight_decay",
                       "precondition_frequency", "max_precondition_dim", "precision", "time_share",
                       "resample_every", "average", "average_last", "hand_on"}));
  const Stage s = stage_from_values({{"optimizer", std::string("soap")},
                                     {"steps", 100LL},
                                     {"learning_rate", 3e-3},
                                     {"schedule", std::string("cosine")},
                                     {"weight_decay", 0.01},
                                     {"precondition_frequency", 5LL}});
  EXPECT_EQ(s.name, "soap");
  const nn::SoapOptions o = s.options_as<nn::SoapOptions>();
  EXPECT_EQ(o.schedule.lr, 3e-3);
  EXPECT_EQ(o.schedule.kind, nn::Schedule::Kind::cosine);
  EXPECT_EQ(o.schedule.total_steps, 100);  // cosine runs over the stage
  EXPECT_EQ(o.weight_decay, 0.01);
  EXPECT_EQ(o.precondition_frequency, 5);
  EXPECT_EQ(o.max_precondition_dim, 10000);
  EXPECT_EQ(o.beta1, 0.95);
  EXPECT_FALSE(s.line_search());
}

compiler::CompileOptions compile_options() {
  compiler::CompileOptions o;
  o.cpu.cache_dir = ::testing::TempDir() + "jetpde-test-cache";
  o.pipeline.precision = compiler::PrecisionPolicy::fp64;
  return o;
}

MatrixD grid(int n, double a, double b) {
  MatrixD x(n, 1);
  for (int i = 0; i < n; ++i) x(i, 0) = a + (b - a) * i / (n - 1);
  return x;
}

// -u'' = pi^2 sin(pi x) on (0, 1), u(0) = u(1) = 0 (u = sin(pi x)), trainer_test's problem, with
// a SOAP stage alone: a 1 x 16, 16 x 16 and 16 x 1 network, so one matrix with both factors, two
// with one (their other side is 1) and the biases plain Adam.
TEST(Soap, TrainsPoisson1d) {
  constexpr double kPi = std::numbers::pi;
  Graph g{DType::f64};
  nn::Network net(g, {.inputs = 1, .hidden = {16, 16}, .outputs = 1});
  const Var x = g.input("x", {32, 1}), xb = g.input("xb", {2, 1}), xv = g.input("xv", {101, 1});
  Taylor taylor(TaylorPlan({{x, 0}}, {{2}}));
  const Var residual = taylor.derivative(net(x), {2}) + (kPi * kPi) * sin(x * kPi);
  Objective obj({{"pde", residual}, {"bc", net(xb)}}, net.params(), compile_options());
  MatrixD b(2, 1);
  b << 0.0, 1.0;
  obj.set_inputs({{"x", grid(34, 0, 1).middleRows(1, 32)}, {"xb", b}});
  const std::vector<Var> val_out{net(xv)};
  compiler::Executable val(val_out, compile_options());
  val.set("xv", grid(101, 0, 1));
  const MatrixD exact = (grid(101, 0, 1) * kPi).sin();
  const nn::Schedule schedule{
      .kind = nn::Schedule::Kind::cosine, .lr = 1e-2, .total_steps = 600, .min_lr = 1e-4};
  const auto train = [&](const Stage& stage) {
    Trainer trainer(obj, {stage}, {.initial = {1.0, 10.0}});
    trainer.validate_every(600, [&](const Eigen::VectorXd& theta) {
      for (const auto& [name, value] : obj.layout().unflatten(theta)) val.set(name, value);
      val.run();
      return error_metrics(val.output(0), exact);
    });
    Eigen::VectorXd theta = obj.layout().flatten(net.init(1));
    return trainer.train(theta);
  };
  const TrainResult r = train({.name = "soap",
                               .optimizer = "soap",
                               .steps = 600,
                               .options = nn::SoapOptions{.schedule = schedule}});
  // Adam at the same rate and schedule, for the record (its betas Adam's own).
  const TrainResult adam =
      train({.name = "adam", .steps = 600, .options = nn::AdamOptions{.schedule = schedule}});
  EXPECT_EQ(r.status, TrainResult::Status::finished) << r.message;
  EXPECT_EQ(r.message.rfind("soap: 600 steps, loss ", 0), 0u) << r.message;
  std::cout << "  poisson1d: " << r.message << "; rel_l2 " << r.metrics.at("rel_l2")
            << " (Adam: " << adam.message << "; rel_l2 " << adam.metrics.at("rel_l2") << ")\n";
  EXPECT_LT(r.metrics.at("rel_l2"), 1e-4) << r.message;
}

}  // namespace
}  // namespace jetpde::solvers
