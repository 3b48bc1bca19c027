// Writing fields for ParaView: point data on a uniform grid (.vti), on scattered points (.vtu),
// a collection of time steps (.pvd) that ParaView opens as one animated data set, and a
// multiblock data set (.vtm) of named pieces (a domain decomposition's subdomains).
//
//   io::VtkGrid grid{{nx, ny, 1}, {x0, y0, 0}, {dx, dy, 1}};
//   io::write_vti("out/u_0003.vti", grid, {{"u", u}, {"velocity", uv}});  // [nx*ny, 1], [nx*ny, 2]
//   io::write_pvd("out/u.pvd", {{0.0, "u_0000.vti"}, {0.5, "u_0001.vti"}});
//
// Arrays are written as Float64 (every value round-trips exactly), in VTK's binary appended
// format, zlib-compressed. Every writer is atomic: it writes a temporary file in the target's
// folder and renames it over `path` only when the whole file is written, so a reader (or a
// crashed run) never sees a half-written file. On any failure the temporary file is removed and
// UserError names the path and the reason; an existing file at `path` is then left untouched.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "autodiff/primitive.h"

namespace jetpde::io {

// A named point-data array: one row per point, one column per component. One column is a
// scalar; two or three are a vector, and two are padded to three with a zero z (ParaView's
// glyphs and stream tracers want 3-vectors). Names must be non-empty and unique within a file.
struct VtkArray {
  std::string name;
  MatrixD values;  // [points, 1..3]
};

// A uniform (image) grid of dims[0] x dims[1] x dims[2] points; point (i, j, k) sits at
// origin + (i, j, k) * spacing. A 2-D grid has dims[2] = 1, a 1-D one dims[1] = dims[2] = 1.
struct VtkGrid {
  std::array<int, 3> dims{1, 1, 1};
  std::array<double, 3> origin{0, 0, 0};
  std::array<double, 3> spacing{1, 1, 1};
};

// Writes `arrays` as point data of `grid` to the .vti file `path`. Row r of every array is the
// point with r = i + nx * (j + ny * k): x varies fastest, VTK's own order (a row-major
// [ny, nx] field flattened row by row is in this order).
// UserError when a dims entry is not positive, or an array's row count is not the grid's point
// count, its column count is not 1..3, or its name is empty or repeated; and when the file cannot
// be written.
void write_vti(const std::string& path, const VtkGrid& grid, const std::vector<VtkArray>& arrays);

// Writes scattered points and their point data to the .vtu file `path`: `points` has one row per
// point and 1 to 3 coordinate columns (fewer than 3 are padded with zero coordinates); each point
// is one VTK_VERTEX cell, so ParaView shows the points without a glyph filter. Row r of every
// array belongs to row r of `points`. UserError as for write_vti (the point count is
// points.rows()), and when `points` has no or more than 3 columns.
void write_vtu(const std::string& path, const MatrixD& points, const std::vector<VtkArray>& arrays);

// One time step of a collection: `file` is relative to the .pvd's folder (as ParaView resolves
// it), so a folder of outputs can be moved as a whole.
struct PvdEntry {
  double time;
  std::string file;
};

// Writes a ParaView collection (.pvd) listing `entries` in the given order. The referenced files
// are not checked: they may be written before or after the collection. The XML is written by
// hand (VTK 9.1 has no PVD writer); times are written in the shortest form that reads back to
// the same double. UserError when a time is not finite or a file name is empty, and when the
// file cannot be written.
void write_pvd(const std::string& path, const std::vector<PvdEntry>& entries);

// One block of a multiblock data set: a file relative to the .vtm's folder, and its name.
struct VtmBlock {
  std::string name;
  std::string file;
};

// Writes a VTK multiblock data set (.vtm, vtkMultiBlockDataSet's XML) listing `blocks` in order,
// by hand as write_pvd does; the block files are not checked. UserError when a name or file is
// empty, and when the file cannot be written.
void write_vtm(const std::string& path, const std::vector<VtmBlock>& blocks);

}  // namespace jetpde::io
