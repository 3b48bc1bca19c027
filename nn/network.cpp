#include "nn/network.h"

#include <array>
#include <cmath>
#include <numbers>
#include <random>

#include "autodiff/errors.h"
#include "autodiff/ops.h"

namespace jetpde::nn {

namespace {
constexpr std::array<options::EnumName<Architecture>, 2> kArchitectures{{
    {Architecture::mlp, "mlp", "a plain multilayer perceptron"},
    {Architecture::modified_mlp, "modified_mlp",
     "the modified MLP of Wang, Teng & Perdikaris (two encoders gating every layer)"},
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
                 "Plain or modified MLP.");
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
    width += 2 * p.harmonics - 1;
  }
  if (spec_.fourier.features < 0 || (spec_.fourier.features > 0 && !(spec_.fourier.sigma > 0)))
    throw UserError("network: fourier features need a non-negative count and a positive sigma");
  if (spec_.fourier.features > 0) {
    std::mt19937_64 rng(spec_.fourier.seed);
    std::normal_distribution<double> normal(0.0, spec_.fourier.sigma);
    std::vector<double> b(static_cast<std::size_t>(width) * spec_.fourier.features);
    for (double& v : b) v = normal(rng);
    fourier_matrix_ = graph.constant({width, spec_.fourier.features}, std::move(b));
    width += 2 * spec_.fourier.features;
  }
  embedded_width_ = width;

  if (spec_.architecture == Architecture::modified_mlp) {
    for (int h : spec_.hidden)
      if (h != spec_.hidden.front())
        throw UserError("network: a modified MLP needs equal hidden widths");
    const int h = spec_.hidden.front();
    for (const char* gate : {"U", "V"}) {
      gate_weights_.push_back(graph.param(spec_.prefix + gate + "_W", {width, h}));
      gate_weights_.push_back(graph.param(spec_.prefix + gate + "_b", {1, h}));
    }
  }
  body_.emplace(graph, MlpSpec{width, spec_.hidden, spec_.outputs, spec_.activation, spec_.prefix});
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
    y = concat_cols({y, sin(angle), cos(angle)});
  }
  return y;
}

Var Network::operator()(Var x) const {
  if (x.shape().cols != spec_.inputs)
    throw UserError("network: expects " + std::to_string(spec_.inputs) + " input columns, got " +
                    x.graph->describe(x.id));
  const Var y = embed(x);
  if (spec_.architecture == Architecture::mlp) return (*body_)(y);
  const Activation a = spec_.activation;
  const Var u = activate(a, matmul(y, gate_weights_[0]) + gate_weights_[1]);
  const Var v = activate(a, matmul(y, gate_weights_[2]) + gate_weights_[3]);
  const std::vector<Var>& w = body_->weights();
  const std::vector<Var>& b = body_->biases();
  Var h = activate(a, matmul(y, w[0]) + b[0]);
  for (std::size_t l = 1; l + 1 < w.size(); ++l) {
    const Var z = activate(a, matmul(h, w[l]) + b[l]);
    h = u + z * (v - u);  // (1 - z) u + z v
  }
  return matmul(h, w.back()) + b.back();
}

std::vector<Var> Network::params() const {
  std::vector<Var> out = gate_weights_;
  for (const Var& p : body_->params()) out.push_back(p);
  return out;
}

Bindings Network::init(std::uint64_t seed, double bias_std) const {
  Bindings out = body_->init(spec_.init, seed, bias_std);
  if (!gate_weights_.empty()) {
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);  // the gates' own stream
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t g = 0; g < gate_weights_.size(); g += 2) {
      const Shape s = gate_weights_[g].shape();
      out[gate_weights_[g].node().attrs.name] = init_weight(spec_.init, s.rows, s.cols, rng);
      MatrixD bias(1, s.cols);
      for (auto& v : bias.reshaped()) v = bias_std * normal(rng);
      out[gate_weights_[g + 1].node().attrs.name] = std::move(bias);
    }
  }
  return out;
}

}  // namespace jetpde::nn
