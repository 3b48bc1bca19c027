#include "nn/network.h"

#include <array>
#include <cmath>
#include <numbers>
#include <random>

#include <Eigen/Dense>

#include "autodiff/errors.h"
#include "autodiff/ops.h"

namespace jetpde::nn {

namespace {
constexpr std::array<options::EnumName<Architecture>, 3> kArchitectures{{
    {Architecture::mlp, "mlp", "a plain multilayer perceptron"},
    {Architecture::modified_mlp, "modified_mlp",
     "the modified MLP of Wang, Teng & Perdikaris (two encoders gating every layer)"},
    {Architecture::pirate, "pirate",
     "PirateNet (Wang et al. 2024): Fourier embedding, gates and adaptive residual blocks that "
     "start as the identity"},
}};
}  // namespace

const options::EnumTable<Architecture>& architecture_names() {
  static constexpr options::EnumTable<Architecture> table("architecture", kArchitectures);
  return table;
}

Architecture architecture_from_name(const std::string& name) {
  return architecture_names().from_name(name);
}

std::string architecture_name(Architecture architecture) {
  return architecture_names().name(architecture);
}

const options::Declaration<PeriodicInput>& periodic_input_options() {
  using options::above;
  using options::at_least;
  using options::key;
  using options::required;
  using T = options::Key::Type;
  static const options::Declaration<PeriodicInput> d = [] {
    options::Declaration<PeriodicInput> d;
    d.add(required("coordinate", T::string, "The periodic coordinate."));
    d.add(above(0, required("period", T::number, "Its period.")), &PeriodicInput::period);
    d.add(at_least(1, key("harmonics", T::integer, "1", "Frequencies 1..harmonics.")),
          &PeriodicInput::harmonics);
    d.add(key("slope_jump", T::boolean, "false",
              "Let the slope jump across the domain's ends (periodic in value only): for a hard "
              "initial condition whose value's slope is not periodic."),
          &PeriodicInput::slope_jump);
    return d;
  }();
  return d;
}

const options::Declaration<NetworkSpec>& network_options() {
  using options::above;
  using options::at_least;
  using options::key;
  using T = options::Key::Type;
  using V = const options::Value&;
  static const options::Declaration<NetworkSpec> d = [] {
    options::Declaration<NetworkSpec> d;
    d.add_choice("architecture", &NetworkSpec::architecture, architecture_names(), "mlp",
                 "The network's body.");
    d.add(at_least(1, key("hidden", T::integers, "[64, 64, 64, 64]", "Hidden layer widths.")),
          &NetworkSpec::hidden);
    d.add_choice("activation", &NetworkSpec::activation, activation_names(), "tanh", "Activation.");
    d.add_choice("init", &NetworkSpec::init, init_names(), "glorot_normal",
                 "Weight initializer (seeded by `seed`).");
    d.add(key("normalize", T::boolean, "true",
              "Map the domain's bounding box to [-1, 1] at the input."));
    d.add(
        at_least(0, key("fourier_features", T::integer, "0", "Random Fourier features (0: none).")),
        [](NetworkSpec& s, V v) { s.fourier.features = options::as<int>(v); });
    d.add(above(0, key("fourier_sigma", T::number, "1", "Their frequency scale.")),
          [](NetworkSpec& s, V v) { s.fourier.sigma = options::as<double>(v); });
    d.add(options::group("periodic", T::list, "Exactly periodic inputs (cos/sin embedding).",
                         periodic_input_options().keys()));
    d.add(options::optional(options::group(
        "rwf", T::object,
        "Random weight factorization of every dense layer, W = V diag(exp(s)) (absent: plain "
        "weights).",
        weight_factorization_options().keys())));
    return d;
  }();
  return d;
}

Network::Network(Graph& graph, NetworkSpec spec) : spec_(std::move(spec)) {
  const int in = spec_.inputs;
  if (in <= 0 || spec_.outputs <= 0 || spec_.hidden.empty())
    throw UserError(
        "network: inputs and outputs must be positive and there must be at least one "
        "hidden layer");
  if (const auto& n = spec_.normalization) {
    if (static_cast<int>(n->lower.size()) != in || static_cast<int>(n->upper.size()) != in)
      throw UserError("network: normalization needs " + std::to_string(in) +
                      " lower and upper bounds, one per input column");
    for (int c = 0; c < in; ++c)
      if (!(n->upper[c] > n->lower[c]))
        throw UserError("network: normalization of column " + std::to_string(c) +
                        ": upper must exceed lower");
  }
  int width = in;
  std::vector<bool> periodic(in, false);
  for (const PeriodicInput& p : spec_.periodic) {
    if (p.column < 0 || p.column >= in)
      throw UserError("network: periodic column " + std::to_string(p.column) +
                      " is not one of the " + std::to_string(in) + " inputs");
    if (periodic[p.column])
      throw UserError("network: periodic column " + std::to_string(p.column) + " given twice");
    if (!(p.period > 0) || p.harmonics < 1)
      throw UserError("network: periodic column " + std::to_string(p.column) +
                      " needs a positive period and at least one harmonic");
    periodic[p.column] = true;
    width += 2 * p.harmonics - 1 + (p.slope_jump ? 1 : 0);
  }
  if (spec_.fourier.features < 0 || (spec_.fourier.features > 0 && !(spec_.fourier.sigma > 0)))
    throw UserError("network: fourier features need a non-negative count and a positive sigma");
  const bool pirate = spec_.architecture == Architecture::pirate;
  const bool gated = pirate || spec_.architecture == Architecture::modified_mlp;
  if (gated)
    for (int h : spec_.hidden)
      if (h != spec_.hidden.front())
        throw UserError(std::string("network: a ") + (pirate ? "PirateNet" : "modified MLP") +
                        " needs equal hidden widths");
  const int h = spec_.hidden.front();
  if (pirate) {
    // The residual blocks add their input to their output: the embedding must be as wide as the
    // hidden layers, h / 2 cosines and h / 2 sines.
    if (h <= 0 || h % 2 != 0)
      throw UserError(
          "network: a PirateNet needs an even hidden width (its embedding is the cos and sin of "
          "width / 2 Fourier features), got " +
          std::to_string(h));
    if (spec_.fourier.features != 0 && spec_.fourier.features != h / 2)
      throw UserError("network: a PirateNet of hidden width " + std::to_string(h) + " has " +
                      std::to_string(h / 2) + " Fourier features (fourier_features 0 or " +
                      std::to_string(h / 2) + "), got " + std::to_string(spec_.fourier.features));
    if (!(spec_.fourier.sigma > 0))
      throw UserError("network: a PirateNet's fourier_sigma must be positive");
    spec_.fourier.features = h / 2;
  }
  if (spec_.fourier.features > 0) {
    std::mt19937_64 rng(spec_.fourier.seed);
    std::normal_distribution<double> normal(0.0, spec_.fourier.sigma);
    std::vector<double> b(static_cast<std::size_t>(width) * spec_.fourier.features);
    for (double& v : b) v = normal(rng);
    fourier_matrix_ = graph.constant({width, spec_.fourier.features}, std::move(b));
    width = pirate ? 2 * spec_.fourier.features : width + 2 * spec_.fourier.features;
  }
  embedded_width_ = width;

  const std::string& pre = spec_.prefix;
  if (gated)
    for (const char* gate : {"U", "V"})
      gates_.emplace_back(graph, pre + gate + "_W", pre + gate + "_b", width, h, spec_.rwf);
  if (!pirate) {
    body_.emplace(graph,
                  MlpSpec{width, spec_.hidden, spec_.outputs, spec_.activation, pre, spec_.rwf});
    return;
  }
  for (std::size_t l = 0; l < spec_.hidden.size(); ++l) {
    const std::string block = pre + "B" + std::to_string(l) + "_";
    for (int k = 0; k < 3; ++k)
      blocks_.emplace_back(graph, block + "W" + std::to_string(k), block + "b" + std::to_string(k),
                           h, h, spec_.rwf);
    alphas_.push_back(graph.param(pre + "alpha" + std::to_string(l), {1, 1}));
  }
  output_.emplace(graph, pre + "W_out", pre + "b_out", h, spec_.outputs, spec_.rwf);
}

Var Network::embed(Var x) const {
  const int in = spec_.inputs;
  std::vector<Var> columns;
  for (int c = 0; c < in; ++c) {
    Var xc = col(x, c);
    const PeriodicInput* p = nullptr;
    for (const PeriodicInput& q : spec_.periodic)
      if (q.column == c) p = &q;
    if (p) {
      for (int k = 1; k <= p->harmonics; ++k) {
        const Var angle = xc * (2.0 * std::numbers::pi * k / p->period);
        columns.push_back(cos(angle));
        columns.push_back(sin(angle));
      }
      if (p->slope_jump) {
        const Var s = (xc - p->seam) * (1.0 / p->period);
        columns.push_back(s * (1.0 - s) * 4.0);
      }
      continue;
    }
    if (const auto& n = spec_.normalization) {
      const double scale = 2.0 / (n->upper[c] - n->lower[c]);
      xc = xc * scale - (n->lower[c] * scale + 1.0);
    }
    columns.push_back(xc);
  }
  Var y = columns.size() == 1 ? columns.front() : concat_cols(columns);
  if (fourier_matrix_) {
    const Var angle = matmul(y, *fourier_matrix_) * (2.0 * std::numbers::pi);
    if (spec_.architecture == Architecture::pirate) return concat_cols({cos(angle), sin(angle)});
    y = concat_cols({y, sin(angle), cos(angle)});
  }
  return y;
}

Var Network::features(Var x) const {
  if (x.shape().cols != spec_.inputs)
    throw UserError("network: expects " + std::to_string(spec_.inputs) + " input columns, got " +
                    x.graph->describe(x.id));
  const Var y = embed(x);
  const Activation a = spec_.activation;
  if (spec_.architecture == Architecture::mlp) {
    const std::vector<Dense>& layers = body_->layers();
    Var h = y;
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) h = activate(a, layers[l](h));
    return h;
  }
  const Var u = activate(a, gates_[0](y));
  const Var v = activate(a, gates_[1](y));
  if (spec_.architecture == Architecture::modified_mlp) {
    const std::vector<Dense>& layers = body_->layers();
    Var h = activate(a, layers[0](y));
    for (std::size_t l = 1; l + 1 < layers.size(); ++l) {
      const Var z = activate(a, layers[l](h));
      h = u + z * (v - u);  // (1 - z) u + z v
    }
    return h;
  }
  Var x_l = y;
  for (std::size_t l = 0; l < alphas_.size(); ++l) {
    const Var f = activate(a, blocks_[3 * l](x_l));
    const Var z1 = v + f * (u - v);  // f u + (1 - f) v
    const Var g = activate(a, blocks_[3 * l + 1](z1));
    const Var z2 = v + g * (u - v);
    const Var h = activate(a, blocks_[3 * l + 2](z2));
    const Var alpha = broadcast(alphas_[l], h.shape());
    x_l = x_l + alpha * (h - x_l);  // alpha h + (1 - alpha) x_l
  }
  return x_l;
}

const Dense& Network::output_layer() const { return output_ ? *output_ : body_->layers().back(); }

Var Network::operator()(Var x) const { return output_layer()(features(x)); }

std::vector<Var> Network::params() const {
  std::vector<Var> out;
  for (const Dense& g : gates_)
    for (const Var& p : g.params()) out.push_back(p);
  if (body_)
    for (const Var& p : body_->params()) out.push_back(p);
  for (std::size_t l = 0; l < alphas_.size(); ++l) {
    for (int k = 0; k < 3; ++k)
      for (const Var& p : blocks_[3 * l + k].params()) out.push_back(p);
    out.push_back(alphas_[l]);
  }
  if (output_)
    for (const Var& p : output_->params()) out.push_back(p);
  return out;
}

Bindings Network::init(std::uint64_t seed, double bias_std) const {
  Bindings out;
  if (body_) {
    out = body_->init(spec_.init, seed, bias_std);
  } else {
    InitStreams streams(seed);
    for (const Dense& layer : blocks_) layer.init(out, spec_.init, streams, bias_std);
    output_->init(out, spec_.init, streams, bias_std);
    for (const Var& alpha : alphas_) out[alpha.node().attrs.name] = MatrixD::Zero(1, 1);
  }
  InitStreams gates(seed ^ 0x9e3779b97f4a7c15ULL);  // the gates' own stream
  for (const Dense& g : gates_) g.init(out, spec_.init, gates, bias_std);
  return out;
}

Bindings fit_output_layer(const NetworkSpec& spec, Bindings params,
                          const std::vector<OutputData>& data) {
  Graph graph(DType::f64);
  const Network net(graph, spec);
  const Dense& last = net.output_layer();
  const std::int64_t width = last.weight().shape().rows;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const OutputData& d = data[i];
    const std::string at = "fit_output_layer: data " + std::to_string(i) + ": ";
    if (d.output < 0 || d.output >= spec.outputs)
      throw UserError(at + "output " + std::to_string(d.output) + " is not one of the " +
                      std::to_string(spec.outputs) + " outputs");
    if (d.points.cols() != spec.inputs || d.values.cols() != 1 ||
        d.values.rows() != d.points.rows() || d.points.rows() == 0)
      throw UserError(at + "points [" + std::to_string(d.points.rows()) + "," +
                      std::to_string(d.points.cols()) + "] and values [" +
                      std::to_string(d.values.rows()) + "," + std::to_string(d.values.cols()) +
                      "] do not fit a network of " + std::to_string(spec.inputs) +
                      " inputs (n points, one value each)");
  }
  // The effective W and b now: the columns of outputs without data stay as they are.
  const std::vector<Var> now{last.weight(), last.bias()};
  const std::vector<MatrixD> wb = evaluate(now, params);
  MatrixD w = wb[0], b = wb[1];
  std::vector<Eigen::MatrixXd> features(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const Var x =
        graph.input("fit_points_" + std::to_string(i), {data[i].points.rows(), spec.inputs});
    Bindings with_points = params;
    with_points[x.node().attrs.name] = data[i].points;
    features[i] = evaluate(net.features(x), with_points).matrix();
  }
  for (int o = 0; o < spec.outputs; ++o) {
    std::int64_t n = 0;
    for (const OutputData& d : data)
      if (d.output == o) n += d.points.rows();
    if (n == 0) continue;
    // [features, 1] c = values, stacked over this output's data.
    Eigen::MatrixXd a(n, width + 1);
    Eigen::VectorXd y(n);
    std::int64_t row = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (data[i].output != o) continue;
      const std::int64_t m = data[i].points.rows();
      a.block(row, 0, m, width) = features[i];
      a.block(row, width, m, 1).setOnes();
      y.segment(row, m) = data[i].values.col(0).matrix();
      row += m;
    }
    // A truncated SVD: the minimum-norm least-squares solution on the singular directions above
    // 1e-4 of the largest (as numpy's lstsq cuts off at machine epsilon times the size in f32,
    // JAX-PI's case). Smooth Fourier features are nearly dependent: without a cutoff the fit
    // takes huge coefficients that cancel only in f64, so that an f32 network starts wild.
    Eigen::BDCSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
    svd.setThreshold(1e-4);
    const Eigen::VectorXd c = svd.solve(y);
    w.col(o) = c.head(width).array();
    b(0, o) = c(width);
  }
  last.assign(params, w, b);
  return params;
}

}  // namespace jetpde::nn
