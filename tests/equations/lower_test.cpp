// Lowering, checked numerically: equations on a random tanh MLP, evaluated by the reference
// interpreter in f64, against residuals assembled from the quad-precision nested-dual reference
// of the network's derivatives (tests/support/nested_dual.h). Also the lowering's user errors.
#include <gtest/gtest.h>

#include <quadmath.h>

#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "equations/analysis.h"
#include "equations/lower.h"
#include "equations/parser.h"
#include "tests/equations/network.h"
#include "tests/support/user_error.h"

namespace jetpde::equations {
namespace {

using jetpde::testing::expect_user_error;
using testing::Network;
using testing::Quad;

constexpr double kTol = 1e-12;

std::string at(const std::string& text, int column, const std::string& what) {
  return "in '" + text + "': column " + std::to_string(column) + ": " + what + "\n  " + text +
         "\n  " + std::string(static_cast<std::size_t>(column - 1), ' ') + "^";
}

// Lowers `texts` with one plan for all of them and evaluates them in f64.
std::vector<MatrixD> evaluate_all(Network& net, const Context& ctx,
                                  const std::vector<std::string>& texts, LowerInputs inputs,
                                  int* streams = nullptr) {
  const std::vector<Equation> eqs = parse_all(texts, ctx);
  inputs.coordinates = net.x();
  if (inputs.outputs.graph == nullptr && inputs.fields.empty()) inputs.outputs = net.out();
  Taylor taylor(plan_for(eqs, ctx, net.x()));
  if (streams) *streams = taylor.plan().stream_count();
  const std::vector<Var> r = lower(eqs, ctx, inputs, taylor);
  for (const Var& v : r) EXPECT_EQ(v.shape(), (Shape{net.points(), 1}));
  Bindings b = net.bindings();
  for (auto& [name, value] : initial_params(ctx)) b[name] = value;
  return evaluate(r, b, Precision::f64);
}

TEST(Lower, BurgersAgainstQuadReference) {
  Context ctx;
  ctx.field("u").coordinate("x").time("t");
  Network net(2, 1, 6, 11);
  int streams = 0;
  const auto got = evaluate_all(net, ctx, {"u_t + u*u_x - 0.01/pi*u_xx"}, {}, &streams);
  EXPECT_EQ(streams, 4);
  const Quad nu = Quad(0.01) / M_PIq;
  EXPECT_LE(testing::relative_error(got[0], net.points(),
                                    [&](std::int64_t p) {
                                      return net.d(p, 0, {0, 1}) +
                                             net.d(p, 0, {0, 0}) * net.d(p, 0, {1, 0}) -
                                             nu * net.d(p, 0, {2, 0});
                                    }),
            kTol);
}

TEST(Lower, FourthDerivative) {
  Context ctx;
  ctx.field("u").coordinate("x");
  Network net(1, 1, 6, 12);
  int streams = 0;
  const auto got = evaluate_all(net, ctx, {"d(u, x, 4)", "u_xxxx - u^3"}, {}, &streams);
  EXPECT_EQ(streams, 5);
  auto d = [&](std::int64_t p, int k) { return net.d(p, 0, {k}); };
  EXPECT_LE(testing::relative_error(got[0], net.points(), [&](auto p) { return d(p, 4); }), kTol);
  EXPECT_LE(testing::relative_error(got[1], net.points(),
                                    [&](auto p) { return d(p, 4) - d(p, 0) * d(p, 0) * d(p, 0); }),
            kTol);
}

// Laplacians: collapsed (laplacian(u), div(grad(u))) against the sum of second derivatives.
TEST(Lower, CollapsedLaplacianAndDivGrad) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  Network net(2, 1, 6, 13);
  int streams = 0;
  const auto got = evaluate_all(net, ctx, {"laplacian(u)", "div(grad(u))"}, {}, &streams);
  EXPECT_EQ(streams, 4);  // 00 10 01 and the collapsed sum
  auto lap = [&](std::int64_t p) { return net.d(p, 0, {2, 0}) + net.d(p, 0, {0, 2}); };
  EXPECT_LE(testing::relative_error(got[0], net.points(), lap), kTol);
  EXPECT_LE(testing::relative_error(got[1], net.points(), lap), kTol);
}

TEST(Lower, NeumannFluxWithNormal) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"}).time("t");
  Network net(3, 1, 6, 14);
  const Var normal = net.graph().input("normal", {net.points(), 2});
  net.bindings()["normal"] = testing::random_normals(net.points(), 2, 99);
  LowerInputs in;
  in.normal = normal;
  const auto got = evaluate_all(net, ctx, {"dot(n, grad(u)) + 2*u", "n_y*u_t"}, in);
  const MatrixD& n = net.bindings().at("normal");
  EXPECT_LE(testing::relative_error(got[0], net.points(),
                                    [&](std::int64_t p) {
                                      return n(p, 0) * net.d(p, 0, {1, 0, 0}) +
                                             n(p, 1) * net.d(p, 0, {0, 1, 0}) +
                                             2 * net.d(p, 0, {0, 0, 0});
                                    }),
            kTol);
  EXPECT_LE(testing::relative_error(got[1], net.points(),
                                    [&](auto p) {
                                      return n(p, 1) * net.d(p, 0, {0, 0, 1});
                                    }),
            kTol);
}

// Mixed partials, the chain rule, functions and powers in 2-D.
TEST(Lower, ChainRuleFunctionsAndPowers) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"}).constant("a", 0.5);
  Network net(2, 1, 6, 15);
  const std::vector<std::string> texts = {
      "d(u, x, 2, y)",
      "d(sin(u), x)",
      "d(u^3, x, 2)",
      "laplacian(u^2)",
      "laplacian(laplacian(u))",
      "abs(u) + sqrt(exp(u)) + log(2 + tanh(u)) + cos(u)^2",
      "(2 + u)^1.5 + (2 + u)^-2 + u^0 + 2^u + a*x*y",
      "div(x*grad(u))",
      "laplacian(atan(u)) + atan(x*y)",
  };
  const auto got = evaluate_all(net, ctx, texts, {});
  auto d = [&](std::int64_t p, int i, int j) { return net.d(p, 0, {i, j}); };
  auto x = [&](std::int64_t p) { return net.coordinate(p, 0); };
  auto y = [&](std::int64_t p) { return net.coordinate(p, 1); };
  const std::vector<std::function<Quad(std::int64_t)>> want = {
      [&](auto p) { return d(p, 2, 1); },
      [&](auto p) { return cosq(d(p, 0, 0)) * d(p, 1, 0); },
      [&](auto p) {
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0);
        return 6 * u * ux * ux + 3 * u * u * d(p, 2, 0);
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0), uy = d(p, 0, 1);
        return 2 * (ux * ux + uy * uy) + 2 * u * (d(p, 2, 0) + d(p, 0, 2));
      },
      [&](auto p) { return d(p, 4, 0) + 2 * d(p, 2, 2) + d(p, 0, 4); },
      [&](auto p) {
        const Quad u = d(p, 0, 0);
        return fabsq(u) + sqrtq(expq(u)) + logq(2 + tanhq(u)) + cosq(u) * cosq(u);
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0);
        return powq(2 + u, 1.5Q) + 1 / ((2 + u) * (2 + u)) + 1 + powq(2, u) +
               Quad(0.5) * x(p) * y(p);
      },
      [&](auto p) { return d(p, 1, 0) + x(p) * (d(p, 2, 0) + d(p, 0, 2)); },
      [&](auto p) {  // (atan u)'' = u''/(1 + u^2) - 2 u u'^2/(1 + u^2)^2 along each axis
        const Quad u = d(p, 0, 0), w = 1 / (1 + u * u);
        const Quad ux = d(p, 1, 0), uy = d(p, 0, 1);
        return w * (d(p, 2, 0) + d(p, 0, 2)) - 2 * u * w * w * (ux * ux + uy * uy) +
               atanq(x(p) * y(p));
      },
  };
  for (std::size_t k = 0; k < texts.size(); ++k)
    EXPECT_LE(testing::relative_error(got[k], net.points(), want[k]), kTol) << texts[k];
}

// The functions of autodiff/functions.h, conditions and where(), through the chain rule, against
// quad-precision references.
TEST(Lower, FunctionsConditionsAndWhere) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  Network net(2, 1, 8, 21);
  const std::vector<std::string> texts = {
      "laplacian(sinh(u)) + cosh(x*y)",
      "d(asin(u/4), x) + d(acos(u/4), y)",
      "d(asinh(u), x, 2) + d(acosh(2 + u^2), y) + d(atanh(u/4), x)",
      "laplacian(erf(u))",
      "d(atan2(u, x + 2), x) + atan2(-1 - y*y, x) + atan2(y, -2)",
      "where(x > 0 and u < 1 or not y >= 0, u_xx, -u) + min(u, x) + max(u_x, y)",
      "d(where(x < 0, u^2, sin(u)), x, 2)",
      "d(min(u, x*y), y) + d(max(u, x), x)",
      "(x < y) + (x <= y) + (x > y) + (x >= y) + (x == x) + (x != y) + u*(1 > 2)",
      "where(1 < 2, u, 2*u) - u + d(x > 0, x)",
  };
  const auto got = evaluate_all(net, ctx, texts, {});
  auto d = [&](std::int64_t p, int i, int j) { return net.d(p, 0, {i, j}); };
  auto x = [&](std::int64_t p) { return net.coordinate(p, 0); };
  auto y = [&](std::int64_t p) { return net.coordinate(p, 1); };
  const std::vector<std::function<Quad(std::int64_t)>> want = {
      [&](auto p) {  // (sinh u)'' = cosh(u) u'' + sinh(u) u'^2 along each axis
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0), uy = d(p, 0, 1);
        return coshq(u) * (d(p, 2, 0) + d(p, 0, 2)) + sinhq(u) * (ux * ux + uy * uy) +
               coshq(x(p) * y(p));
      },
      [&](auto p) {
        const Quad v = d(p, 0, 0) / 4, w = 1 / sqrtq(1 - v * v);
        return w * d(p, 1, 0) / 4 - w * d(p, 0, 1) / 4;
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0), v = 2 + u * u;
        const Quad asinh_xx = d(p, 2, 0) / sqrtq(1 + u * u) - u * ux * ux / powq(1 + u * u, 1.5Q);
        return asinh_xx + 2 * u * d(p, 0, 1) / sqrtq(v * v - 1) + (ux / 4) / (1 - u * u / 16);
      },
      [&](auto p) {  // (erf u)'' = g (u'' - 2 u u'^2), g = 2/sqrt(pi) exp(-u^2)
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0), uy = d(p, 0, 1);
        const Quad g = 2 / sqrtq(M_PIq) * expq(-u * u);
        return g * (d(p, 2, 0) + d(p, 0, 2)) - 2 * u * g * (ux * ux + uy * uy);
      },
      [&](auto p) {  // d atan2(u, X) = (X u' - u X') / (X^2 + u^2), X = x + 2
        const Quad u = d(p, 0, 0), X = x(p) + 2;
        return (X * d(p, 1, 0) - u) / (X * X + u * u) + atan2q(-1 - y(p) * y(p), x(p)) +
               atan2q(y(p), -2);
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0);
        const bool c = (x(p) > 0 && u < 1) || !(y(p) >= 0);
        return (c ? d(p, 2, 0) : -u) + fminq(u, x(p)) + fmaxq(ux, y(p));
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0), ux = d(p, 1, 0), uxx = d(p, 2, 0);
        return x(p) < 0 ? 2 * ux * ux + 2 * u * uxx : -sinq(u) * ux * ux + cosq(u) * uxx;
      },
      [&](auto p) {
        const Quad u = d(p, 0, 0);
        return (u <= x(p) * y(p) ? d(p, 0, 1) : x(p)) + (x(p) <= u ? d(p, 1, 0) : Quad(1));
      },
      [&](auto) { return Quad(4); },
      [&](auto) { return Quad(0); },
  };
  for (std::size_t k = 0; k < texts.size(); ++k)
    EXPECT_LE(testing::relative_error(got[k], net.points(), want[k]), kTol) << texts[k];
}

// Two fields, as columns of one output and as separate nodes (swapped, to see that `fields`
// overrides the columns).
TEST(Lower, TwoFieldsAsColumnsOrSeparateNodes) {
  Context ctx;
  ctx.fields({"u", "v"}).coordinates({"x", "y"});
  Network net(2, 2, 5, 16);
  const std::string text = "u*v_x - v*u_y + laplacian(v)";
  auto want = [&](int iu, int iv) {
    return [&, iu, iv](std::int64_t p) {
      return net.d(p, iu, {0, 0}) * net.d(p, iv, {1, 0}) -
             net.d(p, iv, {0, 0}) * net.d(p, iu, {0, 1}) + net.d(p, iv, {2, 0}) +
             net.d(p, iv, {0, 2});
    };
  };
  const auto columns = evaluate_all(net, ctx, {text}, {});
  EXPECT_LE(testing::relative_error(columns[0], net.points(), want(0, 1)), kTol);
  LowerInputs swapped;
  swapped.fields = {{"u", col(net.out(), 1)}, {"v", col(net.out(), 0)}};
  const auto separate = evaluate_all(net, ctx, {text}, swapped);
  EXPECT_LE(testing::relative_error(separate[0], net.points(), want(1, 0)), kTol);
}

TEST(Lower, TrainableParameterBecomesGraphParam) {
  Context ctx;
  ctx.field("u").coordinate("x").param("k", 1.5);
  Network net(1, 1, 4, 17);
  const auto got = evaluate_all(net, ctx, {"k*u_x + k^2"}, {});
  EXPECT_EQ(net.graph().leaf("pde_k").op(), Op::Param);
  EXPECT_EQ(initial_params(ctx).at("pde_k")(0, 0), 1.5);
  EXPECT_LE(testing::relative_error(got[0], net.points(),
                                    [&](auto p) { return 1.5Q * net.d(p, 0, {1}) + 2.25Q; }),
            kTol);
}

TEST(Lower, ConstantResidualIsBroadcast) {
  Context ctx;
  ctx.field("u").coordinate("x");
  Network net(1, 1, 3, 18);
  const auto got = evaluate_all(net, ctx, {"2*pi - 1"}, {});
  ASSERT_EQ(got[0].rows(), 3);
  EXPECT_DOUBLE_EQ(got[0](2, 0), 2 * M_PI - 1);
}

// ---- user errors ------------------------------------------------------------------------------

TEST(LowerErrors, DerivativeBeyondThePlan) {
  Context ctx;
  ctx.field("u").coordinate("x").time("t").constant("nu", 0.01);
  Network net(2, 1, 4, 19);
  Taylor taylor(plan_for({parse("u_t + u*u_x", ctx)}, ctx, net.x()));
  const std::string text = "u_t + u*u_x - nu*u_xx";
  expect_user_error(
      [&] { lower(parse(text, ctx), ctx, {.coordinates = net.x(), .outputs = net.out()}, taylor); },
      at(text, 18,
         "the derivative u_xx (multi-index 20 over x, t) is beyond what was planned: the Taylor "
         "plan has 3 streams: 00 10 01; build the plan with plan_for() from every equation "
         "lowered with it"));
}

TEST(LowerErrors, LaplacianBeyondThePlan) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  Network net(2, 1, 4, 20);
  Taylor taylor(plan_for({parse("u_x", ctx)}, ctx, net.x()));
  expect_user_error(
      [&] {
        lower(parse("u - laplacian(u)", ctx), ctx, {.coordinates = net.x(), .outputs = net.out()},
              taylor);
      },
      at("u - laplacian(u)", 5,
         "laplacian(u) is beyond what was planned: it needs the sum 'laplacian' over x, y or the "
         "derivatives 20, 02, and the Taylor plan has 2 streams: 00 10; build the plan with "
         "plan_for() from every equation lowered with it"));
}

TEST(LowerErrors, MissingNormalFieldAndBadInputs) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  Network net(2, 1, 4, 21);
  const Equation flux = parse("u + dot(n, grad(u))", ctx);
  Taylor taylor(plan_for({flux}, ctx, net.x()));
  expect_user_error(
      [&] { lower(flux, ctx, {.coordinates = net.x(), .outputs = net.out()}, taylor); },
      at(flux.text, 9,
         "the equation uses the normal n, but no normal was given (LowerInputs::normal, [n, 2], "
         "on boundary points)"));
  expect_user_error(
      [&] {
        lower(flux, ctx, {.coordinates = net.x(), .outputs = net.out(), .normal = col(net.x(), 0)},
              taylor);
      },
      at(flux.text, 9,
         "the normal must be [4,2] (one column per spatial coordinate: x, y), got " +
             net.graph().describe(col(net.x(), 0).id)));
  expect_user_error([&] { lower(flux, ctx, {.coordinates = net.x()}, taylor); },
                    at(flux.text, 1,
                       "no node for field 'u': give LowerInputs::outputs (one column per field) "
                       "or fields[\"u\"]"));
  const Var t = tanh(net.x());
  expect_user_error([&] { lower(flux, ctx, {.coordinates = t, .outputs = net.out()}, taylor); },
                    "equations: the coordinates must be an input leaf with 2 columns (x, y), got " +
                        net.graph().describe(t.id));
  expect_user_error([&] { plan_for({flux}, ctx, t); },
                    "equations: the coordinates must be an input leaf with 2 columns (x, y), got " +
                        net.graph().describe(t.id));
  Taylor reversed(TaylorPlan({{net.x(), 1}, {net.x(), 0}}, {{1, 0}, {0, 1}}));
  expect_user_error(
      [&] { lower(flux, ctx, {.coordinates = net.x(), .outputs = net.out()}, reversed); },
      "equations: the Taylor plan does not differentiate by the columns of input 'x' f64[4,2] in "
      "order (x, y); build it with plan_for()");
}

}  // namespace
}  // namespace jetpde::equations
