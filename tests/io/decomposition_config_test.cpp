// The config's `decomposition:` (solvers/model.h): its keys into the spec, the `auto` shorthand,
// the subdomains' network over the top-level one, and its errors with key paths and lines.
#include <gtest/gtest.h>

#include "io/config.h"
#include "solvers/model.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;

const std::string kSquare = R"(name: s
geometry: {type: rectangle, min: [0, 0], max: [2, 1]}
equations:
  - expression: laplacian(u) + 1
network:
  hidden: [8, 8]
  activation: sin
sampling: {interior_points: 64}
training:
  stages:
    - {optimizer: adam, steps: 1}
)";

RunConfig from(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return run_config_from_text(text, "test.yaml", "", overrides);
}

TEST(DecompositionConfig, AbsentIsOneNetwork) {
  const RunConfig c = from(kSquare);
  EXPECT_EQ(c.spec.pinn.decomposition.method, solvers::DecompositionMethod::none);
  EXPECT_FALSE(c.resolved["decomposition"]);
}

TEST(DecompositionConfig, KeysReachTheSpec) {
  const RunConfig c = from(kSquare +
                           "decomposition: {method: fbpinn, subdomains: [4, 2], "
                           "overlap: 0.25, output_scale: 0.5}\n");
  const solvers::Decomposition& d = c.spec.pinn.decomposition;
  EXPECT_EQ(d.method, solvers::DecompositionMethod::fbpinn);
  EXPECT_FALSE(d.automatic);
  EXPECT_EQ(d.subdomains, (std::vector<int>{4, 2}));
  EXPECT_DOUBLE_EQ(d.overlap, 0.25);
  EXPECT_DOUBLE_EQ(d.output_scale, 0.5);
  EXPECT_FALSE(d.network);
  const auto problem = build_problem(c, c.spec);
  EXPECT_EQ(problem->model().boxes().size(), 8u);
}

TEST(DecompositionConfig, AutoIsShortForMethodAuto) {
  const RunConfig c = from(kSquare + "decomposition: auto\n");
  EXPECT_TRUE(c.spec.pinn.decomposition.automatic);
  EXPECT_EQ(c.resolved["decomposition"]["method"].as<std::string>(), "auto");
  EXPECT_DOUBLE_EQ(c.resolved["decomposition"]["overlap"].as<double>(), 0.3);
  const auto problem = build_problem(c, c.spec);
  EXPECT_EQ(problem->model().grid(), (std::vector<int>{4, 1}));  // x is twice as long
}

TEST(DecompositionConfig, SubdomainNetworkTakesTheRestFromNetwork) {
  const RunConfig c =
      from(kSquare + "decomposition: {method: fbpinn, subdomains: [2], network: {hidden: [4]}}\n");
  ASSERT_TRUE(c.spec.pinn.decomposition.network);
  EXPECT_EQ(c.spec.pinn.decomposition.network->hidden, (std::vector<int>{4}));
  EXPECT_EQ(c.spec.pinn.decomposition.network->activation, nn::Activation::sin);
}

TEST(DecompositionConfig, XpinnInterfaceKeys) {
  const RunConfig c = from(kSquare +
                           "decomposition: {method: xpinn, subdomains: [2, 2], interface: {points: "
                           "32, flux_weight: 0.5, residual_weight: 2}}\n");
  const solvers::Decomposition& d = c.spec.pinn.decomposition;
  EXPECT_EQ(d.method, solvers::DecompositionMethod::xpinn);
  EXPECT_EQ(d.interface_points, 32);
  EXPECT_DOUBLE_EQ(d.solution_weight, 1);
  EXPECT_DOUBLE_EQ(d.flux_weight, 0.5);
  EXPECT_DOUBLE_EQ(d.residual_weight, 2);
  const auto problem = build_problem(c, c.spec);
  EXPECT_EQ(problem->model().interfaces().size(), 4u);
  EXPECT_EQ(problem->objective().slot_names().back(), "interface_residual");
  expect_user_error(
      [] {
        from(kSquare +
             "decomposition: {method: fbpinn, subdomains: [2], interface: {points: 8}}\n");
      },
      "test.yaml:12:61: decomposition.interface: only method xpinn has interface terms");
}

TEST(DecompositionConfig, ErrorsNameTheKeyAndLine) {
  expect_user_error([] { from(kSquare + "decomposition: {method: fbpinn}\n"); },
                    "test.yaml:12:25: decomposition.subdomains: missing: give the boxes per "
                    "coordinate ([4], [2, 2]), pieces (geometries), or method: auto");
  expect_user_error(
      [] { from(kSquare + "decomposition: {method: xyz, subdomains: [2]}\n"); },
      "test.yaml:12:25: decomposition.method: 'xyz' is not one of fbpinn, xpinn, auto");
  expect_user_error(
      [] { from(kSquare + "decomposition: {method: fbpinn, subdomains: [2], overlap: 1}\n"); },
      "test.yaml:12:59: decomposition.overlap: '1' is out of range (below 1)");
  expect_user_error(
      [] { from(kSquare + "decomposition: {method: fbpinn, subdomains: [2, 2, 2]}\n"); },
      "test.yaml:12:45: decomposition.subdomains: give 1 to 2 counts (one per "
      "coordinate, in coordinate order), got 3");
  expect_user_error([] { from(kSquare + "decomposition: yes\n"); },
                    "test.yaml:12:16: decomposition: expected a mapping, got 'yes'");
  // The subdomains' network is read as `network` is, its errors under its own path.
  expect_user_error(
      [] {
        from(kSquare +
             "decomposition: {method: fbpinn, subdomains: [2], network: {periodic: "
             "[{coordinate: z, period: 1}]}}\n");
      },
      "test.yaml:12:84: decomposition.network.periodic[0].coordinate: 'z' is not a coordinate");
}

// Pieces are written as `geometry` is and read by the same code; each error names its piece.
const std::string kDisk = R"(name: d
geometry: {type: disk, center: [0, 0], radius: 1}
equations:
  - expression: laplacian(u) + 1
network: {hidden: [8]}
sampling: {interior_points: 64}
training:
  stages:
    - {optimizer: adam, steps: 1}
)";

TEST(DecompositionConfig, PiecesAreGeometries) {
  const RunConfig c = from(kDisk + R"(decomposition:
  method: xpinn
  pieces:
    - {type: disk, center: [0, 0], radius: 0.5}
    - type: difference
      of: [{type: disk, center: [0, 0], radius: 1}, {type: disk, center: [0, 0], radius: 0.5}]
  interface: {points: 16}
)");
  const solvers::Decomposition& d = c.spec.pinn.decomposition;
  ASSERT_EQ(d.pieces.size(), 2u);
  EXPECT_EQ(d.pieces[1]->describe().rfind("difference", 0), 0u);
  EXPECT_TRUE(d.subdomains.empty());
  const auto problem = build_problem(c, c.spec);
  EXPECT_EQ(problem->model().describe(),
            "xpinn 2 pieces: disk, difference, one network each, hidden 8");
  ASSERT_EQ(problem->model().interfaces().size(), 1u);
  EXPECT_EQ(problem->objective().inputs().at("interface0_normals").rows(), 16);
}

TEST(DecompositionConfig, PiecesErrorsNameTheKeyAndLine) {
  const std::string boxes = R"(  pieces:
    - {type: rectangle, min: [-1, -1], max: [0, 1]}
    - {type: disk, center: [0.5, 0], radius: 0.5}
)";
  expect_user_error([&] { from(kDisk + "decomposition:\n  method: fbpinn\n" + boxes); },
                    "test.yaml:14:7: decomposition.pieces[1]: disk (center (0.5, 0), radius 0.5) "
                    "is not a box: an FBPINN's windows are products over a box's axes, so its "
                    "pieces must be boxes (interval, rectangle, box, hypercube); method xpinn "
                    "takes any shape");
  expect_user_error(
      [&] { from(kDisk + "decomposition:\n  method: xpinn\n  subdomains: [2]\n" + boxes); },
      "test.yaml:12:15: decomposition.subdomains: give either subdomains (a grid of boxes) or "
      "pieces (geometries), not both");
  expect_user_error([&] { from(kDisk + "decomposition:\n  method: auto\n" + boxes); },
                    "test.yaml:11:11: decomposition.method: auto chooses a grid of boxes: with "
                    "pieces, give method fbpinn or xpinn");
  expect_user_error(
      [&] {
        from(kDisk +
             "decomposition:\n  method: xpinn\n  pieces:\n    - {type: disk, center: [0, 0]}\n");
      },
      "test.yaml:13:14: decomposition.pieces[0].radius: missing (a disk needs it)");
  expect_user_error(
      [&] {
        from(kDisk +
             "decomposition:\n  method: xpinn\n  pieces:\n    - {type: rectangle, min: [-1, -1], "
             "max: [0, 1]}\n    - {type: rectangle, min: [0, -1], max: [1, 0.9]}\n");
      },
      "test.yaml:13:5: decomposition.pieces: the pieces leave part of the domain uncovered: its "
      "point (0.296415, 0.934463) is in none of them");
}

}  // namespace
}  // namespace jetpde::io
