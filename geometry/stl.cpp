#include "geometry/stl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <numbers>
#include <unordered_map>

#include "autodiff/errors.h"
#include "geometry/boundary.h"
#include "geometry/predicate.h"

#if JETPDE_HAVE_VTK_STL
#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkExecutive.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSTLReader.h>
#endif

namespace jetpde::geometry {

#if JETPDE_HAVE_VTK_STL

namespace {

using Vec3 = std::array<double, 3>;

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3 scale(const Vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }

std::string format_point(const Vec3& p) {
  return "(" + format_number(p[0]) + ", " + format_number(p[1]) + ", " + format_number(p[2]) + ")";
}

// The nearest point of triangle abc to p and the feature it lies on (Ericson, Real-Time
// Collision Detection, 5.1.5): 0 the face, 1..3 the vertices a, b, c, 4..6 the edges ab, bc, ca.
enum Feature : int { kFace = 0, kVertexA, kVertexB, kVertexC, kEdgeAB, kEdgeBC, kEdgeCA };

Vec3 closest_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c, int& feature) {
  const Vec3 ab = sub(b, a), ac = sub(c, a), ap = sub(p, a);
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return feature = kVertexA, a;
  const Vec3 bp = sub(p, b);
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return feature = kVertexB, b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return feature = kEdgeAB, add(a, scale(ab, d1 / (d1 - d3)));
  const Vec3 cp = sub(p, c);
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return feature = kVertexC, c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return feature = kEdgeCA, add(a, scale(ac, d2 / (d2 - d6)));
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
    return feature = kEdgeBC, add(b, scale(sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
  const double denom = 1 / (va + vb + vc);
  feature = kFace;
  return add(a, add(scale(ab, vb * denom), scale(ac, vc * denom)));
}

// The file's format from its bytes, with a UserError for what is neither ASCII nor binary STL.
void check_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError("stl '" + path + "': no such file");
  if (!fs::is_regular_file(path, ec)) throw UserError("stl '" + path + "': not a regular file");
  const auto size = static_cast<std::uintmax_t>(fs::file_size(path, ec));
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw UserError("stl '" + path + "': cannot open the file");
  if (size == 0) throw UserError("stl '" + path + "': the file is empty");
  char header[84] = {};
  in.read(header, std::min<std::streamsize>(84, static_cast<std::streamsize>(size)));
  std::uint32_t count = 0;
  if (size >= 84) std::memcpy(&count, header + 80, 4);  // little-endian on the machines we run on
  if (size >= 84 && 84 + 50 * static_cast<std::uintmax_t>(count) == size) return;  // binary
  std::size_t first = 0;
  while (first < 84 && first < size && std::isspace(static_cast<unsigned char>(header[first])))
    ++first;
  if (size - first >= 5 && std::strncmp(header + first, "solid", 5) == 0) return;  // ASCII
  if (size >= 84)
    throw UserError("stl '" + path + "': neither ASCII STL (which starts with 'solid') nor " +
                    "binary STL (its header counts " + std::to_string(count) +
                    " triangles, which take " + std::to_string(84 + 50 * std::uint64_t{count}) +
                    " bytes; the file has " + std::to_string(size) + ")");
  throw UserError("stl '" + path + "': too short for binary STL (" + std::to_string(size) +
                  " bytes) and not ASCII STL (which starts with 'solid')");
}

// A bounding-volume hierarchy over the triangles for nearest-triangle queries: nodes split at
// the median centroid along their box's longest axis, leaves of at most kLeaf triangles.
class TriangleTree {
 public:
  static constexpr std::size_t kLeaf = 4;

  void build(const std::vector<Vec3>& vertices, const std::vector<std::array<vtkIdType, 3>>& tris) {
    vertices_ = &vertices;
    triangles_ = &tris;
    order_.resize(tris.size());
    centroids_.resize(tris.size());
    for (std::size_t t = 0; t < tris.size(); ++t) {
      order_[t] = t;
      for (std::size_t k = 0; k < 3; ++k)
        centroids_[t][k] = (vertex(t, 0)[k] + vertex(t, 1)[k] + vertex(t, 2)[k]) / 3;
    }
    nodes_.clear();
    nodes_.reserve(2 * tris.size() / kLeaf + 2);
    build_node(0, tris.size());
  }

  // The nearest triangle to p and the squared distance to it. The tree is balanced (depth about
  // log2(n / kLeaf)), so the stack holds at most one pending sibling per level.
  std::size_t nearest(const Vec3& p, double& best2) const {
    std::size_t best = 0;
    best2 = INFINITY;
    std::size_t stack[128];
    std::size_t top = 0;
    stack[top++] = 0;
    while (top) {
      const Node& node = nodes_[stack[--top]];
      if (box_distance2(node, p) >= best2) continue;
      if (node.count) {
        for (std::size_t i = node.first; i < node.first + node.count; ++i) {
          const std::size_t t = order_[i];
          int feature = 0;
          const Vec3 q = closest_on_triangle(p, vertex(t, 0), vertex(t, 1), vertex(t, 2), feature);
          const Vec3 d = sub(p, q);
          const double d2 = dot(d, d);
          if (d2 < best2) best2 = d2, best = t;
        }
        continue;
      }
      // The nearer child last, so that it is searched first.
      const bool left_first =
          box_distance2(nodes_[node.left], p) < box_distance2(nodes_[node.right], p);
      stack[top++] = left_first ? node.right : node.left;
      stack[top++] = left_first ? node.left : node.right;
    }
    return best;
  }

 private:
  struct Node {
    Vec3 lo, hi;
    std::size_t left = 0, right = 0;   // inner nodes: the children
    std::size_t first = 0, count = 0;  // leaves: order_[first, first + count)
  };

  const Vec3& vertex(std::size_t t, std::size_t i) const {
    return (*vertices_)[static_cast<std::size_t>((*triangles_)[t][i])];
  }

  static double box_distance2(const Node& node, const Vec3& p) {
    double sum = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      const double d = std::max({node.lo[k] - p[k], 0.0, p[k] - node.hi[k]});
      sum += d * d;
    }
    return sum;
  }

  std::size_t build_node(std::size_t first, std::size_t last) {
    const std::size_t index = nodes_.size();
    nodes_.emplace_back();
    Node node;
    node.lo = {INFINITY, INFINITY, INFINITY};
    node.hi = {-INFINITY, -INFINITY, -INFINITY};
    Vec3 clo = node.lo, chi = node.hi;
    for (std::size_t i = first; i < last; ++i)
      for (std::size_t k = 0; k < 3; ++k) {
        for (std::size_t j = 0; j < 3; ++j) {
          node.lo[k] = std::min(node.lo[k], vertex(order_[i], j)[k]);
          node.hi[k] = std::max(node.hi[k], vertex(order_[i], j)[k]);
        }
        clo[k] = std::min(clo[k], centroids_[order_[i]][k]);
        chi[k] = std::max(chi[k], centroids_[order_[i]][k]);
      }
    if (last - first <= kLeaf) {
      node.first = first;
      node.count = last - first;
    } else {
      std::size_t axis = 0;
      for (std::size_t k = 1; k < 3; ++k)
        if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
      const std::size_t middle = first + (last - first) / 2;
      std::nth_element(
          order_.begin() + static_cast<std::ptrdiff_t>(first),
          order_.begin() + static_cast<std::ptrdiff_t>(middle),
          order_.begin() + static_cast<std::ptrdiff_t>(last),
          [&](std::size_t a, std::size_t b) { return centroids_[a][axis] < centroids_[b][axis]; });
      node.left = build_node(first, middle);
      node.right = build_node(middle, last);
    }
    nodes_[index] = node;
    return index;
  }

  const std::vector<Vec3>* vertices_ = nullptr;
  const std::vector<std::array<vtkIdType, 3>>* triangles_ = nullptr;
  std::vector<std::size_t> order_;
  std::vector<Vec3> centroids_;
  std::vector<Node> nodes_;
};

}  // namespace

struct StlMesh::Mesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<vtkIdType, 3>> triangles;
  std::vector<Vec3> face_normals;                 // unit, outward
  std::vector<std::array<Vec3, 3>> edge_normals;  // per triangle: edges ab, bc, ca (unnormalized)
  std::vector<Vec3> vertex_normals;               // angle-weighted (unnormalized)
  std::vector<double> cumulative;                 // cumulative areas / total: [0, ..., 1]
  double area = 0, volume = 0;
  Bounds bounds;
  TriangleTree tree;
  std::mutex adf_mutex;  // smooth_distance(): each piece's built on first use
  std::map<std::string, std::unique_ptr<MeshAdf>> adf;

  // The nearest point q of the mesh to p, its distance and the pseudo-normal there.
  double nearest(const Vec3& p, Vec3& q, Vec3& pseudo_normal) const {
    double best2 = 0;
    const std::size_t t = tree.nearest(p, best2);
    const auto& tri = triangles[t];
    int feature = kFace;
    q = closest_on_triangle(p, vertices[static_cast<std::size_t>(tri[0])],
                            vertices[static_cast<std::size_t>(tri[1])],
                            vertices[static_cast<std::size_t>(tri[2])], feature);
    switch (feature) {
      case kFace:
        pseudo_normal = face_normals[t];
        break;
      case kVertexA:
      case kVertexB:
      case kVertexC:
        pseudo_normal = vertex_normals[static_cast<std::size_t>(tri[feature - kVertexA])];
        break;
      default:
        pseudo_normal = edge_normals[t][static_cast<std::size_t>(feature - kEdgeAB)];
    }
    return norm(sub(p, q));
  }
};

StlMesh::StlMesh(const std::string& path) : Geometry(3), path_(path), mesh_(new Mesh) {
  check_file(path);
  const std::string where = "stl '" + path + "'";
  vtkNew<vtkSTLReader> reader;
  reader->SetFileName(path.c_str());
  reader->MergingOn();  // shared vertices, so that edges can be matched
  // VTK's error messages become this UserError, not text on stderr: the reader's own, else the
  // pipeline's ("returned failure"). Each is "ERROR: In file, line N\nclass (0x...): text".
  std::array<std::string, 2> errors;  // the reader's, the pipeline's
  const auto observe = [](vtkObject* object, std::string& into) {
    vtkNew<vtkCallbackCommand> callback;
    callback->SetClientData(&into);
    callback->SetCallback([](vtkObject*, unsigned long, void* client, void* call) {
      if (!call) return;
      std::string text = static_cast<const char*>(call);
      if (const auto at = text.find("): "); at != std::string::npos) text = text.substr(at + 3);
      text = text.substr(0, text.find('\n'));
      if (text.rfind("STLReader: ", 0) == 0) text = text.substr(11);
      auto& all = *static_cast<std::string*>(client);
      all += (all.empty() ? "" : "; ") + text;
    });
    object->AddObserver(vtkCommand::ErrorEvent, callback);
  };
  observe(reader, errors[0]);
  observe(reader->GetExecutive(), errors[1]);
  reader->Update();
  vtkPolyData* input = reader->GetOutput();
  // Also when it read some triangles before the error.
  for (const std::string& e : errors)
    if (!e.empty()) throw UserError(where + ": VTK cannot read it: " + e);
  if (!input || input->GetNumberOfPolys() == 0 || input->GetNumberOfPoints() == 0)
    throw UserError(where + ": the file holds no triangles");

  Mesh& m = *mesh_;
  vtkPoints* points = input->GetPoints();
  m.vertices.resize(static_cast<std::size_t>(points->GetNumberOfPoints()));
  for (vtkIdType i = 0; i < points->GetNumberOfPoints(); ++i) {
    points->GetPoint(i, m.vertices[static_cast<std::size_t>(i)].data());
    for (double c : m.vertices[static_cast<std::size_t>(i)])
      if (!std::isfinite(c))
        throw UserError(where + ": vertex " + std::to_string(i) + " is not finite");
  }
  m.bounds = Bounds{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (const Vec3& v : m.vertices)
    for (std::size_t k = 0; k < 3; ++k) {
      m.bounds.lo[k] = std::min(m.bounds.lo[k], v[k]);
      m.bounds.hi[k] = std::max(m.bounds.hi[k], v[k]);
    }
  const double diameter = m.bounds.diameter();
  for (std::size_t k = 0; k < 3; ++k)
    if (!(m.bounds.hi[k] > m.bounds.lo[k]))
      throw UserError(where + ": the mesh is flat (its extent along " +
                      default_coordinate_names(3)[k] + " is zero); a solid needs three dimensions");

  // Triangles with positive area (the reader already drops those with repeated vertices).
  vtkCellArray* polys = input->GetPolys();
  vtkNew<vtkIdList> ids;
  polys->InitTraversal();
  while (polys->GetNextCell(ids)) {
    if (ids->GetNumberOfIds() != 3) continue;
    const std::array<vtkIdType, 3> tri{ids->GetId(0), ids->GetId(1), ids->GetId(2)};
    const Vec3 &a = m.vertices[static_cast<std::size_t>(tri[0])],
               &b = m.vertices[static_cast<std::size_t>(tri[1])],
               &c = m.vertices[static_cast<std::size_t>(tri[2])];
    if (norm(cross(sub(b, a), sub(c, a))) > 1e-14 * diameter * diameter) m.triangles.push_back(tri);
  }
  if (m.triangles.empty()) throw UserError(where + ": every triangle has zero area");

  // Closed and consistently oriented: each edge used twice, once in each direction.
  const auto n_vertices = static_cast<std::uint64_t>(m.vertices.size());
  struct EdgeUse {
    std::size_t triangle[2];
    int slot[2];      // which edge of the triangle (0 ab, 1 bc, 2 ca)
    bool forward[2];  // runs from the smaller to the larger vertex id
    int count = 0;
  };
  std::unordered_map<std::uint64_t, EdgeUse> edges;
  edges.reserve(m.triangles.size() * 2);
  for (std::size_t t = 0; t < m.triangles.size(); ++t)
    for (int e = 0; e < 3; ++e) {
      const auto a = static_cast<std::uint64_t>(m.triangles[t][static_cast<std::size_t>(e)]),
                 b = static_cast<std::uint64_t>(
                     m.triangles[t][static_cast<std::size_t>((e + 1) % 3)]);
      EdgeUse& use = edges[std::min(a, b) * n_vertices + std::max(a, b)];
      if (use.count < 2) {
        use.triangle[use.count] = t;
        use.slot[use.count] = e;
        use.forward[use.count] = a < b;
      }
      ++use.count;
    }
  std::size_t open = 0, non_manifold = 0, flipped = 0;
  std::string first_open, first_non_manifold, first_flipped;
  for (const auto& [key, use] : edges) {
    const std::string text = format_point(m.vertices[key / n_vertices]) + "-" +
                             format_point(m.vertices[key % n_vertices]);
    if (use.count == 1 && open++ == 0) first_open = text;
    if (use.count > 2 && non_manifold++ == 0)
      first_non_manifold = text + " (" + std::to_string(use.count) + " triangles)";
    if (use.count == 2 && use.forward[0] == use.forward[1] && flipped++ == 0) first_flipped = text;
  }
  if (open)
    throw UserError(where + ": the mesh is not closed (not watertight): " + std::to_string(open) +
                    " edges belong to one triangle only, e.g. " + first_open +
                    "; a mesh with holes has no inside");
  if (non_manifold)
    throw UserError(where + ": the mesh is not manifold: " + std::to_string(non_manifold) +
                    " edges are shared by more than two triangles, e.g. " + first_non_manifold);
  if (flipped)
    throw UserError(where +
                    ": the triangles are not consistently oriented: " + std::to_string(flipped) +
                    " edges are run through in the same direction by both their triangles, e.g. " +
                    first_flipped);

  // Volume (about the box's center, for accuracy); a mesh oriented inwards is turned around.
  const Vec3 center{0.5 * (m.bounds.lo[0] + m.bounds.hi[0]),
                    0.5 * (m.bounds.lo[1] + m.bounds.hi[1]),
                    0.5 * (m.bounds.lo[2] + m.bounds.hi[2])};
  for (const auto& tri : m.triangles) {
    const Vec3 a = sub(m.vertices[static_cast<std::size_t>(tri[0])], center),
               b = sub(m.vertices[static_cast<std::size_t>(tri[1])], center),
               c = sub(m.vertices[static_cast<std::size_t>(tri[2])], center);
    m.volume += dot(a, cross(b, c)) / 6;
  }
  if (!(std::abs(m.volume) > 1e-12 * diameter * diameter * diameter))
    throw UserError(where + ": the mesh encloses no volume");
  if (m.volume < 0) {
    m.volume = -m.volume;
    for (auto& tri : m.triangles) std::swap(tri[1], tri[2]);
    for (auto& [key, use] : edges)
      for (int i = 0; i < 2; ++i) use.slot[i] = use.slot[i] == 0 ? 2 : use.slot[i] == 2 ? 0 : 1;
  }

  // Face normals, areas, angle-weighted vertex normals, edge normals.
  const std::size_t n = m.triangles.size();
  m.face_normals.resize(n);
  m.edge_normals.resize(n);
  m.vertex_normals.assign(m.vertices.size(), Vec3{0, 0, 0});
  m.cumulative.assign(n + 1, 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& tri = m.triangles[t];
    const Vec3 v[3] = {m.vertices[static_cast<std::size_t>(tri[0])],
                       m.vertices[static_cast<std::size_t>(tri[1])],
                       m.vertices[static_cast<std::size_t>(tri[2])]};
    const Vec3 c = cross(sub(v[1], v[0]), sub(v[2], v[0]));
    const double twice_area = norm(c);
    m.face_normals[t] = scale(c, 1 / twice_area);
    m.area += 0.5 * twice_area;
    m.cumulative[t + 1] = m.area;
    for (int i = 0; i < 3; ++i) {
      const Vec3 e1 = sub(v[(i + 1) % 3], v[i]), e2 = sub(v[(i + 2) % 3], v[i]);
      const double cosine = std::clamp(dot(e1, e2) / (norm(e1) * norm(e2)), -1.0, 1.0);
      Vec3& vn = m.vertex_normals[static_cast<std::size_t>(tri[static_cast<std::size_t>(i)])];
      vn = add(vn, scale(m.face_normals[t], std::acos(cosine)));
    }
  }
  for (double& c : m.cumulative) c /= m.area;
  for (const auto& [key, use] : edges) {
    const Vec3 sum = add(m.face_normals[use.triangle[0]], m.face_normals[use.triangle[1]]);
    for (int i = 0; i < 2; ++i)
      m.edge_normals[use.triangle[i]][static_cast<std::size_t>(use.slot[i])] = sum;
  }

  m.tree.build(m.vertices, m.triangles);
}

StlMesh::~StlMesh() = default;

std::size_t StlMesh::triangles() const { return mesh_->triangles.size(); }

std::string StlMesh::describe() const {
  return "stl '" + path_ + "' (" + std::to_string(mesh_->triangles.size()) + " triangles, " +
         format_bounds(mesh_->bounds) + ")";
}

Bounds StlMesh::bounds() const { return mesh_->bounds; }

double StlMesh::compute_volume() const { return mesh_->volume; }

const MeshAdf& StlMesh::smooth_distance(const std::string& piece) const {
  const std::lock_guard<std::mutex> lock(mesh_->adf_mutex);
  std::unique_ptr<MeshAdf>& adf = mesh_->adf[piece];
  if (adf) return *adf;
  std::vector<MeshAdf::Triangle> tris;
  std::vector<bool> selected;
  const PointPredicate keep =
      piece.empty()
          ? PointPredicate{}
          : compile_predicate(piece, coordinate_names(), kPredicateRelativeTolerance * size());
  for (const auto& t : mesh_->triangles) {
    const MeshAdf::Triangle tri{mesh_->vertices[static_cast<std::size_t>(t[0])],
                                mesh_->vertices[static_cast<std::size_t>(t[1])],
                                mesh_->vertices[static_cast<std::size_t>(t[2])]};
    tris.push_back(tri);
    if (!keep) continue;
    // A triangle is in the piece when its vertices and its centroid are.
    const Vec3 centroid = scale(add(add(tri[0], tri[1]), tri[2]), 1.0 / 3);
    bool in = keep(centroid);
    for (const Vec3& v : tri) in = in && keep(v);
    selected.push_back(in);
  }
  if (keep && std::none_of(selected.begin(), selected.end(), [](bool b) { return b; }))
    throw UserError("stl '" + path_ + "': no triangle has its vertices and centroid in '" + piece +
                    "'");
  adf = std::make_unique<MeshAdf>(tris, selected);
  return *adf;
}

double StlMesh::signed_distance(Point p) const {
  Vec3 q, pseudo;
  const Vec3 x{p[0], p[1], p[2]};
  const double d = mesh_->nearest(x, q, pseudo);
  return dot(sub(x, q), pseudo) < 0 ? -d : d;
}

void StlMesh::outward_normal(Point p, std::span<double> normal) const {
  Vec3 q, pseudo;
  const Vec3 x{p[0], p[1], p[2]};
  const double d = mesh_->nearest(x, q, pseudo);
  Vec3 out;
  if (d <= 1e-12 * size()) {
    out = scale(pseudo, 1 / norm(pseudo));  // on the surface: the feature's normal
  } else {
    const double sign = dot(sub(x, q), pseudo) < 0 ? -1.0 : 1.0;  // inside: towards the surface
    out = scale(sub(x, q), sign / d);
  }
  std::copy(out.begin(), out.end(), normal.begin());
}

std::vector<BoundaryPatch> StlMesh::boundary_patches() const {
  BoundaryPatch patch;
  patch.names = {"surface"};
  patch.dim = 3;
  patch.param_dim = 2;
  patch.measure = mesh_->area;
  patch.extents = {std::sqrt(mesh_->area), std::sqrt(mesh_->area)};
  // u[0] picks a triangle by area and a position in it; u[1] the other; the map
  // (s, t) -> (1 - sqrt s) a + sqrt s (1 - t) b + sqrt s t c is uniform on the triangle.
  patch.map = [m = mesh_.get()](const double* u, double* point, double* normal) {
    const auto& c = m->cumulative;
    const auto k = static_cast<std::size_t>(
        std::clamp<std::ptrdiff_t>(std::upper_bound(c.begin(), c.end(), u[0]) - c.begin() - 1, 0,
                                   static_cast<std::ptrdiff_t>(m->triangles.size()) - 1));
    const double width = c[k + 1] - c[k];
    // Kept off the triangle's edges (shared with neighbours, or a sharp edge of the part).
    constexpr double margin = 1e-9;
    const double s =
        std::sqrt(std::clamp(width > 0 ? (u[0] - c[k]) / width : 0.5, margin, 1 - margin));
    const double t = std::clamp(u[1], margin, 1 - margin);
    const auto& tri = m->triangles[k];
    const Vec3 &a = m->vertices[static_cast<std::size_t>(tri[0])],
               &b = m->vertices[static_cast<std::size_t>(tri[1])],
               &cc = m->vertices[static_cast<std::size_t>(tri[2])];
    for (std::size_t i = 0; i < 3; ++i) {
      point[i] = (1 - s) * a[i] + s * (1 - t) * b[i] + s * t * cc[i];
      normal[i] = m->face_normals[k][i];
    }
  };
  return {std::move(patch)};
}

bool stl_supported() { return true; }

#else  // no VTK

struct StlMesh::Mesh {};

StlMesh::StlMesh(const std::string& path) : Geometry(3), path_(path) {
  throw UserError("stl '" + path +
                  "': this jetpde was built without VTK (IOGeometry), which reads STL files; "
                  "install libvtk9-dev (scripts/bootstrap.sh) and configure again");
}
StlMesh::~StlMesh() = default;
std::size_t StlMesh::triangles() const { return 0; }
const MeshAdf& StlMesh::smooth_distance(const std::string&) const {
  throw UserError("stl '" + path_ + "': this jetpde was built without VTK");
}
std::string StlMesh::describe() const { return "stl '" + path_ + "'"; }
Bounds StlMesh::bounds() const { return {}; }
double StlMesh::compute_volume() const { return 0; }
double StlMesh::signed_distance(Point) const { return 0; }
void StlMesh::outward_normal(Point, std::span<double>) const {}
std::vector<BoundaryPatch> StlMesh::boundary_patches() const { return {}; }
bool stl_supported() { return false; }

#endif

std::shared_ptr<StlMesh> stl(const std::string& path) { return std::make_shared<StlMesh>(path); }

}  // namespace jetpde::geometry
