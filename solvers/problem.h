// A PINN problem declared as mathematics and assembled into one compiled training step
// (docs/design.md section 9): a ProblemSpec (solvers/spec.h) holds the mathematics (domain,
// fields, equations, conditions), the PINN's discretization of it (network, sampling, weights,
// hard constraints, time chunks) and the compile options. Every condition is an equation
// evaluated on its own sampled points, lowered through its own Taylor plan into the same graph.
//
//   solvers::ProblemSpec spec;  // spec.math, spec.pinn, spec.compile: see solvers/spec.h
//   ...
//   solvers::Problem problem(spec);
//   Eigen::VectorXd theta = problem.initial_theta(/*seed=*/0);
//   solvers::Trainer trainer(problem.objective(), stages);
//   trainer.train(theta);
//   MatrixD u = problem.evaluate(theta, points);          // fields at any points
//
// Evaluation (evaluate, evaluate_expressions, evaluate_expressions_given, adaptive_interior's
// residual at the candidates) never touches the training graph: each program is built on a graph
// of its own, the network rebuilt there from the same spec (so its parameters have the training
// graph's names and take theta as they are), and kept in one cache of the last kCachedPrograms
// programs used, keyed by what it computes and its points count.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"
#include "compiler/executable.h"
#include "equations/parser.h"
#include "nn/network.h"
#include "solvers/communicator.h"
#include "solvers/model.h"
#include "solvers/objective.h"
#include "solvers/spec.h"

namespace jetpde::solvers {

class Problem {
 public:
  // Checks the spec, samples every point set, builds the graph, compiles the objective.
  // UserError, naming the condition or equation, for anything that does not fit: coordinates
  // that differ from the domain's, an unknown field, an empty boundary piece, an initial
  // condition without time, a periodic coordinate the domain is not a box in, data of the wrong
  // shape, condition options that are not one per condition.
  // With several ranks every point count is a total, and each rank holds its share
  // (spec.pinn.rank_points: drawn with rank_seed(seed, rank), or its rows of the whole draw);
  // data and fixed points are split. Rank 0 of a local draw, and a serial run, draw with `seed`.
  // A collective: every rank constructs its problem from the same spec. The communicator is not
  // owned and must outlive the problem.
  explicit Problem(ProblemSpec spec, const Communicator& communicator = serial_communicator());
  ~Problem();

  Objective& objective() { return *objective_; }
  // The fields' model: one network, or a decomposition into subdomain networks.
  const Model& model() const { return *model_; }
  const ProblemSpec& spec() const { return spec_; }
  const Mathematics& math() const { return spec_.math; }
  const Communicator& communicator() const { return *communicator_; }
  // The training graph (the objective's residuals); evaluation adds nothing to it.
  const Graph& graph() const { return *graph_; }
  // The initial parameters from `seed`, and the trainable constants' initial values.
  Eigen::VectorXd initial_theta(std::uint64_t seed) const;
  // PirateNet's initialization (Wang et al. 2024): with network.architecture pirate (one network,
  // not decomposed), its last layer in `theta` replaced by the least-squares fit to the dirichlet
  // and initial_value conditions' values at their points (of all ranks; fields under a hard
  // constraint left out), nn::fit_output_layer. The points fitted (0: nothing to fit, theta
  // unchanged). Solver::run applies it to initial_theta's draw unless it resumes.
  int fit_output_layer(Eigen::VectorXd& theta);
  // Whether the network holds condition k by construction (a periodic condition on a coordinate
  // the network is exactly periodic in, over the domain's extent, one network, and the field
  // free or under a hard initial constraint only): such a term starts with weight 0 (off, which
  // no weighting changes) and says so on stdout.
  bool by_construction(std::size_t k) const;
  // What `jetpde export --library` compiles (compiler/library.h): the program evaluate_expressions
  // runs for `rows` points and `expressions` (the same graph, so the library's values are its
  // values), planned for `backend` as its runtime plans it (compiler::plan_program: no device of
  // it needed), and the parameters' values from theta by name. UserError for a decomposed model,
  // a hard constraint on a mesh distance (inputs beyond the points).
  struct ExportedProgram {
    compiler::Program program;
    std::map<std::string, MatrixD> values;
  };
  ExportedProgram exported_program(const Eigen::VectorXd& theta, Eigen::Index rows,
                                   const std::vector<std::string>& expressions,
                                   compiler::Backend backend);
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

  // What the memory plan chose (spec.pinn.memory, "Memory" in docs/design.md): the budget, the
  // planned arenas of the training programs over all points at once and as built, the fraction of
  // its plain arena each program recomputes down to (1: none; CompileOptions::memory_fraction),
  // and in how many batches a step runs; a decomposed model's rows left out to make the batches
  // (round_quotas). Not planned (planned_bytes 0) when the batches were given.
  struct MemoryReport {
    std::int64_t budget = 0, whole_bytes = 0, planned_bytes = 0;
    double fraction = 1;
    int batches = 1;
    Eigen::Index left_out = 0;
  };
  const MemoryReport& memory() const { return memory_; }

  // The evaluation programs kept (at most kCachedPrograms; the least recently used goes first).
  static constexpr std::size_t kCachedPrograms = 16;
  std::size_t cached_programs() const { return programs_.size(); }
  // The points each kept program took at its last call, most recently used first.
  std::vector<Eigen::Index> cached_program_rows() const {
    std::vector<Eigen::Index> rows;
    for (const auto& [key, p] : programs_)
      rows.push_back(static_cast<Eigen::Index>(p.order.size()));
    return rows;
  }

 private:
  // The last values of the mesh distance's given leaves and streams, by leaf: the same points
  // bound again (an evaluator's grid at every validation) are not computed again.
  struct DistanceCache {
    MatrixD points;
    std::size_t streams = 0;
    Bindings bindings;
  };
  using DistanceCaches = std::map<std::string, DistanceCache>;
  // An evaluation program on its own graph: input "points" [m, coordinates] (and "values" for
  // evaluate_expressions_given), the network's and the trainable constants' params by name.
  struct Program {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<compiler::Executable> exe;
    bool values = false;  // has the input "values"
    std::size_t outputs = 0;
    DistanceCaches distances;  // its points' mesh distances, last time
    // This call's points: the original row of each row of "points" (grouped by region for a
    // decomposed model; the program's layout is part of its key).
    std::vector<Eigen::Index> order;
  };
  // The compile options of evaluation programs: the spec's, with tiles of kPreferredTile where
  // auto would measure them (a program run a few times would spend more on measuring, some 30 runs
  // of each region, than on its runs: 200,000 points of `jetpde eval` took 15 s, not 0.7 s).
  compiler::CompileOptions evaluation_options() const;
  // The outputs of a program from its graph's model and points input.
  using ProgramBuilder = std::function<std::vector<Var>(const ModelGraph&, Var points)>;
  // evaluate_expressions' outputs: `expressions` at the points, each [rows, 1].
  ProgramBuilder expressions_builder(const std::vector<std::string>& expressions) const;
  // The outputs of `build` (a program of kind `what`, its row count not in it) at `at` (and
  // `values`, when given, as input "values"), side by side [rows, their columns]: in blocks of
  // at most evaluation_rows() rows, each block size a program of its own (cached as any). A
  // decomposed model's blocks each take an equal share of every region's rows (the last blocks'
  // short shares made up by repeating a row of the region, whose values are dropped), so that
  // every block has one layout and one program serves them all.
  MatrixD evaluate_program(const Eigen::VectorXd& theta, const std::string& what, const MatrixD& at,
                           const MatrixD* values, const ProgramBuilder& build);
  // The most rows an evaluation program of kind `what` takes at once: all of `at` where the
  // memory budget (memory()) leaves room for them beside the training programs (at least a
  // quarter of it), else the most that fit, a multiple of kEvaluationProbeRows, from the arena a
  // program of that many rows would take (compiler::estimate_memory: no code built; once per
  // kind, from rows of zeros; a decomposed model's at every call, from kEvaluationProbeRows rows
  // of `at` evenly spread, its regions' mix).
  Eigen::Index evaluation_rows(const std::string& what, const MatrixD& at,
                               Eigen::Index value_columns, const ProgramBuilder& build);
  static constexpr Eigen::Index kEvaluationProbeRows = 4096;

  // The constructor's stages, in order.
  // Everything checkable before sampling: the mathematics, then the PINN's options.
  void check() const;
  // hard_value_ and hard_distance_ from the hard constraints (SpecError naming one).
  void prepare_hard_constraints();
  // Every point set (condition k's: "condition<k>", with "_normals", "_upper", "_values" as its
  // kind needs), drawn with `seed`; data conditions' points only when `with_data`.
  Bindings sample(std::uint64_t seed, bool with_data) const;
  // The network on graph_, and one loss term per equation and per condition on `points`.
  // `points` of one batch's shapes where `batches` > 1 (a decomposed model's layouts are its
  // quotas over the batches).
  std::vector<LossTerm> build_graph(const Bindings& points, int batches = 1);
  // Says on stdout (rank 0, not quiet) which conditions the network holds by construction.
  void note_by_construction() const;
  // Condition k's loss term: its kind's residual builder on its inputs (SpecError naming it).
  LossTerm condition_term(std::size_t k, const Bindings& points);
  // graph_'s input for the point set `name` of `points`, of its shape.
  Var input_like(const Bindings& points, const std::string& name);
  // The batches a step runs in (memory_ filled): 1 when the training programs over all of
  // `points` fit the budget, as planned or recomputing values of the backward pass, else the
  // fewest that fit among the counts dividing every point set (and every causal chunk); UserError
  // naming the numbers when none does. A decomposed model's sets are arranged by region: each
  // region's rows are then rounded down to a multiple of the batches (quotas_ and `points`
  // rearranged), so that every batch holds the same rows of each region.
  int plan_batches(Bindings& points);
  // quotas_ from `whole` with every count rounded down to a multiple of `batches`, and `points`
  // arranged to them; returns the rows left out.
  // Per point set (interior, condition<k>): the regions of its rows (of its points and upper
  // points) and how many rows each, in order.
  using RegionKey = std::vector<Region>;
  using Quotas = std::map<std::string, std::vector<std::pair<RegionKey, Eigen::Index>>>;
  Eigen::Index round_quotas(const Quotas& whole, int batches, Bindings& points) const;
  // The arenas of the training programs (spec.pinn.memory) built on graph_ for `batches` batches
  // of `points`, recomputing down to `fraction` of each plain arena. Leaves graph_ rebuilt:
  // build_graph follows.
  std::int64_t planned_bytes(const Bindings& points, int batches, double fraction = 1.0);
  // The network's parameters and the trainable constants', on graph_ (the objective's).
  std::vector<Var> training_params();
  // The objective of `terms` with the trainable constants, bound to `points`, with the weights;
  // the terms built for one of `batches` batches.
  void build_objective(std::vector<LossTerm> terms, Bindings points, int batches);

  // The fields at the points of input `at`, [n, fields], from `net`, hard constraints applied.
  Var fields_at(const ModelGraph& net, Var at) const;
  // Expressions of those fields at `at` (with `normal` as n when given), through their own
  // Taylor plan: a residual, a condition's expression, an evaluated quantity.
  std::vector<Var> lower_at(const ModelGraph& net, Var at,
                            const std::vector<equations::Equation>& eqs, Var normal = {}) const;
  // This rank's interior points: drawn (draw_interior), then its share of them with global points.
  MatrixD interior_points(std::uint64_t seed) const;
  // The interior points this rank draws: its share of the count with local points, all of them
  // with global ones (ordered by time and cut to a multiple of the chunks when chunked).
  MatrixD draw_interior(std::uint64_t seed) const;
  // How many of `total` points this rank draws, and with which seed (spec.pinn.rank_points).
  int draw_count(int total) const;
  std::uint64_t draw_seed(std::uint64_t seed) const;
  // This rank's rows of a whole set (rank_rows in problem.cpp); of a drawn set, with global
  // points (a local draw is this rank's already).
  MatrixD rank_share(const MatrixD& all, int chunks) const;
  MatrixD drawn_share(const MatrixD& drawn) const;
  MatrixD spatial_normals(const MatrixD& normals) const;
  void sample_condition(std::size_t k, std::uint64_t seed, Bindings& out) const;
  // Values of the mesh distance's given leaf and streams (autodiff/taylor.h) at `points`, bound
  // to the input `name` of `graph`: empty when no hard constraint uses it or that input's graph
  // does not.
  Bindings distance_bindings(Graph& graph, const std::string& name, const MatrixD& points,
                             DistanceCaches& cache) const;
  // distance_bindings of every point set in `points` (inputs of the training graph), added to it.
  void add_distances(Bindings& points) const;
  std::string mesh_tag(std::size_t field) const;  // the tag of its mesh distance's given leaf
  // The cached program for `key` and the layout of `points`, built by `build` on a fresh graph
  // when not cached (then the least recently used one is dropped when the cache is full); its
  // `order` set for these points.
  Program& program(const std::string& key, const MatrixD& points, Eigen::Index value_columns,
                   const ProgramBuilder& build);
  // A program's graph on `g`: the network (its rows in `layout`), every trainable constant (so
  // that all of theta binds), the points input of `rows` rows (and the values input when
  // value_columns > 0), and `build`'s outputs.
  std::vector<Var> program_graph(Graph& g, const RowLayout& layout, Eigen::Index rows,
                                 Eigen::Index value_columns, const ProgramBuilder& build) const;
  // Binds theta and `points` (with their mesh distances) and `values` to `p` and runs it (rows
  // in p.order).
  void run(Program& p, const Eigen::VectorXd& theta, const MatrixD& points,
           const MatrixD* values = nullptr) const;
  // Output `i` of the last run, rows back in the points' order.
  MatrixD output(const Program& p, std::size_t i) const;
  // Every point set of `points` grouped by region (its rows and those of its normals, values,
  // upper points moved together), to the counts per region of the first arrangement
  // (quotas_): the graph's shapes and layouts stay. A region short of points this time keeps
  // rows of the last arrangement for the rest. Nothing for one network.
  void arrange(Bindings& points) const;
  // With several ranks and at least as many subdomain cells: a point set's rows (`parts`: the
  // points first, then the inputs sharing their rows) of all ranks pooled, each rank keeping
  // those whose point is in its own cells (Model::owner), so that its rows reach its own and
  // its neighbours' networks only. Rows then differ between ranks, which the objective's shares
  // weight. A set held whole by every rank, or one some rank would get no row of, stays as drawn.
  void own_rows(Bindings& points, const std::vector<std::string>& parts) const;
  // xpinn: each interface's points, drawn on its face inside the domain with `seed` (pieces: on
  // the first piece's boundary where it meets the second's, Model::interface_points), bound to
  // "interface<k>_a" and "_b" (the same points, seen from either side's network), and their
  // normals from a towards b to "interface<k>_normals" (a grid face's: its axis).
  void sample_interfaces(std::uint64_t seed, Bindings& out) const;
  // xpinn on several ranks (at least as many cells): each interface's rows of all ranks dealt
  // alternately to the ranks owning its two sides, so that they reach those ranks' networks only;
  // the other ranks have no inputs (and no rows in the interface terms) for it. Decided at the
  // first draw (every rank kept the same interfaces, every rank gets rows of some), kept after.
  void own_interfaces(Bindings& out) const;
  // A decomposed model on several ranks (parallel.exchange neighbours): the objective's
  // ParameterExchange, each network's block held by the ranks whose rows reach it.
  void set_exchange();
  // xpinn: the continuity terms over all interfaces (solution, flux, residual), with weights.
  void interface_terms(const Bindings& points, std::vector<LossTerm>& terms);

  ProblemSpec spec_;
  const Communicator* communicator_;
  nn::NetworkSpec network_spec_;  // spec_.pinn.network with the inputs and outputs set
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ModelGraph> model_graph_;  // the model on graph_, with the point sets' layouts
  // Quotas (above), and the last arrangement (arrange()).
  mutable Quotas quotas_;
  mutable std::map<std::string, Bindings> arranged_;
  mutable std::vector<std::size_t>
      interfaces_;  // xpinn: the model's interfaces with points in the domain
  mutable bool interfaces_owned_ = false;  // own_interfaces' decision
  mutable std::map<std::size_t, std::pair<MatrixD, MatrixD>> last_interfaces_;  // drawn, per face
  std::vector<std::string> pde_params_;                  // trainable constants, by name
  std::vector<std::string> hard_value_, hard_distance_;  // per field ("" : no constraint)
  std::vector<std::string> hard_mesh_piece_;  // per field: the STL piece's predicate ("": all)
  std::vector<double> term_weights_;          // per loss term, from the spec
  std::unique_ptr<Objective> objective_;
  std::list<std::pair<std::string, Program>> programs_;     // most recently used first
  std::map<std::string, double> evaluation_bytes_per_row_;  // by kind (evaluation_rows)
  mutable DistanceCaches distance_cache_;                   // the training graph's point sets
  MemoryReport memory_;
  mutable Eigen::Index interior_rows_ = 0;  // interior points of all ranks (global points)
};

}  // namespace jetpde::solvers
