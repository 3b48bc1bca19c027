// The expression language: printing round trips, precedence, name resolution, d(), vector forms
// and the core form that expansion makes of them.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "equations/expr.h"
#include "equations/lexer.h"
#include "equations/parser.h"

namespace jetpde::equations {
namespace {

// Fields u, v; coordinates x, y and time t; constants nu, a, b, c; parameter k.
Context make_context() {
  Context ctx;
  ctx.fields({"u", "v"}).coordinates({"x", "y"}).time("t");
  ctx.constant("nu", 0.1).constant("a", 2).constant("b", 3).constant("c", 5).param("k", 1.5);
  return ctx;
}

Expr expr_of(const std::string& text) { return parse(text, make_context()).expr; }
Expr core_of(const std::string& text) { return parse(text, make_context()).core; }

TEST(Lexer, TokensAndColumns) {
  const std::vector<Token> t = lex({"u_xx + 2.5e-3*(x)^2 = .5", ""});
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t[0].kind, TokenKind::name);
  EXPECT_EQ(t[0].text, "u_xx");
  EXPECT_EQ(t[0].column, 1);
  EXPECT_EQ(t[1].kind, TokenKind::plus);
  EXPECT_EQ(t[1].column, 6);
  EXPECT_EQ(t[2].kind, TokenKind::number);
  EXPECT_DOUBLE_EQ(t[2].value, 2.5e-3);
  EXPECT_EQ(t[2].column, 8);
  EXPECT_EQ(t[4].kind, TokenKind::lparen);
  EXPECT_EQ(t[8].kind, TokenKind::number);
  EXPECT_EQ(t[9].kind, TokenKind::equals);
  EXPECT_DOUBLE_EQ(t[10].value, 0.5);
  EXPECT_EQ(t[11].kind, TokenKind::end);
  EXPECT_EQ(t[11].column, 25);
}

TEST(Parser, NumbersAndConstants) {
  EXPECT_EQ(expr_of("1")->value, 1.0);
  EXPECT_EQ(expr_of("2.5")->value, 2.5);
  EXPECT_EQ(expr_of("1e-3")->value, 1e-3);
  EXPECT_EQ(expr_of("1E+3")->value, 1e3);
  const Expr pi = expr_of("pi");
  EXPECT_EQ(pi->kind, ExprKind::constant);
  EXPECT_EQ(pi->value, std::numbers::pi);
  double v = 0;
  ASSERT_TRUE(constant_value(expr_of("0.01/pi*nu + 2^-1"), &v));
  EXPECT_DOUBLE_EQ(v, 0.01 / std::numbers::pi * 0.1 + 0.5);
  EXPECT_FALSE(constant_value(expr_of("k*2"), &v));  // a trainable parameter is not constant
  EXPECT_FALSE(constant_value(expr_of("x"), &v));
}

// parse(text).str() is `printed`, and parsing `printed` gives an equal tree.
struct RoundTrip {
  const char* text;
  const char* printed;
};

TEST(Parser, PrintRoundTrips) {
  const RoundTrip cases[] = {
      {"u_t + u*u_x - nu*u_xx", "u_t + u*u_x - nu*u_xx"},
      {"u_t+u*u_x-0.01/pi*u_xx", "u_t + u*u_x - 0.01/pi*u_xx"},
      {"(a - b) - c", "a - b - c"},
      {"a - (b - c)", "a - (b - c)"},
      {"a + (b + c)", "a + (b + c)"},
      {"(a*b)*c", "a*b*c"},
      {"a*(b*c)", "a*(b*c)"},
      {"a/(b*c)", "a/(b*c)"},
      {"a^b^c", "a^b^c"},
      {"(a^b)^c", "(a^b)^c"},
      {"-x^2", "-x^2"},
      {"(-x)^2", "(-x)^2"},
      {"x^-2", "x^-2"},
      {"x^(-2)", "x^-2"},
      {"-(x*y)", "-(x*y)"},
      {"-x*y", "-x*y"},
      {"a*-b", "a*-b"},
      {"+u", "u"},
      {"--u", "--u"},
      {"u*(v + 1)", "u*(v + 1)"},
      {"sin(x)*cos(y) + exp(-t) - log(a) + tanh(u) + sqrt(b) + abs(v) + atan(x/y)",
       "sin(x)*cos(y) + exp(-t) - log(a) + tanh(u) + sqrt(b) + abs(v) + atan(x/y)"},
      {"sinh(x) + cosh(y) + asin(a/c) + acos(u) + asinh(v) + acosh(c) + atanh(u/2) + erf(x)",
       "sinh(x) + cosh(y) + asin(a/c) + acos(u) + asinh(v) + acosh(c) + atanh(u/2) + erf(x)"},
      {"atan2(y, x) + min(u, v) + max(u, 1)", "atan2(y, x) + min(u, v) + max(u, 1)"},
      {"where(x < 0, u, v)", "where(x < 0, u, v)"},
      {"where(x<=0 and y>1 or not t>=2, u, 0)", "where(x <= 0 and y > 1 or not t >= 2, u, 0)"},
      {"where(not (x < 0 or y != 0), 1, 2)", "where(not (x < 0 or y != 0), 1, 2)"},
      {"where((x < 0 or y < 0) and t == 1, u, -u)", "where((x < 0 or y < 0) and t == 1, u, -u)"},
      {"(x < 0) + (y == 1)*u", "(x < 0) + (y == 1)*u"},
      {"-(x < 1) + (a < b) < c", "-(x < 1) + (a < b) < c"},
      {"x < -1", "x < -1"},
      {"x + 1 >= 2*y", "x + 1 >= 2*y"},
      {"u = x > 0", "u - (x > 0)"},
      {"u_xt", "u_xt"},
      {"d(u, x)", "u_x"},
      {"d(u, x, 4)", "d(u, x, 4)"},
      {"u_xxxx", "d(u, x, 4)"},
      {"d(u, x, y)", "u_xy"},
      {"d(u, x, 2, y)", "u_xxy"},
      {"d(u, y, x, 2)", "u_xxy"},
      {"d(u_x, x)", "u_xx"},
      {"d(u, x, 2, y, 2)", "d(u, x, 2, y, 2)"},
      {"d(sin(u), x)", "d(sin(u), x)"},
      {"d(u*v, x, 2)", "d(u*v, x, 2)"},
      {"laplacian(u)", "laplacian(u)"},
      {"div(grad(u))", "div(grad(u))"},
      {"dot(n, grad(u)) + n_x*u", "dot(n, grad(u)) + n_x*u"},
      {"div(a*grad(u) - vec(u, v)/2)", "div(a*grad(u) - vec(u, v)/2)"},
      {"u_t = nu*u_xx", "u_t - nu*u_xx"},
      {"u = v + 1", "u - (v + 1)"},
      {"k*u", "k*u"},
      {"2.5e-3*u", "0.0025*u"},
      {"1e-10*u", "1e-10*u"},
  };
  const Context ctx = make_context();
  for (const RoundTrip& c : cases) {
    SCOPED_TRACE(c.text);
    const Equation eq = parse(c.text, ctx);
    EXPECT_EQ(eq.str(), c.printed);
    EXPECT_EQ(parse(eq.str(), ctx).expr, eq.expr);
  }
}

// Precedence and associativity, against explicitly parenthesized forms.
TEST(Parser, Precedence) {
  const std::pair<const char*, const char*> same[] = {
      {"-x^2", "-(x^2)"},
      {"a^b^c", "a^(b^c)"},
      {"a-b-c", "(a-b)-c"},
      {"a/b*c", "(a/b)*c"},
      {"a/b/c", "(a/b)/c"},
      {"-u*v", "(-u)*v"},
      {"2^-1", "2^(-1)"},
      {"a + b*c^2", "a + (b*(c^2))"},
      {"-a^-b", "-(a^(-b))"},
      {"u_t = u_x + 1", "u_t - (u_x + 1)"},
      {"x < 1 and y > 2 or t == 0", "((x < 1) and (y > 2)) or (t == 0)"},
      {"not x < 1 and y < 2", "(not (x < 1)) and (y < 2)"},
      {"a or b and c", "a or (b and c)"},
      {"x + 1 < 2*y", "(x + 1) < (2*y)"},
      {"-x < 0", "(-x) < 0"},
  };
  for (const auto& [a, b] : same) EXPECT_EQ(expr_of(a), expr_of(b)) << a << " vs " << b;
  EXPECT_FALSE(expr_of("a-b-c") == expr_of("a-(b-c)"));
  EXPECT_FALSE(expr_of("(-x)^2") == expr_of("-x^2"));
  EXPECT_FALSE(expr_of("(a^b)^c") == expr_of("a^b^c"));
  // The tree itself: -x^2 is neg(pow(x, 2)).
  const Expr e = expr_of("-x^2");
  ASSERT_EQ(e->kind, ExprKind::neg);
  EXPECT_EQ(e->args[0]->kind, ExprKind::pow);
}

// Constant folding through the function records: values, conditions 1 and 0, where().
TEST(Parser, ConstantFunctionsAndConditions) {
  const std::pair<const char*, double> cases[] = {
      {"where(1 < 2, 3, 4)", 3},
      {"min(2, -1) + max(2, 5)", 4},
      {"atan2(1, -1)", 3 * std::numbers::pi / 4},
      {"atan2(-1, -1)", -3 * std::numbers::pi / 4},
      {"(2 >= 2) + (1 != 1) + (not 0) + (1 == 1 and 0 or 0)", 2},
      {"sinh(0.5) - cosh(0.5) + erf(0.25)", std::sinh(0.5) - std::cosh(0.5) + std::erf(0.25)},
      {"asin(0.5) + acos(0.5) + asinh(2) + acosh(2) + atanh(0.5)",
       std::asin(0.5) + std::acos(0.5) + std::asinh(2.0) + std::acosh(2.0) + std::atanh(0.5)},
  };
  for (const auto& [text, want] : cases) {
    double v = 0;
    ASSERT_TRUE(constant_value(expr_of(text), &v)) << text;
    EXPECT_DOUBLE_EQ(v, want) << text;
  }
}

// The new names are reserved; and, or, not are words of the language.
TEST(Parser, FunctionNamesAndKeywordsAreReserved) {
  for (const char* name : {"sinh", "erf", "atan2", "min", "max", "where", "and", "or", "not"})
    EXPECT_TRUE(is_reserved(name)) << name;
  EXPECT_FALSE(is_reserved("less"));  // a record's name, not a spelling of the language
}

TEST(Parser, ResolvesNames) {
  const Expr e = expr_of("u_xt");
  ASSERT_EQ(e->kind, ExprKind::derivative);
  EXPECT_EQ(e->name, "u");
  EXPECT_EQ(e->alpha, (MultiIndex{1, 0, 1}));
  EXPECT_EQ(expr_of("d(v, x, 2, y)")->alpha, (MultiIndex{2, 1, 0}));
  EXPECT_EQ(expr_of("d(v, x, 2, y)")->index, 1);
  EXPECT_EQ(expr_of("t")->kind, ExprKind::coordinate);
  EXPECT_EQ(expr_of("t")->index, 2);
  EXPECT_EQ(expr_of("nu")->kind, ExprKind::constant);
  EXPECT_EQ(expr_of("k")->kind, ExprKind::param);
  EXPECT_EQ(expr_of("n_y")->kind, ExprKind::normal_component);
  EXPECT_EQ(expr_of("n_y")->index, 1);
  EXPECT_EQ(expr_of("d(u, t)"), expr_of("u_t"));
  EXPECT_EQ(expr_of("d(d(u, x), x, 3)"), expr_of("d(u, x, 4)"));
}

TEST(Parser, MultiLetterCoordinatesNeedD) {
  Context ctx;
  ctx.field("u").coordinates({"x1", "x2"});
  EXPECT_EQ(parse("d(u, x1, 2) + d(u, x2)", ctx).str(), "d(u, x1, 2) + d(u, x2)");
  EXPECT_EQ(parse("d(u, x1, 2)", ctx).expr->alpha, (MultiIndex{2, 0}));
}

TEST(Parser, FieldNamesWithUnderscores) {
  Context ctx;
  ctx.fields({"u_1", "rho"}).coordinates({"x", "t"});
  EXPECT_EQ(parse("u_1_x", ctx).expr->alpha, (MultiIndex{1, 0}));
  EXPECT_EQ(parse("u_1_x", ctx).expr->name, "u_1");
  EXPECT_EQ(parse("rho_tt", ctx).expr->alpha, (MultiIndex{0, 2}));
  EXPECT_EQ(parse("u_1", ctx).expr->kind, ExprKind::field);
}

TEST(Parser, Definitions) {
  Context ctx = make_context();
  ctx.define("f", "sin(pi*x)*a").define("w", "vec(1, -1)");
  const Equation eq = parse("u_xx + f + dot(w, grad(u))", ctx);
  EXPECT_EQ(eq.str(), "u_xx + sin(pi*x)*a + dot(vec(1, -1), grad(u))");
  EXPECT_EQ(eq.core, core_of("u_xx + sin(pi*x)*a + (u_x + -u_y)"));
}

// Expansion: vector forms, Laplacians kept whole, the chain rule.
TEST(Expand, CoreForms) {
  const std::pair<const char*, const char*> same[] = {
      {"div(grad(u))", "laplacian(u)"},
      {"div(2*grad(u) - grad(v))", "2*laplacian(u) - laplacian(v)"},
      {"dot(n, grad(u))", "n_x*u_x + n_y*u_y"},
      {"div(vec(u, v))", "u_x + v_y"},
      {"div(u*grad(v))", "u_x*v_x + u*v_xx + (u_y*v_y + u*v_yy)"},
      {"dot(grad(u), grad(v))", "u_x*v_x + u_y*v_y"},
      {"d(sin(u), x)", "cos(u)*u_x"},
      {"d(u^3, x)", "3*u^2*u_x"},
      {"d(x*u, x)", "u + x*u_x"},
      {"d(k*u, t)", "k*u_t"},
      {"d(exp(u), y)", "exp(u)*u_y"},
      {"d(laplacian(u), t)", "u_yyt + u_xxt"},
      {"laplacian(laplacian(u))", "laplacian(laplacian(u))"},
      {"laplacian(3*u + v/2)", "3*laplacian(u) + laplacian(v)/2"},
      {"laplacian(u_t)", "u_xxt + u_yyt"},
      {"d(a, x) + u", "u"},
      {"d(sinh(u), x)", "cosh(u)*u_x"},
      {"d(cosh(u), x)", "sinh(u)*u_x"},
      {"d(where(x < 0, u, 2), x)", "where(x < 0, u_x, 0)"},
      {"d(where(x < 0, 3, 2), x) + u", "u"},
      {"d(min(u, v), x)", "where(u <= v, u_x, v_x)"},
      {"d(max(u, v), y)", "where(v <= u, u_y, v_y)"},
      {"d(x < 0 and u > 1, x) + u", "u"},
      {"d(where(n_x > 0, u, 0), x)", "where(n_x > 0, u_x, 0)"},
      {"d(n_y < u, y) + u", "u"},
      {"d(atan2(u, x), x)", "x/(u*u + x*x)*u_x + -u/(u*u + x*x)"},
      {"d(erf(u), t)", "1.1283791670955126*exp(-(u*u))*u_t"},  // 2/sqrt(pi)
  };
  for (const auto& [a, b] : same) EXPECT_EQ(core_of(a), core_of(b)) << a << " vs " << b;
  const Expr lap = core_of("div(grad(u))");
  ASSERT_EQ(lap->kind, ExprKind::laplacian);
  EXPECT_EQ(lap->args[0]->kind, ExprKind::field);
  EXPECT_EQ(core_of("laplacian(laplacian(u))")->order, 2);
  EXPECT_EQ(core_of("d(u, x, 4)"), expr_of("d(u, x, 4)"));  // a field's derivative is already core
}

TEST(Parser, ParseAllIsOneResidualPerString) {
  const std::vector<Equation> eqs =
      parse_all({"u_t + v_x", "v_t + u_x", "u_x = v_y"}, make_context());
  ASSERT_EQ(eqs.size(), 3u);
  EXPECT_EQ(eqs[2].str(), "u_x - v_y");
  EXPECT_EQ(eqs[1].text, "v_t + u_x");
}

TEST(Context, SpatialCoordinatesExcludeTime) {
  const Context ctx = make_context();
  EXPECT_EQ(ctx.time_index(), 2);
  EXPECT_EQ(ctx.spatial(), (std::vector<int>{0, 1}));
  EXPECT_EQ(ctx.spatial_names(), (std::vector<std::string>{"x", "y"}));
  Context steady;
  steady.field("u").coordinates({"x", "y"});
  EXPECT_EQ(steady.spatial(), (std::vector<int>{0, 1}));
  EXPECT_EQ(steady.time_index(), -1);
}

}  // namespace
}  // namespace jetpde::equations
