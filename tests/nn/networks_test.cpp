// Activations, initializers, the parameter layout and the Network's embeddings and bodies,
// evaluated by the reference interpreter against closed forms computed here with Eigen.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/network.h"
#include "nn/parameters.h"
#include "tests/support/user_error.h"

namespace jetpde::nn {
namespace {

using jetpde::testing::expect_user_error;

MatrixD column(std::initializer_list<double> values) {
  MatrixD m(static_cast<Eigen::Index>(values.size()), 1);
  Eigen::Index i = 0;
  for (double v : values) m(i++, 0) = v;
  return m;
}

TEST(Activations, ValuesAndFirstDerivativesAgainstClosedForms) {
  const MatrixD xs = column({-30.0, -2.5, -0.3, 0.0, 0.7, 4.0, 30.0});
  struct Case {
    Activation a;
    double (*f)(double);
    double (*df)(double);
  };
  static double (*s)(double) = +[](double x) { return 1 / (1 + std::exp(-x)); };
  const Case cases[] = {
      {Activation::tanh, [](double x) { return std::tanh(x); },
       [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {Activation::sin, [](double x) { return std::sin(x); }, [](double x) { return std::cos(x); }},
      {Activation::sigmoid, [](double x) { return s(x); },
       [](double x) { return s(x) * (1 - s(x)); }},
      {Activation::silu, [](double x) { return x * s(x); },
       [](double x) { return s(x) + x * s(x) * (1 - s(x)); }},
      {Activation::softplus, [](double x) { return std::log1p(std::exp(x)); },
       [](double x) { return s(x); }},
  };
  for (const Case& c : cases) {
    Graph g(DType::f64);
    const Var x = g.input("x", {xs.rows(), 1});
    const Var y = activate(c.a, x);
    const std::vector<Var> wrt{x};
    const Var dy = grad(sum_all(y), wrt)[0];  // each y_i depends on x_i only: dy_i/dx_i
    const std::vector<Var> outs{y, dy};
    const std::vector<MatrixD> v = evaluate(outs, Bindings{{"x", xs}});
    for (Eigen::Index i = 0; i < xs.rows(); ++i) {
      const double x0 = xs(i, 0);
      EXPECT_NEAR(v[0](i, 0), c.f(x0), 1e-14 * (1 + std::abs(c.f(x0))))
          << activation_name(c.a) << " at " << x0;
      EXPECT_NEAR(v[1](i, 0), c.df(x0), 1e-14) << activation_name(c.a) << "' at " << x0;
    }
  }
  expect_user_error([] { activation_from_name("relu"); },
                    "unknown activation 'relu' (known: tanh, sin, silu, sigmoid, softplus)");
  EXPECT_EQ(activation_from_name("softplus"), Activation::softplus);
}

TEST(Initializers, VarianceBoundsAndSeeds) {
  const struct {
    Init init;
    double variance;
  } cases[] = {{Init::glorot_normal, 2.0 / (200 + 300)},
               {Init::glorot_uniform, 2.0 / (200 + 300)},
               {Init::he_normal, 2.0 / 200},
               {Init::he_uniform, 2.0 / 200}};
  for (const auto& c : cases) {
    std::mt19937_64 rng(7);
    const MatrixD w = init_weight(c.init, 200, 300, rng);
    const double mean = w.mean();
    const double var = (w - mean).square().mean();
    EXPECT_NEAR(mean, 0.0, 4 * std::sqrt(c.variance / w.size())) << init_name(c.init);
    EXPECT_NEAR(var / c.variance, 1.0, 0.02) << init_name(c.init);
    if (c.init == Init::glorot_uniform || c.init == Init::he_uniform) {
      EXPECT_LE(w.abs().maxCoeff(), std::sqrt(3 * c.variance)) << init_name(c.init);
    }
    std::mt19937_64 same(7), other(8);
    EXPECT_TRUE((init_weight(c.init, 200, 300, same) == w).all());
    EXPECT_FALSE((init_weight(c.init, 200, 300, other) == w).all());
  }
  expect_user_error([] { init_from_name("xavier"); },
                    "unknown initializer 'xavier' (known: glorot_normal, glorot_uniform, "
                    "he_normal, he_uniform)");
}

TEST(ParameterLayout, RoundTripsAndNamesWhatIsWrong) {
  Graph g(DType::f64);
  const Network net(g, {.inputs = 2, .hidden = {5, 5}, .outputs = 3});
  const std::vector<Var> params = net.params();
  const ParameterLayout layout(params);
  EXPECT_EQ(layout.size(), 2 * 5 + 5 + 5 * 5 + 5 + 5 * 3 + 3);
  const Bindings b = net.init(3, 0.1);
  const Eigen::VectorXd theta = layout.flatten(b);
  const Bindings back = layout.unflatten(theta);
  for (const auto& [name, value] : b) EXPECT_TRUE((back.at(name) == value).all()) << name;
  Bindings missing = b;
  missing.erase("W1");
  expect_user_error([&] { layout.flatten(missing); }, "parameter 'W1' has no value");
  Bindings wrong = b;
  wrong["b0"] = MatrixD::Zero(1, 4);
  expect_user_error([&] { layout.flatten(wrong); }, "parameter 'b0' should be [1,5], got [1,4]");
}

// The network's output for given points and parameters, by the reference interpreter.
MatrixD run(const Network& net, Graph& g, const MatrixD& x, const Bindings& params) {
  const Var in = g.input("x", {x.rows(), x.cols()});
  Bindings b = params;
  b["x"] = x;
  return evaluate(net(in), b);
}

TEST(Network, APeriodicEmbeddingMakesTheOutputExactlyPeriodic) {
  Graph g(DType::f64);
  NetworkSpec spec{.inputs = 2, .hidden = {16, 16}, .outputs = 2};
  spec.periodic = {{.column = 0, .period = 2.0, .harmonics = 2}};
  spec.normalization = InputNormalization{{-1, 0}, {1, 1}};
  const Network net(g, spec);
  EXPECT_EQ(net.embedded_width(), 4 + 1);
  const Bindings p = net.init(1, 0.1);
  MatrixD x = MatrixD::Random(50, 2), shifted = x;
  shifted.col(0) += 2.0;
  const MatrixD a = run(net, g, x, p), b = run(net, g, shifted, p);
  EXPECT_LT((a - b).abs().maxCoeff(), 1e-12);
  shifted.col(0) -= 0.5;  // not a period: the output changes
  EXPECT_GT((a - run(net, g, shifted, p)).abs().maxCoeff(), 1e-3);
}

// slope_jump: one input more, 4 s (1 - s) with s = (x - seam) / period; the output still takes
// equal values at the seam and one period on, but its slope there may differ, and does at almost
// any parameters.
TEST(Network, ASlopeJumpInputKeepsTheValuesPeriodicButNotTheSlope) {
  Graph g(DType::f64);
  NetworkSpec spec{.inputs = 2, .hidden = {16, 16}, .outputs = 1};
  spec.periodic = {{.column = 0, .period = 2.0, .slope_jump = true, .seam = -1.0}};
  const Network net(g, spec);
  EXPECT_EQ(net.embedded_width(), 2 + 1 + 1);
  const Bindings p = net.init(3, 0.1);
  const double h = 1e-6;
  MatrixD x(4, 2);
  x << -1, 0.3, -1 + h, 0.3, 1 - h, 0.3, 1, 0.3;
  const MatrixD u = run(net, g, x, p);
  EXPECT_LT(std::abs(u(0, 0) - u(3, 0)), 1e-12) << "periodic in value";
  const double lower = (u(1, 0) - u(0, 0)) / h, upper = (u(3, 0) - u(2, 0)) / h;
  EXPECT_GT(std::abs(lower - upper), 1e-3) << lower << " " << upper;
  // Without it the slopes are equal.
  NetworkSpec plain = spec;
  plain.periodic[0].slope_jump = false;
  Graph g2(DType::f64);
  const Network smooth(g2, plain);
  const MatrixD v = run(smooth, g2, x, smooth.init(3, 0.1));
  EXPECT_LT(std::abs((v(1, 0) - v(0, 0)) / h - (v(3, 0) - v(2, 0)) / h), 1e-4);
}

TEST(Network, NormalizationIsTheAffineMapToMinusOneOne) {
  Graph g(DType::f64);
  NetworkSpec plain{.inputs = 2, .hidden = {8}, .outputs = 1};
  NetworkSpec scaled = plain;
  scaled.normalization = InputNormalization{{0, -3}, {4, 5}};
  const Network a(g, plain), b(g, scaled);  // the same parameter names: one set of values
  const Bindings p = a.init(2, 0.2);
  const MatrixD x = MatrixD::Random(20, 2) * 2 + 2;
  MatrixD normalized = x;
  normalized.col(0) = x.col(0) / 2 - 1;        // [0, 4] -> [-1, 1]
  normalized.col(1) = (x.col(1) + 3) / 4 - 1;  // [-3, 5] -> [-1, 1]
  EXPECT_LT((run(b, g, x, p) - run(a, g, normalized, p)).abs().maxCoeff(), 1e-13);
}

TEST(Network, FourierFeaturesAndTheModifiedMlpFollowTheirFormulas) {
  Graph g(DType::f64);
  NetworkSpec spec{.inputs = 1, .hidden = {6, 6, 6}, .outputs = 1};
  spec.architecture = Architecture::modified_mlp;
  spec.fourier = {.features = 3, .sigma = 2.0, .seed = 11};
  const Network net(g, spec);
  EXPECT_EQ(net.embedded_width(), 1 + 2 * 3);
  const Bindings p = net.init(4, 0.1);
  const MatrixD x = MatrixD::Random(9, 1);

  // B as the network drew it.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 2.0);
  Eigen::MatrixXd B(1, 3);
  for (int j = 0; j < 3; ++j) B(0, j) = normal(rng);
  const Eigen::MatrixXd X = x.matrix();
  Eigen::MatrixXd Y(9, 7);
  const Eigen::MatrixXd angle = 2 * std::numbers::pi * X * B;
  Y << X, angle.array().sin().matrix(), angle.array().cos().matrix();
  const auto dense = [&](const Eigen::MatrixXd& h, const std::string& w, const std::string& b) {
    return Eigen::MatrixXd((h * p.at(w).matrix()).rowwise() + p.at(b).matrix().row(0));
  };
  const auto act = [](const Eigen::MatrixXd& z) { return Eigen::MatrixXd(z.array().tanh()); };
  const Eigen::MatrixXd U = act(dense(Y, "U_W", "U_b")), V = act(dense(Y, "V_W", "V_b"));
  Eigen::MatrixXd H = act(dense(Y, "W0", "b0"));
  for (int l = 1; l <= 2; ++l) {
    const Eigen::MatrixXd Z = act(dense(H, "W" + std::to_string(l), "b" + std::to_string(l)));
    H = (1 - Z.array()) * U.array() + Z.array() * V.array();
  }
  const Eigen::MatrixXd want = dense(H, "W3", "b3");
  EXPECT_LT((run(net, g, x, p).matrix() - want).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_EQ(net.params().size(), 4u + 8u);
}

TEST(Network, SpecErrorsNameTheField) {
  Graph g(DType::f64);
  expect_user_error(
      [&] {
        Network(g, {.inputs = 2, .hidden = {8, 16}, .architecture = Architecture::modified_mlp});
      },
      "network: a modified MLP needs equal hidden widths");
  NetworkSpec bad_norm{.inputs = 2, .hidden = {8}};
  bad_norm.normalization = InputNormalization{{0, 1}, {1, 1}};
  expect_user_error([&] { Network(g, bad_norm); },
                    "network: normalization of column 1: upper must exceed lower");
  NetworkSpec bad_periodic{.inputs = 2, .hidden = {8}};
  bad_periodic.periodic = {{.column = 2, .period = 1}};
  expect_user_error([&] { Network(g, bad_periodic); },
                    "network: periodic column 2 is not one of the 2 inputs");
  expect_user_error([] { architecture_from_name("resnet"); },
                    "unknown architecture 'resnet' (known: mlp, modified_mlp, pirate)");
}

}  // namespace
}  // namespace jetpde::nn
