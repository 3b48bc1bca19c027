// STL geometry: meshes of a box and a sphere written by the test (ASCII and binary), checked
// against the analytic shapes: volume, area, inside tests, distances, normals, area-weighted
// boundary samples; CSG with primitives; errors for broken files and meshes that are not closed.
#include "geometry/stl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <numbers>
#include <random>

#include "autodiff/errors.h"
#include "geometry/ball.h"
#include "geometry/box.h"
#include "geometry/csg.h"
#include "geometry/sampler.h"
#include "geometry/time_product.h"
#include "tests/geometry/geometry_checks.h"
#include "tests/support/scratch_dir.h"

namespace jetpde::geometry {
namespace {

constexpr double pi = std::numbers::pi;
using Vec3 = std::array<double, 3>;
using Triangle = std::array<Vec3, 3>;

// The 12 triangles of the box [lo, hi], outward (counter-clockwise seen from outside).
std::vector<Triangle> box_mesh(const Vec3& lo, const Vec3& hi) {
  std::vector<Triangle> out;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      auto corner = [&](int a, int b) {
        Vec3 p;
        p[static_cast<std::size_t>(axis)] =
            side ? hi[static_cast<std::size_t>(axis)] : lo[static_cast<std::size_t>(axis)];
        p[static_cast<std::size_t>(u)] =
            a ? hi[static_cast<std::size_t>(u)] : lo[static_cast<std::size_t>(u)];
        p[static_cast<std::size_t>(v)] =
            b ? hi[static_cast<std::size_t>(v)] : lo[static_cast<std::size_t>(v)];
        return p;
      };
      // (u, v, axis) is right-handed: counter-clockwise in (u, v) faces +axis.
      Triangle t1{corner(0, 0), corner(1, 0), corner(1, 1)};
      Triangle t2{corner(0, 0), corner(1, 1), corner(0, 1)};
      if (!side) std::swap(t1[1], t1[2]), std::swap(t2[1], t2[2]);
      out.push_back(t1);
      out.push_back(t2);
    }
  return out;
}

Vec3 normalized(const Vec3& p) {
  const double n = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  return {p[0] / n, p[1] / n, p[2] / n};
}

// An icosahedron refined `levels` times, vertices on the unit sphere: 20 * 4^levels triangles.
std::vector<Triangle> sphere_mesh(int levels) {
  const double g = (1 + std::sqrt(5.0)) / 2;
  std::vector<Vec3> v = {{-1, g, 0},  {1, g, 0},  {-1, -g, 0}, {1, -g, 0}, {0, -1, g},  {0, 1, g},
                         {0, -1, -g}, {0, 1, -g}, {g, 0, -1},  {g, 0, 1},  {-g, 0, -1}, {-g, 0, 1}};
  for (Vec3& p : v) p = normalized(p);
  std::vector<std::array<int, 3>> faces = {
      {0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
      {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
      {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<int, int>, int> midpoints;
    auto mid = [&](int a, int b) {
      const auto key = std::minmax(a, b);
      if (auto it = midpoints.find(key); it != midpoints.end()) return it->second;
      const Vec3 &p = v[static_cast<std::size_t>(key.first)],
                 &q = v[static_cast<std::size_t>(key.second)];
      v.push_back(normalized({p[0] + q[0], p[1] + q[1], p[2] + q[2]}));
      return midpoints[key] = static_cast<int>(v.size()) - 1;
    };
    std::vector<std::array<int, 3>> next;
    for (const auto& f : faces) {
      const int a = mid(f[0], f[1]), b = mid(f[1], f[2]), c = mid(f[2], f[0]);
      next.insert(next.end(), {{f[0], a, c}, {f[1], b, a}, {f[2], c, b}, {a, b, c}});
    }
    faces = std::move(next);
  }
  std::vector<Triangle> out;
  for (const auto& f : faces) {
    Triangle t{v[static_cast<std::size_t>(f[0])], v[static_cast<std::size_t>(f[1])],
               v[static_cast<std::size_t>(f[2])]};
    const Vec3 e1{t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]},
        e2{t[2][0] - t[0][0], t[2][1] - t[0][1], t[2][2] - t[0][2]};
    const Vec3 n{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                 e1[0] * e2[1] - e1[1] * e2[0]};
    if (n[0] * t[0][0] + n[1] * t[0][1] + n[2] * t[0][2] < 0) std::swap(t[1], t[2]);
    out.push_back(t);
  }
  return out;
}

// A ring (a washer) of `n` facets per wall: outer radius 1, inner 0.4, z in [0, 0.5]. Not convex:
// the inner wall's edges are concave.
std::vector<Triangle> ring_mesh(int n) {
  auto at = [&](double r, int i, double z) {
    const double a = 2 * pi * (i % n) / n;
    return Vec3{r * std::cos(a), r * std::sin(a), z};
  };
  std::vector<Triangle> out;
  for (int i = 0; i < n; ++i) {
    const Vec3 ob = at(1, i, 0), ob1 = at(1, i + 1, 0), ot = at(1, i, 0.5), ot1 = at(1, i + 1, 0.5);
    const Vec3 ib = at(0.4, i, 0), ib1 = at(0.4, i + 1, 0), it = at(0.4, i, 0.5),
               it1 = at(0.4, i + 1, 0.5);
    out.insert(out.end(), {{ob, ob1, ot1},
                           {ob, ot1, ot},
                           {ib, it1, ib1},
                           {ib, it, it1},
                           {ot, ot1, it1},
                           {ot, it1, it},
                           {ob, ib1, ob1},
                           {ob, ib, ib1}});
  }
  return out;
}

// Inside the regular n-gon of circumradius r (vertices at angles 2 pi i / n)?
bool in_polygon(double x, double y, double r, int n) {
  for (int i = 0; i < n; ++i) {
    const double a = 2 * pi * i / n, b = 2 * pi * (i + 1) / n;
    const double ax = r * std::cos(a), ay = r * std::sin(a), bx = r * std::cos(b),
                 by = r * std::sin(b);
    if ((bx - ax) * (y - ay) - (by - ay) * (x - ax) < 0) return false;
  }
  return true;
}

void write_ascii(const std::string& path, const std::vector<Triangle>& triangles) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fprintf(f, "solid test\n");
  for (const Triangle& t : triangles) {
    std::fprintf(f, " facet normal 0 0 0\n  outer loop\n");
    for (const Vec3& p : t) std::fprintf(f, "   vertex %.17g %.17g %.17g\n", p[0], p[1], p[2]);
    std::fprintf(f, "  endloop\n endfacet\n");
  }
  std::fprintf(f, "endsolid test\n");
  std::fclose(f);
}

void write_binary(const std::string& path, const std::vector<Triangle>& triangles) {
  std::ofstream out(path, std::ios::binary);
  char header[80] = "binary STL written by jetpde's stl_test";
  out.write(header, 80);
  const auto count = static_cast<std::uint32_t>(triangles.size());
  out.write(reinterpret_cast<const char*>(&count), 4);
  for (const Triangle& t : triangles) {
    float values[12] = {};
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t k = 0; k < 3; ++k) values[3 + 3 * i + k] = static_cast<float>(t[i][k]);
    out.write(reinterpret_cast<const char*>(values), sizeof values);
    const std::uint16_t attributes = 0;
    out.write(reinterpret_cast<const char*>(&attributes), 2);
  }
}

class Stl : public jetpde::testing::ScratchDirTest {
 protected:
  void SetUp() override {
    if (!stl_supported()) GTEST_SKIP() << "built without VTK's IOGeometry";
    ScratchDirTest::SetUp();
  }
  std::string ascii(const std::string& name, const std::vector<Triangle>& triangles) {
    write_ascii(path(name), triangles);
    return path(name);
  }
  std::string binary(const std::string& name, const std::vector<Triangle>& triangles) {
    write_binary(path(name), triangles);
    return path(name);
  }
  std::string error_of(const std::string& file) {
    try {
      stl(file);
    } catch (const UserError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no UserError for " << file;
    return "";
  }
};

TEST_F(Stl, BoxMatchesTheAnalyticBoxExactly) {
  const auto exact = box({0, 0, 0}, {2, 1, 1});
  for (const std::string& file : {ascii("box.stl", box_mesh({0, 0, 0}, {2, 1, 1})),
                                  binary("box_binary.stl", box_mesh({0, 0, 0}, {2, 1, 1}))}) {
    const auto mesh = stl(file);
    EXPECT_EQ(mesh->triangles(), 12u);
    EXPECT_TRUE(mesh->distance_is_exact());
    EXPECT_TRUE(mesh->volume_is_exact());
    EXPECT_NEAR(mesh->volume(), 2.0, 1e-12);
    EXPECT_NEAR(mesh->boundary_measure(), 10.0, 1e-12);
    EXPECT_EQ(mesh->bounds().lo, (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(mesh->bounds().hi, (std::vector<double>{2, 1, 1}));
    EXPECT_EQ(mesh->piece_names(), std::vector<std::string>{"surface"});
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-0.7, 2.7);
    std::vector<double> n(3), m(3);
    for (int i = 0; i < 3000; ++i) {
      const std::vector<double> p{u(rng), u(rng) * 0.5, u(rng) * 0.5};
      ASSERT_NEAR(mesh->signed_distance(p), exact->signed_distance(p), 1e-12)
          << p[0] << " " << p[1] << " " << p[2];
      ASSERT_EQ(mesh->contains(p), exact->contains(p));
      if (std::abs(exact->signed_distance(p)) < 1e-3)
        continue;  // normals jump near the medial axis
      mesh->outward_normal(p, n);
      exact->outward_normal(p, m);
      if (exact->signed_distance(p) > 0)  // outside: towards the point from its nearest
        for (int k = 0; k < 3; ++k) ASSERT_NEAR(n[k], m[k], 1e-9);
    }
  }
}

TEST_F(Stl, InwardOrientedMeshIsTurnedAround) {
  std::vector<Triangle> inward = box_mesh({0, 0, 0}, {1, 1, 1});
  for (Triangle& t : inward) std::swap(t[1], t[2]);
  const auto mesh = stl(ascii("inward.stl", inward));
  EXPECT_NEAR(mesh->volume(), 1.0, 1e-12);
  EXPECT_LT(mesh->signed_distance(std::vector<double>{0.5, 0.5, 0.5}), 0.0);
  EXPECT_NEAR(mesh->signed_distance(std::vector<double>{0.5, 0.5, 1.5}), 0.5, 1e-12);
  const PointSet s = sample_boundary(*mesh, 200, {.method = SampleMethod::sobol});
  testing::expect_boundary(*mesh, s);
}

TEST_F(Stl, SphereAgainstTheAnalyticBall) {
  const auto triangles = sphere_mesh(3);  // 1280 triangles; the largest gap to the sphere ~0.005
  for (const std::string& file :
       {ascii("sphere.stl", triangles), binary("sphere_binary.stl", triangles)}) {
    const auto mesh = stl(file);
    const auto ball = sphere({0, 0, 0}, 1);
    EXPECT_EQ(mesh->triangles(), 1280u);
    EXPECT_NEAR(mesh->volume(), 4.0 / 3.0 * pi, 0.02 * 4.0 / 3.0 * pi);
    EXPECT_LT(mesh->volume(), 4.0 / 3.0 * pi);  // inscribed
    EXPECT_NEAR(mesh->boundary_measure(), 4 * pi, 0.02 * 4 * pi);
    // Volume by sampling: the fraction of Sobol points of the box inside, times the box.
    const MatrixD cube = make_unit_cube_stream(SampleMethod::sobol, 3, 5, true)->next(20000);
    int inside = 0;
    for (Eigen::Index i = 0; i < cube.rows(); ++i) {
      const std::vector<double> p{2 * cube(i, 0) - 1, 2 * cube(i, 1) - 1, 2 * cube(i, 2) - 1};
      inside += mesh->contains(p);
    }
    EXPECT_NEAR(8.0 * inside / 20000, mesh->volume(), 0.01 * mesh->volume());
    // Distances within the mesh's gap to the sphere; inside tests agree away from it.
    std::mt19937_64 rng(2);
    std::uniform_real_distribution<double> u(-1.6, 1.6);
    for (int i = 0; i < 3000; ++i) {
      const std::vector<double> p{u(rng), u(rng), u(rng)};
      const double d = mesh->signed_distance(p), e = ball->signed_distance(p);
      ASSERT_NEAR(d, e, 0.006);
      if (std::abs(e) > 0.006) ASSERT_EQ(mesh->contains(p), ball->contains(p));
    }
    // Boundary samples: on the mesh, unit outward normals close to the radial direction, weights
    // summing to the area; divergence theorem: the flux of the position is 3 x volume.
    const PointSet s = sample_boundary(*mesh, 4000, {.method = SampleMethod::sobol});
    testing::expect_boundary(*mesh, s);
    EXPECT_NEAR(s.measure, mesh->boundary_measure(), 1e-12);
    for (Eigen::Index i = 0; i < s.points.rows(); ++i)
      ASSERT_GT((s.points.row(i) * s.normals.row(i)).sum() / s.points.row(i).matrix().norm(), 0.99);
    EXPECT_NEAR(testing::flux_of_position(s), 3 * mesh->volume(), 1e-3 * mesh->volume());
    const PointSet interior = sample_interior(*mesh, 2000, {.method = SampleMethod::halton});
    testing::expect_interior(*mesh, interior);
  }
}

TEST_F(Stl, ConcaveRingAgainstItsPolygons) {
  const int n = 12;
  const auto mesh = stl(binary("ring.stl", ring_mesh(n)));
  const double polygon_area = 0.5 * n * std::sin(2 * pi / n);  // of circumradius 1
  // Float coordinates (binary STL): the volume to float precision.
  EXPECT_NEAR(mesh->volume(), polygon_area * (1 - 0.16) * 0.5, 1e-6);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1.1, 1.1), w(-0.1, 0.6);
  int inside = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::vector<double> p{u(rng), u(rng), w(rng)};
    const bool expected =
        p[2] > 0 && p[2] < 0.5 && in_polygon(p[0], p[1], 1, n) && !in_polygon(p[0], p[1], 0.4, n);
    const double d = mesh->signed_distance(p);
    if (std::abs(d) < 1e-6) continue;  // float coordinates: not decidable this close
    ASSERT_EQ(mesh->contains(p), expected) << p[0] << " " << p[1] << " " << p[2] << " d " << d;
    inside += expected;
  }
  EXPECT_GT(inside, 4000);
  // On the surface, the normals step out and in (concave inner edges included).
  testing::expect_boundary(*mesh, sample_boundary(*mesh, 3000, {.method = SampleMethod::sobol}));
  testing::expect_interior(*mesh, sample_interior(*mesh, 2000, {.method = SampleMethod::sobol}));
}

TEST_F(Stl, BoundarySamplesAreAreaWeighted) {
  // Faces of [0, 2] x [0, 1] x [0, 1]: x faces area 1, y and z faces area 2 (of 10).
  const auto mesh = stl(binary("box.stl", box_mesh({0, 0, 0}, {2, 1, 1})));
  for (SampleMethod method :
       {SampleMethod::sobol, SampleMethod::pseudo_random, SampleMethod::grid}) {
    const PointSet s = sample_boundary(*mesh, 5000, {.method = method, .seed = 3});
    testing::expect_boundary(*mesh, s);
    std::array<int, 6> on{};
    for (Eigen::Index i = 0; i < s.points.rows(); ++i)
      for (int k = 0; k < 3; ++k) {
        const double hi = k == 0 ? 2 : 1;
        if (s.points(i, k) == 0) ++on[static_cast<std::size_t>(2 * k)];
        if (s.points(i, k) == hi) ++on[static_cast<std::size_t>(2 * k + 1)];
      }
    const double n = static_cast<double>(s.points.rows());
    for (int f = 0; f < 6; ++f) {
      const double expected = f < 2 ? 0.1 : 0.2;
      EXPECT_NEAR(on[static_cast<std::size_t>(f)] / n, expected, 0.02) << "face " << f;
    }
  }
  // A piece by predicate: the top face.
  const PointSet top = sample_boundary(*mesh, 500, {.method = SampleMethod::sobol}, "z == 1");
  EXPECT_NEAR(top.measure, 2.0, 0.02);
  for (Eigen::Index i = 0; i < top.points.rows(); ++i) {
    ASSERT_NEAR(top.points(i, 2), 1.0, 1e-12);
    ASSERT_NEAR(top.normals(i, 2), 1.0, 1e-12);
  }
}

TEST_F(Stl, WorksInCsgWithPrimitives) {
  const GeometryPtr mesh = stl(ascii("box.stl", box_mesh({0, 0, 0}, {2, 1, 1})));
  const auto drilled = subtract(mesh, sphere({1, 0.5, 0.5}, 0.3));
  const double expected = 2 - 4.0 / 3.0 * pi * 0.027;
  EXPECT_NEAR(drilled->volume(), expected, 0.01 * expected);
  EXPECT_GT(drilled->signed_distance(std::vector<double>{1, 0.5, 0.5}), 0.0);  // in the hole
  EXPECT_LT(drilled->signed_distance(std::vector<double>{0.2, 0.5, 0.5}), 0.0);
  const PointSet s = sample_boundary(*drilled, 2000, {.method = SampleMethod::sobol});
  testing::expect_boundary(*drilled, s);
  EXPECT_NEAR(s.measure, 10 + 4 * pi * 0.09, 0.02 * (10 + 4 * pi * 0.09));
  testing::expect_interior(*drilled,
                           sample_interior(*drilled, 1000, {.method = SampleMethod::sobol}));
  // A union with a box that sticks out: the volume adds the part outside.
  const auto joined = unite(mesh, box({1.5, 0.25, 0.25}, {3, 0.75, 0.75}));
  EXPECT_NEAR(joined->volume(), 2 + 1.0 * 0.25, 0.01 * 2.25);
  EXPECT_LT(joined->signed_distance(std::vector<double>{2.5, 0.5, 0.5}), 0.0);
  // Times a time interval: the initial face is the part.
  const auto moving = time_product(mesh, 0, 2);
  EXPECT_NEAR(moving->volume(), 4.0, 1e-12);
  const PointSet start = sample_boundary(*moving, 500, {.method = SampleMethod::sobol}, "initial");
  EXPECT_NEAR(start.measure, 2.0, 1e-12);
  for (Eigen::Index i = 0; i < start.points.rows(); ++i) {
    ASSERT_EQ(start.points(i, 3), 0.0);
    ASSERT_LT(mesh->signed_distance(
                  std::vector<double>{start.points(i, 0), start.points(i, 1), start.points(i, 2)}),
              0.0);
  }
}

TEST_F(Stl, BrokenFilesAreUserErrors) {
  using ::testing::HasSubstr;
  EXPECT_THAT(error_of(path("missing.stl")), HasSubstr("missing.stl': no such file"));
  { std::ofstream(path("empty.stl")); }
  EXPECT_THAT(error_of(path("empty.stl")), HasSubstr("the file is empty"));
  { std::ofstream(path("short.stl")) << "hello"; }
  EXPECT_THAT(error_of(path("short.stl")),
              HasSubstr("too short for binary STL (5 bytes) and not ASCII STL"));
  // A binary file cut short: the header's triangle count does not fit the size.
  const std::string cut = binary("cut.stl", box_mesh({0, 0, 0}, {1, 1, 1}));
  std::filesystem::resize_file(cut, 84 + 50 * 12 - 7);
  EXPECT_THAT(error_of(cut), HasSubstr("its header counts 12 triangles, which take 684 bytes; "
                                       "the file has 677"));
  { std::ofstream(path("nothing.stl")) << "solid nothing\nendsolid nothing\n"; }
  EXPECT_THAT(error_of(path("nothing.stl")), HasSubstr("holds no triangles"));
  {
    std::ofstream(path("garbled.stl"))
        << "solid x\n facet normal 0 0 0\n outer loop\n vertex 1 2\n";
  }
  EXPECT_EQ(error_of(path("garbled.stl")),
            "stl '" + path("garbled.stl") + "': VTK cannot read it: error while reading file " +
                path("garbled.stl") + " at line 4: Parse error reading STL vertex");
}

TEST_F(Stl, MeshesThatDefineNoInsideAreUserErrors) {
  using ::testing::HasSubstr;
  std::vector<Triangle> open = box_mesh({0, 0, 0}, {1, 1, 1});
  open.pop_back();
  EXPECT_THAT(error_of(ascii("open.stl", open)),
              HasSubstr("the mesh is not closed (not watertight): 3 edges belong to one triangle "
                        "only, e.g. ("));
  EXPECT_THAT(error_of(ascii("open.stl", open)), HasSubstr("a mesh with holes has no inside"));
  std::vector<Triangle> flipped = box_mesh({0, 0, 0}, {1, 1, 1});
  std::swap(flipped[0][1], flipped[0][2]);
  EXPECT_THAT(error_of(ascii("flipped.stl", flipped)),
              HasSubstr("the triangles are not consistently oriented: 3 edges"));
  std::vector<Triangle> twice = box_mesh({0, 0, 0}, {1, 1, 1});
  const std::vector<Triangle> other = box_mesh({1, 0, 0}, {2, 1, 1});  // shares the face x = 1
  twice.insert(twice.end(), other.begin(), other.end());
  EXPECT_THAT(error_of(ascii("twice.stl", twice)), HasSubstr("the mesh is not manifold"));
  const std::vector<Triangle> flat{{Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}},
                                   {Vec3{0, 0, 0}, Vec3{0, 1, 0}, Vec3{1, 0, 0}}};
  EXPECT_THAT(error_of(ascii("flat.stl", flat)), HasSubstr("the mesh is flat"));
}

// Builds without VTK's IOGeometry: the geometry type is there and says what it needs.
TEST(StlWithoutVtk, IsAClearError) {
  if (stl_supported()) GTEST_SKIP() << "built with VTK's IOGeometry";
  try {
    stl("part.stl");
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "stl 'part.stl': this jetpde was built without VTK (IOGeometry), which reads STL "
              "files; install libvtk9-dev (scripts/bootstrap.sh) and configure again");
  }
}

}  // namespace
}  // namespace jetpde::geometry
