// A PINN problem declared as mathematics and assembled into one compiled training step
// (docs/design.md section 9): a domain, fields and equations, conditions on boundary pieces,
// initial conditions, data, and a network. Every condition is an equation evaluated on its own
// sampled points, lowered through its own Taylor plan into the same graph.
//
//   solvers::ProblemSpec spec;
//   spec.domain = geometry::time_product(geometry::interval(-1, 1), 0, 1);       // x, t
//   spec.context.fields({"u"}).coordinates({"x"}).time("t").constant("nu", 0.01 / pi);
//   spec.equations = {"u_t + u*u_x - nu*u_xx"};
//   spec.conditions = {
//       {.kind = solvers::Condition::Kind::initial_value, .value = "-sin(pi*x)"},
//       {.kind = solvers::Condition::Kind::dirichlet, .on = "spatial", .value = "0"}};
//   spec.network.hidden = {20, 20, 20, 20};
//   solvers::Problem problem(spec);
//   Eigen::VectorXd theta = problem.initial_theta(/*seed=*/0);
//   solvers::Trainer trainer(problem.objective(), stages);
//   trainer.train(theta);
//   MatrixD u = problem.evaluate(theta, points);          // fields at any points
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
//   data           u(points) - values                    (inverse problems; no sampling)
//   residual       any expression = 0 on the piece (e.g. "u_x + u")
// A condition holds on the piece `on`, sampled with `points` points, or at the fixed points `at`
// (a piece of measure zero, like the corner "x == 0 and y == 0", cannot be sampled: an error
// that points at `at`).
// Trainable constants are Context params: graph params named param_prefix + name, trained with
// the network (the Objective's parameters include them).
#pragma once

#include <Eigen/Core>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "autodiff/options.h"
#include "compiler/executable.h"
#include "equations/context.h"
#include "geometry/geometry.h"
#include "geometry/sampler.h"
#include "nn/network.h"
#include "solvers/communicator.h"
#include "solvers/objective.h"

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
  std::string field = "u";         // the field it constrains (all but residual)
  std::string on;                  // boundary piece: a name or a predicate; "" = the whole boundary
  std::string value = "0";         // g
  double alpha = 1.0, beta = 1.0;  // robin
  std::string coordinate;          // periodic
  int derivatives = 0;             // periodic: orders 0..derivatives are matched
  std::string expression;          // residual
  int points = 256;                // sampled points (periodic: pairs); data: ignored
  double weight = 1.0;             // initial loss weight
  MatrixD data_points, data_values;  // data: [m, coordinates] and [m, 1]
  // Instead of `on`: fixed points [m, coordinates] (pinning a pressure at a corner), each in the
  // closed domain; normals (neumann, robin, residual) are the domain's outward_normals there.
  // Empty (0 rows): sample `on`. dirichlet, neumann, robin and residual take points.
  MatrixD at;
};
const options::EnumTable<Condition::Kind>& condition_kind_names();  // conditions[].kind
Condition::Kind condition_kind_from_name(const std::string& name);  // UserError naming the known
// UserError unless the condition's fixed points `at` fit: a kind that takes them, no `on` too,
// one column per coordinate of `domain`, each point finite, in its bounds and in the closed domain.
void check_fixed_points(const Condition& c, const geometry::Geometry& domain);
std::string condition_kind_name(Condition::Kind kind);

// A condition built into the field: field = g + D * N with N the network's output for the field,
// so that field = g exactly where D = 0 (Lagaris et al. 1998; Sukumar & Srivastava 2022). D is an
// expression of the coordinates, zero on the constrained pieces and nonzero inside; empty: from
// the geometry for `on`, a comma-separated list of pieces (D is then the product):
//   ""            the whole boundary
//   "spatial"     the spatial boundary of a time product
//   "initial"     the initial face of a time product: (t - t0) / (t1 - t0)
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

struct ProblemSpec {
  geometry::GeometryPtr domain;  // its coordinate names are the context's coordinates, in order
  equations::Context context;
  std::vector<std::string> equations;       // residuals in the interior, one loss term each
  std::vector<std::string> equation_names;  // optional, one per equation (default pde, pde2, ...)
  int interior_points = 2048;
  std::vector<double> equation_weights;  // optional, one per equation (default 1)
  std::vector<Condition> conditions;
  std::vector<HardConstraint> hard_constraints;  // at most one per field
  nn::NetworkSpec network;                       // inputs and outputs are set from the context
  geometry::SampleOptions sampling;
  int time_chunks = 1;  // > 1: interior points ordered by time and split (causal weighting)
  compiler::PrecisionPolicy precision = compiler::PrecisionPolicy::fp32;
  compiler::Backend backend = compiler::Backend::cpu;
  bool backend_required = false;  // a backend that cannot run is an error, not a fallback
  std::string param_prefix = "pde_";
};

class Problem {
 public:
  // Samples every point set, builds the graph, compiles the objective. UserError, naming the
  // condition or equation, for anything that does not fit: coordinates that differ from the
  // domain's, an unknown field, an empty boundary piece, an initial condition without time, a
  // periodic coordinate the domain is not a box in, data of the wrong shape.
  // Points are sampled with rank_seed(seed, communicator.rank()): each rank its own, rank 0 (and
  // a serial run) those of `seed`. The communicator is not owned and must outlive the problem.
  explicit Problem(ProblemSpec spec, const Communicator& communicator = serial_communicator());
  ~Problem();

  Objective& objective() { return *objective_; }
  const nn::Network& network() const { return *network_; }
  const ProblemSpec& spec() const { return spec_; }
  // The network's initial parameters from `seed`, and the trainable constants' initial values.
  Eigen::VectorXd initial_theta(std::uint64_t seed) const;
  // A trainable constant's value in theta.
  double param(const Eigen::VectorXd& theta, const std::string& name) const;
  // The fields at `points` [m, coordinates] -> [m, fields] (one compiled program per m).
  MatrixD evaluate(const Eigen::VectorXd& theta, const MatrixD& points);
  // Any expressions of the fields, coordinates and constants ("u_x", "laplacian(u)", the
  // equations' residuals) at `points` -> [m, expressions]; one compiled program per points count
  // and list of expressions. UserError with the column for an expression that does not parse.
  MatrixD evaluate_expressions(const Eigen::VectorXd& theta, const MatrixD& points,
                               const std::vector<std::string>& expressions);
  // The same expressions with the fields given instead of the network's (the reference side of
  // a derived metric): a field in `field_expressions` is that expression of the coordinates (an
  // exact solution; its derivatives are exact), any other is column `field_columns[f]` of
  // `field_values` [m, ...] (reference data: values only, so UserError for a derivative of it,
  // or for a field given neither way). Trainable constants take their values in theta.
  MatrixD evaluate_expressions_given(const Eigen::VectorXd& theta, const MatrixD& points,
                                     const std::vector<std::string>& expressions,
                                     const std::map<std::string, std::string>& field_expressions,
                                     const std::map<std::string, Eigen::Index>& field_columns,
                                     const MatrixD& field_values);
  // Every sampled point set drawn again with `seed` (same counts; this rank's: rank_seed): bind
  // with objective().set_inputs. Data points are not resampled.
  Bindings resample(std::uint64_t seed) const;
  // Residual-based adaptive sampling (Wu et al. 2023, RAD): `candidates` interior points drawn
  // with `seed`, the interior points then drawn from them with probability proportional to
  // |r|^k / mean |r|^k + c, r the first equation's residual there.
  Bindings adaptive_interior(const Eigen::VectorXd& theta, int candidates, std::uint64_t seed,
                             double k = 1.0, double c = 1.0);

 private:
  // The fields at the points of input `at`, [n, fields], hard constraints applied.
  Var fields_at(Var at);
  MatrixD interior_points(std::uint64_t seed) const;
  // Values of the mesh distance's given leaf and streams (autodiff/taylor.h) at `points`, bound
  // to the input `name`: empty when no hard constraint uses it or these points' graph does not.
  Bindings distance_bindings(const std::string& name, const MatrixD& points) const;
  // distance_bindings of every point set in `points`, added to it.
  void add_distances(Bindings& points) const;
  void sample_condition(const Condition& c, std::size_t index, std::uint64_t seed,
                        Bindings& out) const;

  ProblemSpec spec_;
  const Communicator* communicator_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<nn::Network> network_;
  std::vector<Var> params_;
  std::vector<std::string> pde_params_;                  // trainable constants, by name
  std::vector<std::string> hard_value_, hard_distance_;  // per field ("" : no constraint)
  std::vector<std::string> hard_mesh_piece_;      // per field: the STL piece's predicate ("": all)
  std::string mesh_tag(std::size_t field) const;  // the tag of its mesh distance's given leaf
  std::unique_ptr<Objective> objective_;
  std::map<std::int64_t, std::unique_ptr<compiler::Executable>> evaluators_;
  struct ExpressionEvaluator {
    std::string points;  // the name of its points input
    std::string values;  // evaluate_expressions_given: the name of its field-values input
    std::unique_ptr<compiler::Executable> exe;
  };
  std::map<std::string, ExpressionEvaluator> expression_evaluators_;  // by count and expressions
  struct DistanceCache {
    MatrixD points;
    std::size_t streams = 0;
    Bindings bindings;
  };
  mutable std::map<std::string, DistanceCache> distance_cache_;  // by given leaf: the last
  std::unique_ptr<compiler::Executable> candidate_residual_;
  std::int64_t candidate_rows_ = 0;
  compiler::CompileOptions compile_;
};

}  // namespace jetpde::solvers
