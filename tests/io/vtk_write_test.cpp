// VTK output (.vti, .vtu, .pvd): files read back with VTK's own readers and parser, exact Float64
// values and VTK's point order, and the errors, including that a failure leaves no temporary.
#include <gtest/gtest.h>
#include <unistd.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "io/vtk_write.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;
using jetpde::testing::expect_user_error;

// Each test writes into a fresh folder of its own, removed afterwards.
using VtkTest = jetpde::testing::ScratchDirTest;

using VtkVti = VtkTest;
using VtkVtu = VtkTest;
using VtkPvd = VtkTest;
using VtkErrors = VtkTest;

void expect_user_error_containing(const std::function<void()>& f,
                                  const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << e.what() << "' lacks '" << part << "'";
  }
}

std::string text_of(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Values with full 53-bit mantissas, so that any rounding on the way would show.
double scalar_at(int i, int j, int k) { return std::sin(0.3 * i) + 10.0 * j + k / 3.0; }
double vx_at(int i, int j) { return i + 0.1 + j / 7.0; }
double vy_at(int i, int j) { return std::exp(-0.5 * i) * (j + 1.0 / 3.0); }

// A scalar "u" and a 2-vector "velocity" on a grid, in VTK's order (x fastest).
std::vector<VtkArray> grid_fields(const VtkGrid& grid) {
  const auto [nx, ny, nz] = grid.dims;
  MatrixD u(nx * ny * nz, 1), velocity(nx * ny * nz, 2);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int r = i + nx * (j + ny * k);
        u(r, 0) = scalar_at(i, j, k);
        velocity(r, 0) = vx_at(i, j);
        velocity(r, 1) = vy_at(i, j);
      }
  return {{"u", u}, {"velocity", velocity}};
}

vtkSmartPointer<vtkImageData> read_vti(const std::string& file) {
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  return reader->GetOutput();
}

vtkSmartPointer<vtkUnstructuredGrid> read_vtu(const std::string& file) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  return reader->GetOutput();
}

// The array `name` of `data`, checked to be Float64 with `components` components.
vtkDataArray* float64_array(vtkDataSet* data, const char* name, int components) {
  vtkDataArray* array = data->GetPointData()->GetArray(name);
  if (array == nullptr) {
    ADD_FAILURE() << "no array '" << name << "'";
    return nullptr;
  }
  EXPECT_EQ(array->GetDataType(), VTK_DOUBLE) << name;
  EXPECT_EQ(array->GetNumberOfComponents(), components) << name;
  return array;
}

TEST_F(VtkVti, TwoDimensionalGridReadsBack) {
  const VtkGrid grid{{5, 4, 1}, {0.5, -1.0, 0.0}, {0.25, 0.5, 1.0}};
  write_vti(path("field.vti"), grid, grid_fields(grid));
  EXPECT_EQ(files(), (std::set<std::string>{"field.vti"}));  // the temporary was renamed

  vtkSmartPointer<vtkImageData> image = read_vti(path("field.vti"));
  int dims[3];
  image->GetDimensions(dims);
  EXPECT_EQ((std::array<int, 3>{dims[0], dims[1], dims[2]}), grid.dims);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(image->GetOrigin()[d], grid.origin[d]);
    EXPECT_EQ(image->GetSpacing()[d], grid.spacing[d]);
  }
  ASSERT_EQ(image->GetPointData()->GetNumberOfArrays(), 2);
  EXPECT_STREQ(image->GetPointData()->GetArrayName(0), "u");
  EXPECT_STREQ(image->GetPointData()->GetArrayName(1), "velocity");
  vtkDataArray* u = float64_array(image, "u", 1);
  vtkDataArray* velocity = float64_array(image, "velocity", 3);  // padded with a zero z
  ASSERT_TRUE(u != nullptr && velocity != nullptr);
  for (vtkIdType id = 0; id < 20; ++id) {
    // VTK's own geometry of point `id` says which (i, j) it is: x varies fastest.
    double p[3];
    image->GetPoint(id, p);
    const int i = static_cast<int>(std::lround((p[0] - 0.5) / 0.25));
    const int j = static_cast<int>(std::lround((p[1] + 1.0) / 0.5));
    EXPECT_EQ(id, i + 5 * j);
    EXPECT_EQ(u->GetComponent(id, 0), scalar_at(i, j, 0)) << id;
    EXPECT_EQ(velocity->GetComponent(id, 0), vx_at(i, j)) << id;
    EXPECT_EQ(velocity->GetComponent(id, 1), vy_at(i, j)) << id;
    EXPECT_EQ(velocity->GetComponent(id, 2), 0.0) << id;
  }
}

TEST_F(VtkVti, ThreeDimensionalOrderIsXFastestThenYThenZ) {
  const VtkGrid grid{{3, 2, 4}, {0, 0, 0}, {1, 1, 1}};
  write_vti(path("cube.vti"), grid, grid_fields(grid));
  vtkSmartPointer<vtkImageData> image = read_vti(path("cube.vti"));
  vtkDataArray* u = float64_array(image, "u", 1);
  ASSERT_NE(u, nullptr);
  ASSERT_EQ(image->GetNumberOfPoints(), 24);
  for (vtkIdType id = 0; id < 24; ++id) {
    double p[3];
    image->GetPoint(id, p);
    const int i = static_cast<int>(p[0]), j = static_cast<int>(p[1]), k = static_cast<int>(p[2]);
    EXPECT_EQ(id, i + 3 * (j + 2 * k));
    EXPECT_EQ(u->GetComponent(id, 0), scalar_at(i, j, k)) << id;
  }
}

TEST_F(VtkVti, BinaryAppendedCompressedFloat64) {
  const VtkGrid grid{{5, 4, 1}, {0, 0, 0}, {1, 1, 1}};
  write_vti(path("field.vti"), grid, grid_fields(grid));
  const std::string text = text_of(path("field.vti"));
  for (const char* part : {"format=\"appended\"", "encoding=\"raw\"", "type=\"Float64\"",
                           "compressor=\"vtkZLibDataCompressor\"", "header_type=\"UInt64\""})
    EXPECT_NE(text.find(part), std::string::npos) << part;
}

TEST_F(VtkVti, RewritingReplacesTheFile) {
  VtkGrid grid{{5, 4, 1}, {0, 0, 0}, {1, 1, 1}};
  write_vti(path("field.vti"), grid, grid_fields(grid));
  grid.dims = {2, 2, 2};
  write_vti(path("field.vti"), grid, grid_fields(grid));
  EXPECT_EQ(read_vti(path("field.vti"))->GetNumberOfPoints(), 8);
  EXPECT_EQ(files(), (std::set<std::string>{"field.vti"}));
}

// Points with `columns` coordinates: x_r = r / 3 + 0.1 r^2, y_r = -r / 7, z_r = 2^-r.
MatrixD points_with(int rows, int columns) {
  MatrixD points(rows, columns);
  for (int r = 0; r < rows; ++r) {
    const double coordinates[3] = {r / 3.0 + 0.1 * r * r, -r / 7.0, std::ldexp(1.0, -r)};
    for (int c = 0; c < columns; ++c) points(r, c) = coordinates[c];
  }
  return points;
}

// Checks the file against `points` (padded to 3-D with zeros), its arrays and its vertex cells.
void expect_point_set(const std::string& file, const MatrixD& points,
                      const std::vector<VtkArray>& arrays) {
  vtkSmartPointer<vtkUnstructuredGrid> grid = read_vtu(file);
  const vtkIdType n = points.rows();
  ASSERT_EQ(grid->GetNumberOfPoints(), n);
  EXPECT_EQ(grid->GetPoints()->GetDataType(), VTK_DOUBLE);
  for (vtkIdType r = 0; r < n; ++r) {
    double p[3];
    grid->GetPoint(r, p);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(p[c], c < points.cols() ? points(r, c) : 0.0) << r;
  }
  ASSERT_EQ(grid->GetNumberOfCells(), n);
  vtkNew<vtkIdList> ids;
  for (vtkIdType cell = 0; cell < n; ++cell) {
    EXPECT_EQ(grid->GetCellType(cell), VTK_VERTEX);
    grid->GetCellPoints(cell, ids);
    ASSERT_EQ(ids->GetNumberOfIds(), 1);
    EXPECT_EQ(ids->GetId(0), cell);
  }
  for (const VtkArray& expected : arrays) {
    const int components =
        expected.values.cols() == 2 ? 3 : static_cast<int>(expected.values.cols());
    vtkDataArray* array = float64_array(grid, expected.name.c_str(), components);
    ASSERT_NE(array, nullptr);
    for (vtkIdType r = 0; r < n; ++r)
      for (int c = 0; c < components; ++c)
        EXPECT_EQ(array->GetComponent(r, c),
                  c < expected.values.cols() ? expected.values(r, c) : 0.0);
  }
}

std::vector<VtkArray> point_fields(int rows) {
  MatrixD p(rows, 1), v(rows, 2);
  for (int r = 0; r < rows; ++r) {
    p(r, 0) = std::sqrt(r + 2.0);
    v(r, 0) = 1.0 / (r + 3.0);
    v(r, 1) = -std::cbrt(r + 0.5);
  }
  return {{"p", p}, {"v", v}};
}

TEST_F(VtkVtu, ThreeDimensionalPointsReadBack) {
  const MatrixD points = points_with(7, 3);
  const std::vector<VtkArray> arrays = point_fields(7);
  write_vtu(path("points.vtu"), points, arrays);
  EXPECT_EQ(files(), (std::set<std::string>{"points.vtu"}));
  expect_point_set(path("points.vtu"), points, arrays);
}

TEST_F(VtkVtu, OneAndTwoDimensionalPointsArePaddedWithZeros) {
  for (int columns : {1, 2}) {
    SCOPED_TRACE(columns);
    const MatrixD points = points_with(6, columns);
    const std::string file = path("points" + std::to_string(columns) + ".vtu");
    write_vtu(file, points, point_fields(6));
    expect_point_set(file, points, point_fields(6));
  }
}

TEST_F(VtkVtu, EmptyPointSet) {
  write_vtu(path("empty.vtu"), MatrixD(0, 2), {{"p", MatrixD(0, 1)}});
  EXPECT_EQ(read_vtu(path("empty.vtu"))->GetNumberOfPoints(), 0);
}

// The DataSet elements of a parsed .pvd, checked to be a Collection.
std::vector<vtkXMLDataElement*> pvd_datasets(vtkXMLDataParser* parser) {
  vtkXMLDataElement* root = parser->GetRootElement();
  EXPECT_STREQ(root->GetName(), "VTKFile");
  EXPECT_STREQ(root->GetAttribute("type"), "Collection");
  vtkXMLDataElement* collection = root->FindNestedElementWithName("Collection");
  std::vector<vtkXMLDataElement*> datasets;
  if (collection == nullptr) {
    ADD_FAILURE() << "no Collection element";
    return datasets;
  }
  for (int n = 0; n < collection->GetNumberOfNestedElements(); ++n) {
    datasets.push_back(collection->GetNestedElement(n));
    EXPECT_STREQ(datasets.back()->GetName(), "DataSet");
  }
  return datasets;
}

TEST_F(VtkPvd, CollectionOfThreeStepsParsesBack) {
  const VtkGrid grid{{5, 4, 1}, {0, 0, 0}, {1, 1, 1}};
  const std::vector<PvdEntry> entries{
      {0.0, "u_0000.vti"}, {0.1, "u_0001.vti"}, {2.5e-7, "u_0002.vti"}};
  for (const PvdEntry& entry : entries) write_vti(path(entry.file), grid, grid_fields(grid));
  write_pvd(path("u.pvd"), entries);

  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName(path("u.pvd").c_str());
  ASSERT_EQ(parser->Parse(), 1);
  const std::vector<vtkXMLDataElement*> datasets = pvd_datasets(parser);
  ASSERT_EQ(datasets.size(), 3u);
  for (std::size_t n = 0; n < 3; ++n) {
    EXPECT_EQ(std::strtod(datasets[n]->GetAttribute("timestep"), nullptr), entries[n].time);
    ASSERT_STREQ(datasets[n]->GetAttribute("file"), entries[n].file.c_str());
    // Relative to the .pvd's folder, as ParaView resolves it.
    vtkSmartPointer<vtkImageData> image =
        read_vti((dir_ / datasets[n]->GetAttribute("file")).string());
    EXPECT_EQ(image->GetNumberOfPoints(), 20);
    EXPECT_NE(image->GetPointData()->GetArray("u"), nullptr);
  }
}

TEST_F(VtkPvd, FileNamesAreEscaped) {
  const std::string odd = "a&b <c> \"d\" 'e'.vti";
  write_pvd(path("odd.pvd"), {{1.0, odd}});
  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName(path("odd.pvd").c_str());
  ASSERT_EQ(parser->Parse(), 1);
  const std::vector<vtkXMLDataElement*> datasets = pvd_datasets(parser);
  ASSERT_EQ(datasets.size(), 1u);
  EXPECT_EQ(std::string(datasets[0]->GetAttribute("file")), odd);
}

TEST_F(VtkErrors, WrongRowCountNamesTheArrayAndBothCounts) {
  const VtkGrid grid{{5, 4, 1}, {0, 0, 0}, {1, 1, 1}};
  const std::string vti = path("field.vti"), vtu = path("points.vtu");
  expect_user_error(
      [&] {
        write_vti(vti, grid, {{"u", MatrixD::Zero(19, 1)}});
      },
      "cannot write '" + vti + "': array 'u' has 19 rows but the grid has 20 points");
  expect_user_error(
      [&] {
        write_vtu(vtu, points_with(6, 2), {{"p", MatrixD::Zero(7, 1)}});
      },
      "cannot write '" + vtu + "': array 'p' has 7 rows but the point set has 6 points");
  EXPECT_TRUE(files().empty());
}

TEST_F(VtkErrors, ComponentsOutsideOneToThree) {
  const VtkGrid grid{{5, 4, 1}, {0, 0, 0}, {1, 1, 1}};
  const std::string vti = path("field.vti");
  expect_user_error(
      [&] {
        write_vti(vti, grid, {{"stress", MatrixD::Zero(20, 4)}});
      },
      "cannot write '" + vti +
          "': array 'stress' has 4 components; 1 (a scalar), 2 or 3 (a vector) are allowed");
  expect_user_error(
      [&] {
        write_vti(vti, grid, {{"none", MatrixD(20, 0)}});
      },
      "cannot write '" + vti +
          "': array 'none' has 0 components; 1 (a scalar), 2 or 3 (a vector) are allowed");
  EXPECT_TRUE(files().empty());
}

TEST_F(VtkErrors, NonPositiveDims) {
  const std::string vti = path("field.vti");
  for (const std::array<int, 3>& dims :
       {std::array<int, 3>{5, 0, 1}, std::array<int, 3>{5, 4, -1}}) {
    const VtkGrid grid{dims, {0, 0, 0}, {1, 1, 1}};
    std::ostringstream expected;
    expected << "cannot write '" << vti << "': grid dims (" << dims[0] << ", " << dims[1] << ", "
             << dims[2] << ") have a non-positive entry; each needs at least 1 point";
    expect_user_error([&] { write_vti(vti, grid, {}); }, expected.str());
  }
  EXPECT_TRUE(files().empty());
}

TEST_F(VtkErrors, EmptyOrRepeatedArrayNames) {
  const std::string vtu = path("points.vtu");
  const MatrixD points = points_with(3, 3), p = MatrixD::Zero(3, 1);
  expect_user_error(
      [&] {
        write_vtu(vtu, points, {{"p", p}, {"", p}});
      },
      "cannot write '" + vtu + "': array 1 has an empty name");
  expect_user_error(
      [&] {
        write_vtu(vtu, points, {{"p", p}, {"q", p}, {"p", p}});
      },
      "cannot write '" + vtu + "': two arrays are named 'p'");
  EXPECT_TRUE(files().empty());
}

TEST_F(VtkErrors, PointsWithNoOrTooManyCoordinates) {
  const std::string vtu = path("points.vtu");
  expect_user_error(
      [&] { write_vtu(vtu, MatrixD::Zero(3, 4), {}); },
      "cannot write '" + vtu + "': points have 4 coordinate columns; 1, 2 or 3 are allowed");
  expect_user_error(
      [&] { write_vtu(vtu, MatrixD(3, 0), {}); },
      "cannot write '" + vtu + "': points have 0 coordinate columns; 1, 2 or 3 are allowed");
}

TEST_F(VtkErrors, PvdTimesMustBeFiniteAndFilesNamed) {
  const std::string pvd = path("u.pvd");
  expect_user_error(
      [&] {
        write_pvd(pvd, {{0.0, "a.vti"}, {std::numeric_limits<double>::quiet_NaN(), "b.vti"}});
      },
      "cannot write '" + pvd + "': entry 1 ('b.vti') has time nan; times must be finite");
  expect_user_error(
      [&] {
        write_pvd(pvd, {{0.0, ""}});
      },
      "cannot write '" + pvd + "': entry 0 has an empty file name");
  EXPECT_TRUE(files().empty());
}

TEST_F(VtkErrors, MissingFolderNamesThePath) {
  const std::string folder = path("no-such-folder");
  const VtkGrid grid{{2, 2, 1}, {0, 0, 0}, {1, 1, 1}};
  const std::string vti = folder + "/field.vti", vtu = folder + "/points.vtu",
                    pvd = folder + "/u.pvd";
  const std::string reason = "': the folder '" + folder + "' does not exist";
  expect_user_error([&] { write_vti(vti, grid, grid_fields(grid)); },
                    "cannot write '" + vti + reason);
  expect_user_error([&] { write_vtu(vtu, points_with(3, 2), {}); },
                    "cannot write '" + vtu + reason);
  expect_user_error([&] { write_pvd(pvd, {{0.0, "field.vti"}}); }, "cannot write '" + pvd + reason);
  EXPECT_TRUE(files().empty());
}

// The folder exists but the temporary cannot be created (its name passes the file system's
// 255-byte limit): VTK's writer fails, and the error says why.
TEST_F(VtkErrors, UncreatableTemporaryIsReported) {
  const std::string vti = path(std::string(244, 'x') + ".vti");
  const VtkGrid grid{{2, 2, 1}, {0, 0, 0}, {1, 1, 1}};
  expect_user_error_containing(
      [&] { write_vti(vti, grid, grid_fields(grid)); },
      {"cannot write '" + vti + "': cannot create a temporary file next to it"});
  const std::string pvd = path(std::string(244, 'x') + ".pvd");
  expect_user_error_containing(
      [&] {
        write_pvd(pvd, {{0.0, "a.vti"}});
      },
      {"cannot write '" + pvd + "': cannot create a temporary file next to it"});
  EXPECT_TRUE(files().empty());
}

// The temporary is written, but the rename over `path` fails (a folder is in the way): the
// temporary is removed and what was at `path` is untouched.
TEST_F(VtkErrors, FailedRenameLeavesNoTemporary) {
  for (const char* name : {"field.vti", "points.vtu", "u.pvd"})
    fs::create_directories(dir_ / name / "inside");
  const VtkGrid grid{{2, 2, 1}, {0, 0, 0}, {1, 1, 1}};
  const std::string vti = path("field.vti"), vtu = path("points.vtu"), pvd = path("u.pvd");
  expect_user_error_containing([&] { write_vti(vti, grid, grid_fields(grid)); },
                               {"cannot write '" + vti + "': cannot replace it: "});
  expect_user_error_containing([&] { write_vtu(vtu, points_with(3, 3), {}); },
                               {"cannot write '" + vtu + "': cannot replace it: "});
  expect_user_error_containing(
      [&] {
        write_pvd(pvd, {{0.0, "field.vti"}});
      },
      {"cannot write '" + pvd + "': cannot replace it: "});
  EXPECT_EQ(files(), (std::set<std::string>{"field.vti", "points.vtu", "u.pvd"}));
  EXPECT_TRUE(fs::is_directory(dir_ / "field.vti" / "inside"));
}

}  // namespace
}  // namespace jetpde::io
