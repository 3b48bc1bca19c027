// Random weight factorization and PirateNet: their parameter gradients against central finite
// differences, RWF's start as the plain network, PirateNet's start as its last layer on the
// embedding, the least-squares fit of the last layer, and the spec errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "autodiff/grad.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "nn/network.h"
#include "nn/parameters.h"
#include "tests/support/user_error.h"

namespace jetpde::nn {
namespace {

using jetpde::testing::expect_user_error;

MatrixD points(int n, int cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  MatrixD x(n, cols);
  for (auto& v : x.reshaped()) v = u(rng);
  return x;
}

// The gradient of L = sum(c * net(x)) (c fixed random weights, so that every output entry counts
// differently) with respect to every parameter, by reverse mode and by central differences.
void expect_gradients_match(const NetworkSpec& spec, Bindings params) {
  Graph g(DType::f64);
  const Network net(g, spec);
  const int n = 7;
  const Var x = g.input("x", {n, spec.inputs});
  const Var c = g.input("c", {n, spec.outputs});
  const Var loss = sum_all(net(x) * c);
  const std::vector<Var> wrt = net.params();
  const std::vector<Var> grads = grad(loss, wrt);
  params["x"] = points(n, spec.inputs, 5);
  params["c"] = points(n, spec.outputs, 6);
  const std::vector<MatrixD> exact = evaluate(grads, params);
  const double h = 1e-6;
  int checked = 0;
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    const std::string& name = wrt[k].node().attrs.name;
    MatrixD& p = params.at(name);
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      const double saved = p.reshaped()(i);
      p.reshaped()(i) = saved + h;
      const double up = evaluate(loss, params)(0, 0);
      p.reshaped()(i) = saved - h;
      const double down = evaluate(loss, params)(0, 0);
      p.reshaped()(i) = saved;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(exact[k].reshaped()(i), fd, 1e-7 * (1 + std::abs(fd))) << name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, ParameterLayout(wrt).size());
}

TEST(Rwf, GradientsMatchFiniteDifferences) {
  for (Architecture arch : {Architecture::mlp, Architecture::modified_mlp}) {
    NetworkSpec spec{.inputs = 2, .hidden = {5, 5, 5}, .outputs = 2};
    spec.architecture = arch;
    spec.rwf = WeightFactorization{.mean = 0.5, .std = 0.3};
    Graph g(DType::f64);
    const Network net(g, spec);
    SCOPED_TRACE(architecture_name(arch));
    expect_gradients_match(spec, net.init(3, 0.2));
  }
}

// The log-scales start N(mean, std^2), the directions V = W0 / exp(s): the network is at first
// the plain one of the same seed (the same weight and bias draws), and its parameters are V, s, b.
TEST(Rwf, StartsAsThePlainNetworkOfTheSameSeed) {
  for (Architecture arch : {Architecture::mlp, Architecture::modified_mlp}) {
    SCOPED_TRACE(architecture_name(arch));
    NetworkSpec plain{.inputs = 2, .hidden = {64, 64}, .outputs = 3};
    plain.architecture = arch;
    NetworkSpec factorized = plain;
    factorized.rwf = WeightFactorization{};
    Graph g(DType::f64);
    const Network a(g, plain), b(g, factorized);
    const Bindings pa = a.init(9, 0.1), pb = b.init(9, 0.1);
    EXPECT_EQ(pb.count("W0"), 0u);
    ASSERT_EQ(pb.count("W0_v"), 1u);
    ASSERT_EQ(pb.count("W0_s"), 1u);
    EXPECT_TRUE((pb.at("b1") == pa.at("b1")).all()) << "the same bias draws";
    const MatrixD& s = pb.at("W1_s");
    EXPECT_EQ(s.rows(), 1);
    EXPECT_EQ(s.cols(), 64);
    EXPECT_NEAR(s.mean(), 1.0, 4 * 0.1 / 8);  // 64 draws of N(1, 0.1^2)
    EXPECT_NEAR(std::sqrt((s - s.mean()).square().mean()), 0.1, 0.04);
    EXPECT_LT((pb.at("W1_v").rowwise() * s.exp().row(0) - pa.at("W1")).abs().maxCoeff(), 1e-15);
    const Var x = g.input("x", {20, 2});
    Bindings both = pa;
    for (const auto& [k, v] : pb) both[k] = v;
    both["x"] = points(20, 2, 1);
    const std::vector<Var> outs{a(x), b(x)};
    const std::vector<MatrixD> v = evaluate(outs, both);
    EXPECT_LT((v[0] - v[1]).abs().maxCoeff(), 1e-13);
    EXPECT_EQ(ParameterLayout(b.params()).size(),
              ParameterLayout(a.params()).size() +
                  (arch == Architecture::mlp ? 64 + 64 + 3 : 64 * 4 + 3));
  }
}

TEST(Rwf, AZeroStdGivesEveryScaleTheMean) {
  Graph g(DType::f64);
  NetworkSpec spec{.inputs = 1, .hidden = {4}, .outputs = 1};
  spec.rwf = WeightFactorization{.mean = 0.25, .std = 0.0};
  const Bindings p = Network(g, spec).init(1);
  EXPECT_TRUE((p.at("W0_s") == 0.25).all());
  spec.rwf->std = -0.1;
  expect_user_error([&] { Network(g, spec); },
                    "dense layer 'W0': the RWF std must be >= 0, got -0.100000");
}

NetworkSpec pirate_spec() {
  NetworkSpec spec{.inputs = 2, .hidden = {6, 6}, .outputs = 2};
  spec.architecture = Architecture::pirate;
  spec.fourier.sigma = 0.7;
  spec.fourier.seed = 4;
  spec.normalization = InputNormalization{{-1, 0}, {1, 2}};
  return spec;
}

// With the alphas away from 0 (at 0 the blocks do not reach the output), every parameter's
// gradient, through the gates, the blocks and the alphas; with RWF too.
TEST(PirateNet, GradientsMatchFiniteDifferences) {
  for (bool rwf : {false, true}) {
    SCOPED_TRACE(rwf ? "rwf" : "plain");
    NetworkSpec spec = pirate_spec();
    if (rwf) spec.rwf = WeightFactorization{};
    Graph g(DType::f64);
    const Network net(g, spec);
    Bindings p = net.init(2, 0.1);
    p.at("alpha0")(0, 0) = 0.4;
    p.at("alpha1")(0, 0) = -0.3;
    expect_gradients_match(spec, p);
  }
}

// At init (alpha = 0) the blocks pass the embedding through: the output is the last layer on
// Phi = [cos(2 pi y B), sin(2 pi y B)], y the normalized inputs, B [2, 3] ~ N(0, 0.7^2).
TEST(PirateNet, AtInitIsTheLastLayerOnTheEmbedding) {
  const NetworkSpec spec = pirate_spec();
  Graph g(DType::f64);
  const Network net(g, spec);
  EXPECT_EQ(net.embedded_width(), 6);
  const Bindings p = net.init(8, 0.1);
  EXPECT_EQ(p.at("alpha0")(0, 0), 0.0);
  EXPECT_EQ(p.at("alpha1")(0, 0), 0.0);
  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0.0, 0.7);
  Eigen::MatrixXd B(2, 3);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) B(i, j) = normal(rng);  // row-major, as the constant is stored
  MatrixD x = points(15, 2, 3);
  x.col(1) += 1;  // t in [0, 2]
  Eigen::MatrixXd y(15, 2);
  y.col(0) = x.col(0).matrix();
  y.col(1) = (x.col(1) - 1).matrix();  // [0, 2] -> [-1, 1]
  const Eigen::MatrixXd angle = 2 * std::numbers::pi * y * B;
  Eigen::MatrixXd phi(15, 6);
  phi << angle.array().cos().matrix(), angle.array().sin().matrix();
  const Eigen::MatrixXd want =
      (phi * p.at("W_out").matrix()).rowwise() + p.at("b_out").matrix().row(0);
  const Var in = g.input("x", {15, 2});
  Bindings b = p;
  b["x"] = x;
  EXPECT_LT((evaluate(net(in), b).matrix() - want).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LT((evaluate(net.features(in), b).matrix() - phi).cwiseAbs().maxCoeff(), 1e-13);
  // Not so once the alphas move.
  b.at("alpha1")(0, 0) = 0.5;
  EXPECT_GT((evaluate(net(in), b).matrix() - want).cwiseAbs().maxCoeff(), 1e-3);
  // Parameters: gates 2 x (6*6 + 6), blocks 2 x (3 x (6*6 + 6) + 1), last 6*2 + 2.
  EXPECT_EQ(ParameterLayout(net.params()).size(), 2 * 42 + 2 * (3 * 42 + 1) + 14);
}

// The last layer fitted by least squares: with fewer points than features the fit interpolates,
// with more its residual is orthogonal to [features, 1]; an output without data keeps its layer.
TEST(PirateNet, TheLastLayerIsFittedByLeastSquares) {
  for (bool rwf : {false, true}) {
    SCOPED_TRACE(rwf ? "rwf" : "plain");
    NetworkSpec spec = pirate_spec();
    if (rwf) spec.rwf = WeightFactorization{};
    Graph g(DType::f64);
    const Network net(g, spec);
    const Bindings p0 = net.init(1);
    const MatrixD few = points(4, 2, 11), many = points(40, 2, 12);
    const MatrixD few_values = (few.col(0) * 3).sin(), many_values = few_values.replicate(10, 1);
    const Bindings p =
        fit_output_layer(spec, p0, {{.output = 1, .points = few, .values = few_values}});
    const Var xf = g.input("xf", {4, 2});
    Bindings b = p;
    b["xf"] = few;
    const MatrixD fitted = evaluate(net(xf), b);
    EXPECT_LT((fitted.col(1) - few_values.col(0)).abs().maxCoeff(), 1e-10);
    Bindings b0 = p0;
    b0["xf"] = few;
    EXPECT_LT((fitted.col(0) - evaluate(net(xf), b0).col(0)).abs().maxCoeff(), 1e-14)
        << "output 0 has no data";
    if (rwf) {
      EXPECT_TRUE((p.at("W_out_s") == p0.at("W_out_s")).all()) << "the scales are kept";
    }

    const Bindings q =
        fit_output_layer(spec, p0, {{.output = 0, .points = many, .values = many_values}});
    const Var xm = g.input("xm", {40, 2});
    Bindings bm = q;
    bm["xm"] = many;
    const std::vector<Var> outs{net(xm), net.features(xm)};
    const std::vector<MatrixD> v = evaluate(outs, bm);
    Eigen::MatrixXd a(40, 7);
    a << v[1].matrix(), Eigen::VectorXd::Ones(40);
    const Eigen::VectorXd r = (v[0].col(0) - many_values.col(0)).matrix();
    EXPECT_LT((a.transpose() * r).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_GT(r.norm(), 1e-3) << "40 points, 7 unknowns: not an interpolation";
  }
  const NetworkSpec spec = pirate_spec();
  Graph g(DType::f64);
  const Bindings p = Network(g, spec).init(1);
  expect_user_error(
      [&] { fit_output_layer(spec, p, {{.output = 2, .points = points(3, 2, 1), .values = {}}}); },
      "fit_output_layer: data 0: output 2 is not one of the 2 outputs");
  expect_user_error(
      [&] {
        fit_output_layer(spec, p,
                         {{.output = 0, .points = points(3, 1, 1), .values = MatrixD::Zero(3, 1)}});
      },
      "fit_output_layer: data 0: points [3,1] and values [3,1] do not fit a network of 2 inputs "
      "(n points, one value each)");
}

TEST(PirateNet, SpecErrorsNameTheField) {
  Graph g(DType::f64);
  NetworkSpec odd = pirate_spec();
  odd.hidden = {5, 5};
  expect_user_error([&] { Network(g, odd); },
                    "network: a PirateNet needs an even hidden width (its embedding is the cos and "
                    "sin of width / 2 Fourier features), got 5");
  NetworkSpec unequal = pirate_spec();
  unequal.hidden = {6, 8};
  expect_user_error([&] { Network(g, unequal); }, "network: a PirateNet needs equal hidden widths");
  NetworkSpec features = pirate_spec();
  features.fourier.features = 4;
  expect_user_error([&] { Network(g, features); },
                    "network: a PirateNet of hidden width 6 has 3 Fourier features "
                    "(fourier_features 0 or 3), got 4");
  features.fourier.features = 3;  // the one it would choose
  EXPECT_EQ(Network(g, features).embedded_width(), 6);
}

}  // namespace
}  // namespace jetpde::nn
