// Every user error of the expression language, with its message and column (docs/design.md section
// 12).
#include <gtest/gtest.h>

#include "equations/context.h"
#include "equations/parser.h"
#include "tests/support/user_error.h"

namespace jetpde::equations {
namespace {

using jetpde::testing::expect_user_error;

// Field u; coordinates x and time t; constant nu.
Context burgers_context() {
  Context ctx;
  ctx.field("u").coordinate("x").time("t").constant("nu", 0.01);
  return ctx;
}

// The message format of equations/detail/diagnostics.h, for the cases below.
std::string at(const std::string& text, int column, const std::string& what) {
  return "in '" + text + "': column " + std::to_string(column) + ": " + what + "\n  " + text +
         "\n  " + std::string(static_cast<std::size_t>(column - 1), ' ') + "^";
}

struct ErrorCase {
  const char* text;
  int column;
  const char* what;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.text; }

class ParseErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrors, MessageAndColumn) {
  const ErrorCase c = GetParam();
  const Context ctx = burgers_context();
  expect_user_error([&] { parse(c.text, ctx); }, at(c.text, c.column, c.what));
}

const char* const kFunctions =
    "sin, cos, exp, log, tanh, sqrt, abs, atan, sinh, cosh, asin, acos, asinh, acosh, atanh, erf, "
    "atan2, min, max, where, d, laplacian, grad, div, dot, vec";

INSTANTIATE_TEST_SUITE_P(
    Language, ParseErrors,
    ::testing::Values(
        ErrorCase{"u_t + u*v_x", 9, "unknown field 'v' (fields: u)"},
        ErrorCase{"u_t + w", 7, "unknown name 'w' (fields: u; coordinates: x, t; constants: nu)"},
        ErrorCase{"v_q", 1, "unknown name 'v_q' (fields: u; coordinates: x, t; constants: nu)"},
        ErrorCase{"sin(u", 4, "unclosed '('"}, ErrorCase{"(u + 1", 1, "unclosed '('"},
        ErrorCase{"d(u, x", 2, "unclosed '('"}, ErrorCase{"u + 1)", 6, "unmatched ')'"},
        ErrorCase{"(u + nu u)", 9, "expected ')' to close the '(' at column 1, found 'u'"},
        ErrorCase{"sech(u)", 1,
                  "unknown function 'sech' (functions: sin, cos, exp, log, tanh, sqrt, abs, atan, "
                  "sinh, cosh, asin, acos, asinh, acosh, atanh, erf, atan2, min, max, where, d, "
                  "laplacian, grad, div, dot, vec)"},
        ErrorCase{"sin(u, x)", 1, "sin takes 1 argument, found 2"},
        ErrorCase{"exp()", 1, "exp takes 1 argument, found 0"},
        ErrorCase{"dot(n, grad(u), n)", 1, "dot takes 2 arguments, found 3"},
        ErrorCase{"laplacian(u, u)", 1, "laplacian takes 1 argument, found 2"},
        ErrorCase{"d(u, z)", 6, "unknown coordinate 'z' in d() (coordinates: x, t)"},
        ErrorCase{"d(u, 2)", 6,
                  "expected a coordinate in d(), found '2' (d(u, x, 2) is the second derivative "
                  "in x)"},
        ErrorCase{"d(u)", 1, "d takes an expression and at least one coordinate, as in d(u, x, 2)"},
        ErrorCase{"d(u, x, 2.5)", 9,
                  "the order of a derivative is an integer from 1 to 64, "
                  "found '2.5'"},
        ErrorCase{"d(u, x, 0)", 9,
                  "the order of a derivative is an integer from 1 to 64, "
                  "found '0'"},
        ErrorCase{"d(grad(u), x)", 3,
                  "d takes a scalar, but 'grad(u)' is a vector (take the derivatives of its "
                  "components)"},
        ErrorCase{"u_xz", 4,
                  "'z' in 'u_xz' is not a coordinate (coordinates: x, t); the shorthand takes one "
                  "letter per coordinate, so multi-letter coordinates need d(), as in d(u, x)"},
        ErrorCase{"nu_x", 1,
                  "'nu' is a constant, not a field; the derivative shorthand 'nu_x' applies to "
                  "fields (fields: u)"},
        ErrorCase{"1 + x_t", 5,
                  "'x' is a coordinate, not a field; the derivative shorthand 'x_t' applies to "
                  "fields (fields: u)"},
        ErrorCase{"n_t", 3, "'t' in 'n_t' is not a spatial coordinate (spatial coordinates: x)"},
        ErrorCase{"u_t + u u_x", 9,
                  "unexpected 'u_x' after a complete expression (a product needs '*')"},
        ErrorCase{"2u", 2, "unexpected 'u' after a complete expression (a product needs '*')"},
        ErrorCase{"u_t = u_xx = 0", 12, "a second '=' (one equation per expression)"},
        ErrorCase{"u, x", 2, "unexpected ','"}, ErrorCase{"u_t + $", 7, "unexpected character '$'"},
        ErrorCase{"1e+ * u", 1, "malformed number '1e+' (an exponent needs digits, as in 1e-3)"},
        ErrorCase{"u +", 4, "expected an expression, found the end"},
        ErrorCase{"u * )", 5, "expected an expression, found ')'"},
        ErrorCase{"sin + 1", 1, "'sin' is a function; call it as sin(...)"},
        ErrorCase{"u(x)", 1, "'u' is a field, not a function"},
        ErrorCase{"u + grad(u)", 3, "cannot add a scalar and a vector ('u' + 'grad(u)')"},
        ErrorCase{"grad(u) - u", 9, "cannot subtract a vector and a scalar ('grad(u)' - 'u')"},
        ErrorCase{"grad(u) = u", 9, "cannot equate a vector and a scalar ('grad(u)' = 'u')"},
        ErrorCase{"grad(u)*grad(u)", 8, "cannot multiply two vectors; use dot(v, w)"},
        ErrorCase{"u/n", 2, "cannot divide by a vector ('n')"},
        ErrorCase{"n^2", 2, "'^' takes scalars, but 'n' is a vector"},
        ErrorCase{"sin(n)", 5, "sin takes a scalar, but 'n' is a vector"},
        ErrorCase{"grad(n)", 6, "grad takes a scalar, but 'n' is a vector"},
        ErrorCase{"div(u)", 5,
                  "div takes a vector, but 'u' is a scalar (div(grad(u)) is the Laplacian of u)"},
        ErrorCase{"dot(n, u)", 8,
                  "dot takes a vector, but 'u' is a scalar (dot(n, grad(u)) is the normal "
                  "derivative of u)"},
        ErrorCase{"d(n_x, x)", 3,
                  "the normal n has no derivative: it is data given per boundary "
                  "point"},
        ErrorCase{"u + d(u*dot(n, grad(u)), x)", 13,
                  "the normal n has no derivative: it is data given per boundary point"},
        ErrorCase{"div(n)", 5,
                  "the normal n has no derivative: it is data given per boundary "
                  "point"},
        // the functions of autodiff/functions.h, conditions and where()
        ErrorCase{"atan2(u)", 1, "atan2 takes 2 arguments, found 1"},
        ErrorCase{"u + where(u > 0, u)", 5, "where takes 3 arguments, found 2"},
        ErrorCase{"min(u, 1, 2)", 1, "min takes 2 arguments, found 3"},
        ErrorCase{"max(u, grad(u))", 8, "max takes a scalar, but 'grad(u)' is a vector"},
        ErrorCase{"where(0 < u < 1, u, 0)", 13,
                  "comparisons do not chain: write 'a < b and b < c'"},
        ErrorCase{"where(n <= 1, u, 0)", 7, "'<=' takes scalars, but 'n' is a vector"},
        ErrorCase{"where(u > 0 and n, u, 0)", 13, "'and' takes scalars, but 'n' is a vector"},
        ErrorCase{"where(not grad(u), u, 0)", 11, "'not' takes scalars, but 'grad(u)' is a vector"},
        ErrorCase{"u + and", 5, "'and' is a logical operator, not a value (as in x > 0 and y < 1)"},
        ErrorCase{"where(u > 0 or, u, 0)", 15, "expected an expression, found ','"},
        ErrorCase{"where(u ! 0, u, 0)", 9, "unexpected character '!'"},
        ErrorCase{"where(u >= 0, u, 0) = = 1", 23, "expected an expression, found '='"}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(ParseErrors, ExactFormatWithCaret) {
  expect_user_error([&] { parse("u_t + u*v_x", burgers_context()); },
                    "in 'u_t + u*v_x': column 9: unknown field 'v' (fields: u)\n"
                    "  u_t + u*v_x\n"
                    "          ^");
}

TEST(ParseErrors, VectorResidual) {
  expect_user_error([&] { parse("grad(u)", burgers_context()); },
                    "in 'grad(u)': the equation is a vector ('grad(u)'); a residual must be a "
                    "scalar (dot(v, w) and div(v) make scalars)");
}

TEST(ParseErrors, VecNeedsOneComponentPerSpatialCoordinate) {
  Context ctx;
  ctx.field("u").coordinates({"x", "y"}).time("t");
  expect_user_error(
      [&] { parse("div(vec(u))", ctx); },
      at("div(vec(u))", 5, "vec takes 2 components (one per spatial coordinate: x, y), found 1"));
}

TEST(ParseErrors, MultiLetterCoordinatesInShorthand) {
  Context ctx;
  ctx.field("u").coordinates({"x1", "x2"});
  expect_user_error([&] { parse("u_x1", ctx); },
                    at("u_x1", 3,
                       "'x' in 'u_x1' is not a coordinate (coordinates: x1, x2); the shorthand "
                       "takes one letter per coordinate, so multi-letter coordinates need d(), "
                       "as in d(u, x1)"));
}

TEST(ParseErrors, NoSpatialCoordinate) {
  Context ctx;
  ctx.field("u").time("t");
  expect_user_error(
      [&] { parse("u_t - laplacian(u)", ctx); },
      at("u_t - laplacian(u)", 7, "laplacian needs a spatial coordinate; none is declared"));
  expect_user_error([&] { parse("n_t", ctx); },
                    at("n_t", 3,
                       "'t' in 'n_t' is not a spatial coordinate (spatial "
                       "coordinates: none)"));
  expect_user_error([&] { parse("u*n", ctx); },
                    at("u*n", 3, "the normal n needs a spatial coordinate; none is declared"));
}

TEST(ContextErrors, Definitions) {
  Context ctx = burgers_context();
  expect_user_error([&] { ctx.define("f", "sin(q)"); },
                    "in the definition of 'f' = 'sin(q)': column 5: unknown name 'q' (fields: u; "
                    "coordinates: x, t; constants: nu)\n"
                    "  sin(q)\n"
                    "      ^");
  expect_user_error(
      [&] { ctx.define("g", "u = 1"); },
      "in the definition of 'g' = 'u = 1': column 3: a definition is an expression, not an "
      "equation: '=' is not allowed\n"
      "  u = 1\n"
      "    ^");
  expect_user_error([&] { ctx.define("h", "d(n_x, t)"); },
                    "in the definition of 'h' = 'd(n_x, t)': column 3: the normal n has no "
                    "derivative: it is data given per boundary point\n"
                    "  d(n_x, t)\n"
                    "    ^");
}

TEST(ContextErrors, Declarations) {
  Context ctx = burgers_context();
  expect_user_error([&] { ctx.field("pi"); },
                    "context: 'pi' is reserved by the expression language (pi, n, d, the "
                    "functions, and, or, not)");
  expect_user_error([&] { ctx.constant("n", 1); },
                    "context: 'n' is reserved by the expression language (pi, n, d, the "
                    "functions, and, or, not)");
  expect_user_error([&] { ctx.param("grad", 1); },
                    "context: 'grad' is reserved by the expression language (pi, n, d, the "
                    "functions, and, or, not)");
  expect_user_error([&] { ctx.coordinate("u"); }, "context: 'u' is already declared as a field");
  expect_user_error([&] { ctx.param("nu", 1); }, "context: 'nu' is already declared as a constant");
  expect_user_error([&] { ctx.field("2u"); },
                    "context: '2u' is not a name (letters, digits and '_', starting with a "
                    "letter)");
  expect_user_error([&] { ctx.time("s"); }, "context: a second time coordinate 's' (time is 't')");
}

}  // namespace
}  // namespace jetpde::equations
