// The limits of the expression language (equations/limits.h), from issue 11's fuzzing: deep or
// long input is a user error naming the limit and the column, never a stack overflow; symbolic
// work stays polynomial or stops with a message; everything downstream of the parser (printing,
// expansion, analysis, lowering, the compiler's passes and the renderer) takes the largest input
// the limits admit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_set>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/ops.h"
#include "compiler/lower.h"
#include "compiler/module.h"
#include "compiler/pipeline.h"
#include "compiler/render_c.h"
#include "equations/analysis.h"
#include "equations/limits.h"
#include "equations/lower.h"
#include "equations/parser.h"
#include "tests/equations/network.h"
#include "tests/support/user_error.h"

namespace jetpde::equations {
namespace {

using testing::Network;

Context burgers_context() {
  Context ctx;
  ctx.field("u").coordinate("x").time("t");
  return ctx;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The UserError of parsing `text`; its message must name `column` (unless 0) and hold `what`.
void expect_error(const std::string& text, int column, const std::string& what,
                  const Context& ctx = burgers_context()) {
  try {
    parse(text, ctx);
    ADD_FAILURE() << "no UserError for a text of " << text.size() << " characters";
  } catch (const UserError& e) {
    const std::string message = e.what();
    if (column > 0) {
      EXPECT_NE(message.find("column " + std::to_string(column) + ": "), std::string::npos)
          << message << "\nwanted column " << column;
    }
    EXPECT_NE(message.find(what), std::string::npos) << message << "\nwanted: " << what;
    EXPECT_LT(message.size(), 1000u) << "a long text is quoted in part";
  }
}

LowerInputs inputs_of(Network& net, Var normal = {}) {
  LowerInputs in;
  in.coordinates = net.x();
  in.outputs = net.out();
  in.normal = normal;
  return in;
}

// Distinct nodes of an expression (shared subexpressions once).
std::size_t distinct_nodes(const Expr& e) {
  std::unordered_set<const ExprNode*> seen;
  std::vector<const ExprNode*> stack{&*e};
  while (!stack.empty()) {
    const ExprNode* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (const Expr& a : n->args) stack.push_back(&*a);
  }
  return seen.size();
}

// Parses `text`, prints it back, lowers it on a small network, evaluates it and runs it through
// the compiler's passes and the C renderer: the value at the first point.
double through_everything(const std::string& text, const Context& ctx = burgers_context()) {
  const Equation eq = parse(text, ctx);
  EXPECT_FALSE(eq.str().empty());
  Network net(2, 1, 3, 7);
  const std::vector<Equation> eqs{eq};
  Taylor taylor(plan_for(eqs, ctx, net.x()));
  const std::vector<Var> r = lower(eqs, ctx, inputs_of(net), taylor);
  const std::vector<MatrixD> v = evaluate(r, net.bindings(), Precision::f64);
  compiler::Program program = compiler::lower(compiler::optimize(compiler::module_of(r), {}));
  compiler::plan_memory(program);
  EXPECT_FALSE(compiler::render_cpu_source(program).empty());
  return v.at(0)(0, 0);
}

constexpr int kDepth = limits::kMaxDepth;

// ---- depth ----------------------------------------------------------------------------------

TEST(Robustness, TenThousandParenthesesAreADepthError) {
  expect_error(repeat("(", 10000) + "u" + repeat(")", 10000), kDepth + 1,
               "the expression is nested more than 256 levels deep here");
}

TEST(Robustness, LongChainsOfSignsAndPowersAreDepthErrors) {
  expect_error(repeat("-", 100000) + "u", kDepth + 1, "nested more than 256 levels deep");
  // u^u^...: the exponent of the k-th '^' starts at column 2k + 1.
  expect_error("u" + repeat("^u", 100000), 2 * kDepth + 1, "nested more than 256 levels deep");
  expect_error(repeat("sin(", 10000) + "u" + repeat(")", 10000), 4 * kDepth + 1,
               "nested more than 256 levels deep");
}

TEST(Robustness, LongChainsOfLogicalOperatorsAreDepthErrors) {
  expect_error(repeat("not ", 100000) + "u > 0", 4 * kDepth + 1,
               "nested more than 256 levels deep");
  expect_error("u > 0" + repeat(" or u > 0", 10000), 0, "nested more than 256 levels deep");
  expect_error("u > 0" + repeat(" and u > 0", 10000), 0, "nested more than 256 levels deep");
}

TEST(Robustness, TheDeepestAdmittedInputGoesThroughEverything) {
  EXPECT_NO_THROW(
      parse(repeat("(", kDepth - 1) + "u" + repeat(")", kDepth - 1), burgers_context()));
  EXPECT_NO_THROW(through_everything(repeat("-", kDepth - 1) + "u"));
  EXPECT_NO_THROW(through_everything("u" + repeat("^u", kDepth - 1)));
  const std::string sines = repeat("sin(", kDepth - 1) + "u" + repeat(")", kDepth - 1);
  const Equation eq = parse(sines, burgers_context());
  EXPECT_EQ(eq.expr->depth, kDepth);
  EXPECT_EQ(parse(eq.str(), burgers_context()).expr, eq.expr);
  EXPECT_NO_THROW(through_everything(sines));
}

TEST(Robustness, DefinitionsCountWhereTheyAreUsed) {
  Context ctx = burgers_context();
  ctx.define("a0", repeat("sin(", 200) + "u" + repeat(")", 200));  // 201 levels
  // The 56th cos from the inside, at column 17, makes 257 levels.
  expect_error(repeat("cos(", 60) + "a0" + repeat(")", 60), 17, "nested more than 256 levels deep",
               ctx);
  try {
    ctx.define("a1", repeat("cos(", 60) + "a0" + repeat(")", 60));
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("column 17: the expression is nested more than 256"),
              std::string::npos)
        << e.what();
  }
  // Each definition doubles the tree written out: b15 has 65,535 nodes, b15 + b15 131,071.
  Context big = burgers_context();
  big.define("b0", "u");
  for (int k = 1; k <= 15; ++k)
    big.define("b" + std::to_string(k),
               "b" + std::to_string(k - 1) + " + b" + std::to_string(k - 1));
  expect_error("b15 + b15", 5, "the expression has more than 100000 nodes here", big);
}

// ---- size -----------------------------------------------------------------------------------

// A flat sum of 20,000 terms is what generated input (a fitted polynomial, a series) looks like:
// it works, built as a balanced tree of left-to-right runs, so that it nests 30 levels, not
// 20,000, and gives the sum's value.
TEST(Robustness, AFlatSumOfTwentyThousandTermsWorks) {
  std::string text = "u";
  for (int i = 1; i < 20000; ++i) text += (i % 3 ? " + " : " - ") + std::to_string(i % 7) + "*u";
  const Equation eq = parse(text, burgers_context());
  EXPECT_LE(eq.expr->depth, 40);
  EXPECT_EQ(parse(eq.str(), burgers_context()).expr, eq.expr);
  double factor = 1;
  for (int i = 1; i < 20000; ++i) factor += (i % 3 ? 1 : -1) * (i % 7);
  Network net(2, 1, 3, 7);
  const double u =
      evaluate(std::vector<Var>{net.out()}, net.bindings(), Precision::f64).at(0)(0, 0);
  EXPECT_NEAR(through_everything(text), factor * u, 1e-9 * std::abs(factor * u));
}

// The operators of a long chain keep their meaning across runs: a - b + c stays a - b + c, and
// a / b * c stays a / b * c.
TEST(Robustness, LongChainsKeepLeftToRightMeaning) {
  std::string sum = "1", product = "1.5";
  double want_sum = 1, want_product = 1.5;
  for (int i = 2; i <= 300; ++i) {
    const bool minus = (i * 7) % 3 == 0, divide = (i * 5) % 4 < 2;
    sum += (minus ? " - " : " + ") + std::to_string(i);
    want_sum += minus ? -i : i;
    const double f = 1 + 1.0 / i;
    product += (divide ? " / " : " * ") + std::to_string(f);
    want_product = divide ? want_product / std::stod(std::to_string(f))
                          : want_product * std::stod(std::to_string(f));
  }
  double got = 0;
  ASSERT_TRUE(constant_value(parse(sum, burgers_context()).expr, &got));
  EXPECT_EQ(got, want_sum);
  ASSERT_TRUE(constant_value(parse(product, burgers_context()).expr, &got));
  EXPECT_NEAR(got, want_product, 1e-12 * want_product);
  // The rank checks see the whole chain: the second vector, 40 factors on, is still an error.
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  const std::string vectors = "grad(u)" + repeat("*2", 40) + "*grad(u)";
  expect_error("dot(n, " + vectors + ")", 7 + 7 + 80 + 1, "cannot multiply two vectors", ctx);
}

// A vector after a '/' where a run of a product ends: x*2*...*2/2*grad(u) is still x*2^14*grad(u),
// a vector, not a division by one.
TEST(Robustness, ProductChainsWithVectorsAcrossRuns) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  for (const std::string tail : {"/2*grad(u)", "*grad(u)/2", "/2/4*grad(u)*3"}) {
    const std::string v = "x" + repeat("*2", 15) + tail;
    const Equation eq = parse("dot(n, " + v + ")", ctx);
    EXPECT_EQ(parse(eq.str(), ctx).expr, eq.expr) << v;
    const Equation want = parse("dot(n, grad(u))*x*" + std::to_string(std::ldexp(1, 15)) +
                                    (tail == "/2/4*grad(u)*3" ? "/8*3" : "/2"),
                                ctx);
    Network net(2, 1, 3, 9);
    const Var normal = net.graph().input("normal", {3, 2});
    net.bindings()["normal"] = testing::random_normals(3, 2, 4);
    std::vector<double> values;
    for (const Equation& e : {eq, want}) {
      const std::vector<Equation> eqs{e};
      Taylor taylor(plan_for(eqs, ctx, net.x()));
      const std::vector<Var> r = lower(eqs, ctx, inputs_of(net, normal), taylor);
      values.push_back(evaluate(r, net.bindings(), Precision::f64).at(0)(0, 0));
    }
    EXPECT_NEAR(values[0], values[1], 1e-12 * std::abs(values[1])) << v;
  }
}

TEST(Robustness, TheSizeLimitNamesTheColumn) {
  // u + u + ...: the k-th '+' is at column 4k - 1; the 50,000th makes 100,001 nodes.
  expect_error("u" + repeat(" + u", 60000), 4 * 50000 - 1,
               "the expression has more than 100000 nodes here");
}

TEST(Robustness, LongOperandsAreQuotedInPart) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"});
  const std::string sum = "(" + repeat("u + ", 500) + "u)";
  expect_error(sum + " + grad(u)", static_cast<int>(sum.size()) + 2,
               "cannot add a scalar and a vector ('((((u + u + u + u", ctx);
}

// ---- derivative order -----------------------------------------------------------------------

TEST(Robustness, TheTotalDerivativeOrderIsCapped) {
  expect_error("d(d(u, x, 64), x, 64)", 1,
               "d() asks for a derivative of total order 128 (multi-index 1280 over x, t); the "
               "highest order is 64");
  expect_error("d(u, x, 40, t, 25)", 1, "d() asks for a derivative of total order 65");
  expect_error("u_" + repeat("x", 65), 1, "asks for a derivative of total order 65");
  // After the chain rule: the Laplacian of u is u_xx here.
  expect_error("1 + d(laplacian(u), x, 63)", 5,
               "the chain rule here asks for the derivative u of total order 65");
  EXPECT_NO_THROW(through_everything("d(d(u, x, 32), x, 32)"));
}

// Mixed derivatives bring every lower one: the Taylor plan's work is bounded too.
TEST(Robustness, TaylorStreamsAreBounded) {
  const Context ctx = burgers_context();
  Network net(2, 1, 3, 7);
  const std::vector<Equation> fits{parse("d(u, x, 16, t, 16) + d(u, x, 40)", ctx)};
  EXPECT_EQ(plan_for(fits, ctx, net.x()).stream_count(), 17 * 17 + 24);
  const std::vector<Equation> big{parse("u_x + d(u, x, 32, t, 32)", ctx)};
  jetpde::testing::expect_user_error(
      [&] { plan_for(big, ctx, net.x()); },
      "equations: the derivatives asked for make too large a Taylor plan: each derivative brings "
      "every lower one it contains (d(u, x, 32, t, 32) alone needs 1089 streams), and the plan's "
      "products would sum more than 25000 coefficient pairs per node; the limit is 25000");
  // A Laplacian in 1000 dimensions is cheap (first-order streams and one collapsed sum).
  Context poisson;
  poisson.field("u");
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("y" + std::to_string(i));
  poisson.coordinates(names);
  Graph h(DType::f64);
  EXPECT_EQ(plan_for(std::vector<Equation>{parse("laplacian(u) + 1", poisson)}, poisson,
                     h.input("y", {3, 1000}))
                .stream_count(),
            1002);
  // 16 coordinates, second order in each: 3^16 streams, refused without enumerating them.
  Context wide;
  wide.field("u");
  std::string text = "d(u";
  for (int i = 0; i < 16; ++i) {
    wide.coordinate("x" + std::to_string(i));
    text += ", x" + std::to_string(i) + ", 2";
  }
  Graph g(DType::f64);
  const Var x = g.input("x", {3, 16});
  try {
    plan_for(std::vector<Equation>{parse(text + ")", wide)}, wide, x);
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("alone needs 43046721 streams"), std::string::npos)
        << e.what();
  }
}

// ---- symbolic work --------------------------------------------------------------------------

// Equal nodes are one node and d() is computed once per node: Leibniz-like expansions stay
// polynomial (2^40 terms written out).
TEST(Robustness, ProductRuleExpansionsStayPolynomial) {
  const Equation square = parse("d(u*u, x, 40)", burgers_context());
  EXPECT_LE(distinct_nodes(square.core), 1000u);
  EXPECT_EQ(square.core->size, ExprNode::kSizeSaturation);
  const Equation composite = parse("d(exp(sin(u)), x, 30)", burgers_context());
  EXPECT_LE(distinct_nodes(composite.core), 20000u);
  EXPECT_NO_THROW(through_everything("d(u*u, x, 40)"));
}

// The chain rule deepens the core form: d(exp(u), x, 30) nests more than 400 levels (of the 512
// allowed), and lowering, the Taylor sweep to order 30 and the compiler's passes take it.
TEST(Robustness, TheDeepestExpansionGoesThroughEverything) {
  const Equation eq = parse("d(exp(u), x, 30)", burgers_context());
  EXPECT_GT(eq.core->depth, 400);
  EXPECT_LE(eq.core->depth, limits::kMaxCoreDepth);
  EXPECT_TRUE(std::isfinite(through_everything("d(exp(u), x, 30)")));
  expect_error("d(exp(u), x, 40)", 1,
               "expanding this expression nests its core form more than 512 levels deep");
}

// The shared expansion gives the derivatives Taylor mode gives for the same product.
TEST(Robustness, SharedExpansionsAgreeWithTaylorMode) {
  const Context ctx = burgers_context();
  for (const std::string text : {"d(u*u, x, 10)", "d(exp(sin(u)), x, 7)"}) {
    Network net(2, 1, 4, 5);
    const std::vector<Equation> eqs{parse(text, ctx)};
    Taylor taylor(plan_for(eqs, ctx, net.x()));
    const Var u = net.out();
    const Var direct =
        taylor.derivative(text[2] == 'u' ? u * u : exp(sin(u)), {text[2] == 'u' ? 10 : 7, 0});
    const std::vector<Var> r = lower(eqs, ctx, inputs_of(net), taylor);
    const std::vector<MatrixD> v =
        evaluate(std::vector<Var>{r[0], direct}, net.bindings(), Precision::f64);
    for (std::int64_t p = 0; p < 4; ++p)
      EXPECT_NEAR(v[0](p, 0), v[1](p, 0), 1e-9 * std::abs(v[1](p, 0))) << text;
  }
}

TEST(Robustness, ExponentialExpansionsStopWithTheSize) {
  const std::string what =
      "expanding this expression (the chain and product rules of its derivatives) takes more "
      "than 100000 distinct terms";
  expect_error("u + d(u*u*u*u*u*u, x, 64)", 5, what);
  expect_error("d(sin(u)*exp(u)*tanh(u)/sqrt(1 + u^2), x, 64)", 1, what);
}

// ---- characters -----------------------------------------------------------------------------

TEST(Robustness, ANulByteIsAnErrorAtItsColumn) {
  const std::string text("u + \0v", 6);
  try {
    parse(text, burgers_context());
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    // The whole message reaches what(): the NUL is shown as U+2400, not printed.
    EXPECT_EQ(std::strlen(e.what()), std::string(e.what()).size());
    EXPECT_EQ(std::string(e.what()),
              "in 'u + \u2400v': column 5: unexpected NUL byte (0x00) in the expression\n"
              "  u + \u2400v\n"
              "      ^");
  }
  expect_error(std::string("u\x01"), 2, "unexpected control character 0x01");
}

}  // namespace
}  // namespace jetpde::equations
