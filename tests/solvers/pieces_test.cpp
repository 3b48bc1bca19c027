// Decomposition pieces given as geometries (solvers/model.h, Decomposition::pieces): a point's
// piece is the first containing it; xpinn interfaces are found where two pieces' boundaries meet
// inside the domain and their points lie on both boundaries with the first piece's unit outward
// normals; fbpinn boxes grow by their own widths; the grid's flux term (now n . grad u with
// n = the face's axis) equals the axis derivative's jump it was; every check's error; small
// pieces problems train to a stated error.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "autodiff/interpreter.h"
#include "equations/analysis.h"
#include "equations/lower.h"
#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/polygon.h"
#include "solvers/model.h"
#include "solvers/problem.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde::solvers {
namespace {

using jetpde::testing::expect_user_error;

const nn::NetworkSpec kNet{.inputs = 2, .hidden = {4}, .outputs = 1};

// The unit disk as an inner disk of radius 0.5 and the annulus around it.
geometry::GeometryPtr unit_disk() { return geometry::disk({0, 0}, 1); }
Decomposition disk_and_annulus() {
  return {.method = DecompositionMethod::xpinn,
          .pieces = {geometry::disk({0, 0}, 0.5),
                     geometry::subtract(geometry::disk({0, 0}, 1), geometry::disk({0, 0}, 0.5))}};
}

// The L [0, 1]^2 minus [0.5, 1]^2 and the three boxes that tile it.
geometry::GeometryPtr l_shape() {
  return geometry::polygon({{0, 0}, {1, 0}, {1, 0.5}, {0.5, 0.5}, {0.5, 1}, {0, 1}});
}
std::vector<geometry::GeometryPtr> l_boxes() {
  return {geometry::rectangle({0, 0}, {0.5, 0.5}), geometry::rectangle({0.5, 0}, {1, 0.5}),
          geometry::rectangle({0, 0.5}, {0.5, 1})};
}

int piece_of(const Model& m, double x, double y) {
  const std::vector<double> p{x, y};
  return m.cell_of(p.data());
}

TEST(Pieces, APointIsTheFirstPieceContainingIt) {
  const Model m(kNet, disk_and_annulus(), *unit_disk());
  EXPECT_TRUE(m.has_pieces());
  EXPECT_TRUE(m.grid().empty());
  EXPECT_EQ(m.describe(), "xpinn 2 pieces: disk, difference, one network each, hidden 4");
  EXPECT_EQ(piece_of(m, 0.1, 0.2), 0);
  EXPECT_EQ(piece_of(m, 0.7, 0.1), 1);
  EXPECT_EQ(piece_of(m, -0.2, -0.9), 1);
  EXPECT_EQ(m.region_of(std::vector<double>{0.3, -0.3}.data()), (Region{0}));
  // Each network over its piece's bounding box (xpinn: no overlap).
  ASSERT_EQ(m.boxes().size(), 2u);
  EXPECT_EQ(m.boxes()[0].lo, (std::vector<double>{-0.5, -0.5}));
  EXPECT_EQ(m.boxes()[1].hi, (std::vector<double>{1, 1}));
  ASSERT_TRUE(m.network_specs()[0].normalization);
  EXPECT_EQ(m.network_specs()[0].normalization->upper, (std::vector<double>{0.5, 0.5}));
  // Two pieces on two ranks: one each.
  EXPECT_EQ(Model::owner(0, 2, 2), 0);
  EXPECT_EQ(Model::owner(1, 2, 2), 1);
  // Only the interface of the two pieces; the windows are each point's piece's.
  ASSERT_EQ(m.interfaces().size(), 1u);
  EXPECT_EQ(m.interfaces()[0].a, 0);
  EXPECT_EQ(m.interfaces()[0].b, 1);
  EXPECT_EQ(m.interfaces()[0].axis, -1);
  EXPECT_TRUE((m.windows((MatrixD(2, 2) << 0.1, 0, 0.9, 0).finished()).array() ==
               (MatrixD(2, 2) << 1, 0, 0, 1).finished().array())
                  .all());
}

TEST(Pieces, InterfacePointsLieOnBothBoundariesWithUnitNormals) {
  const auto domain = unit_disk();
  const Model m(kNet, disk_and_annulus(), *domain);
  const geometry::PointSet s = m.interface_points(0, *domain, 64, 5);
  ASSERT_EQ(s.points.rows(), 64);
  for (Eigen::Index i = 0; i < 64; ++i) {
    const double r = s.points.row(i).matrix().norm();
    EXPECT_NEAR(r, 0.5, 1e-12);
    // The inner disk's outward normal: radial, of unit length.
    EXPECT_NEAR(s.normals.row(i).matrix().norm(), 1, 1e-12);
    EXPECT_NEAR((s.normals.row(i) - s.points.row(i) / r).matrix().norm(), 0, 1e-12);
  }
  // Another seed, other points.
  EXPECT_GT((m.interface_points(0, *domain, 64, 6).points - s.points).matrix().norm(), 0.1);

  // The L's boxes under xpinn: the corner box meets each arm on a segment; the arms touch at
  // (0.5, 0.5) alone, which is on the domain's boundary: no interface.
  const auto l = l_shape();
  const Model boxes(kNet, {.method = DecompositionMethod::xpinn, .pieces = l_boxes()}, *l);
  ASSERT_EQ(boxes.interfaces().size(), 2u);
  EXPECT_EQ(boxes.interfaces()[0].b, 1);
  EXPECT_EQ(boxes.interfaces()[1].b, 2);
  const geometry::PointSet x = boxes.interface_points(0, *l, 40, 1);
  const geometry::PointSet y = boxes.interface_points(1, *l, 40, 1);
  ASSERT_EQ(x.points.rows(), 40);
  ASSERT_EQ(y.points.rows(), 40);
  for (Eigen::Index i = 0; i < 40; ++i) {
    EXPECT_NEAR(x.points(i, 0), 0.5, 1e-12);
    EXPECT_GT(x.points(i, 1), 0);
    EXPECT_LT(x.points(i, 1), 0.5);
    EXPECT_EQ(x.normals(i, 0), 1);
    EXPECT_EQ(x.normals(i, 1), 0);
    EXPECT_NEAR(y.points(i, 1), 0.5, 1e-12);
    EXPECT_EQ(y.normals(i, 0), 0);
    EXPECT_EQ(y.normals(i, 1), 1);
  }
}

TEST(Pieces, FbpinnBoxesGrowByTheirOwnWidths) {
  Decomposition d{.method = DecompositionMethod::fbpinn, .pieces = l_boxes(), .overlap = 0.2};
  d.pieces[1] = geometry::rectangle({0.5, 0}, {1.5, 0.5});  // twice as wide
  const auto domain = geometry::unite(geometry::rectangle({0, 0}, {1.5, 0.5}),
                                      geometry::rectangle({0, 0.5}, {0.5, 1}));
  const Model m(kNet, d, *domain);
  EXPECT_EQ(m.describe(),
            "fbpinn 3 pieces: rectangle, rectangle, rectangle (overlap 0.2), one network each, "
            "hidden 4");
  EXPECT_NEAR(m.boxes()[0].lo[0], -0.05, 1e-15);
  EXPECT_NEAR(m.boxes()[1].lo[0], 0.4, 1e-15);
  EXPECT_NEAR(m.boxes()[1].hi[0], 1.6, 1e-15);
  EXPECT_NEAR(m.boxes()[2].hi[1], 1.05, 1e-15);
  EXPECT_TRUE(m.interfaces().empty());
  // Where boxes overlap, the windows blend and sum to 1; where one covers, it alone.
  const MatrixD p = (MatrixD(4, 2) << 0.5, 0.25, 0.25, 0.5, 0.1, 0.1, 1.2, 0.3).finished();
  const MatrixD w = m.windows(p);
  for (Eigen::Index i = 0; i < 4; ++i) EXPECT_NEAR(w.row(i).sum(), 1, 1e-14);
  EXPECT_GT(w(0, 0), 0.1);
  EXPECT_GT(w(0, 1), 0.1);
  EXPECT_EQ(w(0, 2), 0);
  EXPECT_GT(w(1, 2), 0.1);
  EXPECT_EQ(w(2, 0), 1);
  EXPECT_EQ(w(3, 1), 1);
  // Outside every box (the L's missing corner, for output grids): the nearest box alone.
  EXPECT_EQ(m.region_of(std::vector<double>{1.2, 0.9}.data()), (Region{1}));
}

// The old flux term on a grid face: the jump of the axis derivative, lowered on each side's
// network; the problem's (n . grad u with n the axis) is the same number.
TEST(Pieces, GridFluxIsTheAxisDerivativesJump) {
  ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {2, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u) + 1"};
  spec.pinn.interior_points = 32;
  spec.pinn.network.hidden = {6};
  spec.pinn.decomposition = {.method = DecompositionMethod::xpinn, .subdomains = {2, 2}};
  spec.pinn.decomposition.interface_points = 16;
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  Problem p(spec);
  const Eigen::VectorXd theta = p.initial_theta(3);
  p.objective().evaluate(theta);
  const auto& names = p.objective().slot_names();
  const auto slot = std::find(names.begin(), names.end(), "interface_flux") - names.begin();
  const double flux = p.objective().slot_losses()[static_cast<std::size_t>(slot)];

  const Model& m = p.model();
  Graph g(DType::f64);
  ModelGraph net = m.build(g);
  Bindings values = p.objective().layout().unflatten(theta);
  double sum = 0;
  Eigen::Index rows = 0;
  for (std::size_t f = 0; f < m.interfaces().size(); ++f) {
    const Model::Interface& in = m.interfaces()[f];
    const MatrixD& at = p.objective().inputs().at("interface" + std::to_string(f) + "_a");
    const std::string text = in.axis == 0 ? "u_x" : "u_y";
    std::vector<Var> side;
    for (int cell : {in.a, in.b}) {
      const std::string name = "f" + std::to_string(f) + "_" + std::to_string(cell);
      const Var x = g.input(name, {at.rows(), 2});
      values[name] = at;
      const std::vector<equations::Equation> eqs{equations::parse(text, spec.math.context, "flux")};
      Taylor taylor(equations::plan_for(eqs, spec.math.context, x));
      side.push_back(equations::lower(
          eqs, spec.math.context,
          {.coordinates = x,
           .outputs = net.fields(x, {{.region = {cell}, .first = 0, .count = at.rows()}})},
          taylor)[0]);
    }
    const MatrixD jump = evaluate(side[0] - side[1], values);
    sum += jump.matrix().squaredNorm();
    rows += jump.rows();
  }
  EXPECT_GT(flux, 1e-8);
  EXPECT_NEAR(flux, sum / static_cast<double>(rows), 1e-14 * flux);
}

TEST(Pieces, ErrorsNameThePieceAndAPoint) {
  const auto disk = unit_disk();
  Decomposition d = disk_and_annulus();
  d.pieces.resize(1);
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces: give at least 2 pieces, got 1 (one piece is one "
                    "network: leave out decomposition)");
  d = disk_and_annulus();
  d.method = DecompositionMethod::fbpinn;
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces[0]: disk (center (0, 0), radius 0.5) is not a box: an "
                    "FBPINN's windows are products over a box's axes, so its pieces must be boxes "
                    "(interval, rectangle, box, hypercube); method xpinn takes any shape");
  d = disk_and_annulus();
  d.pieces.push_back(geometry::rectangle({2, 2}, {3, 3}));
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces[2]: rectangle [2, 3] x [2, 3] lies entirely outside "
                    "the domain's bounding box [-1, 1] x [-1, 1]");
  d = disk_and_annulus();
  d.pieces[0] = geometry::disk({0, 0}, 0.6);
  expect_user_error(
      [&] { Model(kNet, d, *disk); },
      "decomposition.pieces[1]: overlaps decomposition.pieces[0], at the domain's point "
      "(-0.442942, "
      "0.376715) inside both (xpinn pieces must not overlap: a point is one network's; method "
      "fbpinn blends overlapping boxes)");
  d = disk_and_annulus();
  d.pieces[0] = geometry::disk({0, 0}, 0.4);
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces: the pieces leave part of the domain uncovered: its "
                    "point (-0.105685, -0.45289) is in none of them");
  d = disk_and_annulus();
  d.pieces[1] = geometry::interval(0, 1);
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces[1]: interval [0, 1] is 1-D, the domain is 2-D");
  d = disk_and_annulus();
  d.subdomains = {2, 2};
  expect_user_error([&] { Model(kNet, d, *disk); },
                    "decomposition.pieces: give pieces or subdomains, not both");
}

// u' = cos(4 x) on [-pi, pi], u(0) = 0 built in, on 3 uneven pieces (intervals), xpinn and
// fbpinn: a relative L2 error below 1e-2 each (measured below), in about a second each.
double train_pieces(DecompositionMethod method) {
  ProblemSpec spec;
  const double pi = std::numbers::pi;
  spec.math.domain = geometry::interval(-pi, pi);
  spec.math.context.fields({"u"}).coordinates({"x"});
  spec.math.equations = {"u_x - cos(4*x)"};
  spec.pinn.hard_constraints = {{.field = "u", .value = "0", .distance = "tanh(4*x)"}};
  spec.pinn.interior_points = 400;
  spec.pinn.network.hidden = {8, 8};
  spec.pinn.sampling.method = geometry::SampleMethod::sobol;
  spec.pinn.decomposition = {.method = method,
                             .pieces = {geometry::interval(-pi, -1), geometry::interval(-1, 0.5),
                                        geometry::interval(0.5, pi)},
                             .overlap = 0.4,
                             .output_scale = 0.25};
  spec.pinn.decomposition.interface_points = 1;
  Problem p(spec);
  if (method == DecompositionMethod::xpinn) {
    // The interfaces are the two inner end points, with the left piece's normal +1.
    EXPECT_EQ(p.model().interfaces().size(), 2u);
    EXPECT_EQ(p.objective().inputs().at("interface1_a")(0, 0), 0.5);
    EXPECT_EQ(p.objective().inputs().at("interface1_normals")(0, 0), 1);
  }
  Eigen::VectorXd theta = p.initial_theta(0);
  Trainer t(p.objective(),
            {{.name = "adam", .steps = 1500, .options = nn::AdamOptions{.schedule = {.lr = 1e-2}}},
             {.name = "lbfgs", .optimizer = "lbfgs", .steps = 300}});
  t.train(theta);
  MatrixD at(201, 1);
  for (int i = 0; i < 201; ++i) at(i, 0) = -pi + 2 * pi * i / 200;
  const MatrixD exact = (4 * at.array()).sin() / 4;
  return (p.evaluate(theta, at) - exact).matrix().norm() / exact.matrix().norm();
}

TEST(Pieces, SmallXpinnPiecesReachTheirError) {
  const double err = train_pieces(DecompositionMethod::xpinn);
  std::cout << "  xpinn cos(4x), 3 pieces: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

TEST(Pieces, SmallFbpinnPiecesReachTheirError) {
  const double err = train_pieces(DecompositionMethod::fbpinn);
  std::cout << "  fbpinn cos(4x), 3 pieces: rel_l2 " << err << "\n";
  EXPECT_LT(err, 1e-2);
}

}  // namespace
}  // namespace jetpde::solvers
