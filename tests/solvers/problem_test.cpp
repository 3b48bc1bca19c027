// Problems declared as mathematics, assembled and trained with small budgets: Poisson 2-D with
// Dirichlet conditions, a periodic problem with matched derivatives, Neumann and Robin conditions
// against an exact solution, an inverse problem with data and a trainable constant, Burgers'
// initial condition; adaptive sampling; and every assembly error with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/time_product.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;
using Kind = Condition::Kind;
constexpr double kPi = std::numbers::pi;

std::vector<Stage> stages(int adam, int lbfgs, double lr = 1e-2) {
  return {{.name = "adam", .steps = adam, .options = nn::AdamOptions{.schedule = {.lr = lr}}},
          {.name = "lbfgs",
           .optimizer = "lbfgs",
           .steps = lbfgs,
           .options = nn::LbfgsOptions{.gradient_tolerance = 1e-10, .function_tolerance = 0}}};
}

MatrixD grid2d(int n, double a, double b) {
  MatrixD p(n * n, 2);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      p.row(i * n + j) << a + (b - a) * i / (n - 1), a + (b - a) * j / (n - 1);
  return p;
}

// Laplace's equation on the unit square, 16 points, a 4-wide network: for assembly checks.
ProblemSpec tiny_square_spec() {
  ProblemSpec base;
  base.domain = geometry::rectangle({0, 0}, {1, 1});
  base.context.fields({"u"}).coordinates({"x", "y"});
  base.equations = {"laplacian(u)"};
  base.interior_points = 16;
  base.network.hidden = {4};
  return base;
}

double rel_l2(const MatrixD& a, const MatrixD& b) {
  return (a - b).matrix().norm() / b.matrix().norm();
}

TEST(Problem, PoissonOnTheUnitSquareWithDirichletConditions) {
  ProblemSpec spec;
  spec.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {"-laplacian(u) = 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.interior_points = 256;
  spec.conditions = {{.kind = Kind::dirichlet, .value = "0", .points = 128, .weight = 10}};
  spec.network.hidden = {20, 20};
  spec.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(), (std::vector<std::string>{"pde", "dirichlet_u"}));
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(), stages(500, 1500));
  EXPECT_EQ(p.objective().weights(), (std::vector<double>{1.0, 10.0}));  // the condition's weight
  const TrainResult r = t.train(theta);
  EXPECT_EQ(t.history().front().weights, (std::vector<double>{1.0, 10.0})) << "kept by the trainer";
  const MatrixD at = grid2d(21, 0, 1);
  const MatrixD exact = (at.col(0) * kPi).sin() * (at.col(1) * kPi).sin();
  const double err = rel_l2(p.evaluate(theta, at), exact);
  std::cout << "  poisson2d: rel_l2 " << err << "; " << r.message << "\n";
  EXPECT_LT(err, 1e-2);
}

// Expressions of an untrained network at points: a field is evaluate()'s column, a derivative
// matches central differences of evaluate(), the residual is its expression, a constant broadcasts.
TEST(Problem, EvaluateExpressionsMatchesFieldsAndDifferences) {
  ProblemSpec spec;
  spec.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {"-laplacian(u) - 1"};
  spec.interior_points = 16;
  spec.network.hidden = {8, 8};
  spec.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec);
  const Eigen::VectorXd theta = p.initial_theta(4);
  const MatrixD at = grid2d(3, 0.2, 0.8);
  const MatrixD e = p.evaluate_expressions(theta, at, {"u", "u_x", "-laplacian(u) - 1", "2*pi"});
  ASSERT_EQ(e.cols(), 4);
  EXPECT_LT((e.col(0) - p.evaluate(theta, at).col(0)).abs().maxCoeff(), 1e-14);
  const double h = 1e-5;
  MatrixD plus = at, minus = at;
  plus.col(0) += h;
  minus.col(0) -= h;
  const MatrixD fd = (p.evaluate(theta, plus) - p.evaluate(theta, minus)) / (2 * h);
  EXPECT_LT((e.col(1) - fd.col(0)).abs().maxCoeff(), 1e-8);
  const MatrixD again = p.evaluate_expressions(theta, at, {"u_xx + u_yy"});
  EXPECT_LT((e.col(2) + again.col(0) + 1.0).abs().maxCoeff(), 1e-12);
  EXPECT_TRUE((e.col(3) == 2 * kPi).all());
  expect_user_error([&] { p.evaluate_expressions(theta, MatrixD(2, 3), {"u"}); },
                    "problem: evaluate wants points with 2 columns (x, y), got 3");
}

TEST(Problem, PeriodicConditionsMatchTheFieldAndItsDerivative) {
  // -u_xx = 4 pi^2 sin(2 pi x) on (0, 1), u and u_x periodic, u(1/4) = 1: u = sin(2 pi x).
  ProblemSpec spec;
  spec.domain = geometry::interval(0, 1);
  spec.context.fields({"u"}).coordinates({"x"});
  spec.equations = {"-u_xx - 4*pi^2*sin(2*pi*x)"};
  spec.interior_points = 64;
  MatrixD quarter(1, 1), one(1, 1);
  quarter << 0.25;
  one << 1.0;
  spec.conditions = {{.kind = Kind::periodic, .coordinate = "x", .derivatives = 1, .points = 1},
                     {.kind = Kind::data, .data_points = quarter, .data_values = one}};
  spec.network.hidden = {16, 16};
  Problem p(spec);
  EXPECT_EQ(p.objective().terms()[1].residual.shape(), (Shape{1, 2}));  // u and u_x
  Eigen::VectorXd theta = p.initial_theta(1);
  Trainer(p.objective(), stages(300, 300)).train(theta);
  MatrixD x(101, 1);
  for (int i = 0; i <= 100; ++i) x(i, 0) = i / 100.0;
  const double err = rel_l2(p.evaluate(theta, x), (x * (2 * kPi)).sin());
  std::cout << "  periodic: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

TEST(Problem, NeumannAndRobinConditionsOnADisk) {
  // u = x^2 + y^2 on the unit disk: laplacian u = 4; on the circle du/dn = 2r = 2, and
  // u + du/dn = 3. One half of the circle takes Neumann, the other Robin, with u(0,0) = 0 as data.
  ProblemSpec spec;
  spec.domain = geometry::disk({0, 0}, 1);
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {"laplacian(u) - 4"};
  spec.interior_points = 256;
  MatrixD origin = MatrixD::Zero(1, 2), zero = MatrixD::Zero(1, 1);
  spec.conditions = {
      {.kind = Kind::neumann, .on = "x < 0", .value = "2", .points = 64},
      {.kind = Kind::robin, .on = "x >= 0", .value = "3", .alpha = 1, .beta = 1, .points = 64},
      {.kind = Kind::data, .data_points = origin, .data_values = zero}};
  spec.network.hidden = {20, 20};
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(),
            (std::vector<std::string>{"pde", "neumann_u", "robin_u", "data_u"}));
  Eigen::VectorXd theta = p.initial_theta(2);
  Trainer(p.objective(), stages(300, 400)).train(theta);
  MatrixD at = grid2d(15, -0.7, 0.7);
  const double err = rel_l2(p.evaluate(theta, at), at.col(0).square() + at.col(1).square());
  std::cout << "  neumann/robin: rel_l2 " << err << "\n";
  EXPECT_LT(err, 2e-2);
}

TEST(Problem, AnInverseProblemRecoversATrainableConstant) {
  // u_x = a u with data from u = exp(0.7 x): a -> 0.7.
  ProblemSpec spec;
  spec.domain = geometry::interval(0, 1);
  spec.context.fields({"u"}).coordinates({"x"}).param("a", 0.2);
  spec.equations = {"u_x - a*u"};
  spec.interior_points = 64;
  Condition data{.kind = Kind::data};
  data.data_points = MatrixD(40, 1);
  for (int i = 0; i < 40; ++i) data.data_points(i, 0) = (i + 0.5) / 40;
  data.data_values = (data.data_points * 0.7).exp();
  spec.conditions = {data};
  spec.network.hidden = {16, 16};
  Problem p(spec);
  Eigen::VectorXd theta = p.initial_theta(3);
  EXPECT_DOUBLE_EQ(p.param(theta, "a"), 0.2);
  Trainer(p.objective(), stages(500, 300)).train(theta);
  std::cout << "  inverse: a = " << p.param(theta, "a") << "\n";
  EXPECT_NEAR(p.param(theta, "a"), 0.7, 0.007);  // 1%
  expect_user_error([&] { p.param(theta, "b"); },
                    "problem: no trainable constant 'b' (trainable: a)");
}

TEST(Problem, BurgersAssemblesItsInitialConditionAndTimeChunks) {
  ProblemSpec spec;
  spec.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
  spec.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / kPi);
  spec.equations = {"u_t + u*u_x - nu*u_xx"};
  spec.interior_points = 400;
  spec.time_chunks = 4;
  spec.conditions = {{.kind = Kind::initial_value, .value = "-sin(pi*x)", .points = 100},
                     {.kind = Kind::dirichlet, .on = "spatial", .value = "0", .points = 100}};
  spec.network.hidden = {16, 16};
  Problem p(spec);
  EXPECT_EQ(p.objective().slots(), 4 + 2);
  Eigen::VectorXd theta = p.initial_theta(4);
  const double before = p.objective().evaluate(theta);
  Trainer(p.objective(), stages(200, 1), {.causal_epsilon = 1.0}).train(theta);
  EXPECT_LT(p.objective().evaluate(theta), 0.5 * before);
  // Initial points lie on t = 0; interior points are ordered by time.
  const Bindings fresh = p.resample(9);
  EXPECT_EQ(fresh.at("condition0").col(1).abs().maxCoeff(), 0.0);
  const MatrixD& interior = fresh.at("interior");
  for (Eigen::Index i = 1; i < interior.rows(); ++i) ASSERT_LE(interior(i - 1, 1), interior(i, 1));
  // Adaptive sampling picks points where the residual is larger.
  const Bindings rad = p.adaptive_interior(theta, 4000, 5, 2.0, 0.0);
  EXPECT_EQ(rad.at("interior").rows(), 400);
  const MatrixD& picked = rad.at("interior");
  for (Eigen::Index i = 1; i < picked.rows(); ++i) ASSERT_LE(picked(i - 1, 1), picked(i, 1));
}

TEST(Problem, HardConstraintsHoldExactlyAndTrain) {
  // Burgers-like setup: u = -sin(pi x) + t (x + 1)(1 - x) N, exact on the initial and spatial
  // boundary before any training; and Poisson 2-D with the whole boundary built in.
  {
    ProblemSpec spec;
    spec.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);
    spec.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / kPi);
    spec.equations = {"u_t + u*u_x - nu*u_xx"};
    spec.interior_points = 64;
    spec.hard_constraints = {{.field = "u", .value = "-sin(pi*x)", .on = "initial, spatial"}};
    spec.network.hidden = {8};
    Problem p(spec);
    const Eigen::VectorXd theta = p.initial_theta(5);
    MatrixD edge(6, 2);
    edge << -0.3, 0.0, 0.7, 0.0, -1.0, 0.4, 1.0, 0.9, -1.0, 0.0, 0.2, 0.0;
    const MatrixD u = p.evaluate(theta, edge);
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(u(i, 0), -std::sin(kPi * edge(i, 0)), 1e-6) << i;  // f32 evaluation
  }
  ProblemSpec spec;
  spec.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {"-laplacian(u) = 2*pi^2*sin(pi*x)*sin(pi*y)"};
  spec.interior_points = 256;
  spec.hard_constraints = {{.field = "u"}};
  spec.network.hidden = {20, 20};
  spec.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  EXPECT_EQ(p.objective().slot_names(), (std::vector<std::string>{"pde"}));
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer(p.objective(), stages(300, 700)).train(theta);
  const MatrixD at = grid2d(21, 0, 1);
  const MatrixD exact = (at.col(0) * kPi).sin() * (at.col(1) * kPi).sin();
  const double err = rel_l2(p.evaluate(theta, at), exact);
  std::cout << "  poisson2d, hard boundary: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
  {
    ProblemSpec bad = spec;
    bad.domain =
        geometry::subtract(geometry::rectangle({0, 0}, {1, 1}), geometry::disk({0.5, 0.5}, 0.2));
    expect_user_error(
        [&] { Problem{bad}; },
        "hard constraint 1 on 'u': no automatic distance on " + bad.domain->describe() +
            " (boxes, time products of boxes, disks, spheres and STL parts have one): give "
            "`distance`");
    bad = spec;
    bad.hard_constraints = {{.field = "u", .value = "u_x"}};
    EXPECT_THROW(Problem{bad}, UserError);
  }
}

TEST(Problem, AssemblyErrorsNameTheCondition) {
  const ProblemSpec base = tiny_square_spec();
  {
    ProblemSpec s = base;
    s.context = equations::Context();
    s.context.fields({"u"}).coordinates({"x", "z"});
    expect_user_error([&] { Problem{s}; },
                      "problem: the equations' coordinates (x, z) differ from the domain's (x, y, "
                      "rectangle [0, 1] x [0, 1])");
  }
  {
    ProblemSpec s = base;
    s.conditions = {{.kind = Kind::dirichlet, .field = "v"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (dirichlet): unknown field 'v' (fields: u)");
  }
  {
    ProblemSpec s = base;
    s.conditions = {{.kind = Kind::initial_value, .name = "ic"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (initial_value 'ic'): an initial condition needs a time "
                      "coordinate");
  }
  {
    ProblemSpec s = base;
    s.domain = geometry::disk({0, 0}, 1);
    s.conditions = {{.kind = Kind::periodic, .coordinate = "x"}};
    expect_user_error([&] { Problem{s}; },
                      "condition 1 (periodic): periodic conditions need an axis-aligned box "
                      "domain, not disk (center (0, 0), radius 1)");
  }
  {
    ProblemSpec s = base;
    s.conditions = {{.kind = Kind::dirichlet, .on = "x == 5"}};
    try {
      Problem{s};
      ADD_FAILURE() << "no error for an empty piece";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 (dirichlet): ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("x == 5"), std::string::npos) << e.what();
    }
  }
  {
    ProblemSpec s = base;
    s.conditions = {{.kind = Kind::neumann, .value = "w"}};
    try {
      Problem{s};
      ADD_FAILURE() << "no error for an unknown name in a value";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 ('neumann_u'): in '", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
    }
  }
}

// Pure Neumann data fix u only up to a constant; one fixed point (a corner) pins it. Exact:
// u = x + y on the unit square, so du/dn = n_x + n_y, and u(0, 0) = 0.
TEST(Problem, APointConditionPinsTheConstantOfANeumannProblem) {
  ProblemSpec spec;
  spec.domain = geometry::rectangle({0, 0}, {1, 1});
  spec.context.fields({"u"}).coordinates({"x", "y"});
  spec.equations = {"laplacian(u)"};
  spec.interior_points = 128;
  MatrixD corner(1, 2);
  corner << 0, 0;
  MatrixD sides(2, 2);
  sides << 1, 0.5, 0.5, 1;  // on the faces x = 1 and y = 1: du/dn = 1 there
  spec.conditions = {{.kind = Kind::neumann, .name = "upper", .value = "1", .points = 128},
                     {.kind = Kind::dirichlet, .name = "pin", .value = "0", .at = corner},
                     {.kind = Kind::neumann, .name = "two", .value = "1", .at = sides}};
  spec.conditions[0].on = "x == 1 or y == 1";
  spec.conditions.push_back(
      {.kind = Kind::neumann, .on = "x == 0 or y == 0", .value = "-1", .points = 128});
  spec.network.hidden = {16};
  spec.sampling.method = geometry::SampleMethod::sobol;
  Problem p(spec);
  // The fixed points are bound as given, with the domain's outward normals, and kept when the
  // other point sets are drawn again.
  EXPECT_EQ(p.objective().inputs().at("condition1").rows(), 1);
  const Bindings again = p.resample(5);
  EXPECT_TRUE((again.at("condition1") == corner).all());
  EXPECT_TRUE((again.at("condition2") == sides).all());
  MatrixD normals(2, 2);
  normals << 1, 0, 0, 1;
  EXPECT_TRUE((again.at("condition2_normals") == normals).all());
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(), stages(300, 500));
  t.train(theta);
  MatrixD probe(3, 2);
  probe << 0, 0, 1, 1, 0.3, 0.6;
  const MatrixD u = p.evaluate(theta, probe);
  EXPECT_NEAR(u(0, 0), 0.0, 1e-2);
  EXPECT_NEAR(u(1, 0), 2.0, 1e-2);
  EXPECT_NEAR(u(2, 0), 0.9, 1e-2);
}

TEST(Problem, PointConditionErrors) {
  const ProblemSpec base = tiny_square_spec();
  const auto points = [](std::initializer_list<std::initializer_list<double>> rows) {
    MatrixD m(static_cast<Eigen::Index>(rows.size()),
              static_cast<Eigen::Index>(rows.begin()->size()));
    Eigen::Index i = 0;
    for (const auto& r : rows) {
      Eigen::Index j = 0;
      for (double v : r) m(i, j++) = v;
      ++i;
    }
    return m;
  };
  const auto with = [&](Condition c) {
    ProblemSpec s = base;
    s.conditions = {std::move(c)};
    return s;
  };
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .at = points({{0, 0, 0}})})};
      },
      "condition 1 (dirichlet): the points `at` have 3 coordinates, the domain has 2 (x, y)");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .on = "left", .at = points({{0, 0}})})};
      },
      "condition 1 (dirichlet): give either `on` (a boundary piece) or `at` (points), not both");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::dirichlet, .at = points({{0, 0}, {0.5, 1.5}})})};
      },
      "condition 1 (dirichlet): point 2 (0.5, 1.5) lies outside the domain's bounds: y must be in "
      "[0, 1]");
  expect_user_error(
      [&] {
        Problem{with({.kind = Kind::periodic, .at = points({{0, 0}})})};
      },
      "condition 1 (periodic): `at` (fixed points) is for dirichlet, neumann, robin "
      "and residual conditions, not periodic");
  {
    ProblemSpec s = with({.kind = Kind::dirichlet, .at = points({{0.05, 0.05}})});
    s.domain = geometry::subtract(geometry::rectangle({0, 0}, {1, 1}), geometry::disk({0, 0}, 0.2));
    try {
      Problem{s};
      ADD_FAILURE() << "no error for a point in the hole";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("condition 1 (dirichlet): point 1 (0.05, 0.05) lies "
                                            "outside difference(",
                                            0),
                0u)
          << e.what();
    }
  }
  // A corner asked for as a piece has measure zero: the message points at `at`.
  try {
    Problem{with({.kind = Kind::dirichlet, .on = "x == 0 and y == 0"})};
    ADD_FAILURE() << "no error for a corner piece";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("condition 1 (dirichlet): boundary piece 'x == 0 and y == 0' of rectangle"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("is empty"), std::string::npos) << what;
    EXPECT_NE(what.find("give the points as `at: [[x, y], ...]` instead of `on`"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace jetpde::solvers
