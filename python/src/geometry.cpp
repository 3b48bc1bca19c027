// The domain of a config: its bounding box and points sampled in it or on a boundary piece (to
// evaluate a solution at, or to plot). The shapes themselves are built in Python as config
// entries (jetpde/geometry.py); this is what the C++ geometry answers about them.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "autodiff/errors.h"
#include "geometry/sampler.h"
#include "geometry/sequences.h"
#include "io/config.h"
#include "python/src/bindings.h"

namespace jetpde::python {

namespace {

geometry::SampleOptions options(const std::string& method, std::uint64_t seed) {
  return {.method = geometry::sample_method_from_name(method), .seed = seed};
}

std::size_t count(long long n) {
  if (n < 1) throw UserError("n: " + std::to_string(n) + " points; give at least 1");
  return static_cast<std::size_t>(n);
}

}  // namespace

void define_geometry(py::module_& m) {
  m.def("domain_bounds", [](const io::RunConfig& c) {
    const geometry::Bounds b = c.spec.math.domain->bounds();
    return std::make_pair(b.lo, b.hi);
  });
  m.def("domain_pieces", [](const io::RunConfig& c) { return c.spec.math.domain->piece_names(); });
  m.def(
      "sample_interior",
      [](const io::RunConfig& c, long long n, const std::string& method, std::uint64_t seed) {
        const auto o = options(method, seed);
        py::gil_scoped_release released;
        return geometry::sample_interior(*c.spec.math.domain, count(n), o).points;
      },
      py::arg("config"), py::arg("n"), py::arg("method"), py::arg("seed"));
  m.def(
      "sample_boundary",
      [](const io::RunConfig& c, long long n, const std::string& on, const std::string& method,
         std::uint64_t seed) {
        const auto o = options(method, seed);
        py::gil_scoped_release released;
        const geometry::PointSet s =
            geometry::sample_boundary(*c.spec.math.domain, count(n), o, on);
        return std::make_pair(s.points, s.normals);
      },
      py::arg("config"), py::arg("n"), py::arg("on"), py::arg("method"), py::arg("seed"));
}

}  // namespace jetpde::python
