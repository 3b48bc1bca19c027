#include "bench/workloads.h"

#include <functional>
#include <numbers>
#include <random>

#include "autodiff/errors.h"
#include "autodiff/grad.h"
#include "autodiff/ops.h"
#include "autodiff/taylor.h"

namespace jetpde::bench {

namespace {

const std::vector<int> kHidden64{64, 64, 64, 64};

// The losses as WORKLOADS.md writes them.
constexpr const char* kBurgersLoss = "mean(r^2), r = u_t + u u_x - (0.01/pi) u_xx";
constexpr const char* kNs2dLoss =
    "sum of mean squares of: u_x + v_y; u u_x + v u_y + p_x - 0.01 (u_xx + u_yy); "
    "u v_x + v v_y + p_y - 0.01 (v_xx + v_yy)";
constexpr const char* kKs4Loss = "mean(r^2), r = u_t + u u_x + u_xx + u_xxxx";
constexpr const char* kPoissonLoss = "mean(r^2), r = laplacian(u) + 1 over all 32 inputs";

std::vector<WorkloadSpec> make_specs() {
  std::vector<WorkloadSpec> specs{{"burgers", {"x", "t"}, kHidden64, 1, 8192, kBurgersLoss},
                                  {"ns2d", {"x", "y"}, kHidden64, 3, 8192, kNs2dLoss},
                                  {"ks4", {"x", "t"}, kHidden64, 1, 8192, kKs4Loss}};
  for (int k = 1; k <= 6; ++k) {
    const std::string order = std::to_string(k);
    std::string loss = "mean((d^";
    loss.append(order).append("u/dx^").append(order).append(")^2)");
    specs.push_back({"order" + order, {"x"}, kHidden64, 1, 8192, loss});
  }
  std::vector<std::string> coords;
  for (int i = 1; i <= 32; ++i) coords.push_back("x" + std::to_string(i));
  specs.push_back({"poisson32d", coords, {128, 128, 128, 128}, 1, 1024, kPoissonLoss});
  return specs;
}

// What a workload's residual needs from the Taylor plan, and its loss built from the derivatives.
struct Residual {
  std::vector<MultiIndex> partials;
  std::vector<DerivativeSum> sums;
  // (derivatives, network output) -> the residuals; the loss is the sum of their mean squares
  std::function<std::vector<Var>(Taylor&, Var)> residuals;
};

// Burgers in (x, t): r = u_t + u u_x - (0.01/π) u_xx.
Residual burgers() {
  return {{{1, 0}, {0, 1}, {2, 0}}, {}, [](Taylor& d, Var u) {
            const Var u_x = d.derivative(u, {1, 0});
            const Var u_t = d.derivative(u, {0, 1});
            const Var u_xx = d.derivative(u, {2, 0});
            return std::vector<Var>{u_t + u * u_x - (0.01 / std::numbers::pi) * u_xx};
          }};
}

// Steady incompressible Navier–Stokes in (x, y), outputs (u, v, p), ν = 0.01.
Residual ns2d() {
  return {{{1, 0}, {0, 1}, {2, 0}, {0, 2}}, {}, [](Taylor& d, Var out) {
            // Field f's derivative α: the derivative of the whole output, then its column.
            const auto field_derivative = [&](int f, const MultiIndex& alpha) {
              return col(d.derivative(out, alpha), f);
            };
            const Var u = col(out, 0), v = col(out, 1);
            const Var u_x = field_derivative(0, {1, 0}), u_y = field_derivative(0, {0, 1});
            const Var v_x = field_derivative(1, {1, 0}), v_y = field_derivative(1, {0, 1});
            const Var p_x = field_derivative(2, {1, 0}), p_y = field_derivative(2, {0, 1});
            const Var u_xx = field_derivative(0, {2, 0}), u_yy = field_derivative(0, {0, 2});
            const Var v_xx = field_derivative(1, {2, 0}), v_yy = field_derivative(1, {0, 2});
            const double nu = 0.01;
            const Var continuity = u_x + v_y;
            const Var momentum_x = u * u_x + v * u_y + p_x - nu * (u_xx + u_yy);
            const Var momentum_y = u * v_x + v * v_y + p_y - nu * (v_xx + v_yy);
            return std::vector<Var>{continuity, momentum_x, momentum_y};
          }};
}

// Kuramoto–Sivashinsky in (x, t): r = u_t + u u_x + u_xx + u_xxxx.
Residual ks4() {
  return {{{1, 0}, {0, 1}, {2, 0}, {4, 0}}, {}, [](Taylor& d, Var u) {
            const Var u_x = d.derivative(u, {1, 0});
            const Var u_t = d.derivative(u, {0, 1});
            const Var u_xx = d.derivative(u, {2, 0});
            const Var u_xxxx = d.derivative(u, {4, 0});
            return std::vector<Var>{u_t + u * u_x + u_xx + u_xxxx};
          }};
}

// mean((d^k u / dx^k)^2) in one coordinate.
Residual order(int k) {
  return {std::vector<MultiIndex>{MultiIndex{k}}, {}, [k](Taylor& d, Var u) {
            return std::vector<Var>{d.derivative(u, MultiIndex{k})};
          }};
}

// Poisson in 32 dimensions: r = Δu + 1, the Laplacian carried as one collapsed stream.
Residual poisson32d() {
  return {{}, {laplacian_sum(32)}, [](Taylor& d, Var u) {
            return std::vector<Var>{d.sum(u, "laplacian") + 1.0};
          }};
}

Residual residual_of(const WorkloadSpec& spec) {
  if (spec.name == "burgers") return burgers();
  if (spec.name == "ns2d") return ns2d();
  if (spec.name == "ks4") return ks4();
  if (spec.name == "poisson32d") return poisson32d();
  if (spec.name.starts_with("order")) return order(std::stoi(spec.name.substr(5)));
  throw InternalError("bench: no residual for workload '" + spec.name + "'");
}

}  // namespace

const std::vector<WorkloadSpec>& workload_specs() {
  static const std::vector<WorkloadSpec> specs = make_specs();
  return specs;
}

const WorkloadSpec& workload_spec(const std::string& name) {
  std::string known;
  for (const WorkloadSpec& s : workload_specs()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw UserError("unknown workload '" + name + "' (known: " + known + ")");
}

MatrixD uniform_points(int rows, int cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  MatrixD x(rows, cols);
  for (auto& v : x.reshaped()) v = uniform(rng);
  return x;
}

std::vector<Var> Workload::step_outputs() const {
  std::vector<Var> out{loss};
  out.insert(out.end(), grads.begin(), grads.end());
  return out;
}

Workload build_workload(const std::string& name, const BuildOptions& options) {
  const WorkloadSpec& spec = workload_spec(name);
  if (options.points < 0)
    throw UserError("bench: the point count must be positive, got " +
                    std::to_string(options.points));
  Workload w;
  w.spec = spec;
  w.points = options.points > 0 ? options.points : spec.points;
  w.graph = std::make_unique<Graph>(options.dtype);
  w.mlp = std::make_unique<nn::Mlp>(
      *w.graph, nn::MlpSpec{spec.inputs(), spec.hidden, spec.outputs, nn::Activation::tanh, ""});
  w.x = w.graph->input("x", {w.points, spec.inputs()});
  w.u = (*w.mlp)(w.x);

  std::vector<TaylorVar> vars;
  vars.reserve(static_cast<std::size_t>(spec.inputs()));
  for (int i = 0; i < spec.inputs(); ++i) vars.push_back({w.x, i});
  const Residual residual = residual_of(spec);
  TaylorPlan plan(vars, residual.partials, residual.sums);
  w.stream_count = plan.stream_count();
  w.plan = plan.str();
  Taylor taylor(std::move(plan));
  w.residuals = residual.residuals(taylor, w.u);
  for (std::size_t r = 0; r < w.residuals.size(); ++r) {
    const Var mean_square = mean_all(square(w.residuals[r]));
    w.loss = r == 0 ? mean_square : w.loss + mean_square;
  }

  w.params = w.mlp->params();
  w.grads = grad(w.loss, w.params);
  w.bindings = w.mlp->init_glorot_normal(options.param_seed);  // zero biases
  w.bindings["x"] = uniform_points(w.points, spec.inputs(), options.point_seed);
  return w;
}

}  // namespace jetpde::bench
