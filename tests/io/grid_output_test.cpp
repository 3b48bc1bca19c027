// The grid writers read any solvers::FieldSource, not only a trained network: an analytic field
// on a time-dependent interval written to fields.h5 and a .pvd series, read back value for value.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "autodiff/errors.h"
#include "geometry/box.h"
#include "geometry/time_product.h"
#include "io/grid_output.h"
#include "io/hdf5_read.h"
#include "tests/support/scratch_dir.h"

namespace jetpde::io {
namespace {

// u = x * t, known in closed form with its x-derivative (what a classical solver on a grid would
// give through the same interface).
class Analytic : public solvers::FieldSource {
 public:
  Analytic() : domain_(geometry::time_product(geometry::interval(0, 2), 0, 1)) {}
  const geometry::Geometry& domain() const override { return *domain_; }
  const std::vector<std::string>& coordinate_names() const override {
    return domain_->coordinate_names();
  }
  const std::vector<std::string>& field_names() const override { return fields_; }
  bool has_time() const override { return true; }
  MatrixD fields(const MatrixD& p) const override { return p.col(0) * p.col(1); }
  MatrixD evaluate(const MatrixD& p, const std::vector<std::string>& expressions) const override {
    MatrixD out(p.rows(), static_cast<Eigen::Index>(expressions.size()));
    for (std::size_t k = 0; k < expressions.size(); ++k) {
      if (expressions[k] != "u_x") throw UserError("analytic: only u_x, not " + expressions[k]);
      out.col(static_cast<Eigen::Index>(k)) = p.col(1);
    }
    return out;
  }

 private:
  geometry::GeometryPtr domain_;
  std::vector<std::string> fields_{"u"};
};

using GridOutput = jetpde::testing::ScratchDirTest;

TEST_F(GridOutput, AnyFieldSourceIsWritten) {
  const Analytic source;
  GridOutputOptions options;
  options.grid = {.counts = {5}, .time_steps = 3};
  options.quantities = {"u_x"};
  options.exact = [](const MatrixD& p) { return MatrixD(p.col(0) * p.col(1) + 0.5); };
  const std::vector<std::string> files = write_grid_output(source, dir_.string(), options);
  EXPECT_EQ(files, (std::vector<std::string>{"fields_0000.vti", "fields_0001.vti",
                                             "fields_0002.vti", "fields.pvd", "fields.h5"}));
  const std::string h5 = path("fields.h5");
  const Dataset u = read_dataset(h5, "u"), ux = read_dataset(h5, "u_x");
  const Dataset error = read_dataset(h5, "u_error");
  ASSERT_EQ(u.dims, (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(read_dataset(h5, "times").values, (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(read_dataset(h5, "axes/x").values, (std::vector<double>{0, 0.5, 1, 1.5, 2}));
  for (int level = 0; level < 3; ++level)
    for (int i = 0; i < 5; ++i) {
      const double x = 0.5 * i, t = 0.5 * level;
      const auto k = static_cast<std::size_t>(level * 5 + i);
      EXPECT_EQ(u.values[k], x * t);
      EXPECT_EQ(ux.values[k], t);
      EXPECT_EQ(error.values[k], -0.5);
    }
  EXPECT_FALSE(has_dataset(h5, "inside")) << "the interval is its bounding box";
  EXPECT_FALSE(has_dataset(h5, "residual_pde")) << "this source has no equations";
}

}  // namespace
}  // namespace jetpde::io
