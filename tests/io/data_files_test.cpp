// The data files users have (io/data_files.h): text tables with comments and `columns`, NumPy
// .npy/.npz, MATLAB .mat v4, v5 and v7.3 (complex arrays as .re/.im), HDF5; each written here by a
// small writer or the format's own library, read back through open_data_file/read_point_data and
// through a config (a data condition and reference data); and every error: non-finite values,
// grid shapes axis by axis, empty files, missing arrays, broken files.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include <hdf5.h>

#include "io/config.h"
#include "io/data_files.h"
#include "io/hdf5_write.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/user_error.h"

#ifdef JETPDE_HAVE_LIBZIP
#include <zip.h>
#endif
#ifdef JETPDE_HAVE_MATIO
#include <matio.h>
#endif

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The message of the UserError f throws, "" when none.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// A .npy file's bytes: version 1 header for `descr` and `shape`, then `data` as given.
std::string npy_bytes(const std::string& descr, const std::vector<std::int64_t>& shape,
                      const std::string& data, bool fortran = false) {
  std::string tuple = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    tuple += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  if (shape.size() == 1) tuple.pop_back();
  tuple += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + tuple + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

// Values as raw bytes of T, byte-swapped for a big-endian descr.
template <class T>
std::string raw(const std::vector<T>& values, bool big = false) {
  std::string out;
  for (const T v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof v);
    if (big != (std::endian::native == std::endian::big)) std::reverse(b, b + sizeof(T));
    out.append(b, sizeof b);
  }
  return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string f8(const std::vector<double>& v) {
  return npy_bytes("<f8", {std::int64_t(v.size())}, raw(v));
}

class DataFiles : public jetpde::testing::ScratchDirTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
#ifdef JETPDE_HAVE_LIBZIP
  // A .npz of (name, .npy bytes), each stored or deflated.
  std::string npz(const std::string& name,
                  const std::vector<std::pair<std::string, std::string>>& arrays,
                  bool deflate) const {
    int error = 0;
    zip_t* z = zip_open(path(name).c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    EXPECT_NE(z, nullptr);
    for (const auto& [array, bytes] : arrays) {
      zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
      const zip_int64_t i = zip_file_add(z, (array + ".npy").c_str(), src, ZIP_FL_OVERWRITE);
      EXPECT_GE(i, 0);
      zip_set_file_compression(z, static_cast<zip_uint64_t>(i),
                               deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
    }
    EXPECT_EQ(zip_close(z), 0);  // writes: the buffers above must live until here
    return path(name);
  }
#endif
};

// ---- text tables -------------------------------------------------------------------------------

TEST_F(DataFiles, WhitespaceTablesWithCommentsAndColumnsFromTheConfig) {
  const std::string dat = write("ref.dat",
                                "% x  y  u   (MATLAB's save -ascii, with a comment)\n"
                                "# another comment\n"
                                "  0.0\t1.0   2.5\n"
                                "\n"
                                "  1.0   -1e-3  +3\n");
  const auto src = open_data_file(dat, {.columns = {"x", "y", "u"}});
  EXPECT_EQ(src->names(), (std::vector<std::string>{"x", "y", "u"}));
  const NamedArray u = src->read("u");
  EXPECT_EQ(u.shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(u.values, (std::vector<double>{2.5, 3.0}));
  EXPECT_EQ(src->read("y").values[1], -1e-3);
  // A header line is read when `columns` is not given, and skipped (counted) when it is.
  const std::string txt = write("ref.txt", "x y u\n0 1 2\n");
  EXPECT_EQ(open_data_file(txt)->read("y").values, (std::vector<double>{1}));
  EXPECT_EQ(open_data_file(txt, {.columns = {"a", "b", "c"}})->read("c").values,
            (std::vector<double>{2}));
  expect_user_error(
      [&] {
        open_data_file(txt, {.columns = {"a", "b"}});
      },
      txt + ":1: the header line names 3 columns, `columns` 2 (a, b)");
  // Without either, the first line of numbers says what to do.
  expect_user_error([&] { open_data_file(dat); },
                    dat +
                        ":3: no header line (the first line holds numbers): name the columns "
                        "in the config (`columns: [x, t, u]`) or add a line of names");
  // Errors keep file:line and the column.
  const std::string bad = write("bad.dat", "0 1 2\n0 1\n");
  expect_user_error(
      [&] {
        open_data_file(bad, {.columns = {"x", "y", "u"}});
      },
      bad + ":2: no value for column 'u' (2 fields, `columns` names 3)");
  const std::string nan = write("nan.dat", "% x u\n0 1\n1 nan\n");
  expect_user_error(
      [&] {
        open_data_file(nan, {.columns = {"x", "u"}});
      },
      nan + ":3: column 'u': 'nan' is not a finite number");
  // Commas, when the first line has them, separate every line.
  const std::string csv = write("ref.csv", "0, 1\n2 ,3\n");
  EXPECT_EQ(open_data_file(csv, {.columns = {"x", "u"}})->read("x").values,
            (std::vector<double>{0, 2}));
}

TEST_F(DataFiles, AnEmptyTableNamesTheFile) {
  const std::string csv = write("ref.csv", "# nothing measured yet\nx,t,u\n");
  const auto src = open_data_file(csv);
  expect_user_error([&] { src->read("x"); },
                    "'" + csv + "' holds no data: no rows after the header line");
  const std::string npy = write("e.npy", npy_bytes("<f8", {0, 3}, ""));
  expect_user_error([&] { open_data_file(npy)->read("e"); },
                    "'" + npy + "': array 'e' is empty (no values)");
  const std::string dat = write("ref.dat", "% only a comment\n\n");
  expect_user_error(
      [&] {
        open_data_file(dat, {.columns = {"x", "u"}});
      },
      "'" + dat + "' holds no data (only comments and blank lines)");
}

TEST_F(DataFiles, UnknownTypesAndMissingFiles) {
  const std::string xyz = write("ref.xyz", "1 2 3\n");
  expect_user_error([&] { open_data_file(xyz); },
                    "'" + xyz +
                        "': not a data file type jetpde reads ('.xyz'; expected .csv, "
                        ".dat, .txt, .tsv, .h5, .hdf5, .npy, .npz, .mat)");
  expect_user_error([&] { open_data_file(path("none.npy")); },
                    "cannot read '" + path("none.npy") + "': no such file");
}

// ---- .npy --------------------------------------------------------------------------------------

TEST_F(DataFiles, NpyTypesByteOrdersAndFortranOrder) {
  const std::vector<double> v{1.5, -2, 3, 4.25, 5, 6};
  const auto read = [&](const std::string& bytes, const std::string& name = "a") {
    return open_data_file(write(name + ".npy", bytes))->read(name);
  };
  NamedArray a = read(npy_bytes("<f8", {2, 3}, raw(v)));
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.values, v);
  EXPECT_EQ(read(npy_bytes(">f8", {6}, raw(v, true))).values, v);
  EXPECT_EQ(read(npy_bytes("<f4", {6}, raw(std::vector<float>{1.5f, -2, 3, 4.25f, 5, 6}))).values,
            v);
  EXPECT_EQ(
      read(npy_bytes(">f4", {6}, raw(std::vector<float>{1.5f, -2, 3, 4.25f, 5, 6}, true))).values,
      v);
  const std::vector<double> ints{-3, 0, 7};
  EXPECT_EQ(read(npy_bytes("<i4", {3}, raw(std::vector<std::int32_t>{-3, 0, 7}))).values, ints);
  EXPECT_EQ(read(npy_bytes(">i8", {3}, raw(std::vector<std::int64_t>{-3, 0, 7}, true))).values,
            ints);
  EXPECT_EQ(read(npy_bytes("|u1", {3}, raw(std::vector<std::uint8_t>{0, 1, 255}))).values,
            (std::vector<double>{0, 1, 255}));
  EXPECT_EQ(read(npy_bytes("|b1", {2}, std::string("\x01\x00", 2))).values,
            (std::vector<double>{1, 0}));
  // Fortran order: the file holds the columns one after another; the array is the same.
  a = read(npy_bytes("<f8", {2, 3}, raw(std::vector<double>{1.5, 4.25, -2, 5, 3, 6}), true));
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.values, v);
  // A scalar.
  a = read(npy_bytes("<f8", {}, raw(std::vector<double>{2})));
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.values, (std::vector<double>{2}));
}

TEST_F(DataFiles, ComplexArraysAreTwoRealOnes) {
  const std::vector<std::complex<double>> w{{1, -1}, {2, 0.5}};
  const std::string file = write("w.npy", npy_bytes("<c16", {2}, raw(w)));
  const auto src = open_data_file(file);
  EXPECT_EQ(src->names(), (std::vector<std::string>{"w.re", "w.im"}));
  EXPECT_EQ(src->read("w.re").values, (std::vector<double>{1, 2}));
  EXPECT_EQ(src->read("w.im").values, (std::vector<double>{-1, 0.5}));
  expect_user_error([&] { src->read("w"); },
                    "'" + file + "' has no array 'w' (arrays: w.re, w.im)");
  const std::vector<std::complex<float>> z{{1, -1}, {2, 0.5}};
  EXPECT_EQ(open_data_file(write("z.npy", npy_bytes("<c8", {2}, raw(z))))->read("z.im").values,
            (std::vector<double>{-1, 0.5}));
}

TEST_F(DataFiles, BrokenNpyFiles) {
  const std::string magic = write("m.npy", "not numpy at all");
  expect_user_error([&] { open_data_file(magic); },
                    "'" + magic + "': not a NumPy .npy array (no \\x93NUMPY magic)");
  const std::string cut = write("c.npy", npy_bytes("<f8", {4}, raw(std::vector<double>{1, 2})));
  expect_user_error([&] { open_data_file(cut)->read("c"); },
                    "'" + cut +
                        "': the file is cut short: shape [4] needs 32 bytes of data, 16 "
                        "are there");
  const std::string object = write("o.npy", npy_bytes("|O", {1}, "x"));
  EXPECT_NE(error_of([&] { open_data_file(object); }).find("object arrays hold pickled"),
            std::string::npos);
  const std::string strings = write("s.npy", npy_bytes("<U3", {1}, std::string(12, 'a')));
  EXPECT_EQ(error_of([&] { open_data_file(strings); }),
            "'" + strings +
                "': dtype '<U3' is not read (floats f4, f8; integers i1-i8, u1-u8; "
                "b1; complex c8, c16)");
}

// Every prefix of a good file, and every byte of its header changed, gives the array or a
// UserError: never a crash, a hang or another exception.
TEST_F(DataFiles, CutOrDamagedNpyIsAUserError) {
  const std::string good = npy_bytes("<f8", {2, 3}, raw(std::vector<double>{1, 2, 3, 4, 5, 6}));
  const auto outcome = [&](const std::string& bytes) {
    try {
      open_data_file(write("a.npy", bytes))->read("a");
      return 0;
    } catch (const UserError&) {
      return 1;
    }
  };
  int errors = 0;
  for (std::size_t n = 0; n < good.size(); ++n) errors += outcome(good.substr(0, n));
  EXPECT_EQ(errors, static_cast<int>(good.size()));  // every cut one is refused
  for (std::size_t i = 0; i < 64; ++i)
    for (const char c : {'\0', '(', ')', '\'', ',', '9', '\xff'}) {
      std::string bad = good;
      bad[i] = c;
      outcome(bad);
    }
}

TEST_F(DataFiles, NonFiniteValuesAreRefusedWithTheirIndex) {
  const std::string file =
      write("u.npy", npy_bytes("<f8", {2, 3}, raw(std::vector<double>{0, 1, 2, 3, 4, kNan})));
  expect_user_error([&] { open_data_file(file)->read("u"); },
                    "'" + file + "': array 'u' holds nan at [1, 2] (data must be finite numbers)");
  const std::string inf = write("v.npy", f8({0, -kInf}));
  expect_user_error([&] { open_data_file(inf)->read("v"); },
                    "'" + inf + "': array 'v' holds -inf at [1] (data must be finite numbers)");
}

TEST_F(DataFiles, ColumnsOfANpyTable) {
  const std::string file =
      write("table.npy", npy_bytes("<f8", {2, 3}, raw(std::vector<double>{0, 0.5, 1, 1, 0.25, 2})));
  const auto src = open_data_file(file, {.columns = {"x", "t", "u"}});
  const PointData d = read_point_data(*src, {.coordinates = {"x", "t"}, .fields = {{"u", "u"}}});
  EXPECT_EQ(d.points(1, 0), 1);
  EXPECT_EQ(d.points(1, 1), 0.25);
  EXPECT_EQ(d.values(0, 0), 1);
  expect_user_error(
      [&] {
        open_data_file(file, {.columns = {"x", "u"}});
      },
      "'" + file +
          "': array 'table' has shape [2, 3], `columns` names 2 columns "
          "(x, u): expected [rows, 2]");
}

// Files numpy itself writes (numpy.save, savez, savez_compressed), when python3 has numpy
// (scripts/bootstrap.sh installs it): the small writer above is not the only witness.
TEST_F(DataFiles, FilesNumpyWrites) {
  if (std::system("python3 -c 'import numpy' 2>/dev/null") != 0)
    GTEST_SKIP() << "python3 with numpy is not installed";
  const std::string script = path("write.py");
  write("write.py",
        "import numpy as np, sys\n"
        "d = sys.argv[1]\n"
        "a = np.arange(6, dtype='<f8').reshape(2, 3) / 4\n"
        "np.save(d + '/c.npy', a)\n"
        "np.save(d + '/f.npy', np.asfortranarray(a.astype('>f4')))\n"
        "np.save(d + '/i.npy', np.array([[-1, 2, 3]], dtype='<i8'))\n"
        "np.save(d + '/z.npy', a + 1j * (a + 10))\n"
        "np.savez(d + '/s.npz', x=np.linspace(0, 1, 3), u=a.T)\n"
        "np.savez_compressed(d + '/d.npz', x=np.linspace(0, 1, 3), u=a.T)\n");
  ASSERT_EQ(std::system(("python3 " + script + " " + dir_.string()).c_str()), 0);
  const std::vector<double> a{0, 0.25, 0.5, 0.75, 1, 1.25};
  for (const char* name : {"c", "f"}) {
    const NamedArray r = open_data_file(path(std::string(name) + ".npy"))->read(name);
    EXPECT_EQ(r.shape, (std::vector<std::int64_t>{2, 3})) << name;
    EXPECT_EQ(r.values, a) << name;
  }
  EXPECT_EQ(open_data_file(path("i.npy"))->read("i").values, (std::vector<double>{-1, 2, 3}));
  EXPECT_EQ(open_data_file(path("z.npy"))->read("z.im").values[5], 11.25);
#ifdef JETPDE_HAVE_LIBZIP
  for (const char* file : {"s.npz", "d.npz"}) {
    const auto src = open_data_file(path(file));
    EXPECT_EQ(src->names(), (std::vector<std::string>{"x", "u"})) << file;
    const NamedArray u = src->read("u");
    EXPECT_EQ(u.shape, (std::vector<std::int64_t>{3, 2})) << file;  // a.T: Fortran order
    EXPECT_EQ(u.values, (std::vector<double>{0, 0.75, 0.25, 1, 0.5, 1.25})) << file;
  }
#endif
}

// ---- .npz --------------------------------------------------------------------------------------

#ifdef JETPDE_HAVE_LIBZIP
TEST_F(DataFiles, NpzStoredAndDeflated) {
  const std::vector<double> x{0, 0.5, 1}, t{0, 1}, u{1, 2, 3, 4, 5, 6};  // u[i, j] = u(x_i, t_j)
  const std::vector<std::complex<double>> w{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}};
  for (const bool deflate : {false, true}) {
    const std::string file = npz(deflate ? "d.npz" : "s.npz",
                                 {{"x", f8(x)},
                                  {"t", f8(t)},
                                  {"u", npy_bytes("<f8", {3, 2}, raw(u))},
                                  {"w", npy_bytes("<c16", {3, 2}, raw(w))}},
                                 deflate);
    const auto src = open_data_file(file);
    EXPECT_EQ(src->names(), (std::vector<std::string>{"x", "t", "u", "w.re", "w.im"}));
    const PointData d =
        read_point_data(*src, {.axes = {{"x", "x"}, {"t", "t"}},
                               .coordinates = {"x", "t"},
                               .fields = {{"u", "u"}, {"a", "w.re"}, {"b", "w.im"}}});
    ASSERT_EQ(d.points.rows(), 6);
    EXPECT_EQ(d.points(3, 0), 0.5);  // row-major: (x_1, t_1)
    EXPECT_EQ(d.points(3, 1), 1.0);
    EXPECT_EQ(d.values(3, 0), 4.0);
    EXPECT_EQ(d.values(3, 1), 7.0);
    EXPECT_EQ(d.values(3, 2), 8.0);
    expect_user_error([&] { src->read("v"); },
                      "'" + file + "' has no array 'v' (arrays: x, t, u, w.re, w.im)");
  }
  const std::string zip_of_text = write("bad.npz", "PK but not really a zip");
  EXPECT_EQ(error_of([&] {
              open_data_file(zip_of_text);
            }).rfind("'" + zip_of_text + "': not a .npz (zip) file: ", 0),
            0u);
}
#endif

// ---- .mat --------------------------------------------------------------------------------------

#ifdef JETPDE_HAVE_MATIO
// Writes the variables (name, dims, column-major values, imaginary part or empty) as MATLAB does.
struct MatVar {
  std::string name;
  std::vector<std::size_t> dims;
  std::vector<double> re, im;
};
void write_mat(const std::string& file, mat_ft version, const std::vector<MatVar>& vars) {
  mat_t* m = Mat_CreateVer(file.c_str(), nullptr, version);
  ASSERT_NE(m, nullptr);
  for (const MatVar& v : vars) {
    std::vector<double> re = v.re, im = v.im;
    mat_complex_split_t split{re.data(), im.data()};
    std::vector<std::size_t> dims = v.dims;
    matvar_t* var = Mat_VarCreate(
        v.name.c_str(), MAT_C_DOUBLE, MAT_T_DOUBLE, static_cast<int>(dims.size()), dims.data(),
        im.empty() ? static_cast<void*>(re.data()) : &split, im.empty() ? 0 : MAT_F_COMPLEX);
    ASSERT_NE(var, nullptr);
    EXPECT_EQ(Mat_VarWrite(m, var, MAT_COMPRESSION_ZLIB), 0);
    Mat_VarFree(var);
  }
  Mat_Close(m);
}

TEST_F(DataFiles, MatV5AndV73WithComplexVariables) {
  for (const mat_ft version : {MAT_FT_MAT4, MAT_FT_MAT5, MAT_FT_MAT73}) {
    const std::string file = path(version == MAT_FT_MAT4   ? "v4.mat"
                                  : version == MAT_FT_MAT5 ? "v5.mat"
                                                           : "v73.mat");
    // burgers_shock.mat's layout: x [3, 1], t [2, 1], usol [3, 2] with usol(i, j) = u(x_i, t_j);
    // MATLAB's column-major order: usol(:, 1) first.
    write_mat(file, version,
              {{"x", {3, 1}, {-1, 0, 1}, {}},
               {"t", {2, 1}, {0, 0.5}, {}},
               {"usol", {3, 2}, {1, 2, 3, 4, 5, 6}, {}},
               {"w", {3, 2}, {1, 2, 3, 4, 5, 6}, {-1, -2, -3, -4, -5, -6}}});
    const auto src = open_data_file(file);
    // v4 and v5 keep the order written; v7.3 is HDF5's, sorted.
    EXPECT_EQ(src->names(), version != MAT_FT_MAT73
                                ? (std::vector<std::string>{"x", "t", "usol", "w.re", "w.im"})
                                : (std::vector<std::string>{"t", "usol", "w.re", "w.im", "x"}));
    const NamedArray usol = src->read("usol");
    EXPECT_EQ(usol.shape, (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(usol.values, (std::vector<double>{1, 4, 2, 5, 3, 6}));  // row-major
    const PointData d = read_point_data(*src, {.axes = {{"x", "x"}, {"t", "t"}},
                                               .coordinates = {"x", "t"},
                                               .fields = {{"u", "usol"}, {"v", "w.im"}}});
    ASSERT_EQ(d.points.rows(), 6);
    EXPECT_EQ(d.points(1, 0), -1.0);  // (x_0, t_1)
    EXPECT_EQ(d.points(1, 1), 0.5);
    EXPECT_EQ(d.values(1, 0), 4.0);  // usol(1, 2) in MATLAB
    EXPECT_EQ(d.values(1, 1), -4.0);
    // The axes in the wrong order: the shapes disagree axis by axis.
    expect_user_error(
        [&] {
          read_point_data(*src, {.axes = {{"t", "t"}, {"x", "x"}},
                                 .coordinates = {"x", "t"},
                                 .fields = {{"u", "usol"}}});
        },
        "'" + file +
            "': variable 'usol' has shape [3, 2], the grid's axes (t, x) have lengths "
            "[2, 3]: `coordinates:` lists the axes in the order of the array's "
            "dimensions");
  }
}

TEST_F(DataFiles, MatVariablesThatAreNotArrays) {
  const std::string file = path("s.mat");
  mat_t* m = Mat_CreateVer(file.c_str(), nullptr, MAT_FT_MAT5);
  ASSERT_NE(m, nullptr);
  std::size_t dims[2] = {1, 3};
  char text[] = "abc";
  matvar_t* var = Mat_VarCreate("label", MAT_C_CHAR, MAT_T_UINT8, 2, dims, text, 0);
  Mat_VarWrite(m, var, MAT_COMPRESSION_NONE);
  Mat_VarFree(var);
  Mat_Close(m);
  expect_user_error([&] { open_data_file(file)->read("label"); },
                    "'" + file + "': variable 'label' is text (char) (numeric arrays are read)");
  const std::string not_mat = write("n.mat", "plain text");
  expect_user_error([&] { open_data_file(not_mat); },
                    "'" + not_mat + "': not a MATLAB .mat file matio can read");
}
#endif

// ---- HDF5 --------------------------------------------------------------------------------------

TEST_F(DataFiles, Hdf5GridsAreCheckedAxisByAxisAndForFiniteValues) {
  const std::string file = path("g.h5");
  {
    Hdf5Writer h5(file);
    h5.write("x", std::vector<double>{0, 1, 2});
    h5.write("t", std::vector<double>{0, 0.5});
    MatrixD u(3, 2);
    u << 1, 2, 3, 4, 5, 6;
    h5.write("u", u);
    h5.write("flat", std::vector<double>{1, 2, 3, 4, 5, 6});
    MatrixD bad = u;
    bad(2, 1) = kNan;
    h5.write("bad", bad);
    h5.write("tinf", std::vector<double>{0, kInf});
    h5.commit();
  }
  const PointData d = read_hdf5_grid(file, {{"x", "x"}, {"t", "t"}}, {"x", "t"}, {{"u", "u"}});
  EXPECT_EQ(d.points(5, 0), 2.0);
  EXPECT_EQ(d.values(5, 0), 6.0);
  // Same count, other order: once accepted with the values on the wrong points.
  expect_user_error(
      [&] {
        read_hdf5_grid(file, {{"t", "t"}, {"x", "x"}}, {"x", "t"}, {{"u", "u"}});
      },
      "'" + file +
          "': dataset 'u' has shape [3, 2], the grid's axes (t, x) have lengths [2, 3]: "
          "`coordinates:` lists the axes in the order of the array's dimensions");
  expect_user_error(
      [&] {
        read_hdf5_grid(file, {{"x", "x"}, {"t", "t"}}, {"x", "t"}, {{"u", "flat"}});
      },
      "'" + file +
          "': dataset 'flat' has shape [6], the grid's axes (x, t) have lengths [3, 2]: "
          "`coordinates:` lists the axes in the order of the array's dimensions");
  expect_user_error(
      [&] {
        read_hdf5_grid(file, {{"x", "x"}, {"t", "t"}}, {"x", "t"}, {{"u", "bad"}});
      },
      "'" + file + "': dataset 'bad' holds nan at [2, 1] (data must be finite numbers)");
  expect_user_error(
      [&] {
        read_hdf5_grid(file, {{"x", "x"}, {"t", "tinf"}}, {"x", "t"}, {{"u", "u"}});
      },
      "'" + file + "': dataset 'tinf' holds inf at [1] (data must be finite numbers)");
  expect_user_error(
      [&] {
        read_hdf5_grid(file, {{"x", "u"}, {"t", "t"}}, {"x", "t"}, {{"u", "u"}});
      },
      "'" + file + "': dataset 'u' has shape [3, 2]: the axis of 'x' must be a 1-D array");
  // Scattered points from the arrays named by coordinate: the counts must agree.
  expect_user_error(
      [&] {
        read_point_data(*open_data_file(file), {.coordinates = {"x", "t"}});
      },
      "'" + file +
          "': dataset 't' has 2 values, 'x' 3: for values on a grid, name its axes in "
          "`coordinates:`");
  expect_user_error(
      [&] {
        read_point_data(*open_data_file(file), {.coordinates = {"x", "y"}});
      },
      "'" + file +
          "' has no dataset 'y' (datasets: bad, flat, t, tinf, u, x): the points' "
          "coordinates come from arrays named by coordinate, a grid (`coordinates:`) or "
          "a points array (`points:`)");
}

TEST_F(DataFiles, Hdf5ComplexDatasetsAsH5pyWritesThem) {
  // h5py stores complex128 as a compound {r, i} of two doubles.
  const std::string file = path("c.h5");
  {
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t type = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
    H5Tinsert(type, "r", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(type, "i", sizeof(double), H5T_NATIVE_DOUBLE);
    const hsize_t dims[2] = {2, 2};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(f, "w", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const double values[8] = {1, -1, 2, -2, 3, -3, 4, -4};
    EXPECT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Tclose(type);
    H5Fclose(f);
  }
  const auto src = open_data_file(file);
  EXPECT_EQ(src->names(), (std::vector<std::string>{"w.re", "w.im"}));
  const NamedArray im = src->read("w.im");
  EXPECT_EQ(im.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(im.values, (std::vector<double>{-1, -2, -3, -4}));
  EXPECT_EQ(src->read("w.re").values, (std::vector<double>{1, 2, 3, 4}));
  expect_user_error([&] { src->read("w"); },
                    "'" + file + "' has no dataset 'w' (datasets: w.re, w.im)");
}

// ---- through a config --------------------------------------------------------------------------

const std::string kProblem = R"(name: d
geometry:
  type: interval
  min: [-1]
  max: [1]
  time: [0, 1]
equations:
  - expression: u_t + u*u_x
training:
  stages:
    - optimizer: adam
      steps: 10
conditions:
  - kind: initial_value
    value: -sin(pi*x)
)";

TEST_F(DataFiles, ADataConditionAndReferenceDataFromEveryFormat) {
  write("m.dat", "% x t u\n-1 0 0.5\n0 0.5 1.5\n1 1 2.5\n");
  write("p.npy", npy_bytes("<f8", {3, 2}, raw(std::vector<double>{-1, 0, 0, 0.5, 1, 1})));
  write("u.npy", f8({0.5, 1.5, 2.5}));
  std::string config = kProblem +
                       "  - kind: data\n"
                       "    data: {file: m.dat, columns: [x, t, u]}\n"
                       "reference:\n"
                       "  data: {file: g.h5, coordinates: {x: x, t: t}, fields: {u: u}}\n";
  {
    Hdf5Writer h5(path("g.h5"));
    h5.write("x", std::vector<double>{-1, 1});
    h5.write("t", std::vector<double>{0, 0.5, 1});
    MatrixD u(2, 3);
    u << 1, 2, 3, 4, 5, 6;
    h5.write("u", u);
    h5.commit();
  }
  RunConfig c = run_config_from_text(config, "test.yaml", dir_.string());
  ASSERT_EQ(c.spec.math.conditions.back().data_values.rows(), 3);
  EXPECT_EQ(c.spec.math.conditions.back().data_points(1, 1), 0.5);
  EXPECT_EQ(c.spec.math.conditions.back().data_values(2, 0), 2.5);
  ASSERT_TRUE(c.reference.data.has_value());
  EXPECT_EQ(c.reference.data->points.rows(), 6);
  EXPECT_EQ(c.reference.data->values(4, 0), 5.0);
  // The grid's axes swapped in the config: the error has the config's place and the file's.
  expect_user_error(
      [&] {
        run_config_from_text(replaced(config, "{x: x, t: t}", "{t: t, x: x}"), "test.yaml",
                             dir_.string());
      },
      "test.yaml:19:16: reference.data: '" + path("g.h5") +
          "': dataset 'u' has shape [2, 3], the grid's axes (t, x) have lengths [3, 2]: "
          "`coordinates:` lists the axes in the order of the array's dimensions");
  // A points array in one .npy and the values in another are two sources: here one .npz holds
  // both, as numpy.savez writes them.
#ifdef JETPDE_HAVE_LIBZIP
  npz("pu.npz",
      {{"points", npy_bytes("<f8", {3, 2}, raw(std::vector<double>{-1, 0, 0, 0.5, 1, 1}))},
       {"u", f8({0.5, 1.5, 2.5})}},
      true);
  c = run_config_from_text(kProblem +
                               "  - kind: data\n"
                               "    data: {file: pu.npz, points: points}\n",
                           "test.yaml", dir_.string());
  EXPECT_EQ(c.spec.math.conditions.back().data_points(2, 0), 1.0);
  EXPECT_EQ(c.spec.math.conditions.back().data_values(1, 0), 1.5);
#endif
#ifdef JETPDE_HAVE_MATIO
  write_mat(path("ref.mat"), MAT_FT_MAT73,
            {{"x", {2, 1}, {-1, 1}, {}},
             {"t", {1, 3}, {0, 0.5, 1}, {}},
             {"usol", {2, 3}, {1, 4, 2, 5, 3, 6}, {}}});
  c = run_config_from_text(
      kProblem +
          "reference:\n  data: {file: ref.mat, coordinates: {x: x, t: t}, fields: {u: usol}}\n",
      "test.yaml", dir_.string());
  EXPECT_EQ(c.reference.data->values(4, 0), 5.0);
#endif
  // An empty table, header only: the file is named, not a shape [0, 2].
  write("empty.csv", "x,t,u\n");
  expect_user_error(
      [&] {
        run_config_from_text(kProblem + "  - kind: data\n    data: {file: empty.csv}\n",
                             "test.yaml", dir_.string());
      },
      "test.yaml:17:18: conditions[1].data: '" + path("empty.csv") +
          "' holds no data: no rows after the header line");
  expect_user_error(
      [&] {
        run_config_from_text(
            kProblem + "  - kind: data\n    data: {file: g.h5, points: x, coordinates: {x: x}}\n",
            "test.yaml", dir_.string());
      },
      "test.yaml:17:32: conditions[1].data.points: give `coordinates` (a grid) or `points`, not "
      "both");
}

}  // namespace
}  // namespace jetpde::io
