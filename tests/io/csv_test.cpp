// Reading CSV reference data, and every error message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/csv.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;
using jetpde::testing::expect_user_error;

class Csv : public jetpde::testing::ScratchDirTest {
 protected:
  // Writes `text` to a file of the folder; returns its path.
  std::string csv(const std::string& text, const std::string& name = "ref.csv") const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
};

TEST_F(Csv, ReadsAGoodFile) {
  const std::string path = csv("x,t,u\n-1,0,0\n0.5,0.25,-1.5e-3\n1,1e-2,0.1\n");
  const CsvTable table = read_csv(path);
  EXPECT_EQ(table.file, path);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"x", "t", "u"}));
  ASSERT_EQ(table.values.rows(), 3);
  ASSERT_EQ(table.values.cols(), 3);
  EXPECT_EQ(table.values(1, 0), 0.5);
  EXPECT_EQ(table.values(1, 2), -1.5e-3);
  EXPECT_EQ(table.values(2, 2), 0.1);  // parsed exactly: the nearest double to 0.1
  EXPECT_EQ(table.column("u"), 2);
  EXPECT_EQ(table.values(2, table.column("t")), 0.01);
}

TEST_F(Csv, SkipsCommentsBlankLinesAndSpaces) {
  const std::string path =
      csv("\xEF\xBB\xBF# Burgers, t = 0.5\r\n"
          "\r\n"
          "  x ,\tu\t\r\n"
          "# a comment between rows\r\n"
          "  -1.0 ,  +0.5\r\n"
          "\r\n"
          "   # indented comment\n"
          "1e0,-0\n");
  const CsvTable table = read_csv(path);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"x", "u"}));
  ASSERT_EQ(table.values.rows(), 2);
  EXPECT_EQ(table.values(0, 0), -1.0);
  EXPECT_EQ(table.values(0, 1), 0.5);
  EXPECT_EQ(table.values(1, 0), 1.0);
  EXPECT_TRUE(std::signbit(table.values(1, 1)));
}

TEST_F(Csv, AHeaderWithoutRowsIsAnEmptyTable) {
  const CsvTable table = read_csv(csv("# nothing yet\nx,u\n"));
  EXPECT_EQ(table.values.rows(), 0);
  EXPECT_EQ(table.values.cols(), 2);
}

TEST_F(Csv, AMissingFileIsNamed) {
  const std::string missing = path("missing.csv");
  expect_user_error([&] { read_csv(missing); }, "cannot read '" + missing + "': no such file");
  expect_user_error([&] { read_csv(dir_.string()); },
                    "cannot read '" + dir_.string() + "': it is a folder");
}

TEST_F(Csv, AMissingColumnListsTheColumns) {
  const std::string path = csv("x,t,u\n1,2,3\n");
  const CsvTable table = read_csv(path);
  expect_user_error([&] { table.column("v"); },
                    "'" + path + "' has no column 'v' (columns: x, t, u)");
}

TEST_F(Csv, HeaderErrors) {
  std::string path = csv("# only a comment\n\n");
  expect_user_error([&] { read_csv(path); },
                    "'" + path + "' has no header line (only comments and blank lines)");
  path = csv("x,,u\n");
  expect_user_error([&] { read_csv(path); }, path + ":1: column 2 has no name");
  path = csv("# c\nx,u, x\n");
  expect_user_error([&] { read_csv(path); }, path + ":2: column 'x' appears twice");
}

TEST_F(Csv, RowsWithTheWrongNumberOfFields) {
  std::string path = csv("x,t,u\n1,2,3\n\n# c\n4,5\n");
  expect_user_error([&] { read_csv(path); },
                    path + ":5: no value for column 'u' (2 fields, the header has 3)");
  path = csv("x,t,u\n1,2,3,4\n");
  expect_user_error([&] { read_csv(path); }, path + ":2: 4 fields, the header has 3 (x, t, u)");
  path = csv("x,t,u\n1,2,3,\n");  // a trailing comma is one more, empty, field
  expect_user_error([&] { read_csv(path); }, path + ":2: 4 fields, the header has 3 (x, t, u)");
}

TEST_F(Csv, FieldsThatAreNotNumbers) {
  const auto expect_field_error = [&](const std::string& field, const std::string& what) {
    const std::string path = csv("x, t, u\n1, 2, 3\n# c\n\n1,2,3\n0, 0, " + field + "\n");
    expect_user_error([&] { read_csv(path); }, path + ":6: column 'u': " + what);
  };
  expect_field_error("abc", "'abc' is not a number");
  expect_field_error("1.5x", "'1.5x' is not a number");
  expect_field_error("1 2", "'1 2' is not a number");
  expect_field_error("++1", "'++1' is not a number");
  expect_field_error("+-1", "'+-1' is not a number");
  expect_field_error("0x10", "'0x10' is not a number");
  expect_field_error("\"1\"", "'\"1\"' is not a number");
  expect_field_error("", "the field is empty");
  expect_field_error("1e999", "'1e999' is out of the range of a double");
  expect_field_error("nan", "'nan' is not a finite number");
  expect_field_error("-inf", "'-inf' is not a finite number");
  const std::string path = csv("x,t\n1,abc\n");
  expect_user_error([&] { read_csv(path); }, path + ":2: column 't': 'abc' is not a number");
}

}  // namespace
}  // namespace jetpde::io
