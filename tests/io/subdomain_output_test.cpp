// A decomposed solution's subdomain pieces (io/grid_output.h): subdomains.vtm lists one .vti per
// subdomain, which VTK's multiblock reader opens; each piece covers its box cut to the domain and
// holds the global fields and the subdomain's window there.
#include <gtest/gtest.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkMultiBlockDataSet.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLMultiBlockDataReader.h>

#include <cmath>

#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "io/grid_output.h"
#include "io/vtk_write.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using SubdomainOutput = jetpde::testing::ScratchDirTest;

TEST_F(SubdomainOutput, PiecesOpenAsAMultiblockDataSet) {
  solvers::ProblemSpec spec;
  spec.math.domain = geometry::rectangle({0, 0}, {2, 1});
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = 32;
  spec.pinn.network.hidden = {4};
  spec.pinn.decomposition = {
      .method = solvers::DecompositionMethod::fbpinn, .subdomains = {2, 1}, .overlap = 0.5};
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  auto problem = std::make_unique<solvers::Problem>(spec);
  Eigen::VectorXd theta = problem->initial_theta(1);
  const solvers::Solution solution(std::move(problem), theta);
  const std::vector<std::string> files =
      write_grid_output(solution, dir_.string(), {.grid = {.counts = {21, 11}}});
  EXPECT_EQ(files,
            (std::vector<std::string>{"fields.vti", "subdomains.vtm", "subdomains/", "fields.h5"}));
  auto reader = vtkSmartPointer<vtkXMLMultiBlockDataReader>::New();
  reader->SetFileName(path("subdomains.vtm").c_str());
  reader->Update();
  vtkMultiBlockDataSet* blocks = vtkMultiBlockDataSet::SafeDownCast(reader->GetOutput());
  ASSERT_NE(blocks, nullptr);
  ASSERT_EQ(blocks->GetNumberOfBlocks(), 2u);
  for (unsigned j = 0; j < 2; ++j) {
    vtkImageData* piece = vtkImageData::SafeDownCast(blocks->GetBlock(j));
    ASSERT_NE(piece, nullptr) << "block " << j;
    // Box 0 is [-0.25, 1.25] x [-0.125, 1.125] cut to [0, 1.25] x [0, 1], at the global
    // spacing (0.1 in both).
    int dims[3];
    piece->GetDimensions(dims);
    EXPECT_EQ(dims[0], 14);
    EXPECT_EQ(dims[1], 11);
    double origin[3];
    piece->GetOrigin(origin);
    EXPECT_DOUBLE_EQ(origin[0], j == 0 ? 0 : 0.75);
    vtkDataArray* u = piece->GetPointData()->GetArray("u");
    vtkDataArray* w = piece->GetPointData()->GetArray("window");
    ASSERT_NE(u, nullptr);
    ASSERT_NE(w, nullptr);
    // The window: 1 where the box alone covers, falling towards its inner edge.
    EXPECT_DOUBLE_EQ(w->GetRange()[1], 1.0);
    EXPECT_GE(w->GetRange()[0], 0.0);
    // The fields are the global solution's at the piece's points.
    const vtkIdType k = 37;
    double p[3];
    piece->GetPoint(k, p);
    const MatrixD at = (MatrixD(1, 2) << p[0], p[1]).finished();
    EXPECT_NEAR(u->GetTuple1(k), solution.fields(at)(0, 0), 1e-12);
  }
}

// Pieces given as geometries: a block per piece over its bounding box, with `inside` 1 at the
// piece's own points in the domain (xpinn: the inner disk's block is 0 outside r = 0.5; the
// annulus' is 0 inside it and outside the unit disk), and the fields the solution's there.
TEST_F(SubdomainOutput, GeometryPiecesMaskTheirOutside) {
  solvers::ProblemSpec spec;
  spec.math.domain = geometry::disk({0, 0}, 1);
  spec.math.context.fields({"u"}).coordinates({"x", "y"});
  spec.math.equations = {"laplacian(u)"};
  spec.pinn.interior_points = 32;
  spec.pinn.network.hidden = {4};
  spec.pinn.decomposition = {
      .method = solvers::DecompositionMethod::xpinn,
      .pieces = {geometry::disk({0, 0}, 0.5),
                 geometry::subtract(geometry::disk({0, 0}, 1), geometry::disk({0, 0}, 0.5))}};
  spec.pinn.decomposition.interface_points = 8;
  spec.compile.pipeline.precision = compiler::PrecisionPolicy::fp64;
  auto problem = std::make_unique<solvers::Problem>(spec);
  Eigen::VectorXd theta = problem->initial_theta(1);
  const solvers::Solution solution(std::move(problem), theta);
  write_grid_output(solution, dir_.string(), {.grid = {.counts = {21, 21}}});
  auto reader = vtkSmartPointer<vtkXMLMultiBlockDataReader>::New();
  reader->SetFileName(path("subdomains.vtm").c_str());
  reader->Update();
  vtkMultiBlockDataSet* blocks = vtkMultiBlockDataSet::SafeDownCast(reader->GetOutput());
  ASSERT_NE(blocks, nullptr);
  ASSERT_EQ(blocks->GetNumberOfBlocks(), 2u);
  for (unsigned j = 0; j < 2; ++j) {
    vtkImageData* piece = vtkImageData::SafeDownCast(blocks->GetBlock(j));
    ASSERT_NE(piece, nullptr) << "block " << j;
    vtkDataArray* inside = piece->GetPointData()->GetArray("inside");
    vtkDataArray* u = piece->GetPointData()->GetArray("u");
    ASSERT_NE(inside, nullptr);
    ASSERT_NE(u, nullptr);
    int in = 0, out = 0;
    for (vtkIdType k = 0; k < piece->GetNumberOfPoints(); ++k) {
      double p[3];
      piece->GetPoint(k, p);
      const double r = std::hypot(p[0], p[1]);
      // Points on the circles themselves may go either way.
      if (std::abs(r - 0.5) < 1e-9 || std::abs(r - 1) < 1e-9) continue;
      const bool mine = j == 0 ? r < 0.5 : r > 0.5 && r < 1;
      EXPECT_EQ(inside->GetTuple1(k), mine ? 1.0 : 0.0)
          << "block " << j << " at " << p[0] << ", " << p[1];
      (mine ? in : out) += 1;
      if (mine) {
        const MatrixD at = (MatrixD(1, 2) << p[0], p[1]).finished();
        EXPECT_NEAR(u->GetTuple1(k), solution.fields(at)(0, 0), 1e-12);
      }
    }
    EXPECT_GT(in, 10);
    EXPECT_GT(out, 10);
  }
}

TEST_F(SubdomainOutput, VtmBlocksNeedNamesAndFiles) {
  write_vtm(path("a.vtm"), {{"one", "a/x.vti"}, {"two & <more>", "a/y.vti"}});
  auto reader = vtkSmartPointer<vtkXMLMultiBlockDataReader>::New();
  reader->SetFileName(path("a.vtm").c_str());
  EXPECT_TRUE(reader->CanReadFile(path("a.vtm").c_str()));
  jetpde::testing::expect_user_error(
      [&] {
        write_vtm(path("b.vtm"), {{"", "x.vti"}});
      },
      "cannot write '" + path("b.vtm") + "': block 0 has an empty name");
  jetpde::testing::expect_user_error(
      [&] {
        write_vtm(path("b.vtm"), {{"one", ""}});
      },
      "cannot write '" + path("b.vtm") + "': block 0 has an empty file name");
  EXPECT_FALSE(std::filesystem::exists(path("b.vtm")));
}

}  // namespace
}  // namespace jetpde::io
