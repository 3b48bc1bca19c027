// MATLAB .mat files through matio (Debian's libmatio, built with HDF5: v4, v5 and v7.3). The
// numeric variables are arrays: double, single, the integer classes and logical; a complex one is
// NAME.re and NAME.im. MATLAB stores arrays column-major; they are returned row-major with
// MATLAB's dimensions, so u(i, j) in MATLAB is values[i * cols + j] here.
//
// Debian's matio links the serial HDF5 and jetpde the Open MPI one: both libraries' symbols are
// versioned (HDF5_SERIAL_1.8.7, HDF5_MPI_1.8.7), so the two live side by side in one process,
// each with its own state; matio's HDF5 calls never reach jetpde's library.
#include <algorithm>
#include <cstring>

#include "autodiff/errors.h"
#include "io/detail/data_sources.h"

#ifdef JETPDE_HAVE_MATIO
#include <matio.h>
#endif

namespace jetpde::io::detail {
namespace {

#ifdef JETPDE_HAVE_MATIO

struct VarFree {
  void operator()(matvar_t* v) const { Mat_VarFree(v); }
};
using Var = std::unique_ptr<matvar_t, VarFree>;

bool numeric(const matvar_t* v) {
  switch (v->class_type) {
    case MAT_C_DOUBLE:
    case MAT_C_SINGLE:
    case MAT_C_INT8:
    case MAT_C_UINT8:
    case MAT_C_INT16:
    case MAT_C_UINT16:
    case MAT_C_INT32:
    case MAT_C_UINT32:
    case MAT_C_INT64:
    case MAT_C_UINT64:
      return true;
    default:
      return false;
  }
}

const char* class_name(matio_classes c) {
  switch (c) {
    case MAT_C_CELL:
      return "a cell array";
    case MAT_C_STRUCT:
      return "a struct";
    case MAT_C_OBJECT:
      return "an object";
    case MAT_C_CHAR:
      return "text (char)";
    case MAT_C_SPARSE:
      return "a sparse matrix";
    case MAT_C_FUNCTION:
      return "a function handle";
    case MAT_C_EMPTY:
      return "empty";
    default:
      return "not numeric";
  }
}

// Element k of matio's buffer of type t, as a double.
double element(const void* data, matio_types t, std::size_t k) {
  const auto as = [&]<class T>(T) {
    T v;
    std::memcpy(&v, static_cast<const char*>(data) + k * sizeof(T), sizeof v);
    return static_cast<double>(v);
  };
  switch (t) {
    case MAT_T_DOUBLE:
      return as(double{});
    case MAT_T_SINGLE:
      return as(float{});
    case MAT_T_INT8:
      return as(std::int8_t{});
    case MAT_T_UINT8:
      return as(std::uint8_t{});
    case MAT_T_INT16:
      return as(std::int16_t{});
    case MAT_T_UINT16:
      return as(std::uint16_t{});
    case MAT_T_INT32:
      return as(std::int32_t{});
    case MAT_T_UINT32:
      return as(std::uint32_t{});
    case MAT_T_INT64:
      return as(std::int64_t{});
    case MAT_T_UINT64:
      return as(std::uint64_t{});
    default:
      return 0;
  }
}

void quiet(int, char*) {}  // matio logs to stderr; its failures become UserErrors here

class MatSource : public DataSource {
 public:
  explicit MatSource(const std::string& path) : DataSource(path) {
    Mat_LogInitFunc("jetpde", quiet);
    mat_ = Mat_Open(path.c_str(), MAT_ACC_RDONLY);
    if (!mat_) throw UserError("'" + path + "': not a MATLAB .mat file matio can read");
    while (matvar_t* info = Mat_VarReadNextInfo(mat_)) {
      const Var v(info);
      if (!v->name) continue;
      kinds_.emplace_back(v->name, numeric(v.get()) ? (v->isComplex ? 'c' : 'r') : 'x');
      if (kinds_.back().second == 'x')
        other_.emplace_back(v->name, class_name(v->class_type));
      else if (v->isComplex)
        names_.insert(names_.end(), {std::string(v->name) + ".re", std::string(v->name) + ".im"});
      else
        names_.push_back(v->name);
    }
  }
  ~MatSource() override { Mat_Close(mat_); }
  MatSource(const MatSource&) = delete;
  MatSource& operator=(const MatSource&) = delete;

  std::string noun() const override { return "variable"; }
  std::vector<std::string> names() const override { return names_; }
  bool contains(const std::string& name) const override {
    for (const auto& [n, what] : other_)
      if (n == name || n == complex_part(name).first)
        throw UserError("'" + file() + "': variable '" + n + "' is " + what +
                        " (numeric arrays are read)");
    return DataSource::contains(name);
  }

 protected:
  NamedArray load(const std::string& name) const override {
    const bool real = std::find_if(kinds_.begin(), kinds_.end(), [&](const auto& k) {
                        return k.first == name && k.second == 'r';
                      }) != kinds_.end();
    const auto [base, part] = real ? std::pair<std::string, int>{name, -1} : complex_part(name);
    const Var v(Mat_VarRead(mat_, base.c_str()));
    if (!v || !v->data) throw UserError("'" + file() + "': cannot read variable '" + base + "'");
    NamedArray a{name, {}, {}};
    std::size_t count = 1;
    for (int d = 0; d < v->rank; ++d) {
      a.shape.push_back(static_cast<std::int64_t>(v->dims[d]));
      count *= v->dims[d];
    }
    const void* data = v->data;
    if (v->isComplex) {
      const auto* split = static_cast<const mat_complex_split_t*>(v->data);
      data = part == 1 ? split->Im : split->Re;
    }
    // Column-major to row-major: walk the row-major index, keep its column-major offset.
    a.values.resize(count);
    std::vector<std::int64_t> index(a.shape.size(), 0), stride(a.shape.size(), 1);
    for (std::size_t d = 1; d < a.shape.size(); ++d) stride[d] = stride[d - 1] * a.shape[d - 1];
    for (std::size_t k = 0; k < count; ++k) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * stride[d];
      a.values[k] = element(data, v->data_type, static_cast<std::size_t>(offset));
      for (std::size_t d = index.size(); d-- > 0;) {
        if (++index[d] < a.shape[d]) break;
        index[d] = 0;
      }
    }
    return a;
  }

 private:
  mat_t* mat_ = nullptr;
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, char>> kinds_;         // r real, c complex, x other
  std::vector<std::pair<std::string, std::string>> other_;  // non-numeric: name, what it is
};

#endif

}  // namespace

std::unique_ptr<DataSource> open_mat(const std::string& path) {
#ifdef JETPDE_HAVE_MATIO
  return std::make_unique<MatSource>(path);
#else
  throw UserError("'" + path +
                  "': this jetpde was built without matio, which .mat files need (Debian: "
                  "libmatio-dev; scripts/bootstrap.sh installs it)");
#endif
}

}  // namespace jetpde::io::detail
