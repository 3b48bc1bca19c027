#include "io/config_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "autodiff/errors.h"
#include "compiler/passes.h"
#include "equations/parser.h"
#include "geometry/sequences.h"
#include "io/config.h"
#include "io/recipe.h"
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/network.h"
#include "nn/schedule.h"
#include "solvers/optimizer.h"
#include "solvers/option_keys.h"
#include "solvers/problem.h"
#include "solvers/solve.h"
#include "solvers/trainer.h"

namespace jetpde::io {
namespace {

using Ptr = options::KeyPtr;
using T = Key::Type;
using options::above;
using options::at_least;
using options::choice;
using options::from_below;
using options::group;
using options::key;
using options::required;
using options::type_name;
using options::within;

Ptr geometry_schema() {
  auto g = std::make_shared<Key>(*group(
      "geometry", T::object,
      "The spatial domain, optionally times a time interval. Boxes: `min`, `max`; disk and "
      "sphere: `center`, `radius`; polygon: `vertices`; stl: `file`; union, intersection, "
      "difference: `of`.",
      {required(choice("type",
                       {"interval", "rectangle", "box", "hypercube", "disk", "sphere", "polygon",
                        "stl", "union", "intersection", "difference"},
                       "",
                       "The shape, or how the shapes in `of` combine (difference: the first "
                       "minus the others).")),
       key("min", T::numbers, "", "Lower corner of an interval, rectangle, box or hypercube."),
       key("max", T::numbers, "", "Upper corner."),
       key("center", T::numbers, "", "Center of a disk or sphere."),
       above(0, key("radius", T::number, "", "Radius of a disk or sphere.")),
       key("vertices", T::numbers, "",
           "Polygon vertices, counter-clockwise, flattened: [x0, y0, x1, y1, ...]."),
       key("file", T::string, "",
           "stl: a closed triangle mesh, ASCII or binary STL (a 3-D solid; needs VTK); a "
           "relative path is relative to the config file's folder."),
       key("coordinates", T::strings, "",
           "Names of the spatial coordinates (default x, y, z; x1, x2, ... above 3-D)."),
       key("time", T::numbers, "",
           "[t0, t1]: the domain is the shape times this time interval (outermost shape only)."),
       key("time_coordinate", T::string, "t", "Name of the time coordinate.")}));
  // `of` holds geometries with these same keys, itself included: a cycle of shared pointers,
  // which lives as long as the program does.
  auto of = std::make_shared<Key>(*group(
      "of", T::list,
      "The shapes a union, intersection or difference combines; each is a geometry (these same "
      "keys; `time` only on the outermost).",
      {}));
  g->children.push_back(of);
  of->children = g->children;
  return g;
}

// A seed: any whole number from 0 to 2^63 - 1.
Ptr seed_key(std::string name, std::string doc) {
  return within(0, 9223372036854775807.0, key(std::move(name), T::integer, "0", std::move(doc)));
}

Ptr data_source(std::string name, std::string doc) {
  auto k = std::make_shared<Key>(*group(
      std::move(name), T::object, std::move(doc),
      {required("file", T::string,
                "Data file: text table (.csv, .dat, .txt, .tsv), HDF5 (.h5, .hdf5), NumPy (.npy, "
                ".npz) or MATLAB (.mat, v5 and v7.3); a relative path is relative to the config "
                "file's folder."),
       key("columns", T::strings, "",
           "Names of a text table's columns when it has no header line (`[x, y, u, v, p]`; a "
           "header line, if any, is then skipped), or of the columns of a file's only 2-D array "
           "([rows, columns], e.g. a .npy)."),
       key("coordinates", T::table, "",
           "A grid: coordinate name -> 1-D array (dataset, variable) of its axis values, in the "
           "order of the value arrays' dimensions, each value array's shape equal to the axes' "
           "lengths."),
       key("points", T::string, "",
           "An array [n, dims] of scattered points, columns in coordinate order (instead of "
           "`coordinates`). Without either, each coordinate is the column or array of its name."),
       key("fields", T::table, "",
           "Field name -> column or array holding its values (a complex array `w` is `w.re` and "
           "`w.im`); default: each field's own name."),
       at_least(
           0, key("samples", T::integer, "0", "Use a random subset of this many points (0: all).")),
       at_least(0, key("noise", T::number, "0",
                       "Gaussian noise added to the values, as a fraction of each field's "
                       "standard deviation.")),
       seed_key("seed", "Seed of the subset and the noise.")}));
  k->optional = true;
  return k;
}

// decomposition.pieces (declared without keys by solvers) given the geometry's keys: each piece
// is written as `geometry` is.
std::vector<Ptr> with_geometry_pieces(std::vector<Ptr> keys) {
  for (Ptr& k : keys)
    if (k->name == "pieces" && k->type == T::list) {
      auto pieces = std::make_shared<Key>(*k);
      pieces->children = geometry_schema()->children;
      k = pieces;
    }
  return keys;
}

// The stage keys are the optimizer registry's (solvers::stage_keys(): each kind declares its own).
Ptr stage_schema() {
  return group("stages", T::list, "Optimizer stages, run in order.", solvers::stage_keys());
}

// A declaration's `data` key (declared without keys by the module that owns the mapping) given
// the keys of a data file, which are io's.
std::vector<Ptr> with_data_source(std::vector<Ptr> keys) {
  for (Ptr& k : keys)
    if (k->name == "data" && k->type == T::object) k = data_source("data", k->doc);
  return keys;
}

// The modules' declarations mounted at their paths; io declares only its own keys here (name,
// threads, the geometry, the problem's text keys, the data files, output).
Ptr build_schema() {
  const std::vector<Ptr> run = solvers::run_options().keys();  // seed, device, require_device
  return group(
      "", T::object, "",
      {key("name", T::string, "", "Run name (default: the config file's name)."),
       run[0],
       compiler::precision_key(),
       run[1],
       run[2],
       at_least(0, key("threads", T::integer, "0",
                       "CPU threads (0: all cores; at most 4 x the cores).")),
       key("memory_budget", T::string, "auto",
           "The training programs' memory: `2 GB`, `512 MiB`, `25%` of the memory free (the "
           "GPU's on CUDA), or auto (50%). Over it, values of the backward pass are computed "
           "again instead of kept, or each step runs in batches of the points."),
       geometry_schema(),
       key("fields", T::strings, "",
           "The unknown fields (the network's outputs); default: a library equation's, else u."),
       key("constants", T::table, "", "Named constants: number or expression (`0.01/pi`)."),
       key("parameters", T::table, "",
           "Trainable constants with their initial values (inverse problems)."),
       key("definitions", T::table, "",
           "Named sub-expressions usable in equations and conditions (`f: sin(pi*x)`)."),
       group("equations", T::list,
             "The PDE residuals: each entry is an `expression` or a `library` equation.",
             {key("expression", T::string, "", "A residual, e.g. `u_t + u*u_x - nu*u_xx`."),
              key("library", T::string, "",
                  "A library equation (`jetpde info --equations` lists them); it declares its "
                  "fields, coordinates and constants."),
              key("parameters", T::table, "", "Library: parameter values (expression text)."),
              key("trainable", T::strings, "[]",
                  "Library: parameters to train (their values are initial guesses)."),
              key("name", T::string, "", "Loss-term name (default pde, pde2, ...)."),
              at_least(0, key("weight", T::number, "1", "Initial loss weight."))}),
       group("conditions", T::list, "Boundary, initial and data conditions.",
             with_data_source(solvers::condition_options().keys())),
       group("hard_constraints", T::list,
             "Conditions built into a field: field = value + D * network, exact where D = 0.",
             solvers::hard_constraint_options().keys()),
       group("network", T::object, "The neural network.", nn::network_options().keys()),
       options::optional(group("decomposition", T::object,
                               "Domain decomposition: one network per subdomain (absent: one "
                               "network over the whole domain).",
                               with_geometry_pieces(solvers::decomposition_options().keys()))),
       group("sampling", T::object, "Collocation points.", solvers::sampling_options().keys()),
       group("parallel", T::object, "Data parallelism over MPI ranks (mpirun -n N).",
             solvers::parallel_options().keys()),
       group("training", T::object, "Optimization.",
             options::merged({options::choice("recipe", recipe_names(), "none",
                                              "Default: auto when no stages are given. What the "
                                              "config does not give is chosen from the problem "
                                              "(docs/config.md, the default recipe)."),
                              stage_schema(),
                              group("weighting", T::object, "Loss weights.",
                                    solvers::weighting_options().keys()),
                              group("precision_check", T::object,
                                    "precision: auto: 16-bit checked against fp32 in training.",
                                    solvers::precision_check_options().keys())},
                             solvers::training_options().keys())),
       group("reference", T::object, "What to measure the error against.",
             options::merged(with_data_source(solvers::reference_options().keys()),
                             reference_solver_options().keys())),
       group("solver", T::object, "How to solve: train the PINN, or a classical solver.",
             solver_options().keys()),
       group("output", T::object, "What the run writes.", output_options().keys())});
}

// ---- validation --------------------------------------------------------------------------------

[[noreturn]] void fail(const YAML::Node& node, const std::string& source, const std::string& path,
                       const std::string& what) {
  throw UserError(config_place(node, source) + (path.empty() ? "config" : path) + ": " + what);
}

std::string shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

bool parse_number(const std::string& s, double* value) {
  if (s == ".inf" || s == ".nan" || s == "-.inf") return false;
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, *value);
  return ec == std::errc() && p == end && std::isfinite(*value);
}

bool parse_integer(const std::string& s, long long* value) {
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+');  // YAML allows "+5"
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && p == end;
}

std::string number_text(double x) {
  if (x == 9223372036854775807.0) return "2^63 - 1";  // a seed's bound
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

// "at least 1", "above 0", "from 1 to 10000": the range of `k` in words (empty: none); `full`
// adds the bounds of an int that every integer key has.
std::string range_text(const Key& k, bool full) {
  const bool integer = k.type == T::integer || k.type == T::integers;
  std::optional<double> lo = k.min, hi = k.max;
  if (full && integer && !lo) lo = -2147483648.0;
  if (full && integer && !hi) hi = 2147483647.0;
  if (lo && hi && !k.min_open && !k.max_open)
    return "from " + number_text(*lo) + " to " + number_text(*hi);
  std::string out;
  if (lo) out = (k.min_open ? "above " : "at least ") + number_text(*lo);
  if (hi)
    out += (out.empty() ? "" : " and ") + std::string(k.max_open ? "below " : "at most ") +
           number_text(*hi);
  return out;
}

void check_range(const Key& k, double v, const std::string& written, const YAML::Node& n,
                 const std::string& src, const std::string& path) {
  const bool integer = k.type == T::integer;
  const double lo = k.min.value_or(integer ? -2147483648.0 : -HUGE_VAL);
  const double hi = k.max.value_or(integer ? 2147483647.0 : HUGE_VAL);
  // The bound that is broken, in words: "at least 1", "above 0", "at most 10000".
  std::string bound;
  if (v < lo || (k.min_open && v <= lo))
    bound = (k.min_open ? "above " : "at least ") + number_text(lo);
  else if (v > hi || (k.max_open && v >= hi))
    bound = (k.max_open ? "below " : "at most ") + number_text(hi);
  if (!bound.empty()) fail(n, src, path, written + " is out of range (" + bound + ")");
}

void check_scalar(const Key& k, const YAML::Node& n, const std::string& src,
                  const std::string& path) {
  if (!n.IsScalar()) fail(n, src, path, "expected " + type_name(k.type) + ", got " + shown(n));
  const std::string s = n.Scalar();
  switch (k.type) {
    case T::integer: {
      long long i;
      if (parse_integer(s, &i)) {
        check_range(k, static_cast<double>(i), "'" + s + "'", n, src, path);
        break;
      }
      // All digits but too long for 64 bits: out of range, not "not an integer".
      const bool digits = s.find_first_of("0123456789") != std::string::npos &&
                          s.find_first_not_of("+-0123456789") == std::string::npos;
      if (digits)
        fail(n, src, path,
             "'" + s + "' is out of range (at most " + number_text(k.max.value_or(2147483647.0)) +
                 ")");
      // 1e4, 2^12: a number or constant expression with a whole value.
      double d;
      std::string why;
      if (!number_value(s, &d, &why) || d != std::floor(d))
        fail(n, src, path, "'" + s + "' is not an integer");
      check_range(k, d, "'" + s + "' (= " + number_text(d) + ")", n, src, path);
      YAML::Node node = n;
      node = number_text(d);
      break;
    }
    case T::number: {
      double literal, d;
      std::string why;
      const bool is_literal = parse_number(s, &literal);
      if (!number_value(s, &d, &why)) fail(n, src, path, "'" + s + "' " + why);
      check_range(k, d, "'" + s + "'" + (is_literal ? "" : " (= " + number_text(d) + ")"), n, src,
                  path);
      // A constant expression, evaluated once: every later reader of the node sees the value
      // (and the node keeps its place in the file).
      if (!is_literal) {
        YAML::Node node = n;
        node = number_text(d);
      }
      break;
    }
    case T::boolean:
      if (s != "true" && s != "false") fail(n, src, path, "'" + s + "' is not true or false");
      break;
    case T::choice: {
      if (std::find(k.choices.begin(), k.choices.end(), s) == k.choices.end())
        fail(n, src, path, options::not_one_of(s, k.choices));
      break;
    }
    default:
      break;
  }
}

YAML::Node resolve(const Key& k, const YAML::Node& n, const std::string& src,
                   const std::string& path);

// Nodes of the config as it expands: YAML aliases can make a 1 KB file expand to 10^20 of them
// ("billion laughs"), or to a cycle (an alias inside its own anchor). Counted read-only before
// anything is resolved; past the limits the config is refused.
void check_expansion(const YAML::Node& n, const std::string& src, const std::string& path,
                     int depth, long& nodes) {
  if (++nodes > max_config_values)
    fail(n, src, path,
         "the config expands to more than " + std::to_string(max_config_values) +
             " values (YAML aliases repeating large parts?); refusing to expand it");
  if (depth > max_config_depth)
    fail(n, src, path,
         "nested more than " + std::to_string(max_config_depth) +
             " levels deep (a YAML alias inside its own anchor?)");
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      check_expansion(n[i], src, path + "[" + std::to_string(i) + "]", depth + 1, nodes);
  } else if (n.IsMap()) {
    for (const auto& item : n)
      check_expansion(
          item.second, src,
          (path.empty() ? "" : path + ".") + (item.first.IsScalar() ? item.first.Scalar() : "?"),
          depth + 1, nodes);
  }
}

YAML::Node resolve_object(const Key& k, const YAML::Node& n, const std::string& src,
                          const std::string& path) {
  if (!n.IsMap()) fail(n, src, path, "expected a mapping, got " + shown(n));
  std::set<std::string> seen;
  for (const auto& item : n) {
    if (!item.first.IsScalar())
      fail(item.first, src, path.empty() ? "config" : path,
           "a key must be a name, got " + shown(item.first));
    const std::string name = item.first.Scalar();
    if (!seen.insert(name).second)
      fail(item.first, src, (path.empty() ? "" : path + ".") + name,
           "given twice (a YAML mapping holds each key once)");
    if (!k.child(name)) {
      std::string known;
      for (const Ptr& c : k.children) known += (known.empty() ? "" : ", ") + c->name;
      // `{kind: dirichlet, on: left, right}`: the comma ended the value, `right` became a key.
      const std::string hint =
          n.Style() == YAML::EmitterStyle::Flow && item.second.IsNull()
              ? "; in a {flow mapping} a comma ends the value: quote a value that holds one, "
                "e.g. on: \"left, right\""
              : "";
      fail(item.first, src, (path.empty() ? "" : path + ".") + name,
           "unknown key (known here: " + known + ")" + hint);
    }
  }
  // Resolved in place, keys in the schema's order: a new mapping holding the file's nodes would
  // merge yaml-cpp's node memories again at every level (quadratic in the config's size).
  YAML::Node out = n;
  out.SetStyle(YAML::EmitterStyle::Block);  // config.yaml in the run folder: one key a line
  for (const Ptr& c : k.children) {
    const std::string p = (path.empty() ? "" : path + ".") + c->name;
    const YAML::Node v = out[c->name];
    const bool given = v && !v.IsNull();
    if (!given && c->required) fail(n, src, p, "missing (required)");
    out.remove(c->name);
    if (given) {
      out[c->name] = resolve(*c, v, src, p);
    } else if (c->type == T::object && !c->optional) {
      out[c->name] = resolve(*c, YAML::Node(YAML::NodeType::Map), src, p);
    } else if (!c->default_value.empty()) {
      out[c->name] = YAML::Load(c->default_value);
    }
  }
  return out;
}

YAML::Node resolve(const Key& k, const YAML::Node& n, const std::string& src,
                   const std::string& path) {
  switch (k.type) {
    case T::object:
      return resolve_object(k, n, src, path);
    case T::list: {
      if (!n.IsSequence()) fail(n, src, path, "expected a list of mappings, got " + shown(n));
      for (std::size_t i = 0; i < n.size(); ++i)
        resolve_object(k, n[i], src, path + "[" + std::to_string(i) + "]");
      return n;
    }
    case T::numbers:
    case T::integers:
    case T::strings: {
      const Key element{.name = k.name,
                        .type = k.type == T::numbers    ? T::number
                                : k.type == T::integers ? T::integer
                                                        : T::string,
                        .min = k.min,
                        .max = k.max,
                        .min_open = k.min_open,
                        .max_open = k.max_open};
      if (n.IsScalar() && k.type == T::strings) {
        YAML::Node out(YAML::NodeType::Sequence);
        out.push_back(n.Scalar());
        return out;
      }
      if (!n.IsSequence())
        fail(n, src, path, "expected a " + type_name(k.type) + ", got " + shown(n));
      for (std::size_t i = 0; i < n.size(); ++i)
        check_scalar(element, n[i], src, path + "[" + std::to_string(i) + "]");
      return n;  // the node itself: later errors can still point at its line
    }
    case T::points: {
      const Key element{.name = k.name, .type = T::number};
      if (!n.IsSequence())
        fail(n, src, path, "expected a " + type_name(k.type) + ", got " + shown(n));
      for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        if (!n[i].IsSequence())
          fail(n[i], src, p, "expected a point (a list of numbers), got " + shown(n[i]));
        if (n[i].size() != n[0].size())
          fail(n[i], src, p,
               "has " + std::to_string(n[i].size()) + " coordinates, point 1 has " +
                   std::to_string(n[0].size()));
        for (std::size_t j = 0; j < n[i].size(); ++j)
          check_scalar(element, n[i][j], src, p + "[" + std::to_string(j) + "]");
      }
      return n;
    }
    case T::table: {
      if (!n.IsMap()) fail(n, src, path, "expected a mapping of names to values, got " + shown(n));
      for (const auto& item : n) {
        if (!item.first.IsScalar())
          fail(item.first, src, path, "a key must be a name, got " + shown(item.first));
        if (!item.second.IsScalar())
          fail(item.second, src, path + "." + item.first.Scalar(),
               "expected a number or an expression, got " + shown(item.second));
      }
      return n;
    }
    default:
      check_scalar(k, n, src, path);
      return n;
  }
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int more = c < 0x80           ? 0
                     : (c >> 5) == 0x6  ? 1
                     : (c >> 4) == 0xE  ? 2
                     : (c >> 3) == 0x1E ? 3
                                        : -1;
    if (more < 0 || (more == 1 && c < 0xC2)) return false;
    for (int k = 1; k <= more; ++k)
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += static_cast<std::size_t>(more) + 1;
  }
  return true;
}

// Every text of the config is UTF-8 (YAML says so; summary.json and the HDF5 attributes need it).
void check_utf8(const YAML::Node& n, const std::string& src, const std::string& path) {
  if (n.IsScalar()) {
    if (!valid_utf8(n.Scalar()))
      fail(n, src, path, "not valid UTF-8 text (save the config as UTF-8)");
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      check_utf8(n[i], src, path + "[" + std::to_string(i) + "]");
  } else if (n.IsMap()) {
    for (const auto& item : n) {
      const std::string name = item.first.IsScalar() ? item.first.Scalar() : "?";
      const std::string p = (path.empty() ? "" : path + ".") + name;
      if (!valid_utf8(name))
        fail(item.first, src, path.empty() ? "config" : path, "a key is not valid UTF-8 text");
      check_utf8(item.second, src, p);
    }
  }
}

void collect_paths(const Key& k, const std::string& path, std::vector<std::string>& out,
                   std::set<const Key*>& seen) {
  for (const Ptr& c : k.children) {
    const std::string p =
        (path.empty() ? "" : path + ".") + c->name + (c->type == T::list ? "[]" : "");
    out.push_back(p);
    // A self-referencing key (geometry.of) is listed once, not descended into again.
    if ((c->type == T::object || c->type == T::list) && seen.insert(c.get()).second)
      collect_paths(*c, p, out, seen);
  }
}

const Key* find_key(const Key& root, const std::string& path) {
  // "training.stages[].optimizer" -> the key.
  const Key* k = &root;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.size() > 2 && part.compare(part.size() - 2, 2, "[]") == 0)
      part.resize(part.size() - 2);
    k = k->child(part);
    if (!k) return nullptr;
  }
  return k;
}

}  // namespace

std::string config_place(const YAML::Node& node, const std::string& source) {
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return source.empty() ? "" : source + ": ";
  return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

const Key& config_schema() {
  // Never destroyed: `of` and geometry point at each other (geometry_schema()), so destroying the
  // root would leave that cycle unreachable, which LeakSanitizer reports at exit.
  static const Ptr* const root = new Ptr(build_schema());
  return **root;
}

std::shared_ptr<const Key> build_config_schema() { return build_schema(); }

YAML::Node resolve_config(const YAML::Node& config, const std::string& source) {
  return resolve_config(config, source, config_schema());
}

YAML::Node resolve_config(const YAML::Node& config, const std::string& source, const Key& schema) {
  if (!config || config.IsNull()) throw UserError(source + ": the config is empty");
  long nodes = 0;
  check_expansion(config, source, "", 0, nodes);
  YAML::Node out = resolve(schema, config, source, "");
  check_utf8(out, source, "");
  return out;
}

bool number_value(const std::string& text, double* value, std::string* why) {
  if (parse_number(text, value)) return true;
  try {
    const equations::Context none;
    const equations::Equation e = equations::parse(text, none);
    if (!equations::constant_value(e.expr, value)) {
      *why = "is not a number or a constant expression";
      return false;
    }
  } catch (const UserError& e) {
    // The parser's first line ("in '2*': column 3: ..."), for what looks like an expression.
    const std::string what = e.what();
    *why =
        text.find_first_of("+-*/^(") == std::string::npos
            ? "is not a number"
            : "is not a number or a constant expression (" + what.substr(0, what.find('\n')) + ")";
    return false;
  }
  if (!std::isfinite(*value)) {
    *why = "is not a finite number (it evaluates to " + number_text(*value) + ")";
    return false;
  }
  return true;
}

namespace {

// A copy without positions: an override's value has no line in the config file.
YAML::Node without_marks(const YAML::Node& n) {
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : n) out.push_back(without_marks(item));
    return out;
  }
  if (n.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& item : n) out[item.first.Scalar()] = without_marks(item.second);
    return out;
  }
  return YAML::Node();
}

}  // namespace

void apply_override(YAML::Node& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--set " + assignment +
                    ": expected KEY=VALUE (e.g. training.stages.0.steps=100)");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = without_marks(YAML::Load(assignment.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    throw UserError("--set " + assignment + ": the value is not valid YAML (" + e.msg + ")");
  }
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw UserError("--set " + assignment + ": empty key in '" + path + "'");
    parts.push_back(part);
  }
  // yaml-cpp nodes are handles: walking with operator[] on copies edits `config` in place.
  std::vector<YAML::Node> chain{config};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node at = chain.back();
    long long index;
    if (at.IsSequence() && parse_integer(parts[i], &index)) {
      if (index < 0 || index >= static_cast<long long>(at.size()))
        throw UserError("--set " + assignment + ": " + parts[i] +
                        " is out of range (the list has " + std::to_string(at.size()) +
                        " entries)");
      chain.push_back(at[static_cast<std::size_t>(index)]);
    } else {
      if (at.IsScalar())
        throw UserError("--set " + assignment + ": '" + parts[i - 1] +
                        "' is a value, not a mapping (it has no key '" + parts[i] + "')");
      if (at.IsSequence())
        throw UserError("--set " + assignment + ": '" + (i > 0 ? parts[i - 1] : path) +
                        "' is a list: give an index (0, 1, ...), not '" + parts[i] + "'");
      chain.push_back(at[parts[i]]);
    }
  }
  YAML::Node last = chain.back();
  long long index;
  if (last.IsSequence() && !parse_integer(parts.back(), &index))
    throw UserError("--set " + assignment + ": '" +
                    (parts.size() > 1 ? parts[parts.size() - 2] : path) +
                    "' is a list: give an index (0, 1, ...), not '" + parts.back() + "'");
  if (parts.size() > 1 && !last.IsMap() && !last.IsSequence() && last.IsDefined() && !last.IsNull())
    throw UserError("--set " + assignment + ": '" + parts[parts.size() - 2] +
                    "' is a value, not a mapping (it has no key '" + parts.back() + "')");
  if (last.IsSequence() && parse_integer(parts.back(), &index)) {
    if (index < 0 || index >= static_cast<long long>(last.size()))
      throw UserError("--set " + assignment + ": " + parts.back() +
                      " is out of range (the list has " + std::to_string(last.size()) +
                      " entries)");
    last[static_cast<std::size_t>(index)] = value;
  } else {
    last[parts.back()] = value;
  }
}

options::Values option_values(const std::vector<options::KeyPtr>& keys, const YAML::Node& node) {
  options::Values out;
  if (!node || !node.IsMap()) return out;
  for (const Ptr& k : keys) {
    const YAML::Node v = node[k->name];
    if (!v || v.IsNull()) continue;
    switch (k->type) {
      case T::integer:
        out[k->name] = v.as<long long>();
        break;
      case T::number:
        out[k->name] = v.as<double>();
        break;
      case T::boolean:
        out[k->name] = v.as<bool>();
        break;
      case T::string:
      case T::choice:
        out[k->name] = v.as<std::string>();
        break;
      case T::numbers:
        out[k->name] = v.as<std::vector<double>>();
        break;
      case T::integers:
        out[k->name] = v.as<std::vector<long long>>();
        break;
      case T::strings:
        out[k->name] = v.as<std::vector<std::string>>();
        break;
      default:
        break;
    }
  }
  return out;
}

std::vector<std::string> schema_paths() { return schema_paths(config_schema()); }

std::vector<std::string> schema_paths(const Key& schema) {
  std::vector<std::string> out;
  std::set<const Key*> seen;
  collect_paths(schema, "", out, seen);
  return out;
}

const Key* schema_key(const Key& schema, const std::string& path) { return find_key(schema, path); }

std::string schema_markdown() { return schema_markdown(config_schema()); }

std::string schema_markdown(const Key& schema) {
  std::ostringstream md;
  md << "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const std::string& path : schema_paths(schema)) {
    const Key* k = find_key(schema, path);
    std::string type = type_name(k->type);
    if (k->type == T::choice) {
      type.clear();
      for (const std::string& c : k->choices) type += (type.empty() ? "" : " \\| ") + c;
    }
    if (const std::string range = range_text(*k, false); !range.empty()) type += ", " + range;
    const std::string def = k->required ? "required" : k->default_value;
    md << "| `" << path << "` | " << type << " | " << (def.empty() ? "" : "`" + def + "`") << " | "
       << options::described(*k) << " |\n";
  }
  return md.str();
}

}  // namespace jetpde::io
