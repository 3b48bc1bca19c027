#include "io/vtk_write.h"

#include <unistd.h>
#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkIdTypeArray.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "autodiff/errors.h"
#include "autodiff/text.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;

std::string cannot_write(const std::string& path, const std::string& reason) {
  return "cannot write '" + path + "': " + reason;
}

// --- Checks of the caller's data, all before anything touches the disk -----------------------

void check_array(const std::string& path, const VtkArray& array, Eigen::Index points,
                 const std::string& where) {
  const Eigen::Index columns = array.values.cols();
  if (columns < 1 || columns > 3)
    throw UserError(
        cannot_write(path, "array '" + array.name + "' has " + std::to_string(columns) +
                               " components; 1 (a scalar), 2 or 3 (a vector) are allowed"));
  if (array.values.rows() != points)
    throw UserError(cannot_write(path, "array '" + array.name + "' has " +
                                           std::to_string(array.values.rows()) + " rows but " +
                                           where + " has " + std::to_string(points) + " points"));
}

void check_arrays(const std::string& path, const std::vector<VtkArray>& arrays, Eigen::Index points,
                  const std::string& where) {
  std::set<std::string> names;
  for (std::size_t n = 0; n < arrays.size(); ++n) {
    const VtkArray& array = arrays[n];
    if (array.name.empty())
      throw UserError(cannot_write(path, "array " + std::to_string(n) + " has an empty name"));
    if (!names.insert(array.name).second)
      throw UserError(cannot_write(path, "two arrays are named '" + array.name + "'"));
    check_array(path, array, points, where);
  }
}

// The grid's point count; UserError when a dimension is not positive.
Eigen::Index grid_points(const std::string& path, const VtkGrid& grid) {
  Eigen::Index points = 1;
  for (int d : grid.dims) {
    if (d < 1)
      throw UserError(cannot_write(
          path, "grid dims (" + std::to_string(grid.dims[0]) + ", " + std::to_string(grid.dims[1]) +
                    ", " + std::to_string(grid.dims[2]) +
                    ") have a non-positive entry; each needs at least 1 point"));
    points *= d;  // in 64 bits: 3 int factors can pass 2^31
  }
  return points;
}

// --- VTK objects --------------------------------------------------------------------------------

// `values` as a Float64 array of `components` components; missing trailing components are zero.
vtkSmartPointer<vtkDoubleArray> to_vtk(const std::string& name, const MatrixD& values,
                                       int components) {
  auto array = vtkSmartPointer<vtkDoubleArray>::New();
  array->SetName(name.c_str());
  array->SetNumberOfComponents(components);
  array->SetNumberOfTuples(values.rows());
  for (Eigen::Index r = 0; r < values.rows(); ++r)
    for (int c = 0; c < components; ++c)
      array->SetTypedComponent(r, c, c < values.cols() ? values(r, c) : 0.0);
  return array;
}

void add_point_data(vtkDataSet* data, const std::vector<VtkArray>& arrays) {
  for (const VtkArray& array : arrays) {
    const int components = array.values.cols() == 2 ? 3 : static_cast<int>(array.values.cols());
    data->GetPointData()->AddArray(to_vtk(array.name, array.values, components));
  }
}

vtkSmartPointer<vtkImageData> make_image(const VtkGrid& grid, const std::vector<VtkArray>& arrays) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(grid.dims.data());
  image->SetOrigin(grid.origin.data());
  image->SetSpacing(grid.spacing.data());
  add_point_data(image, arrays);
  return image;
}

// One VTK_VERTEX cell per point, cell i holding point i.
vtkSmartPointer<vtkCellArray> vertex_cells(vtkIdType points) {
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  auto connectivity = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfValues(points + 1);
  connectivity->SetNumberOfValues(points);
  for (vtkIdType i = 0; i < points; ++i) {
    offsets->SetValue(i, i);
    connectivity->SetValue(i, i);
  }
  offsets->SetValue(points, points);
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  cells->SetData(offsets, connectivity);
  return cells;
}

vtkSmartPointer<vtkUnstructuredGrid> make_unstructured(const MatrixD& points,
                                                       const std::vector<VtkArray>& arrays) {
  auto coordinates = vtkSmartPointer<vtkPoints>::New();
  coordinates->SetData(to_vtk("Points", points, 3));
  auto grid = vtkSmartPointer<vtkUnstructuredGrid>::New();
  grid->SetPoints(coordinates);
  grid->SetCells(VTK_VERTEX, vertex_cells(points.rows()));
  add_point_data(grid, arrays);
  return grid;
}

// --- Writing ------------------------------------------------------------------------------------

// VTK reports errors to its output window (stderr); observers on the writer and on its executive
// take them instead, so that the writer's first message (the cause; later ones are consequences)
// can go into the UserError and the terminal stays clean.
void keep_first_message(vtkObject*, unsigned long, void* client_data, void* call_data) {
  auto* message = static_cast<std::string*>(client_data);
  if (message != nullptr && message->empty() && call_data != nullptr)
    *message = static_cast<const char*>(call_data);
}

vtkSmartPointer<vtkCallbackCommand> error_observer(std::string* message) {
  auto observer = vtkSmartPointer<vtkCallbackCommand>::New();
  observer->SetCallback(keep_first_message);
  observer->SetClientData(message);
  return observer;
}

// VTK's message has a "ERROR: In file, line n" header and a "Class (0x...): " prefix; the text
// after the prefix is what a user can act on.
std::string vtk_message_text(const std::string& message) {
  const std::size_t prefix = message.rfind("): ");
  std::string text = prefix == std::string::npos ? message : message.substr(prefix + 3);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// Why `file` could not be created, from a probe with fopen: VTK's error code alone does not say
// (the folder is not writable, the name is too long, the file system is read-only). "" when the
// probe succeeds after all.
std::string why_not_created(const std::string& file) {
  std::FILE* probe = std::fopen(file.c_str(), "wb");
  if (probe == nullptr)
    return std::string("cannot create a temporary file next to it: ") + std::strerror(errno);
  std::fclose(probe);  // write_atomically removes it
  return "";
}

// The reason a writer failed. VTK 9.1 sets the error code to errno when it cannot open the file
// (codes below FirstVTKErrorCode), to one of vtkErrorCode's otherwise.
std::string writer_failure(const std::string& file, unsigned long code,
                           const std::string& message) {
  if (code == vtkErrorCode::OutOfDiskSpaceError) return "the disk is full";
  std::error_code error;
  if (!fs::exists(file, error)) {
    const std::string reason = why_not_created(file);
    if (!reason.empty()) return reason;
  }
  if (code > 0 && code < vtkErrorCode::FirstVTKErrorCode)
    return std::string("writing failed: ") + std::strerror(static_cast<int>(code));
  const std::string text = vtk_message_text(message);
  return text.empty() ? "VTK error code " + std::to_string(code) : text;
}

// Writes `data` with `writer` to `file`: binary appended data (raw, not base64), zlib
// compressed, with 64-bit block headers so that arrays past 4 GiB fit. Returns "" on success,
// else the reason.
std::string run_writer(vtkXMLWriter* writer, vtkDataObject* data, const std::string& file) {
  std::string message;
  writer->AddObserver(vtkCommand::ErrorEvent, error_observer(&message));
  writer->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, error_observer(nullptr));
  writer->SetInputData(data);
  writer->SetFileName(file.c_str());
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();
  const int ok = writer->Write();
  if (ok == 1 && writer->GetErrorCode() == vtkErrorCode::NoError && message.empty()) return "";
  return writer_failure(file, writer->GetErrorCode(), message);
}

std::string write_text(const std::string& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  if (!out) {
    const std::string reason = why_not_created(file);
    return reason.empty() ? "cannot create a temporary file next to it" : reason;
  }
  out << text;
  out.close();
  return out ? "" : "writing failed (is the disk full?)";
}

void check_folder(const std::string& path) {
  if (path.empty()) throw UserError(cannot_write(path, "the path is empty"));
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code error;
  if (!fs::is_directory(folder, error))
    throw UserError(cannot_write(path, "the folder '" + folder.string() + "' does not exist"));
}

// A temporary name in `path`'s own folder, since a rename is atomic only within one file system;
// the pid and a counter keep concurrent writers, in one process or several, apart.
std::string temporary_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Calls `write(temporary)`, which returns "" on success or the reason it failed, then renames
// the temporary over `path`. On any failure the temporary is removed and UserError names `path`.
void write_atomically(const std::string& path,
                      const std::function<std::string(const std::string&)>& write) {
  check_folder(path);
  const std::string temporary = temporary_for(path);
  std::error_code error;
  std::string reason;
  try {
    reason = write(temporary);
  } catch (...) {
    fs::remove(temporary, error);
    throw;
  }
  if (reason.empty()) {
    fs::rename(temporary, path, error);
    if (!error) return;
    reason = "cannot replace it: " + error.message();
  }
  fs::remove(temporary, error);
  throw UserError(cannot_write(path, reason));
}

// --- PVD ----------------------------------------------------------------------------------------

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;  // a parser would fold raw newlines in attributes to spaces
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void check_entries(const std::string& path, const std::vector<PvdEntry>& entries) {
  for (std::size_t n = 0; n < entries.size(); ++n) {
    const std::string entry = "entry " + std::to_string(n) + " ('" + entries[n].file + "')";
    if (!std::isfinite(entries[n].time))
      throw UserError(cannot_write(
          path, entry + " has time " + exact_text(entries[n].time) + "; times must be finite"));
    if (entries[n].file.empty())
      throw UserError(cannot_write(path, "entry " + std::to_string(n) + " has an empty file name"));
  }
}

std::string pvd_text(const std::vector<PvdEntry>& entries) {
  const char* byte_order =
      std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian";
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"" << byte_order << "\">\n"
      << "  <Collection>\n";
  for (const PvdEntry& entry : entries)
    xml << "    <DataSet timestep=\"" << exact_text(entry.time)
        << "\" group=\"\" part=\"0\" file=\"" << xml_escaped(entry.file) << "\"/>\n";
  xml << "  </Collection>\n"
      << "</VTKFile>\n";
  return xml.str();
}

std::string vtm_text(const std::vector<VtmBlock>& blocks) {
  const char* byte_order =
      std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian";
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"vtkMultiBlockDataSet\" version=\"1.0\" byte_order=\"" << byte_order
      << "\">\n"
      << "  <vtkMultiBlockDataSet>\n";
  for (std::size_t i = 0; i < blocks.size(); ++i)
    xml << "    <DataSet index=\"" << i << "\" name=\"" << xml_escaped(blocks[i].name)
        << "\" file=\"" << xml_escaped(blocks[i].file) << "\"/>\n";
  xml << "  </vtkMultiBlockDataSet>\n"
      << "</VTKFile>\n";
  return xml.str();
}

}  // namespace

void write_vti(const std::string& path, const VtkGrid& grid, const std::vector<VtkArray>& arrays) {
  check_arrays(path, arrays, grid_points(path, grid), "the grid");
  vtkSmartPointer<vtkImageData> image = make_image(grid, arrays);
  write_atomically(path, [&](const std::string& file) {
    return run_writer(vtkSmartPointer<vtkXMLImageDataWriter>::New(), image, file);
  });
}

void write_vtu(const std::string& path, const MatrixD& points,
               const std::vector<VtkArray>& arrays) {
  if (points.cols() < 1 || points.cols() > 3)
    throw UserError(cannot_write(path, "points have " + std::to_string(points.cols()) +
                                           " coordinate columns; 1, 2 or 3 are allowed"));
  check_arrays(path, arrays, points.rows(), "the point set");
  vtkSmartPointer<vtkUnstructuredGrid> grid = make_unstructured(points, arrays);
  write_atomically(path, [&](const std::string& file) {
    return run_writer(vtkSmartPointer<vtkXMLUnstructuredGridWriter>::New(), grid, file);
  });
}

void write_pvd(const std::string& path, const std::vector<PvdEntry>& entries) {
  check_entries(path, entries);
  const std::string text = pvd_text(entries);
  write_atomically(path, [&](const std::string& file) { return write_text(file, text); });
}

void write_vtm(const std::string& path, const std::vector<VtmBlock>& blocks) {
  for (std::size_t n = 0; n < blocks.size(); ++n)
    if (blocks[n].name.empty() || blocks[n].file.empty())
      throw UserError(cannot_write(path, "block " + std::to_string(n) + " has an empty " +
                                             (blocks[n].name.empty() ? "name" : "file name")));
  const std::string text = vtm_text(blocks);
  write_atomically(path, [&](const std::string& file) { return write_text(file, text); });
}

}  // namespace jetpde::io
