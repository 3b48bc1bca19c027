// The standard library: every equation parses, plans, lowers and evaluates on a small network
// with the right number of residuals; a few against the quad-precision reference; parameters,
// trainable parameters, definitions and the library's user errors.
#include <gtest/gtest.h>

#include <quadmath.h>

#include <cmath>

#include "autodiff/interpreter.h"
#include "equations/analysis.h"
#include "equations/library.h"
#include "equations/lower.h"
#include "tests/equations/network.h"
#include "tests/support/user_error.h"

namespace jetpde::equations {
namespace {

using jetpde::testing::expect_user_error;
using testing::Network;
using testing::Quad;

constexpr double kTol = 1e-12;

// A Pde lowered on a random network with one input per coordinate and one output per field.
struct Lowered {
  explicit Lowered(const Pde& pde, int points = 5, std::uint64_t seed = 3)
      : net(static_cast<int>(pde.context.coordinate_names().size()),
            static_cast<int>(pde.context.field_names().size()), points, seed),
        taylor(plan_for(pde.equations, pde.context, net.x())) {
    residuals =
        lower(pde.equations, pde.context, {.coordinates = net.x(), .outputs = net.out()}, taylor);
    Bindings b = net.bindings();
    for (auto& [name, value] : initial_params(pde.context)) b[name] = value;
    values = evaluate(residuals, b, Precision::f64);
  }
  Network net;
  Taylor taylor;
  std::vector<Var> residuals;
  std::vector<MatrixD> values;
};

TEST(Library, Names) {
  EXPECT_EQ(library_names(), (std::vector<std::string>{
                                 "advection", "allen_cahn", "biharmonic", "burgers", "heat",
                                 "helmholtz", "kdv", "kuramoto_sivashinsky", "linear_elasticity",
                                 "navier_stokes", "poisson", "schrodinger", "wave"}));
}

struct Expected {
  const char* name;
  std::map<std::string, std::string> values;
  std::size_t residuals;
  std::size_t fields;
  std::size_t coordinates;
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.name; }

class EveryEquation : public ::testing::TestWithParam<Expected> {};

TEST_P(EveryEquation, LowersAndEvaluates) {
  const Expected e = GetParam();
  const Pde pde = library_equation(e.name, e.values);
  EXPECT_EQ(pde.name, e.name);
  ASSERT_EQ(pde.equations.size(), e.residuals);
  EXPECT_EQ(pde.context.field_names().size(), e.fields);
  EXPECT_EQ(pde.context.coordinate_names().size(), e.coordinates);
  const Lowered l(pde);
  for (std::size_t k = 0; k < e.residuals; ++k) {
    EXPECT_FALSE(pde.equations[k].name.empty());
    EXPECT_EQ(l.residuals[k].shape(), (Shape{5, 1})) << pde.equations[k].text;
    EXPECT_TRUE(l.values[k].allFinite()) << pde.equations[k].text;
    EXPECT_GT(l.values[k].abs().maxCoeff(), 0.0) << pde.equations[k].text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Library, EveryEquation,
    ::testing::Values(Expected{"poisson", {}, 1, 1, 2},
                      Expected{"poisson", {{"dim", "3"}}, 1, 1, 3},
                      Expected{"helmholtz", {}, 1, 1, 2}, Expected{"heat", {}, 1, 1, 2},
                      Expected{"heat", {{"dim", "2"}}, 1, 1, 3}, Expected{"wave", {}, 1, 1, 2},
                      Expected{"advection", {}, 1, 1, 2}, Expected{"burgers", {}, 1, 1, 2},
                      Expected{"allen_cahn", {}, 1, 1, 2}, Expected{"kdv", {}, 1, 1, 2},
                      Expected{"kuramoto_sivashinsky", {}, 1, 1, 2},
                      Expected{"schrodinger", {}, 2, 2, 2}, Expected{"navier_stokes", {}, 3, 3, 3},
                      Expected{"navier_stokes", {{"steady", "1"}}, 3, 3, 2},
                      Expected{"navier_stokes", {{"dim", "3"}}, 4, 4, 4},
                      Expected{"navier_stokes", {{"dim", "3"}, {"steady", "1"}}, 4, 4, 3},
                      Expected{"navier_stokes", {{"Re", "100"}}, 3, 3, 3},
                      Expected{"biharmonic", {}, 1, 1, 2},
                      Expected{"linear_elasticity", {}, 2, 2, 2}),
    [](const auto& info) { return std::string(info.param.name) + std::to_string(info.index); });

TEST(Library, EquationsAreReadableText) {
  const Pde burgers = library_equation("burgers");
  EXPECT_EQ(burgers.equations[0].text, "u_t + u*u_x = nu*u_xx");
  EXPECT_EQ(burgers.context.find("nu")->value, 0.01 / M_PI);
  const Pde ns = library_equation("navier_stokes");
  ASSERT_EQ(ns.equations.size(), 3u);
  EXPECT_EQ(ns.equations[0].name, "momentum_x");
  EXPECT_EQ(ns.equations[0].text, "u_t + u*u_x + v*u_y + p_x - nu*laplacian(u)");
  EXPECT_EQ(ns.equations[2].text, "u_x + v_y");
  const Pde ns3 = library_equation("navier_stokes", {{"dim", "3"}, {"steady", "1"}});
  EXPECT_EQ(ns3.equations[2].text, "u*w_x + v*w_y + w*w_z + p_z - nu*laplacian(w)");
  EXPECT_EQ(library_info("burgers").parameters.at(0).default_value, "0.01/pi");
}

TEST(Library, BurgersAndAllenCahnAgainstQuadReference) {
  const Lowered burgers(library_equation("burgers", {{"nu", "0.05"}}));
  const Network& n = burgers.net;
  EXPECT_LE(testing::relative_error(burgers.values[0], 5,
                                    [&](auto p) {
                                      return n.d(p, 0, {0, 1}) +
                                             n.d(p, 0, {0, 0}) * n.d(p, 0, {1, 0}) -
                                             Quad(0.05) * n.d(p, 0, {2, 0});
                                    }),
            kTol);
  const Lowered ac(library_equation("allen_cahn"));
  const Network& m = ac.net;
  EXPECT_LE(
      testing::relative_error(
          ac.values[0], 5,
          [&](auto p) {
            const Quad u = m.d(p, 0, {0, 0});
            return m.d(p, 0, {0, 1}) - Quad(0.0001) * m.d(p, 0, {2, 0}) + 5 * u * u * u - 5 * u;
          }),
      kTol);
}

TEST(Library, NavierStokesMomentumAgainstQuadReference) {
  const Lowered ns(library_equation("navier_stokes", {{"Re", "50"}}));
  const Network& n = ns.net;
  auto d = [&](auto p, int field, MultiIndex a) { return n.d(p, field, a); };
  EXPECT_LE(testing::relative_error(ns.values[1], 5,
                                    [&](auto p) {  // v_t + u v_x + v v_y + p_y - nu Δv
                                      return d(p, 1, {0, 0, 1}) +
                                             d(p, 0, {0, 0, 0}) * d(p, 1, {1, 0, 0}) +
                                             d(p, 1, {0, 0, 0}) * d(p, 1, {0, 1, 0}) +
                                             d(p, 2, {0, 1, 0}) -
                                             (d(p, 1, {2, 0, 0}) + d(p, 1, {0, 2, 0})) / 50;
                                    }),
            kTol);
  EXPECT_LE(testing::relative_error(ns.values[2], 5,
                                    [&](auto p) {
                                      return d(p, 0, {1, 0, 0}) + d(p, 1, {0, 1, 0});
                                    }),
            kTol);
}

TEST(Library, PoissonWithAnExpressionSource) {
  const Pde pde = library_equation("poisson", {{"f", "sin(pi*x)*sin(pi*y)"}});
  EXPECT_EQ(pde.context.find("f")->kind, SymbolKind::definition);
  EXPECT_EQ(pde.equations[0].str(), "-laplacian(u) - sin(pi*x)*sin(pi*y)");
  const Lowered l(pde);
  const Network& n = l.net;
  EXPECT_LE(testing::relative_error(l.values[0], 5,
                                    [&](auto p) {
                                      return -(n.d(p, 0, {2, 0}) + n.d(p, 0, {0, 2})) -
                                             sinq(M_PIq * n.coordinate(p, 0)) *
                                                 sinq(M_PIq * n.coordinate(p, 1));
                                    }),
            kTol);
}

// 32-D Poisson: 34 streams, and the collapsed Laplacian against 32 reference second derivatives.
TEST(Library, Poisson32dAgainstQuadReference) {
  const Lowered l(library_equation("poisson", {{"dim", "32"}}), 2, 32);
  EXPECT_EQ(l.taylor.plan().stream_count(), 34);
  EXPECT_LE(testing::relative_error(l.values[0], 2,
                                    [&](auto p) {
                                      Quad lap = 0;
                                      for (int i = 0; i < 32; ++i) {
                                        MultiIndex a(32, 0);
                                        a[static_cast<std::size_t>(i)] = 2;
                                        lap += l.net.d(p, 0, a);
                                      }
                                      return -lap - 1;
                                    }),
            kTol);
}

TEST(Library, TrainableParameter) {
  const Pde pde = library_equation("burgers", {{"nu", "0.02"}}, {"nu"});
  EXPECT_EQ(pde.context.find("nu")->kind, SymbolKind::param);
  Lowered l(pde);
  EXPECT_EQ(l.net.graph().leaf("pde_nu").op(), Op::Param);
  EXPECT_EQ(initial_params(pde.context).at("pde_nu")(0, 0), 0.02);
  const Lowered fixed(library_equation("burgers", {{"nu", "0.02"}}));
  EXPECT_LE((l.values[0] - fixed.values[0]).abs().maxCoeff(),
            1e-14 * fixed.values[0].abs().maxCoeff());
}

TEST(LibraryErrors, UnknownNamesAndBadValues) {
  expect_user_error([] { library_equation("stokes"); },
                    "unknown equation 'stokes' (equations: advection, allen_cahn, biharmonic, "
                    "burgers, heat, helmholtz, kdv, kuramoto_sivashinsky, linear_elasticity, "
                    "navier_stokes, poisson, schrodinger, wave)");
  expect_user_error([] { library_info("stokes"); },
                    "unknown equation 'stokes' (equations: advection, allen_cahn, biharmonic, "
                    "burgers, heat, helmholtz, kdv, kuramoto_sivashinsky, linear_elasticity, "
                    "navier_stokes, poisson, schrodinger, wave)");
  expect_user_error(
      [] {
        library_equation("burgers", {{"mu", "1"}});
      },
      "unknown parameter 'mu' for equation 'burgers' (parameters: nu)");
  expect_user_error(
      [] {
        library_equation("navier_stokes", {{"viscosity", "1"}});
      },
      "unknown parameter 'viscosity' for equation 'navier_stokes' (parameters: dim, "
      "steady, nu, Re)");
  expect_user_error(
      [] {
        library_equation("poisson", {{"dim", "0"}});
      },
      "equation 'poisson': parameter 'dim' must be an integer from 1 to 256, got '0'");
  expect_user_error(
      [] {
        library_equation("navier_stokes", {{"dim", "2.5"}});
      },
      "equation 'navier_stokes': parameter 'dim' must be an integer from 2 to 3, "
      "got '2.5'");
  expect_user_error(
      [] {
        library_equation("navier_stokes", {{"nu", "0.1"}, {"Re", "10"}});
      },
      "equation 'navier_stokes': give the viscosity nu or the Reynolds number Re, "
      "not both");
  expect_user_error(
      [] {
        library_equation("poisson", {{"f", "sin(x)"}}, {"f"});
      },
      "equation 'poisson': the trainable parameter 'f' needs a constant initial "
      "value, got 'sin(x)'");
  expect_user_error([] { library_equation("poisson", {}, {"dim"}); },
                    "equation 'poisson' has no parameter 'dim' that can be trainable "
                    "(parameters: dim, f)");
  expect_user_error(
      [] {
        library_equation("burgers", {{"nu", "0.01/"}});
      },
      "in the definition of 'nu' = '0.01/': column 6: expected an expression, found "
      "the end\n"
      "  0.01/\n"
      "       ^");
  expect_user_error(
      [] {
        library_equation("poisson", {{"f", "sin(pi*z)"}});
      },
      "in the definition of 'f' = 'sin(pi*z)': column 8: unknown name 'z' (fields: "
      "u; coordinates: x, y)\n"
      "  sin(pi*z)\n"
      "         ^");
}

}  // namespace
}  // namespace jetpde::equations
