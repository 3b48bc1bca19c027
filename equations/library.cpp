// The standard library: one entry per equation, each a few residual strings in the language.
#include "equations/library.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "autodiff/errors.h"
#include "equations/detail/diagnostics.h"

namespace jetpde::equations {

namespace {

using detail::join;

// Declares fields, coordinates and parameters, and parses the residuals of one Pde.
class Builder {
 public:
  Builder(const LibraryInfo& info, std::map<std::string, std::string> values,
          std::set<std::string> trainable)
      : info_(info), values_(std::move(values)), trainable_(std::move(trainable)) {
    pde_.name = info.name;
  }

  Context& ctx() { return pde_.context; }
  const std::string& value(const std::string& name) const { return values_.at(name); }
  bool given(const std::string& name) const { return !values_.at(name).empty(); }

  // A structural parameter: an integer in [lo, hi].
  int integer(const std::string& name, int lo, int hi) const {
    const std::string& text = value(name);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || v != std::floor(v) || v < lo || v > hi)
      throw UserError("equation '" + info_.name + "': parameter '" + name +
                      "' must be an integer from " + std::to_string(lo) + " to " +
                      std::to_string(hi) + ", got '" + text + "'");
    return static_cast<int>(v);
  }

  // Space coordinates x, y, z (x1 ... xd above 3), then time t when `time`.
  void coordinates(int dims, bool time) {
    static const char* const xyz[] = {"x", "y", "z"};
    for (int i = 0; i < dims; ++i)
      ctx().coordinate(dims <= 3 ? std::string(xyz[i]) : "x" + std::to_string(i + 1));
    if (time) ctx().time("t");
  }

  // A physical parameter: a constant, a trainable parameter, or a definition.
  void parameter(const std::string& name) {
    const std::string& text = value(name);
    const Expr e = parse_definition(text, ctx(), name);
    double c = 0.0;
    const bool constant = !e->vector && constant_value(e, &c);
    if (trainable_.count(name)) {
      if (!constant)
        throw UserError("equation '" + info_.name + "': the trainable parameter '" + name +
                        "' needs a constant initial value, got '" + text + "'");
      ctx().param(name, c);
    } else if (constant) {
      ctx().constant(name, c);
    } else {
      ctx().define(name, text);
    }
  }

  void residual(const std::string& label, const std::string& text) {
    pde_.equations.push_back(parse(text, ctx(), label));
  }

  Pde finish() { return std::move(pde_); }

 private:
  const LibraryInfo& info_;
  std::map<std::string, std::string> values_;
  std::set<std::string> trainable_;
  Pde pde_;
};

struct Entry {
  LibraryInfo info;
  std::function<void(Builder&)> build;
};

LibraryParameter dim_parameter(const std::string& default_value) {
  return {"dim", default_value, "number of space dimensions", true};
}

std::string space_laplacian_note() { return "laplacian over the space coordinates"; }

void poisson(Builder& b) {
  b.ctx().field("u");
  b.coordinates(b.integer("dim", 1, 256), false);
  b.parameter("f");
  b.residual("poisson", "-laplacian(u) = f");
}

void helmholtz(Builder& b) {
  b.ctx().field("u");
  b.coordinates(b.integer("dim", 1, 256), false);
  b.parameter("k");
  b.parameter("f");
  b.residual("helmholtz", "laplacian(u) + k^2*u = f");
}

void heat(Builder& b) {
  b.ctx().field("u");
  b.coordinates(b.integer("dim", 1, 256), true);
  b.parameter("alpha");
  b.parameter("f");
  b.residual("heat", "u_t = alpha*laplacian(u) + f");
}

void wave(Builder& b) {
  b.ctx().field("u");
  b.coordinates(b.integer("dim", 1, 256), true);
  b.parameter("c");
  b.residual("wave", "u_tt = c^2*laplacian(u)");
}

void advection(Builder& b) {
  b.ctx().field("u");
  b.coordinates(1, true);
  b.parameter("c");
  b.residual("advection", "u_t + c*u_x");
}

void burgers(Builder& b) {
  b.ctx().field("u");
  b.coordinates(1, true);
  b.parameter("nu");
  b.residual("burgers", "u_t + u*u_x = nu*u_xx");
}

void allen_cahn(Builder& b) {
  b.ctx().field("u");
  b.coordinates(1, true);
  b.parameter("eps");
  b.residual("allen_cahn", "u_t - eps*u_xx + 5*u^3 - 5*u");
}

void kdv(Builder& b) {
  b.ctx().field("u");
  b.coordinates(1, true);
  b.parameter("lambda1");
  b.parameter("lambda2");
  b.residual("kdv", "u_t + lambda1*u*u_x + lambda2*u_xxx");
}

void kuramoto_sivashinsky(Builder& b) {
  b.ctx().field("u");
  b.coordinates(1, true);
  for (const char* p : {"alpha", "beta", "gamma"}) b.parameter(p);
  b.residual("kuramoto_sivashinsky", "u_t + alpha*u*u_x + beta*u_xx + gamma*d(u, x, 4)");
}

// i h_t + alpha h_xx + beta |h|^2 h = 0 with h = u + i v, split into its imaginary and real parts.
void schrodinger(Builder& b) {
  b.ctx().fields({"u", "v"});
  b.coordinates(1, true);
  b.parameter("alpha");
  b.parameter("beta");
  b.residual("imaginary_part", "u_t + alpha*v_xx + beta*(u^2 + v^2)*v");
  b.residual("real_part", "v_t - alpha*u_xx - beta*(u^2 + v^2)*u");
}

void navier_stokes(Builder& b) {
  const int dims = b.integer("dim", 2, 3);
  const bool steady = b.integer("steady", 0, 1) == 1;
  const std::vector<std::string> velocity =
      dims == 2 ? std::vector<std::string>{"u", "v"} : std::vector<std::string>{"u", "v", "w"};
  b.ctx().fields(velocity).field("p");
  b.coordinates(dims, !steady);
  if (b.given("nu") && b.given("Re"))
    throw UserError(
        "equation 'navier_stokes': give the viscosity nu or the Reynolds number Re, "
        "not both");
  if (b.given("Re")) {
    b.parameter("Re");
    b.ctx().define("nu", "1/Re");
  } else {
    b.parameter("nu");
  }
  const std::vector<std::string> space = b.ctx().spatial_names();
  std::string continuity;
  for (std::size_t i = 0; i < velocity.size(); ++i) {
    const std::string& c = velocity[i];
    std::string r = steady ? "" : c + "_t + ";
    for (std::size_t j = 0; j < velocity.size(); ++j)
      r += velocity[j] + "*" + c + "_" + space[j] + " + ";
    r += "p_" + space[i] + " - nu*laplacian(" + c + ")";
    b.residual("momentum_" + space[i], r);
    continuity += (i ? " + " : "") + c + "_" + space[i];
  }
  b.residual("continuity", continuity);
}

void biharmonic(Builder& b) {
  b.ctx().field("u");
  b.coordinates(b.integer("dim", 1, 64), false);
  b.parameter("f");
  b.residual("biharmonic", "laplacian(laplacian(u)) = f");
}

// Navier–Cauchy equations of plane strain: (lambda + mu) grad(div(u)) + mu laplacian(u) + f = 0.
void linear_elasticity(Builder& b) {
  b.ctx().fields({"u", "v"});
  b.coordinates(2, false);
  for (const char* p : {"lambda", "mu", "fx", "fy"}) b.parameter(p);
  b.residual("equilibrium_x", "(lambda + 2*mu)*u_xx + mu*u_yy + (lambda + mu)*v_xy + fx");
  b.residual("equilibrium_y", "(lambda + 2*mu)*v_yy + mu*v_xx + (lambda + mu)*u_xy + fy");
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"advection",
        "u_t + c u_x = 0 (1-D, field u, coordinates x t)",
        {{"c", "1", "advection speed"}}},
       advection},
      {{"allen_cahn",
        "u_t - eps u_xx + 5 u^3 - 5 u = 0 (the standard 1-D benchmark, coordinates x t)",
        {{"eps", "0.0001", "diffusion coefficient"}}},
       allen_cahn},
      {{"biharmonic",
        "laplacian(laplacian(u)) = f (plates; the biharmonic is one collapsed stream)",
        {dim_parameter("2"), {"f", "1", "load (an expression in x, y, ...)"}}},
       biharmonic},
      {{"burgers",
        "u_t + u u_x = nu u_xx (1-D viscous Burgers, coordinates x t)",
        {{"nu", "0.01/pi", "viscosity"}}},
       burgers},
      {{"heat",
        "u_t = alpha laplacian(u) + f (" + space_laplacian_note() + ")",
        {dim_parameter("1"), {"alpha", "1", "diffusivity"}, {"f", "0", "source"}}},
       heat},
      {{"helmholtz",
        "laplacian(u) + k^2 u = f",
        {dim_parameter("2"), {"k", "1", "wave number"}, {"f", "0", "source"}}},
       helmholtz},
      {{"kdv",
        "u_t + lambda1 u u_x + lambda2 u_xxx = 0 (Korteweg-de Vries, coordinates x t)",
        {{"lambda1", "1", "nonlinear coefficient"}, {"lambda2", "0.0025", "dispersion"}}},
       kdv},
      {{"kuramoto_sivashinsky",
        "u_t + alpha u u_x + beta u_xx + gamma u_xxxx = 0 (coordinates x t)",
        {{"alpha", "1", "nonlinear coefficient"},
         {"beta", "1", "anti-diffusion"},
         {"gamma", "1", "hyperdiffusion"}}},
       kuramoto_sivashinsky},
      {{"linear_elasticity",
        "(lambda + mu) grad(div(U)) + mu laplacian(U) + f = 0 for the displacement U = (u, v) "
        "in plane strain (coordinates x y)",
        {{"lambda", "1", "first Lame parameter"},
         {"mu", "0.5", "shear modulus (second Lame parameter)"},
         {"fx", "0", "body force, x component"},
         {"fy", "0", "body force, y component"}}},
       linear_elasticity},
      {{"navier_stokes",
        "incompressible Navier-Stokes: U_t + (U.grad)U + grad(p) - nu laplacian(U) = 0, "
        "div(U) = 0; fields u v (w) p",
        {dim_parameter("2"),
         {"steady", "0", "1 for the steady equations (no time coordinate)", true},
         {"nu", "", "kinematic viscosity (0.01 when neither nu nor Re is given)"},
         {"Re", "", "Reynolds number: nu = 1/Re"}}},
       navier_stokes},
      {{"poisson",
        "-laplacian(u) = f",
        {dim_parameter("2"), {"f", "1", "source (an expression in x, y, ...)"}}},
       poisson},
      {{"schrodinger",
        "i h_t + alpha h_xx + beta |h|^2 h = 0 for h = u + i v (nonlinear Schrodinger; "
        "coordinates x t)",
        {{"alpha", "0.5", "dispersion"}, {"beta", "1", "nonlinearity"}}},
       schrodinger},
      {{"wave",
        "u_tt = c^2 laplacian(u) (" + space_laplacian_note() + ")",
        {dim_parameter("1"), {"c", "1", "wave speed"}}},
       wave},
  };
  return table;
}

const Entry& entry(const std::string& name) {
  for (const Entry& e : entries())
    if (e.info.name == name) return e;
  throw UserError("unknown equation '" + name + "' (equations: " + join(library_names()) + ")");
}

}  // namespace

std::vector<std::string> library_names() {
  std::vector<std::string> names;
  for (const Entry& e : entries()) names.push_back(e.info.name);
  std::sort(names.begin(), names.end());
  return names;
}

const LibraryInfo& library_info(const std::string& name) { return entry(name).info; }

Pde library_equation(const std::string& name, const std::map<std::string, std::string>& values,
                     const std::set<std::string>& trainable) {
  const Entry& e = entry(name);
  std::vector<std::string> valid;
  std::map<std::string, std::string> resolved;
  for (const LibraryParameter& p : e.info.parameters) {
    valid.push_back(p.name);
    resolved[p.name] = p.default_value;
  }
  for (const auto& [key, text] : values) {
    if (!resolved.count(key))
      throw UserError("unknown parameter '" + key + "' for equation '" + name +
                      "' (parameters: " + join(valid) + ")");
    resolved[key] = text;
  }
  for (const std::string& key : trainable) {
    const auto it = std::find_if(e.info.parameters.begin(), e.info.parameters.end(),
                                 [&](const LibraryParameter& p) { return p.name == key; });
    if (it == e.info.parameters.end() || it->structural)
      throw UserError("equation '" + name + "' has no parameter '" + key +
                      "' that can be trainable (parameters: " + join(valid) + ")");
  }
  if (name == "navier_stokes" && resolved["nu"].empty() && resolved["Re"].empty())
    resolved["nu"] = "0.01";
  Builder builder(e.info, std::move(resolved), trainable);
  e.build(builder);
  return builder.finish();
}

}  // namespace jetpde::equations
