// NumPy's .npy (one array) and .npz (a zip of .npy files, through libzip).
//
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a major and a minor version byte, the
// header's length (2 bytes little-endian in version 1, 4 in versions 2 and 3), then the header, a
// Python dict literal such as "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"
// padded with spaces to a multiple of 64 bytes, then the values. Read here: little and big endian
// ('<', '>', '|', '='), floats f4 and f8, signed and unsigned integers of 1 to 8 bytes, booleans,
// complex c8 and c16 (as NAME.re and NAME.im), C and Fortran order. Structured and object arrays
// are refused.
#include <algorithm>
#include <bit>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autodiff/errors.h"
#include "io/detail/data_sources.h"

#ifdef JETPDE_HAVE_LIBZIP
#include <zip.h>
#endif

namespace jetpde::io::detail {
namespace {

namespace fs = std::filesystem;

struct NpyHeader {
  char kind = 'f';  // f, i, u, b, c
  int size = 8;     // bytes per element (both parts for a complex one)
  bool swap = false;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;
  bool complex() const { return kind == 'c'; }
};

// The length of the magic, version and header of a .npy whose first 12 bytes are `start`; `where`
// names the file (and entry) in messages.
std::size_t header_end(std::string_view start, const std::string& where) {
  if (start.size() < 10 || start.substr(0, 6) != "\x93NUMPY")
    throw UserError(where + ": not a NumPy .npy array (no \\x93NUMPY magic)");
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(start[i]); };
  const int major = byte(6);
  if (major == 1) return 10 + (byte(8) | (byte(9) << 8));
  if (major == 2 || major == 3) {
    if (start.size() < 12) throw UserError(where + ": the .npy header is cut short");
    return 12 + (static_cast<std::size_t>(byte(8)) | (static_cast<std::size_t>(byte(9)) << 8) |
                 (static_cast<std::size_t>(byte(10)) << 16) |
                 (static_cast<std::size_t>(byte(11)) << 24));
  }
  throw UserError(where + ": .npy format version " + std::to_string(major) +
                  " (versions 1 to 3 are read)");
}

// The value of `key` in the header dict: the text after "'key':", with leading spaces removed.
std::string_view dict_value(std::string_view dict, const std::string& key,
                            const std::string& where) {
  for (const char quote : {'\'', '"'}) {
    const std::string k = quote + key + quote;
    const std::size_t at = dict.find(k);
    if (at == std::string_view::npos) continue;
    std::size_t colon = dict.find(':', at + k.size());
    if (colon == std::string_view::npos) break;
    std::string_view v = dict.substr(colon + 1);
    v.remove_prefix(std::min(v.find_first_not_of(' '), v.size()));
    return v;
  }
  throw UserError(where + ": the .npy header has no '" + key + "' (" + std::string(dict) + ")");
}

NpyHeader parse_header(std::string_view bytes, const std::string& where) {
  NpyHeader h;
  h.data_offset = header_end(bytes, where);
  if (bytes.size() < h.data_offset) throw UserError(where + ": the .npy header is cut short");
  const std::size_t start = bytes[6] == 1 ? 10 : 12;
  const std::string_view dict = bytes.substr(start, h.data_offset - start);
  // descr: '<f8'; a list is a structured array.
  const std::string_view descr = dict_value(dict, "descr", where);
  if (descr.empty() || (descr[0] != '\'' && descr[0] != '"'))
    throw UserError(where + ": a structured array (descr " +
                    std::string(descr.substr(0, descr.find_first_of("]}") + 1)) +
                    "); save each field as its own array");
  const std::string type(descr.substr(1, descr.find(descr[0], 1) - 1));
  const std::string explain = where + ": dtype '" + type + "'";
  if (type.size() >= 2 && type[1] == 'O')
    throw UserError(explain + " is not read: object arrays hold pickled Python objects");
  if (type.size() < 3 || std::string("<>|=").find(type[0]) == std::string::npos)
    throw UserError(explain + " is not read (expected a number type such as '<f8')");
  h.kind = type[1];
  try {
    h.size = std::stoi(type.substr(2));
  } catch (const std::exception&) {
    throw UserError(explain + " is not read (expected a number type such as '<f8')");
  }
  const bool known = (h.kind == 'f' && (h.size == 4 || h.size == 8)) ||
                     ((h.kind == 'i' || h.kind == 'u') &&
                      (h.size == 1 || h.size == 2 || h.size == 4 || h.size == 8)) ||
                     (h.kind == 'b' && h.size == 1) ||
                     (h.kind == 'c' && (h.size == 8 || h.size == 16));
  if (!known)
    throw UserError(explain +
                    " is not read (floats f4, f8; integers i1-i8, u1-u8; b1; complex "
                    "c8, c16)");
  const bool big = type[0] == '>' || (type[0] == '=' && std::endian::native == std::endian::big);
  h.swap = type[0] != '|' && big != (std::endian::native == std::endian::big);
  h.fortran = dict_value(dict, "fortran_order", where).starts_with("True");
  const std::string_view shape = dict_value(dict, "shape", where);
  if (shape.empty() || shape[0] != '(')
    throw UserError(where + ": the .npy header's shape is not a tuple");
  std::string inside(shape.substr(1, shape.find(')') - 1));
  std::replace(inside.begin(), inside.end(), ',', ' ');
  std::istringstream dims(inside);
  for (long long d; dims >> d;) {
    if (d < 0) throw UserError(where + ": the .npy header's shape has a negative length");
    h.shape.push_back(d);
  }
  return h;
}

// Element `k` of `data` as a double; `part` 1 reads a complex element's imaginary part.
double element(const NpyHeader& h, const char* data, std::size_t k, int part) {
  const int width = h.complex() ? h.size / 2 : h.size;
  unsigned char b[8];
  std::memcpy(b, data + k * static_cast<std::size_t>(h.size) + (part == 1 ? width : 0),
              static_cast<std::size_t>(width));
  if (h.swap) std::reverse(b, b + width);
  const auto as = [&]<class T>(T) {
    T v;
    std::memcpy(&v, b, sizeof v);
    return static_cast<double>(v);
  };
  switch (h.kind) {
    case 'f':
    case 'c':
      return width == 4 ? as(float{}) : as(double{});
    case 'b':
      return b[0] != 0 ? 1.0 : 0.0;
    case 'i':
      return width == 1   ? as(std::int8_t{})
             : width == 2 ? as(std::int16_t{})
             : width == 4 ? as(std::int32_t{})
                          : as(std::int64_t{});
    default:
      return width == 1   ? as(std::uint8_t{})
             : width == 2 ? as(std::uint16_t{})
             : width == 4 ? as(std::uint32_t{})
                          : as(std::uint64_t{});
  }
}

// The array of a whole .npy in `bytes`, C order; `part` is -1 for a real array, 0 or 1 for a
// complex one's real or imaginary part.
NamedArray parse_npy(std::string_view bytes, const std::string& name, int part,
                     const std::string& where) {
  const NpyHeader h = parse_header(bytes, where);
  std::size_t count = 1;
  for (const std::int64_t d : h.shape) {
    if (d > 0 && count > (std::size_t{1} << 40) / static_cast<std::size_t>(d))
      throw UserError(where + ": the array is too large");
    count *= static_cast<std::size_t>(d);
  }
  if (bytes.size() - h.data_offset < count * static_cast<std::size_t>(h.size))
    throw UserError(where + ": the file is cut short: shape " + shape_text(h.shape) + " needs " +
                    std::to_string(count * static_cast<std::size_t>(h.size)) + " bytes of data, " +
                    std::to_string(bytes.size() - h.data_offset) + " are there");
  NamedArray a{name, h.shape, std::vector<double>(count)};
  const char* data = bytes.data() + h.data_offset;
  const int p = h.complex() ? part : 0;
  if (!h.fortran || h.shape.size() < 2) {
    for (std::size_t k = 0; k < count; ++k) a.values[k] = element(h, data, k, p);
    return a;
  }
  // Fortran order: the first index varies fastest. Walk the C-order index and its Fortran offset.
  std::vector<std::int64_t> index(h.shape.size(), 0), stride(h.shape.size(), 1);
  for (std::size_t d = 1; d < h.shape.size(); ++d) stride[d] = stride[d - 1] * h.shape[d - 1];
  for (std::size_t k = 0; k < count; ++k) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * stride[d];
    a.values[k] = element(h, data, static_cast<std::size_t>(offset), p);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < h.shape[d]) break;
      index[d] = 0;
    }
  }
  return a;
}

// The names an array `stem` gives: itself, or stem.re and stem.im when it is complex.
void add_names(std::vector<std::string>& out, const std::string& stem, bool complex) {
  if (!complex) {
    out.push_back(stem);
    return;
  }
  out.push_back(stem + ".re");
  out.push_back(stem + ".im");
}

std::string whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class NpySource : public DataSource {
 public:
  explicit NpySource(const std::string& path)
      : DataSource(path), stem_(fs::path(path).stem().string()), bytes_(whole_file(path)) {
    const NpyHeader h = parse_header(bytes_, "'" + path + "'");
    add_names(names_, stem_, h.complex());
  }
  std::string noun() const override { return "array"; }
  std::vector<std::string> names() const override { return names_; }

 protected:
  NamedArray load(const std::string& name) const override {
    return parse_npy(bytes_, name, complex_part(name).second, "'" + file() + "'");
  }

 private:
  std::string stem_, bytes_;
  std::vector<std::string> names_;
};

#ifdef JETPDE_HAVE_LIBZIP

class Zip {
 public:
  explicit Zip(const std::string& path) : path_(path) {
    int error = 0;
    zip_ = zip_open(path.c_str(), ZIP_RDONLY, &error);
    if (!zip_) {
      zip_error_t e;
      zip_error_init_with_code(&e, error);
      const std::string why = zip_error_strerror(&e);
      zip_error_fini(&e);
      throw UserError("'" + path + "': not a .npz (zip) file: " + why);
    }
  }
  ~Zip() { zip_discard(zip_); }
  Zip(const Zip&) = delete;
  Zip& operator=(const Zip&) = delete;

  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    const zip_int64_t n = zip_get_num_entries(zip_, 0);
    for (zip_int64_t i = 0; i < n; ++i)
      if (const char* name = zip_get_name(zip_, static_cast<zip_uint64_t>(i), 0))
        out.push_back(name);
    return out;
  }
  // The first `limit` bytes of entry `name` (all of it when limit is 0).
  std::string read(const std::string& name, std::size_t limit = 0) const {
    const std::string where = "'" + path_ + "': entry '" + name + "'";
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_, name.c_str(), 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
      throw UserError(where + ": " + zip_strerror(zip_));
    zip_file_t* f = zip_fopen(zip_, name.c_str(), 0);
    if (!f) throw UserError(where + ": cannot open it: " + zip_strerror(zip_));
    std::string out(limit ? std::min<std::size_t>(limit, st.size) : st.size, '\0');
    const zip_int64_t got = zip_fread(f, out.data(), out.size());
    const std::string why = got < 0 ? zip_file_strerror(f) : "";
    zip_fclose(f);
    if (got < 0 || static_cast<std::size_t>(got) != out.size())
      throw UserError(where + ": cannot read it" + (why.empty() ? "" : ": " + why));
    return out;
  }

 private:
  std::string path_;
  zip_t* zip_ = nullptr;
};

class NpzSource : public DataSource {
 public:
  explicit NpzSource(const std::string& path) : DataSource(path), zip_(path) {
    for (const std::string& entry : zip_.entries()) {
      if (!entry.ends_with(".npy")) continue;
      const std::string where = "'" + path + "': entry '" + entry + "'";
      std::string start = zip_.read(entry, 12);
      start = zip_.read(entry, header_end(start, where));
      const std::string stem = entry.substr(0, entry.size() - 4);
      add_names(names_, stem, parse_header(start, where).complex());
      entry_of_.emplace_back(stem, entry);
    }
    if (entry_of_.empty())
      throw UserError("'" + path + "' holds no .npy arrays (not a NumPy .npz)");
  }
  std::string noun() const override { return "array"; }
  std::vector<std::string> names() const override { return names_; }

 protected:
  NamedArray load(const std::string& name) const override {
    std::string stem = name;
    int part = -1;
    if (std::find(names_.begin(), names_.end(), name) != names_.end() &&
        std::none_of(entry_of_.begin(), entry_of_.end(),
                     [&](const auto& e) { return e.first == name; }))
      std::tie(stem, part) = complex_part(name);
    const auto it = std::find_if(entry_of_.begin(), entry_of_.end(),
                                 [&](const auto& e) { return e.first == stem; });
    const std::string bytes = zip_.read(it->second);
    return parse_npy(bytes, name, part, "'" + file() + "': entry '" + it->second + "'");
  }

 private:
  Zip zip_;
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, std::string>> entry_of_;  // array stem -> zip entry
};

#endif

}  // namespace

std::unique_ptr<DataSource> open_npy(const std::string& path) {
  return std::make_unique<NpySource>(path);
}

std::unique_ptr<DataSource> open_npz(const std::string& path) {
#ifdef JETPDE_HAVE_LIBZIP
  return std::make_unique<NpzSource>(path);
#else
  throw UserError("'" + path +
                  "': this jetpde was built without libzip, which .npz files need (Debian: "
                  "libzip-dev; scripts/bootstrap.sh installs it)");
#endif
}

}  // namespace jetpde::io::detail
