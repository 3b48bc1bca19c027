// A problem described in three parts (docs/design.md section 9):
//   Mathematics   what is solved: the domain, the context (fields, coordinates, constants,
//                 trainable parameters), the equations and the conditions. Nothing here says how:
//                 a PINN (solvers::Problem), a finite-difference solver or several subdomains'
//                 networks read the same value.
//   PinnOptions   how a PINN discretizes it: the network, the interior points, each condition's
//                 point count and loss weight, the equations' loss weights, the sampling, hard
//                 constraints (a condition built into the network's output), causal time chunks.
//   CompileOptions how the programs are compiled (precision, backend, strict).
//
//   solvers::ProblemSpec spec;
//   spec.math.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);       // x, t
//   spec.math.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / pi);
//   spec.math.equations = {"u_t + u*u_x - nu*u_xx"};
//   spec.math.conditions = {
//       {.kind = solvers::Condition::Kind::initial_value, .value = "-sin(pi*x)"},
//       {.kind = solvers::Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
//   spec.pinn.conditions = {{.points = 200}, {.points = 100, .weight = 10}};  // or {}: defaults
//   spec.pinn.network.hidden = {20, 20, 20, 20};
//
// Conditions (residual = 0 on the condition's points; `value` is an expression g of the
// coordinates, constants and parameters):
//   dirichlet      u - g                                  on piece `on` ("" = whole boundary)
//   neumann        dot(n, grad(u)) - g                    (n: the outward unit normal)
//   robin          alpha u + beta dot(n, grad(u)) - g
//   initial_value  u - g                                  on the time product's initial face
//   initial_rate   u_t - g                                on the initial face
//   periodic       d^k u/dc^k (lower face) - d^k u/dc^k (upper face), k = 0..derivatives, for
//                  coordinate c of an axis-aligned domain: points paired across the two faces
//   data           u(points) - values                    (inverse problems; no sampling); with
//                  `expression`, that expression of the fields instead of u (time marching
//                  hands a window's u_t at its end over as one)
//   residual       any expression = 0 on the piece (e.g. "u_x + u")
// A condition holds on the piece `on`, or at the fixed points `at` (a piece of measure zero, like
// the corner "x == 0 and y == 0", cannot be sampled: an error that points at `at`). What each kind
// is (its name, whether it takes a field, normals or time, how its points come, its residual) is
// one record of the table condition_kinds() (solvers/spec.cpp).
// Trainable constants are Context params: graph params named param_prefix + name, trained with
// the network (the Objective's parameters include them).
#pragma once

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/ir.h"
#include "compiler/executable.h"
#include "equations/context.h"
#include "geometry/geometry.h"
#include "geometry/sampler.h"
#include "nn/network.h"

namespace jetpde::solvers {

// A UserError about one entry of a ProblemSpec: `entry` names it as a config does
// ("conditions[2]", "hard_constraints[0]"), `detail` says what is wrong with it. what() is
// "<label>: <detail>" ("condition 3 (dirichlet): ..."); io/ puts the config's file:line:column
// and the entry in front of the detail instead.
class SpecError : public UserError {
 public:
  SpecError(std::string entry, const std::string& label, std::string detail)
      : UserError(label + ": " + detail), entry_(std::move(entry)), detail_(std::move(detail)) {}
  const std::string& entry() const { return entry_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string entry_, detail_;
};

// A condition as mathematics: where it holds and what it says. How many points a PINN samples
// for it and its loss weight are PinnOptions::conditions.
struct Condition {
  enum class Kind {
    dirichlet,
    neumann,
    robin,
    periodic,
    initial_value,
    initial_rate,
    data,
    residual
  };
  Kind kind = Kind::dirichlet;
  std::string name;                // the loss term's name; default: the kind and the field
  std::string field = "u";         // the field it constrains (kinds that take one)
  std::string on;                  // boundary piece: a name or a predicate; "" = the whole boundary
  std::string value = "0";         // g
  double alpha = 1.0, beta = 1.0;  // robin
  std::string coordinate;          // periodic
  int derivatives = 0;             // periodic: orders 0..derivatives are matched
  std::string expression;          // residual; data: what the values are of (default the field)
  MatrixD data_points, data_values;  // data: [m, coordinates] and [m, 1]
  // Instead of `on`: fixed points [m, coordinates] (pinning a pressure at a corner), each in the
  // closed domain; normals (neumann, robin, residual) are the domain's outward_normals there.
  // Empty (0 rows): sample `on`. The kinds whose points come from a piece take them.
  MatrixD at;
};

struct Mathematics {
  geometry::GeometryPtr domain;  // its coordinate names are the context's coordinates, in order
  equations::Context context;
  std::vector<std::string> equations;       // residuals in the interior
  std::vector<std::string> equation_names;  // optional, one per equation (default pde, pde2, ...)
  std::vector<Condition> conditions;
};

// How a condition kind's points come.
enum class ConditionPoints {
  piece,           // sampled on the boundary piece `on`, or the fixed points `at`
  periodic_pairs,  // sampled on the lower face of `coordinate`, paired with the upper face
  initial_face,    // sampled on the initial face of a time product
  data             // the condition's data_points, never resampled
};

// What a residual builder is given: the condition, its points as graph inputs, and the means to
// lower expressions there (solvers/problem.cpp fills it).
struct ConditionGraph {
  const Condition& condition;
  std::size_t index;  // in Mathematics::conditions
  const equations::Context& context;
  Var points;   // [n, coordinates]
  Var normals;  // [n, spatial coordinates], outward; only for kinds that need normals
  // Another input of this condition: "upper" (periodic pairs), "values" (data).
  std::function<Var(const std::string& what)> input;
  // The fields [n, fields] at `at` (hard constraints applied).
  std::function<Var(Var at)> fields;
  // Expressions of the fields at `at` (with `normal` as n when given), one column block each.
  std::function<std::vector<Var>(Var at, const std::vector<std::string>& texts, Var normal)> lower;
  // One expression at the condition's points (and its normals), parsed under the term's name.
  std::function<Var(const std::string& text)> lower_here;
};

// One condition kind: everything the problem needs to know of it. Adding a kind is an enumerator
// and one record (with its residual builder) in condition_kinds().
struct ConditionKind {
  Condition::Kind kind;
  const char* name;     // in configs and default term names
  const char* meaning;  // what it imposes (docs/config.md, the Python docstrings)
  bool takes_field;     // `field` must name a field (the default term name is kind_field)
  bool needs_normals;   // the outward normals of its points are bound ("<points>_normals")
  bool needs_time;      // the domain must be a time product
  ConditionPoints points;
  // Checks beyond the above against the mathematics (UserError); null when there are none.
  void (*check)(const Condition&, const Mathematics&);
  // The residual [n, c] on the condition's points.
  Var (*residual)(const ConditionGraph&);
};
std::span<const ConditionKind> condition_kinds();
// The table's names and meanings as an enum table (conditions[].kind's choices and their docs).
const options::EnumTable<Condition::Kind>& condition_kind_names();
const ConditionKind& condition_kind(Condition::Kind kind);
Condition::Kind condition_kind_from_name(const std::string& name);  // UserError naming the known
std::string condition_kind_name(Condition::Kind kind);
// "condition 3 (dirichlet 'wall')": how errors about conditions[k] name it.
std::string condition_label(const Condition& c, std::size_t k);
// UserError unless the condition's fixed points `at` fit: a kind that takes them, no `on` too,
// one column per coordinate of `domain`, each point finite, in its bounds and in the closed domain.
void check_fixed_points(const Condition& c, const geometry::Geometry& domain);
// Everything about the mathematics that can be checked without discretizing it: a domain whose
// coordinates are the context's, fields, equations (names one per equation), and each condition
// against its kind (a field, time, data shapes, fixed points, the kind's own checks). UserError;
// SpecError naming the condition.
void check_mathematics(const Mathematics& math);

// A condition built into the field: field = g + D * N with N the network's output for the field,
// so that field = g exactly where D = 0 (Lagaris et al. 1998; Sukumar & Srivastava 2022). D is an
// expression of the coordinates, zero on the constrained pieces and nonzero inside; empty: from
// the geometry for `on`, a comma-separated list of pieces (D is then the product):
//   ""            the whole boundary
//   "spatial"     the spatial boundary of a time product
//   "initial"     the initial face of a time product: (t - t0) / (t1 - t0)
// (the box these are measured over is the domain's bounding box, or
// PinnOptions::hard_constraint_bounds: time marching measures each window's over the whole run)
//   a face name   of a box ("left", "x_min", ...): the normalized distance to that face
// For a box, the whole boundary is the product over the coordinates of (c - lo)(hi - c) / (L/2)^2;
// for a disk or sphere (r^2 - |x - c|^2) / r^2. For an STL part (the whole surface: on "" or
// "surface"), the mesh's smooth approximate distance (geometry/mesh_adf.h; 1 at its maximum): not
// an expression but a given leaf of each point set (autodiff/taylor.h), its value and the
// derivative streams the equations need (to order 4) computed on the CPU in double whenever
// that point set is bound: at construction, by resample() and adaptive_interior(), and by the
// evaluators. A predicate piece (on: "z == 0") takes the distance to the triangles whose
// vertices and centroid satisfy it (so a piece that cuts through triangles is rounded to whole
// ones; one predicate per constraint). In a time product of an STL part, "spatial" is the
// distance, "initial" and "final" the time faces' factors as for boxes, "" all three. Other
// shapes need `distance`.
struct HardConstraint {
  std::string field = "u";
  std::string value = "0";  // g: what the field equals where D = 0
  std::string on;           // pieces for the automatic D
  std::string distance;     // D, when given
};

// A PINN's choices for one condition.
struct ConditionOptions {
  int points = 256;     // sampled points (periodic: pairs); data and fixed points: ignored
  double weight = 1.0;  // initial loss weight
};

// How the ranks of a data-parallel run get their points (docs/design.md section 14). Counts are
// totals over the ranks in both. local: each rank draws its share of every count with its own
// seed (rank_seed), the scalable way. global: each rank draws the whole sets from the run's seed
// and keeps its share, so that the points, and the run, are those of one rank (to rounding)
// whatever the rank count; each rank pays for the whole draw. Data points and fixed `at` points
// are split in both.
enum class RankPoints { local, global };
const options::EnumTable<RankPoints>& rank_points_names();

// How the ranks sum a decomposed model's gradient (solvers/exchange.h). neighbours: each subdomain
// network's block among the ranks that hold it, in stages without a line search (L-BFGS's search
// takes dot products of the whole vector, so its stages all-reduce); allreduce: the whole vector
// over all ranks in every stage. A model of one network always all-reduces.
enum class GradientExchange { neighbours, allreduce };
const options::EnumTable<GradientExchange>& gradient_exchange_names();

// Domain decomposition (solvers/model.h): none is one network over the whole domain.
// decomposition_method_names(): solvers/model.h.
enum class DecompositionMethod { none, fbpinn, xpinn };

struct Decomposition {
  DecompositionMethod method = DecompositionMethod::none;
  bool automatic = false;       // the grid chosen from the rank count and the domain's extent
  std::vector<int> subdomains;  // per coordinate (coordinate order); missing trailing ones: 1
  // Instead of a grid (and of automatic): the subdomains as geometries of the domain's
  // dimension (xpinn: any shapes, a point the first piece's that contains it; fbpinn: boxes,
  // each grown by overlap / 2 of its own width per axis). solvers/model.h says what is checked.
  std::vector<geometry::GeometryPtr> pieces;
  double overlap = 0.3;       // fbpinn: how far boxes reach into their neighbours, of a width
  double output_scale = 1.0;  // every subdomain network's output times this
  std::optional<nn::NetworkSpec> network;  // the subdomains' network; default PinnOptions'
  // xpinn: points on each interface (a face two cells share), and the weights of the
  // continuity terms over all interfaces: solution (u_a - u_b), flux (the normal derivative's
  // jump) and residual (the equations' residuals' jump).
  int interface_points = 256;
  double solution_weight = 1, flux_weight = 1, residual_weight = 1;
};

// The training programs' memory (docs/design.md section 9, "Memory"): before it compiles
// anything, Problem plans the programs the trainer will run (passes, lowering, memory plan) and,
// when their arenas together exceed the budget, builds them for batches of the points, each
// batch's gradient summed into the step's (Objective). The programs counted: the step in the
// run's precision and in each of `precisions`, and in each the per-term gradients' program where
// `term_gradients` (grad-norm, annealing) and the NTK probes' where `probes`.
struct MemoryOptions {
  std::int64_t budget = 0;  // bytes; 0: `share` of the memory free (the GPU's on CUDA)
  double share = 0.5;       // of the memory free when the problem is built (budget 0)
  int batches = 0;          // > 0: exactly this many batches, no planning (tests, benchmarks)
  std::vector<compiler::PrecisionPolicy> precisions;  // the stages' other precisions (a polish)
  bool term_gradients = false, probes = false;
};

struct PinnOptions {
  nn::NetworkSpec network;  // inputs and outputs are set from the context
  bool quiet = false;       // no setup notes on stdout (time marching's window problems)
  Decomposition decomposition;
  int interior_points = 2048;
  std::vector<double> equation_weights;  // optional, one per equation (default 1)
  // Optional (empty: the defaults for every condition), else one per Mathematics::conditions.
  std::vector<ConditionOptions> conditions;
  geometry::SampleOptions sampling;
  std::vector<HardConstraint> hard_constraints;  // at most one per field
  // The box the automatic distances D of the hard constraints are measured over; none: the
  // domain's bounding box. Time marching (solvers/marching.h) gives each window's problem the
  // whole run's, so that D, and the fields, are those of the combined solution.
  std::optional<geometry::Bounds> hard_constraint_bounds;
  int time_chunks = 1;  // > 1: interior points ordered by time and split (causal weighting)
  std::string param_prefix = "pde_";
  RankPoints rank_points = RankPoints::local;
  GradientExchange exchange = GradientExchange::neighbours;
  MemoryOptions memory;

  // Condition k's options (the defaults when `conditions` is empty).
  ConditionOptions condition(std::size_t k) const {
    return conditions.empty() ? ConditionOptions{} : conditions.at(k);
  }
};

// A problem's default compile options: fp32, on the CPU, with the environment's logging and IR
// dumps (compiler::CompileOptions::from_environment, read when the spec is made).
compiler::CompileOptions default_compile_options();

struct ProblemSpec {
  Mathematics math;
  PinnOptions pinn;
  compiler::CompileOptions compile = default_compile_options();
};

}  // namespace jetpde::solvers
