#include "solvers/option_keys.h"

#include "geometry/sampler.h"
#include "nn/network.h"
#include "solvers/exact_solutions.h"

namespace jetpde::solvers {
namespace {

using options::above;
using options::at_least;
using options::from_below;
using options::key;
using options::required;
using options::within;
using T = options::Key::Type;
using V = const options::Value&;

// A seed: any whole number from 0 to 2^63 - 1.
options::KeyPtr seed_key(std::string doc) {
  return within(0, 9223372036854775807.0, key("seed", T::integer, "0", std::move(doc)));
}

}  // namespace

const options::Declaration<Condition>& condition_options() {
  static const options::Declaration<Condition> d = [] {
    options::Declaration<Condition> d;
    d.add(required(options::choice("kind", condition_kind_names(), "", "The condition.")),
          [](Condition& c, V v) {
            c.kind = condition_kind_names().from_name(options::as<std::string>(v));
          });
    d.add(key("name", T::string, "", "Loss-term name (default: kind and field)."),
          &Condition::name);
    d.add(key("field", T::string, "u", "The field it constrains."), &Condition::field);
    d.add(key("on", T::string, "",
              "Boundary piece: a name (left, x_min, top, spatial, initial, ...) or a predicate "
              "(`x == 0 and y > 0.5`); empty: the whole boundary."),
          &Condition::on);
    d.add(key("at", T::points, "",
              "Instead of `on`: fixed points in the domain, `[[0, 0], [1, 0]]` (pinning a value "
              "at a corner); dirichlet, neumann, robin and residual."));
    d.add(key("value", T::string, "0", "g: an expression of the coordinates."), &Condition::value);
    d.add(key("alpha", T::number, "1", "robin: alpha u + beta du/dn = g."), &Condition::alpha);
    d.add(key("beta", T::number, "1", "robin."), &Condition::beta);
    d.add(key("coordinate", T::string, "", "periodic: the periodic coordinate."),
          &Condition::coordinate);
    d.add(
        within(0, 8, key("derivatives", T::integer, "0", "periodic: orders 0..this are matched.")),
        &Condition::derivatives);
    d.add(key("expression", T::string, "",
              "residual: any expression = 0 on the piece; data: the expression of the fields "
              "the data's values are of (`u_t`; default the field)."),
          &Condition::expression);
    // The PINN's choices for the condition (ConditionOptions, spec.h), declared here so that a
    // config writes them beside the mathematics; io reads them into PinnOptions::conditions.
    d.add(at_least(1, key("points", T::integer, "256", "Sampled points (periodic: pairs).")));
    d.add(at_least(0, key("weight", T::number, "1", "Initial loss weight.")));
    d.add(
        options::optional(options::group("data", T::object, "data: the measurements to fit.", {})));
    return d;
  }();
  return d;
}

const options::Declaration<Decomposition>& decomposition_options() {
  static const options::Declaration<Decomposition> d = [] {
    options::Declaration<Decomposition> d;
    d.add(required(options::choice(
              "method", {"fbpinn", "xpinn", "auto"}, "",
              "fbpinn: overlapping boxes, the solution the window-weighted sum of their networks "
              "(each normalized to its box); xpinn: boxes (or `pieces` of any shape) without "
              "overlap, each point its own subdomain's network, the networks tied by interface "
              "terms; auto: fbpinn on a grid "
              "chosen from the rank count and the domain's extent (`decomposition: auto` is "
              "short for this).")),
          [](Decomposition& s, V v) {
            const auto m = options::as<std::string>(v);
            s.method = m == "xpinn" ? DecompositionMethod::xpinn : DecompositionMethod::fbpinn;
            s.automatic = m == "auto";
          });
    d.add(at_least(1, key("subdomains", T::integers, "",
                          "Boxes per coordinate, in coordinate order (missing trailing ones: "
                          "1): [4] cuts x in 4, [2, 2] a plane in 4.")),
          &Decomposition::subdomains);
    // The pieces are geometries: io reads them (and gives the list the geometry's keys) with
    // the code that reads `geometry`.
    d.add(options::optional(options::group(
        "pieces", T::list,
        "Instead of `subdomains`: the subdomains as geometries, each written as `geometry` is "
        "(the domain's dimension; `time` too for a space-time domain). xpinn: any shapes that "
        "cover the domain without overlapping, a point the first piece's that contains it, "
        "interfaces where two pieces' boundaries meet inside the domain; fbpinn: boxes, "
        "anywhere, each grown by `overlap` / 2 of its own width per axis. At least 2.",
        {})));
    // Strictly between 0 and 1: no overlap leaves no window to blend with, a whole width would
    // cover a point by three boxes along an axis.
    auto overlap = std::make_shared<options::Key>(
        *above(0, key("overlap", T::number, "0.3",
                      "The width two neighbouring boxes share, as a fraction of a grid cell's "
                      "width (each box reaches half of it past its cell on each side; 0 < "
                      "overlap < 1).")));
    overlap->max = 1;
    overlap->max_open = true;
    d.add(overlap, &Decomposition::overlap);
    d.add(above(0, key("output_scale", T::number, "1",
                       "Every subdomain network's output is multiplied by this (the solution's "
                       "scale).")),
          &Decomposition::output_scale);
    d.add(options::optional(options::group(
        "interface", T::object,
        "xpinn: the interface terms on the faces neighbouring boxes share (pieces: where two "
        "pieces' boundaries meet inside the domain), over all of them: the jumps of the "
        "solution, of its normal derivative and of the equations' residuals.",
        {at_least(1, key("points", T::integer, "256",
                         "Points on each face or pieces' interface (in the domain).")),
         at_least(0, key("solution_weight", T::number, "1", "Weight of the solution's jump.")),
         at_least(0, key("flux_weight", T::number, "1", "Weight of the normal derivative's jump.")),
         at_least(0, key("residual_weight", T::number, "1", "Weight of the residuals' jump."))})));
    d.add(options::optional(options::group(
        "network", T::object,
        "The subdomains' network: the keys of `network`, those not given taken from it "
        "(default: `network` itself).",
        nn::network_options().keys())));
    return d;
  }();
  return d;
}

const options::Declaration<HardConstraint>& hard_constraint_options() {
  static const options::Declaration<HardConstraint> d = [] {
    options::Declaration<HardConstraint> d;
    d.add(key("field", T::string, "u", "The field."), &HardConstraint::field);
    d.add(key("value", T::string, "0", "g: the field's value where D = 0."),
          &HardConstraint::value);
    d.add(key("on", T::string, "",
              "Pieces for an automatic D (comma-separated; empty: the whole boundary): on "
              "boxes, time products of boxes, disks, spheres, STL parts and their time "
              "products (a smooth approximate distance to the surface, or to the triangles "
              "where a predicate holds)."),
          &HardConstraint::on);
    d.add(key("distance", T::string, "", "D as an expression, instead of `on`."),
          &HardConstraint::distance);
    return d;
  }();
  return d;
}

const options::Declaration<Weighting>& weighting_options() {
  static const options::Declaration<Weighting> d = [] {
    options::Declaration<Weighting> d;
    d.add_choice("kind", &Weighting::kind, weighting_kind_names(), "fixed",
                 "How the loss weights change in training.");
    d.add(at_least(1, key("every", T::integer, "100", "Adam steps between weight updates.")),
          &Weighting::every);
    d.add(from_below(0, 1, key("momentum", T::number, "0.9", "Moving-average factor.")),
          &Weighting::momentum);
    d.add(at_least(0, key("causal_epsilon", T::number, "0",
                          "Causal weighting strength (needs sampling.time_chunks > 1).")),
          &Weighting::causal_epsilon);
    d.add_choice("causal_scale", &Weighting::causal_scale, causal_scale_names(), "absolute",
                 "What the causal weights measure the chunk losses against.");
    return d;
  }();
  return d;
}

const options::Declaration<Reference>& reference_options() {
  static const options::Declaration<Reference> d = [] {
    options::Declaration<Reference> d;
    d.add(options::choice("exact", builtin_exact_names(), "none", "A built-in exact solution."),
          &Reference::exact);
    d.add(key("expressions", T::table, "",
              "Field -> exact solution as an expression of the coordinates."));
    d.add(
        options::optional(options::group("data", T::object, "Reference values from a file.", {})));
    d.add(at_least(
              0, key("every", T::integer, "0", "Validate every this many steps (0: at the end).")),
          &Reference::every);
    d.add(at_least(0, key("points", T::integer, "0",
                          "Validation points for an exact solution: this many, sampled in the "
                          "domain (sobol, seeded by `seed`); 0: a grid up to 3 dimensions (256, "
                          "101x101 or 31x31x31 points, times 101 time levels; of a domain that "
                          "is not a box, the grid's points in it), 100000 sampled points above. "
                          "Checked against the memory available before training.")),
          &Reference::points);
    d.add(key("metrics", T::table, "",
              "Name -> an expression of the fields, coordinates and constants (`sqrt(u^2 + v^2)`, "
              "`v_x - u_y`): its NAME_rel_l2 and NAME_max_abs against the same expression of the "
              "reference (an exact solution given as expressions: derivatives included; data or a "
              "built-in one: values only), in history.csv and summary.json."));
    return d;
  }();
  return d;
}

const options::Declaration<SolveOptions>& sampling_options() {
  static const options::Declaration<SolveOptions> d = [] {
    options::Declaration<SolveOptions> d;
    for (const options::KeyPtr& k : geometry::sample_options().keys()) d.add(k);
    d.add(at_least(1, key("interior_points", T::integer, "2048", "Interior collocation points.")));
    d.add(at_least(0, key("resample_every", T::integer, "0",
                          "Draw every point set again every this many steps of the stages "
                          "without a line search (Adam, SOAP; 0: never). A stage's own "
                          "resample_every counts its steps instead.")),
          &SolveOptions::resample_every);
    d.add(key("adaptive", T::boolean, "false",
              "Residual-based adaptive resampling (RAD) of the interior points."),
          &SolveOptions::adaptive);
    d.add(at_least(0, key("adaptive_candidates", T::integer, "0",
                          "RAD: candidates per draw (0: 8 x interior_points).")),
          &SolveOptions::adaptive_candidates);
    d.add(at_least(1, key("time_chunks", T::integer, "1",
                          "Causal weighting: interior points ordered by time in this many chunks "
                          "(at most interior_points).")));
    return d;
  }();
  return d;
}

const options::Declaration<PrecisionCheck>& precision_check_options() {
  static const options::Declaration<PrecisionCheck> d = [] {
    options::Declaration<PrecisionCheck> d;
    d.add(
        at_least(0, key("every", T::integer, "500",
                        "Under precision: auto standing for 16-bit operands (bf16_wgrad), compare "
                        "the loss and gradient with fp32's every this many steps (0: never).")),
        &PrecisionCheck::every);
    d.add(at_least(0, key("tolerance", T::number, "0.05",
                          "The relative difference from fp32 (loss or gradient) past which the run "
                          "goes on in fp32.")),
          &PrecisionCheck::tolerance);
    return d;
  }();
  return d;
}

const options::Declaration<SolveOptions>& training_options() {
  static const options::Declaration<SolveOptions> d = [] {
    options::Declaration<SolveOptions> d;
    d.add(at_least(0, key("max_time", T::number, "0",
                          "Wall-time budget in seconds (0: none): training stops after the first "
                          "step that ends past it (setup counted), with a checkpoint, the fields "
                          "and summary.json (status time_limit); `--resume` continues.")),
          &SolveOptions::max_time);
    d.add(at_least(0, key("target_error", T::number, "0",
                          "Stop at the first validation whose rel_l2 is below this (0: never; "
                          "needs a reference with `every` > 0); status target_reached.")),
          &SolveOptions::target_error);
    d.add(at_least(1, key("time_windows", T::integer, "1",
                          "Time marching: the time interval cut into this many equal windows, "
                          "trained in order (all the stages, causal chunks and resampling in "
                          "each), each window's initial condition the previous one's solution "
                          "at its end and its start the previous one's parameters; 1: off. "
                          "Needs a time coordinate; not with a decomposition, trainable "
                          "constants or conditions on a time face (`on: final`) yet; `--resume` "
                          "of a marched run is refused.")),
          &SolveOptions::time_windows);
    d.add_choice("window_shares", &SolveOptions::window_shares, window_shares_names(), "equal",
                 "Time marching under max_time: each window's part of the time left when it "
                 "starts.");
    return d;
  }();
  return d;
}

const options::Declaration<SolveOptions>& run_options() {
  static const options::Declaration<SolveOptions> d = [] {
    options::Declaration<SolveOptions> d;
    d.add(seed_key("Seed of the network's initialization and the sampling."),
          [](SolveOptions& o, V v) { o.seed = options::as<std::uint64_t>(v); });
    d.add_choice("device", &SolveOptions::device, device_names(), "auto",
                 "Where the compiled programs run.");
    d.add(key("require_device", T::boolean, "false",
              "With device: cuda, no GPU is an error instead of a fallback."),
          &SolveOptions::require_device);
    return d;
  }();
  return d;
}

const options::Declaration<PinnOptions>& parallel_options() {
  static const options::Declaration<PinnOptions> d = [] {
    options::Declaration<PinnOptions> d;
    d.add_choice("points", &PinnOptions::rank_points, rank_points_names(), "local",
                 "With several MPI ranks (every point count is a total): how each rank gets its "
                 "share.");
    d.add_choice("exchange", &PinnOptions::exchange, gradient_exchange_names(), "neighbours",
                 "With several MPI ranks and a decomposition: how the ranks sum the gradient.");
    return d;
  }();
  return d;
}

}  // namespace jetpde::solvers
