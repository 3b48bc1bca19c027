// The config keys of the training recipes' pieces: network.rwf, network.architecture: pirate and
// training.weighting.kind: gradnorm, read into the specs, and their errors named by key path.
#include <gtest/gtest.h>

#include "io/config.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;

// `network` comes last: network(keys) appends its mapping.
const std::string kHeat = R"(name: h
geometry:
  type: interval
  min: [0]
  max: [1]
  time: [0, 1]
equations:
  - expression: u_t - 0.1*u_xx
conditions:
  - kind: initial_value
    value: sin(pi*x)
training:
  stages:
    - optimizer: adam
      steps: 10
  weighting:
    kind: gradnorm
    every: 20
)";

std::string network(const std::string& keys) { return kHeat + "network:\n" + keys; }

RunConfig from(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return run_config_from_text(text, "test.yaml", "", overrides);
}

TEST(NetworkKeys, RwfIsOffUnlessGivenAndReadWhenGiven) {
  const RunConfig plain = from(network("  hidden: [8, 8]\n"));
  EXPECT_FALSE(plain.spec.pinn.network.rwf.has_value());
  EXPECT_EQ(plain.weighting.kind, solvers::Weighting::Kind::gradnorm);
  EXPECT_EQ(plain.weighting.every, 20);
  const RunConfig defaults = from(network("  rwf: {}\n"));
  ASSERT_TRUE(defaults.spec.pinn.network.rwf.has_value());
  EXPECT_EQ(defaults.spec.pinn.network.rwf->mean, 1.0);
  EXPECT_EQ(defaults.spec.pinn.network.rwf->std, 0.1);
  const RunConfig given = from(network("  rwf: {mean: 0.5, std: 0.2}\n"));
  EXPECT_EQ(given.spec.pinn.network.rwf->mean, 0.5);
  EXPECT_EQ(given.spec.pinn.network.rwf->std, 0.2);
}

TEST(NetworkKeys, ErrorsNameTheKeyPath) {
  expect_user_error([] { from(network("  rwf: {mean: 1, std: -0.1}\n")); },
                    "test.yaml:20:23: network.rwf.std: '-0.1' is out of range (at least 0)");
  expect_user_error([] { from(network("  rwf: {sd: 0.1}\n")); },
                    "test.yaml:20:9: network.rwf.sd: unknown key (known here: mean, std)");
  expect_user_error(
      [] { from(network("  architecture: pirate\n  hidden: [7, 7]\n")); },
      "test.yaml:21:11: network.hidden: network: a PirateNet needs an even hidden "
      "width (its embedding is the cos and sin of width / 2 Fourier features), got 7");
  expect_user_error([] { from(network("  architecture: pirate\n  fourier_features: 3\n")); },
                    "test.yaml:21:21: network.fourier_features: network: a PirateNet of hidden "
                    "width 64 has 32 Fourier features (fourier_features 0 or 32), got 3");
  // A PirateNet whose widths fit: the Fourier features are half the width.
  EXPECT_EQ(
      from(network("  architecture: pirate\n  hidden: [8, 8]\n")).spec.pinn.network.architecture,
      nn::Architecture::pirate);
}

}  // namespace
}  // namespace jetpde::io
