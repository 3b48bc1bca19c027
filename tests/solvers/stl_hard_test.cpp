// Hard constraints on an STL part (solvers/problem.h HardConstraint; D from the mesh's smooth
// distance, geometry/mesh_adf.h, fed to the graph as given Taylor streams): u = g on surface
// samples to rounding, the residual's Laplacian through D against finite differences of the
// fields, every point set bound (resampling, adaptive sampling, the evaluators), a few training
// steps, and the piece that has no automatic distance yet.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "geometry/sampler.h"
#include "geometry/stl.h"
#include "geometry/time_product.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using Vec3 = std::array<double, 3>;

// The box [0, 1] x [0, 1] x [0, 0.5] as 12 outward triangles, written as ASCII STL.
void write_box(const std::string& path) {
  const Vec3 hi{1, 1, 0.5};
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fprintf(f, "solid box\n");
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      const auto corner = [&](int a, int b) {
        Vec3 p{};
        p[static_cast<std::size_t>(axis)] = side * hi[static_cast<std::size_t>(axis)];
        p[static_cast<std::size_t>(u)] = a * hi[static_cast<std::size_t>(u)];
        p[static_cast<std::size_t>(v)] = b * hi[static_cast<std::size_t>(v)];
        return p;
      };
      std::array<Vec3, 3> t1{corner(0, 0), corner(1, 0), corner(1, 1)},
          t2{corner(0, 0), corner(1, 1), corner(0, 1)};
      if (!side) std::swap(t1[1], t1[2]), std::swap(t2[1], t2[2]);
      for (const auto& t : {t1, t2}) {
        std::fprintf(f, " facet normal 0 0 0\n  outer loop\n");
        for (const Vec3& p : t) std::fprintf(f, "   vertex %.17g %.17g %.17g\n", p[0], p[1], p[2]);
        std::fprintf(f, "  endloop\n endfacet\n");
      }
    }
  std::fprintf(f, "endsolid box\n");
  std::fclose(f);
}

class StlHard : public jetpde::testing::ScratchDirTest {
 protected:
  void SetUp() override {
    if (!geometry::stl_supported()) GTEST_SKIP() << "built without VTK's IOGeometry";
    ScratchDirTest::SetUp();
    write_box(path("box.stl"));
    spec_.math.domain = geometry::stl(path("box.stl"));
    spec_.math.context.fields({"u"}).coordinates({"x", "y", "z"});
    spec_.math.equations = {"-laplacian(u) = 4*sin(2*x)*cos(y)*exp(z)"};  // u = g solves it
    spec_.pinn.interior_points = 128;
    spec_.pinn.hard_constraints = {{.field = "u", .value = "sin(2*x)*cos(y)*exp(z)"}};
    spec_.pinn.network.hidden = {12, 12};
    spec_.pinn.sampling.method = geometry::SampleMethod::sobol;
  }
  ProblemSpec spec_;
};

TEST_F(StlHard, TheFieldIsTheValueOnTheSurface) {
  Problem p(spec_);
  const Eigen::VectorXd theta = p.initial_theta(1);
  const MatrixD surface = geometry::sample_boundary(*spec_.math.domain, 300, {.seed = 3}).points;
  const MatrixD u = p.evaluate(theta, surface);
  const MatrixD g = (2 * surface.col(0)).sin() * surface.col(1).cos() * surface.col(2).exp();
  // fp32 evaluation: g to rounding, while the network alone is far from it.
  EXPECT_LT((u - g).abs().maxCoeff(), 2e-6);
  // Inside, D N is not zero.
  const MatrixD inside = geometry::sample_interior(*spec_.math.domain, 50, {.seed = 4}).points;
  const MatrixD ui = p.evaluate(theta, inside);
  const MatrixD gi = (2 * inside.col(0)).sin() * inside.col(1).cos() * inside.col(2).exp();
  EXPECT_GT((ui - gi).abs().maxCoeff(), 1e-2);
}

TEST_F(StlHard, TheLaplacianThroughDMatchesFiniteDifferences) {
  spec_.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec_);
  const Eigen::VectorXd theta = p.initial_theta(2);
  const MatrixD at = geometry::sample_interior(*spec_.math.domain, 20, {.seed = 5}).points;
  const MatrixD lap = p.evaluate_expressions(theta, at, {"laplacian(u)", "u_x", "u"});
  const double h = 1e-4;
  MatrixD fd = MatrixD::Zero(at.rows(), 1), fx = MatrixD::Zero(at.rows(), 1);
  const MatrixD u0 = p.evaluate(theta, at);
  for (int k = 0; k < 3; ++k) {
    MatrixD plus = at, minus = at;
    plus.col(k) += h;
    minus.col(k) -= h;
    const MatrixD up = p.evaluate(theta, plus), um = p.evaluate(theta, minus);
    fd += (up - 2 * u0 + um) / (h * h);
    if (k == 0) fx = (up - um) / (2 * h);
  }
  const double scale = std::max(1.0, fd.abs().maxCoeff());
  EXPECT_LT((lap.col(0) - fd.col(0)).abs().maxCoeff(), 1e-4 * scale);
  EXPECT_LT((lap.col(1) - fx.col(0)).abs().maxCoeff(), 1e-7 * scale);
  EXPECT_LT((lap.col(2) - u0.col(0)).abs().maxCoeff(), 1e-12);
  // The reference side of a metric: the fields' graph (with D) is built there too.
  const MatrixD exact = p.evaluate_expressions_given(
      theta, at, {"laplacian(u)"}, {{"u", "sin(2*x)*cos(y)*exp(z)"}}, {}, MatrixD());
  const MatrixD g = (2 * at.col(0)).sin() * at.col(1).cos() * at.col(2).exp();
  EXPECT_LT((exact.col(0) + 4 * g.col(0)).abs().maxCoeff(), 1e-10);
}

TEST_F(StlHard, EveryPointSetIsBoundAndItTrains) {
  Problem p(spec_);
  Eigen::VectorXd theta = p.initial_theta(0);
  const double before = p.objective().evaluate(theta);
  // Resampled sets carry D's streams for the objective's points.
  const Bindings again = p.resample(9);
  EXPECT_TRUE(again.count("interior#adf"));
  EXPECT_GE(again.size(), 3u);  // the points, D and at least the Laplacian's stream
  p.objective().set_inputs(again);
  EXPECT_TRUE(std::isfinite(p.objective().evaluate(theta)));
  p.objective().set_inputs(p.adaptive_interior(theta, 256, 3));
  std::vector<Stage> stages{
      {.name = "adam", .steps = 30, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}}};
  Trainer(p.objective(), stages).train(theta);
  EXPECT_LT(p.objective().evaluate(theta), before);
}

// The evaluators' programs bind D on graphs of their own, each with its own last points: the
// training graph keeps its nodes, and the same points after other counts give the same values
// while other points of the same count get their own D.
TEST_F(StlHard, EvaluatorsBindDOnTheirOwnGraphs) {
  Problem p(spec_);
  const std::size_t nodes = p.graph().size();
  const Eigen::VectorXd theta = p.initial_theta(3);
  const std::vector<std::string> e{"u", "laplacian(u)"};
  const MatrixD at = geometry::sample_interior(*spec_.math.domain, 12, {.seed = 6}).points;
  const MatrixD first = p.evaluate_expressions(theta, at, e);
  for (int n = 5; n < 9; ++n) EXPECT_EQ(p.evaluate_expressions(theta, at.topRows(n), e).rows(), n);
  EXPECT_TRUE((p.evaluate_expressions(theta, at, e) == first).all());
  MatrixD other = at;
  other.col(0) *= 0.9;  // still in the box [0, 1] x [0, 1] x [0, 0.5]
  const MatrixD moved = p.evaluate_expressions(theta, other, e);
  EXPECT_FALSE((moved.col(0) == first.col(0)).all());
  // The 5-point program saw at's first rows last: D for these points, not those of last time
  // (to rounding: another points count is another compiled program).
  const MatrixD five = p.evaluate_expressions(theta, other.topRows(5), e);
  EXPECT_LT((five - moved.topRows(5)).abs().maxCoeff(), 1e-4 * (1 + moved.abs().maxCoeff()));
  EXPECT_EQ(p.graph().size(), nodes);
}

TEST_F(StlHard, APieceOfTheSurfaceIsItsTriangles) {
  // The bottom face z == 0 (its two triangles) as a hard constraint: u = g there exactly, not
  // on the top face; the Laplacian through the piece's D against finite differences.
  spec_.pinn.hard_constraints[0].on = "z == 0";
  spec_.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  {
    Problem p(spec_);
    const Eigen::VectorXd theta = p.initial_theta(5);
    const auto g = [](const MatrixD& at) -> MatrixD {
      return (2 * at.col(0)).sin() * at.col(1).cos() * at.col(2).exp();
    };
    MatrixD bottom =
        geometry::sample_boundary(*spec_.math.domain, 50, {.seed = 1}, "z == 0").points;
    MatrixD top = geometry::sample_boundary(*spec_.math.domain, 50, {.seed = 2}, "z == 0.5").points;
    EXPECT_LT((p.evaluate(theta, bottom) - g(bottom)).abs().maxCoeff(), 1e-12);
    EXPECT_GT((p.evaluate(theta, top) - g(top)).abs().maxCoeff(), 1e-2);
    const MatrixD at = geometry::sample_interior(*spec_.math.domain, 10, {.seed = 3}).points;
    const MatrixD lap = p.evaluate_expressions(theta, at, {"laplacian(u)"});
    const double h = 1e-4;
    const MatrixD u0 = p.evaluate(theta, at);
    MatrixD fd = MatrixD::Zero(at.rows(), 1);
    for (int k = 0; k < 3; ++k) {
      MatrixD plus = at, minus = at;
      plus.col(k) += h;
      minus.col(k) -= h;
      fd += (p.evaluate(theta, plus) - 2 * u0 + p.evaluate(theta, minus)) / (h * h);
    }
    EXPECT_LT((lap - fd).abs().maxCoeff(), 1e-4 * std::max(1.0, fd.abs().maxCoeff()));
    EXPECT_TRUE(p.resample(4).count("interior#adf0"));  // a piece's leaf is its field's own
  }
  spec_.pinn.hard_constraints[0].on = "z === 0";
  EXPECT_THROW(Problem{spec_}, UserError);  // the predicate's parse error
  spec_.pinn.hard_constraints[0].on = "z > 7";
  jetpde::testing::expect_user_error([&] { Problem{spec_}; },
                                     "hard constraint 1 on 'u': stl '" + path("box.stl") +
                                         "': no triangle has its vertices and centroid in 'z > 7'");
  spec_.pinn.hard_constraints[0].on = "z == 0, z == 0.5";
  EXPECT_THROW(Problem{spec_}, UserError);  // one predicate piece
  spec_.pinn.hard_constraints[0].on = "initial";
  EXPECT_THROW(Problem{spec_}, UserError);                    // no time
  spec_.pinn.hard_constraints[0].on = " surface , z > 0.25";  // the union: the whole surface
  EXPECT_NO_THROW(Problem{spec_});
  spec_.pinn.hard_constraints[0].on = "";
  spec_.compile.pipeline.precision = compiler::PrecisionPolicy::fp32;
  // A fourth-order equation needs D to order 4: still within the jets.
  spec_.math.equations = {"laplacian(laplacian(u))"};
  EXPECT_NO_THROW(Problem{spec_});
  spec_.math.equations = {"laplacian(laplacian(laplacian(u)))"};
  try {
    Problem{spec_};
    ADD_FAILURE() << "no error for a sixth-order equation";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("need order 6 derivatives of the smooth distance, which "
                                         "has them to order 4"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(StlHard, ATimeProductTakesTheSurfaceAndTheInitialFace) {
  // The heat equation on the part over t in [0, 2]: D = (mesh distance) * t/2 for "spatial,
  // initial", so u = g on the surface at every time and at t = 0 everywhere.
  ProblemSpec spec = spec_;
  spec.math.domain = geometry::time_product(spec_.math.domain, 0, 2);
  spec.math.context = equations::Context();
  spec.math.context.fields({"u"}).coordinates({"x", "y", "z"}).time("t");
  spec.math.equations = {"u_t - laplacian(u) = 0"};
  spec.pinn.hard_constraints = {
      {.field = "u", .value = "exp(-t)*sin(x)*cos(y)*exp(z)", .on = "spatial, initial"}};
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec);
  const Eigen::VectorXd theta = p.initial_theta(4);
  const auto g = [](const MatrixD& at) -> MatrixD {
    return (-at.col(3)).exp() * at.col(0).sin() * at.col(1).cos() * at.col(2).exp();
  };
  const MatrixD side =
      geometry::sample_boundary(*spec.math.domain, 100, {.seed = 1}, "spatial").points;
  EXPECT_LT((p.evaluate(theta, side) - g(side)).abs().maxCoeff(), 1e-12);
  MatrixD start = geometry::sample_interior(*spec.math.domain, 50, {.seed = 2}).points;
  start.col(3).setZero();
  EXPECT_LT((p.evaluate(theta, start) - g(start)).abs().maxCoeff(), 1e-12);
  // Inside, the derivatives through D (its time factor by the graph, its space part given)
  // against finite differences.
  const MatrixD at = geometry::sample_interior(*spec.math.domain, 10, {.seed = 3}).points;
  const MatrixD got = p.evaluate_expressions(theta, at, {"u_t", "laplacian(u)"});
  const MatrixD u0 = p.evaluate(theta, at);
  const double h = 1e-4;
  MatrixD lap = MatrixD::Zero(at.rows(), 1), ut;
  for (int k = 0; k < 4; ++k) {
    MatrixD plus = at, minus = at;
    plus.col(k) += h;
    minus.col(k) -= h;
    const MatrixD up = p.evaluate(theta, plus), um = p.evaluate(theta, minus);
    if (k < 3)
      lap += (up - 2 * u0 + um) / (h * h);
    else
      ut = (up - um) / (2 * h);
  }
  EXPECT_LT((got.col(0) - ut.col(0)).abs().maxCoeff(), 1e-6);
  EXPECT_LT((got.col(1) - lap.col(0)).abs().maxCoeff(), 1e-4 * std::max(1.0, lap.abs().maxCoeff()));
  // The whole boundary (final face included) and the surface alone assemble too; a time piece
  // of a bare part is the piece error.
  spec.pinn.hard_constraints[0].on = "";
  EXPECT_NO_THROW(Problem{spec});
  spec_.pinn.hard_constraints[0].on = "initial";
  EXPECT_THROW(Problem{spec_}, UserError);
}

}  // namespace
}  // namespace jetpde::solvers
