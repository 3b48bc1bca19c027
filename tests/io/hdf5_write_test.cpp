// Writing HDF5 files and reading them back: every write function, nested groups, bit-exact
// doubles (checkpoint resume depends on them), the atomic replacement, and the errors.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "io/hdf5_read.h"
#include "io/hdf5_write.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

namespace fs = std::filesystem;
using jetpde::testing::expect_user_error;

// A fresh folder per test, removed after it.
using Hdf5Write = jetpde::testing::ScratchDirTest;

// Doubles whose every bit matters: rounding, the sign of zero, the subnormals, the extremes.
std::vector<double> awkward_doubles() {
  using limits = std::numeric_limits<double>;
  return {0.1,
          1.0 / 3.0,
          -0.0,
          0.0,
          1e308,
          -1e-310,
          limits::denorm_min(),
          limits::min(),
          limits::max(),
          limits::lowest(),
          limits::epsilon(),
          limits::infinity(),
          -limits::infinity(),
          limits::quiet_NaN(),
          6.02214076e23,
          -2.5};
}

void expect_same_bits(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(want[i]))
        << "element " << i << ": " << got[i] << " vs " << want[i];
}

TEST_F(Hdf5Write, MatrixRoundTripsBitForBit) {
  const std::vector<double> values = awkward_doubles();
  MatrixD m(4, 4);
  std::copy(values.begin(), values.end(), m.data());
  Hdf5Writer out(path("m.h5"));
  out.write("m", m);
  out.commit();
  const Dataset d = read_dataset(path("m.h5"), "m");
  EXPECT_EQ(d.dims, (std::vector<std::int64_t>{4, 4}));
  expect_same_bits(d.values, values);
  // Row-major on both sides: element (1, 0) is the fifth value.
  EXPECT_EQ(d.matrix()(1, 0), 1e308);
}

TEST_F(Hdf5Write, VectorsAndScalarsRoundTrip) {
  const std::vector<double> doubles = awkward_doubles();
  const std::vector<std::int64_t> ints = {0, -1, 42, std::numeric_limits<std::int64_t>::min(),
                                          std::numeric_limits<std::int64_t>::max()};
  Hdf5Writer out(path("v.h5"));
  out.write("doubles", doubles);
  out.write("ints", ints);
  out.write_scalar("lr", 0.1);
  out.write_scalar("tiny", std::numeric_limits<double>::denorm_min());
  out.write_scalar("step", std::int64_t{1200});
  out.commit();
  const std::string f = path("v.h5");
  const Dataset d = read_dataset(f, "doubles");
  EXPECT_EQ(d.dims, (std::vector<std::int64_t>{16}));
  expect_same_bits(d.values, doubles);
  EXPECT_EQ(read_int_dataset(f, "ints"), ints);
  EXPECT_TRUE(read_dataset(f, "lr").dims.empty());
  expect_same_bits(read_dataset(f, "lr").values, {0.1});
  expect_same_bits(read_dataset(f, "tiny").values, {std::numeric_limits<double>::denorm_min()});
  EXPECT_EQ(read_int_dataset(f, "step"), (std::vector<std::int64_t>{1200}));
  EXPECT_EQ(list_datasets(f), (std::vector<std::string>{"doubles", "ints", "lr", "step", "tiny"}));
}

TEST_F(Hdf5Write, EmptyArraysKeepTheirShape) {
  Hdf5Writer out(path("e.h5"));
  out.write("none", std::vector<double>{});
  out.write("no_ints", std::vector<std::int64_t>{});
  out.write("no_rows", MatrixD(0, 3));
  out.commit();
  EXPECT_EQ(read_dataset(path("e.h5"), "none").dims, (std::vector<std::int64_t>{0}));
  EXPECT_TRUE(read_int_dataset(path("e.h5"), "no_ints").empty());
  const MatrixD m = read_dataset(path("e.h5"), "no_rows").matrix();
  EXPECT_EQ(m.rows(), 0);
  EXPECT_EQ(m.cols(), 3);
}

TEST_F(Hdf5Write, NamesWithSlashesMakeGroups) {
  MatrixD w = MatrixD::Constant(2, 3, 1.0 / 3.0);
  Hdf5Writer out(path("g.h5"));
  out.write("adam/m", w);
  out.write("adam/v", std::vector<double>{0.25, 0.5});
  out.write_scalar("adam/step", std::int64_t{7});
  out.write_string("run/config/yaml", "pde: burgers\n");
  out.write_scalar("top", 1.0);
  out.commit();
  const std::string f = path("g.h5");
  expect_same_bits(read_dataset(f, "adam/m").values, std::vector<double>(6, 1.0 / 3.0));
  EXPECT_EQ(read_dataset(f, "adam/v").dims, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(read_int_dataset(f, "adam/step"), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(read_string_dataset(f, "run/config/yaml"), "pde: burgers\n");
  EXPECT_TRUE(has_dataset(f, "adam/m"));
  EXPECT_TRUE(has_dataset(f, "run/config/yaml"));
  EXPECT_TRUE(has_dataset(f, "top"));
  EXPECT_FALSE(has_dataset(f, "adam"));  // a group
  EXPECT_FALSE(has_dataset(f, "adam/u"));
  EXPECT_FALSE(has_dataset(f, "nope/deeper/still"));
  EXPECT_FALSE(has_dataset(f, "top/below"));
  EXPECT_FALSE(has_dataset(f, ""));
  EXPECT_EQ(list_datasets(f), (std::vector<std::string>{"top"}));  // the root's only
}

TEST_F(Hdf5Write, StringsOfAnyLengthAndAttributes) {
  // 10 kB of YAML-like text: newlines, quotes, UTF-8 (well past a 64 kB attribute's concerns
  // and any fixed buffer a reader might assume).
  std::string text;
  for (int i = 0; text.size() < 10'000; ++i)
    text +=
        "layer_" + std::to_string(i) + ": {width: 64, act: \"tanh\"}  # \xCF\x80 \xE2\x88\x82\n";
  Hdf5Writer out(path("s.h5"));
  out.write_string("config", text);
  out.write_string("empty", "");
  out.attribute("jetpde_version", "0.1.0");
  out.attribute("pde", "heat");
  out.attribute("pde", "burgers");  // replaced, not an error
  out.commit();
  EXPECT_EQ(read_string_dataset(path("s.h5"), "config"), text);
  EXPECT_EQ(read_string_dataset(path("s.h5"), "empty"), "");
  EXPECT_EQ(read_root_attribute(path("s.h5"), "jetpde_version"), "0.1.0");
  EXPECT_EQ(read_root_attribute(path("s.h5"), "pde"), "burgers");
}

TEST_F(Hdf5Write, ReadsStringsOtherWritersStore) {
  // Fixed-length strings (h5py's numpy bytes, Fortran codes) as well as the variable-length
  // ones Hdf5Writer writes.
  const std::string f = path("fixed.h5");
  {
    const hid_t h = H5Fcreate(f.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t space = H5Screate(H5S_SCALAR);
    for (const auto& [name, pad] :
         {std::pair{"nullpad", H5T_STR_NULLPAD}, std::pair{"spacepad", H5T_STR_SPACEPAD}}) {
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, 12);
      H5Tset_strpad(type, pad);
      const hid_t d = H5Dcreate2(h, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      const std::string padded =
          "hello hdf5" + std::string(2, pad == H5T_STR_SPACEPAD ? ' ' : '\0');
      H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data());
      H5Dclose(d);
      H5Tclose(type);
    }
    H5Sclose(space);
    H5Fclose(h);
  }
  EXPECT_EQ(read_string_dataset(f, "nullpad"), "hello hdf5");
  EXPECT_EQ(read_string_dataset(f, "spacepad"), "hello hdf5");
}

TEST_F(Hdf5Write, CommitReplacesTheFileWhole) {
  {
    Hdf5Writer out(path("c.h5"));
    out.write_scalar("step", std::int64_t{1});
    out.write_scalar("only_in_first", 1.0);
    out.commit();
  }
  Hdf5Writer out(path("c.h5"));
  out.write_scalar("step", std::int64_t{2});
  // Until commit, readers see the first version.
  EXPECT_EQ(read_int_dataset(path("c.h5"), "step"), (std::vector<std::int64_t>{1}));
  out.commit();
  EXPECT_EQ(read_int_dataset(path("c.h5"), "step"), (std::vector<std::int64_t>{2}));
  EXPECT_FALSE(has_dataset(path("c.h5"), "only_in_first"));
  EXPECT_EQ(files(), (std::set<std::string>{"c.h5"}));
}

TEST_F(Hdf5Write, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  {
    Hdf5Writer out(path("ck.h5"));
    out.write("w", std::vector<double>{1.0, 2.0});
    out.commit();
  }
  {
    Hdf5Writer out(path("ck.h5"));
    out.write("w", std::vector<double>{3.0, 4.0, 5.0});
    out.write_string("note", "never committed");
    EXPECT_EQ(files().size(), 2u);  // ck.h5 and the temporary beside it
  }
  EXPECT_EQ(read_dataset(path("ck.h5"), "w").values, (std::vector<double>{1.0, 2.0}));
  EXPECT_FALSE(has_dataset(path("ck.h5"), "note"));
  EXPECT_EQ(files(), (std::set<std::string>{"ck.h5"}));

  // The same when an exception unwinds through the writer, and when there was no file before.
  try {
    Hdf5Writer out(path("ck.h5"));
    out.write("w", std::vector<double>{6.0});
    Hdf5Writer fresh(path("new.h5"));
    fresh.write_scalar("x", 1.0);
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_dataset(path("ck.h5"), "w").values, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(files(), (std::set<std::string>{"ck.h5"}));
}

TEST_F(Hdf5Write, AMissingFolderIsAUserError) {
  const std::string missing = path("no/such/folder/ck.h5");
  expect_user_error(
      [&] { Hdf5Writer out(missing); },
      "cannot write '" + missing + "': folder '" + path("no/such/folder") + "' does not exist");
  fs::create_directories(path("a_folder"));
  expect_user_error([&] { Hdf5Writer out(path("a_folder")); },
                    "cannot write '" + path("a_folder") + "': it is a folder");
}

TEST_F(Hdf5Write, ErrorsNameTheFileAndTheDataset) {
  const std::string f = path("err.h5");
  {
    Hdf5Writer out(f);
    out.write_scalar("x", 1.0);
    expect_user_error([&] { out.write_scalar("x", 2.0); },
                      "cannot write '" + f + "': 'x' is written twice");
    expect_user_error(
        [&] { out.write_scalar("x/y", 2.0); },
        "cannot write '" + f + "': 'x/y' needs a group 'x', which is already a dataset");
    for (const std::string bad : {"", "/abs", "trailing/", "a//b"})
      expect_user_error([&] { out.write_scalar(bad, 2.0); },
                        "cannot write '" + f + "': '" + bad +
                            "' is not a dataset name (parts separated by single '/', none empty)");
    expect_user_error([&] { out.write_string("s", std::string("a\0b", 3)); },
                      "cannot write '" + f + "': string 's' contains a NUL character");
    out.write_string("text", "words");
    out.write("g/ints", std::vector<std::int64_t>{1, 2});
    out.write("g/reals", std::vector<double>{1.5});
    out.commit();
    EXPECT_THROW(out.write_scalar("late", 1.0), InternalError);
  }
  expect_user_error([&] { read_int_dataset(f, "x"); },
                    "'" + f + "': dataset 'x' is not of an integer type");
  expect_user_error([&] { read_string_dataset(f, "x"); },
                    "'" + f + "': dataset 'x' is not a string");
  expect_user_error([&] { read_int_dataset(f, "text"); },
                    "'" + f + "': dataset 'text' is not of an integer type");
  // A missing name in a group lists that group's datasets; elsewhere the root's.
  expect_user_error([&] { read_int_dataset(f, "g/count"); },
                    "'" + f + "' has no dataset 'g/count' (datasets: g/ints, g/reals)");
  expect_user_error([&] { read_string_dataset(f, "h/config"); },
                    "'" + f + "' has no dataset 'h/config' (datasets: text, x)");
  expect_user_error([&] { has_dataset(path("missing.h5"), "x"); },
                    "cannot read '" + path("missing.h5") + "': no such file");
  // read_dataset reads inside groups too.
  EXPECT_EQ(read_dataset(f, "g/ints").values, (std::vector<double>{1.0, 2.0}));
}

}  // namespace
}  // namespace jetpde::io
