// Reading the shared reference solutions (../shared/data, README there), and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "io/hdf5_read.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;

std::string data_dir() { return std::string(JETPDE_SOURCE_DIR) + "/../shared/data"; }

TEST(Hdf5Read, TheBurgersReference) {
  const std::string file = data_dir() + "/burgers.h5";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file << " (../shared/data absent)";
  EXPECT_EQ(list_datasets(file), (std::vector<std::string>{"t", "u", "x"}));
  const Dataset x = read_dataset(file, "x"), t = read_dataset(file, "t"),
                u = read_dataset(file, "u");
  EXPECT_EQ(x.dims, (std::vector<std::int64_t>{256}));
  EXPECT_EQ(t.dims, (std::vector<std::int64_t>{100}));
  EXPECT_EQ(u.dims, (std::vector<std::int64_t>{256, 100}));
  EXPECT_DOUBLE_EQ(x.values.front(), -1.0);
  EXPECT_DOUBLE_EQ(x.values.back(), 1.0);
  EXPECT_DOUBLE_EQ(t.values.front(), 0.0);
  const MatrixD um = u.matrix();
  // u(x, 0) = -sin(pi x), within the data's own float precision.
  for (int i = 0; i < 256; i += 17)
    EXPECT_NEAR(um(i, 0), -std::sin(std::numbers::pi * x.values[i]), 1e-6) << i;
  EXPECT_FALSE(read_root_attribute(file, "pde").empty());
  EXPECT_EQ(read_root_attribute(file, "no such attribute"), "");
}

TEST(Hdf5Read, ErrorsNameTheFileAndTheDataset) {
  expect_user_error([] { read_dataset("/nonexistent/ref.h5", "u"); },
                    "cannot read '/nonexistent/ref.h5': no such file");
  const std::string text = ::testing::TempDir() + "jetpde-not-hdf5.h5";
  { std::ofstream(text) << "plain text\n"; }
  expect_user_error([&] { read_dataset(text, "u"); },
                    "cannot read '" + text + "': not an HDF5 file");
  const std::string file = data_dir() + "/burgers.h5";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file << " (../shared/data absent)";
  expect_user_error([&] { read_dataset(file, "v"); },
                    "'" + file + "' has no dataset 'v' (datasets: t, u, x)");
}

}  // namespace
}  // namespace jetpde::io
