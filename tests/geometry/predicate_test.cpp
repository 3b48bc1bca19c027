// The predicate language: precedence, parentheses, arithmetic, chains, tolerance, errors.
#include <gtest/gtest.h>

#include <numbers>

#include "geometry/predicate.h"
#include "tests/support/user_error.h"

namespace jetpde::geometry {
namespace {

bool eval(const std::string& text, std::vector<double> p, double tol = 1e-9) {
  return compile_predicate(text, {"x", "y", "t"}, tol)(p);
}

TEST(Predicate, ComparisonsAndLogic) {
  EXPECT_TRUE(eval("x == 0", {0, 5, 0}));
  EXPECT_FALSE(eval("x != 0", {0, 5, 0}));
  EXPECT_TRUE(eval("x < 1 and y >= 0.5", {0.5, 0.5, 0}));
  EXPECT_FALSE(eval("x < 1 and y > 0.5", {0.5, 0.5, 0}));
  EXPECT_TRUE(eval("x > 1 or y <= 0.5", {0.5, 0.5, 0}));
  EXPECT_TRUE(eval("not x > 1", {0.5, 0, 0}));
  // and binds tighter than or; not tighter than and.
  EXPECT_TRUE(eval("x == 1 or x == 0 and y == 0", {1, 5, 0}));
  EXPECT_FALSE(eval("(x == 1 or x == 0) and y == 0", {1, 5, 0}));
  EXPECT_FALSE(eval("not x == 0 and y == 0", {0, 0, 0}));
  EXPECT_TRUE(eval("not (x == 0 and y == 1)", {0, 0, 0}));
}

TEST(Predicate, ArithmeticPiAndChains) {
  EXPECT_TRUE(eval("t == pi / 2", {0, 0, std::numbers::pi / 2}));
  EXPECT_TRUE(eval("x + y <= 1", {0.25, 0.75, 0}));
  EXPECT_TRUE(eval("(x + 1) * 2 == 3", {0.5, 0, 0}));
  EXPECT_TRUE(eval("-x == -2 * -y", {-1, 0.5, 0}));
  EXPECT_TRUE(eval("0 < x < 1", {0.5, 0, 0}));
  EXPECT_FALSE(eval("0 < x < 1", {1.5, 0, 0}));
  EXPECT_TRUE(eval("1e-3 < x", {0.01, 0, 0}));
  EXPECT_TRUE(eval(".5 == x", {0.5, 0, 0}));
}

TEST(Predicate, ToleranceAppliesToEveryComparison) {
  EXPECT_TRUE(eval("x == 1", {1 + 1e-10, 0, 0}));
  EXPECT_FALSE(eval("x == 1", {1 + 1e-8, 0, 0}));
  EXPECT_TRUE(eval("x <= 1", {1 + 1e-10, 0, 0}));
  EXPECT_FALSE(eval("x < 1", {1 - 1e-10, 0, 0}));  // < is the negation of >=
  EXPECT_TRUE(eval("x >= 1", {1 - 1e-10, 0, 0}));
  EXPECT_FALSE(eval("x > 1", {1 + 1e-10, 0, 0}));
  EXPECT_TRUE(eval("x != 1", {1 + 1e-8, 0, 0}));
}

TEST(Predicate, ErrorsNameTheColumn) {
  using jetpde::testing::expect_user_error;
  auto compile = [](const std::string& text) { compile_predicate(text, {"x", "y"}, 1e-9); };
  expect_user_error([&] { compile("x === 0"); }, "predicate 'x === 0', column 5: unexpected '='");
  expect_user_error([&] { compile("x = 0"); }, "predicate 'x = 0', column 3: unexpected '='");
  expect_user_error([&] { compile(""); },
                    "predicate '', column 1: expected a number or a coordinate, got end of input");
  expect_user_error([&] { compile("x"); },
                    "predicate 'x', column 2: expected a comparison (==, !=, <, <=, >, >=), got "
                    "end of input");
  expect_user_error([&] { compile("x == 0 and"); },
                    "predicate 'x == 0 and', column 11: expected a number or a coordinate, got "
                    "end of input");
  expect_user_error([&] { compile("(x == 0"); },
                    "predicate '(x == 0', column 8: expected ')', got end of input");
  expect_user_error([&] { compile("x == 0)"); }, "predicate 'x == 0)', column 7: unexpected ')'");
  expect_user_error([&] { compile("z > 1"); },
                    "predicate 'z > 1', column 1: unknown name 'z'; the coordinates are x, y");
  expect_user_error([&] { compile("x > 1 & y < 2"); },
                    "predicate 'x > 1 & y < 2', column 7: unexpected '&'");
  expect_user_error([&] { compile("x == 0 y == 1"); },
                    "predicate 'x == 0 y == 1', column 8: unexpected 'y'");
}

}  // namespace
}  // namespace jetpde::geometry
