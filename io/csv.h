// Reading text tables of numbers (CSV, and the whitespace-separated .dat/.txt that Fortran,
// MATLAB and gnuplot write): data given as points (x, t, u, ...) rather than arrays.
//
//   # Burgers at t = 0.5, from the spectral solver
//   x, t, u
//   -1.0, 0.5, 0.0
//   -0.99, 0.5, 0.0123
//
//   io::CsvTable ref = io::read_csv("ref.csv");
//   auto u = ref.values.col(ref.column("u"));
//
// The format: a header line of column names, then one line of numbers per row, all separated by
// commas; spaces and tabs around names and numbers are ignored; lines that start with '#' or '%'
// and blank lines are skipped anywhere; CRLF line ends are accepted. Quoting is not supported
// (names cannot contain commas). Numbers are read whole ("1.5e-3", "-2", "+.5"): anything else,
// and inf or nan, is an error. A file whose first line has no comma is separated by runs of
// spaces and tabs instead (read_text_table; read_csv reads both).
#pragma once

#include <string>
#include <vector>

#include "autodiff/primitive.h"

namespace jetpde::io {

struct CsvTable {
  std::vector<std::string> columns;  // header names, trimmed, distinct
  MatrixD values;                    // [rows, columns.size()]
  std::string file;                  // where it was read from, for messages

  // The index of column `name`; UserError naming the file and the columns that exist.
  Eigen::Index column(const std::string& name) const;
};

// UserError when the file is missing or unreadable (naming it), has no header, repeats or leaves
// out a column name, or has a row with the wrong number of fields or a field that is not a number
// (messages start with "path:line:" and name the column: "ref.csv:7: column 'u': 'abc' is not a
// number").
CsvTable read_csv(const std::string& path);

// The same, with the columns named by `columns` when it is not empty: then the header line is
// optional (a first line that is all numbers is data; one that is not is a header, skipped, and
// must have as many names as `columns`). Without `columns`, a first line of numbers is an error
// that says to name them. With `columns` and no rows at all, UserError "holds no data".
CsvTable read_text_table(const std::string& path, const std::vector<std::string>& columns);

}  // namespace jetpde::io
