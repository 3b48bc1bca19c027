#include "solvers/marching.h"

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <optional>

#include "geometry/boundary.h"
#include "geometry/sampler.h"
#include "geometry/time_product.h"
#include "nn/detail/names.h"
#include "solvers/solve.h"

namespace jetpde::solvers {
namespace {

constexpr const char* kKey = "training.time_windows";

const geometry::TimeProduct& time_domain(const ProblemSpec& spec) {
  const auto* tp = dynamic_cast<const geometry::TimeProduct*>(spec.math.domain.get());
  if (!tp || spec.math.context.time_index() < 0)
    throw UserError(std::string(kKey) +
                    ": time marching needs a time coordinate (a domain with `time`); this "
                    "problem has none");
  return *tp;
}

// The combined model of `spec` (marched_spec's), as the Problem builds it.
Model combined_model(const ProblemSpec& marched) {
  nn::NetworkSpec net = marched.pinn.network;
  net.inputs = static_cast<int>(marched.math.context.coordinate_names().size());
  net.outputs = static_cast<int>(marched.math.context.field_names().size());
  return Model(net, marched.pinn.decomposition, *marched.math.domain);
}

// The rows of `points` (and the same rows of `values`) whose time is in [t0, t1].
std::vector<Eigen::Index> rows_in(const MatrixD& points, int time, double t0, double t1) {
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < points.rows(); ++i)
    if (points(i, time) >= t0 && points(i, time) <= t1) rows.push_back(i);
  return rows;
}

MatrixD pick(const MatrixD& m, const std::vector<Eigen::Index>& rows) {
  MatrixD out(static_cast<Eigen::Index>(rows.size()), m.cols());
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.row(static_cast<Eigen::Index>(i)) = m.row(rows[i]);
  return out;
}

std::string interval_text(double t0, double t1) {
  return "[" + nn::detail::short_number(t0, 6) + ", " + nn::detail::short_number(t1, 6) + "]";
}

// Whether a hard constraint fixes its field on the initial face (so that a later window needs
// the field handed over): an automatic D on "initial", the time's lower face or the whole
// boundary, or a D given as an expression (it cannot be told; handing over is then harmless).
bool constrains_initial(const HardConstraint& hc, const std::string& time) {
  if (!hc.distance.empty()) return true;
  std::string rest = hc.on;
  do {
    const std::size_t comma = rest.find(',');
    std::string piece = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    piece.erase(0, piece.find_first_not_of(' '));
    piece.erase(piece.find_last_not_of(' ') + 1);
    if (piece.empty() || piece == "initial" || piece == time + "_min") return true;
  } while (!rest.empty());
  return false;
}

// The term name of condition k (Problem::condition_term's default), so that a window's handed
// over condition keeps the slot of the condition it replaces.
std::string term_name(const Condition& c, std::size_t k) {
  const ConditionKind& kind = condition_kind(c.kind);
  return c.name.empty()
             ? std::string(kind.name) + "_" + (kind.takes_field ? c.field : std::to_string(k + 1))
             : c.name;
}

// What the windows' reference is: the run's, with reference data cut to the window's rows.
Reference window_reference(const Reference& ref, int time, double t0, double t1, int k) {
  Reference out = ref;
  if (!ref.data) return out;
  const std::vector<Eigen::Index> rows = rows_in(ref.data->points, time, t0, t1);
  if (rows.empty())
    throw UserError(std::string(kKey) + ": the reference data has no point in window " +
                    std::to_string(k + 1) + " " + interval_text(t0, t1) +
                    ", which could not be validated; give fewer windows");
  out.data->points = pick(ref.data->points, rows);
  out.data->values = pick(ref.data->values, rows);
  return out;
}

// A window's step as the run's: after the earlier windows' steps and training time, its stage
// tagged with the window ("w2/adam").
StepInfo shifted(const StepInfo& info, int offset, double seconds, const std::string& tag,
                 const std::vector<int>& slot_of) {
  StepInfo s = info;
  s.step += offset;
  s.seconds += seconds;  // the earlier windows' training time: the run's clock goes on
  s.run_seconds += seconds;
  s.stage = tag + info.stage;
  // The run's slots (the whole problem's) from the window's, by name; a window's own extra
  // terms (a hard-constrained field handed over) are in the loss but not in these columns.
  s.slot_losses.assign(slot_of.size(), 0.0);
  s.weights.assign(slot_of.size(), 0.0);
  for (std::size_t j = 0; j < slot_of.size(); ++j) {
    const auto w = static_cast<std::size_t>(slot_of[j]);
    if (slot_of[j] < 0) continue;
    if (w < info.slot_losses.size()) s.slot_losses[j] = info.slot_losses[w];
    if (w < info.weights.size()) s.weights[j] = info.weights[w];
  }
  return s;
}

// A window's checkpoints as the run's: the combined parameters (this window's in its place, the
// finished ones' in theirs) at the run's step, so that the run folder can be evaluated whenever
// it stops. Resuming from them is refused (Solver::run).
class WindowCheckpoints final : public CheckpointSink {
 public:
  WindowCheckpoints(CheckpointSink& sink, Problem& window, const std::string& prefix,
                    Problem& combined, const Eigen::VectorXd& theta, int offset, double seconds)
      : sink_(sink),
        window_(window),
        prefix_(prefix),
        combined_(combined),
        theta_(theta),
        offset_(offset),
        seconds_(seconds) {}
  void save(const TrainerState& state) override {
    TrainerState s = state;
    s.step += offset_;
    s.seconds += seconds_;
    s.theta = theta_;
    copy_parameters(window_, state.theta, prefix_, combined_, s.theta, prefix_);
    sink_.save(s);
  }

 private:
  CheckpointSink& sink_;
  Problem& window_;
  std::string prefix_;
  Problem& combined_;
  const Eigen::VectorXd& theta_;
  int offset_;
  double seconds_;
};

}  // namespace

void check_time_windows(const ProblemSpec& spec, int windows) {
  if (windows < 1)
    throw UserError(std::string(kKey) + ": " + std::to_string(windows) +
                    "; give 1 (no time marching) or more windows");
  if (windows == 1) return;
  time_domain(spec);
  if (spec.pinn.decomposition.method != DecompositionMethod::none)
    throw UserError(std::string(kKey) +
                    ": time marching with a decomposition is not supported yet (the windows are "
                    "the combined model's subdomains); drop one of the two");
  // A condition on a time face by name would hold on every window's own face; not yet.
  const equations::Context& ctx = spec.math.context;
  const std::string& t = ctx.coordinate_names()[static_cast<std::size_t>(ctx.time_index())];
  for (std::size_t c = 0; c < spec.math.conditions.size(); ++c) {
    std::string rest = spec.math.conditions[c].on;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::string piece = rest.substr(0, comma);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      piece.erase(0, piece.find_first_not_of(' '));
      piece.erase(piece.find_last_not_of(' ') + 1);
      if (piece == "initial" || piece == "final" || piece == t + "_min" || piece == t + "_max")
        throw UserError(std::string(kKey) + ": conditions[" + std::to_string(c) + "] is on '" +
                        piece +
                        "', which each window would take as its own; time marching "
                        "with conditions on a time face is not supported yet (initial_value "
                        "and initial_rate are)");
    }
  }
  if (!spec.math.context.symbols(equations::SymbolKind::param).empty())
    throw UserError(std::string(kKey) +
                    ": time marching with trainable constants (an inverse problem) is not "
                    "supported yet (each window would fit its own values)");
}

ProblemSpec marched_spec(ProblemSpec spec, int windows) {
  check_time_windows(spec, windows);
  const int time = spec.math.context.time_index();
  Decomposition& d = spec.pinn.decomposition;
  d.method = DecompositionMethod::xpinn;
  d.automatic = false;
  d.subdomains.assign(static_cast<std::size_t>(time) + 1, 1);
  d.subdomains[static_cast<std::size_t>(time)] = windows;
  // Never trained, but evaluated once at the end: its interface terms are then the jumps at the
  // windows' edges (summary.json's losses). No chunks, which a decomposition refuses.
  spec.pinn.time_chunks = 1;
  return spec;
}

std::pair<double, double> window_interval(const ProblemSpec& spec, int windows, int k) {
  const Model model = combined_model(marched_spec(spec, windows));
  const auto time = static_cast<std::size_t>(spec.math.context.time_index());
  const geometry::Bounds& cell = model.cells().at(static_cast<std::size_t>(k));
  return {cell.lo[time], cell.hi[time]};
}

ProblemSpec window_spec(const ProblemSpec& spec, int windows, int k,
                        const WindowHandover& previous) {
  const geometry::TimeProduct& whole = time_domain(spec);
  const Model model = combined_model(marched_spec(spec, windows));
  const equations::Context& ctx = spec.math.context;
  const int time = ctx.time_index();
  const std::string& time_name = ctx.coordinate_names()[static_cast<std::size_t>(time)];
  const geometry::Bounds& cell = model.cells().at(static_cast<std::size_t>(k));
  const double t0 = cell.lo[static_cast<std::size_t>(time)],
               t1 = cell.hi[static_cast<std::size_t>(time)];
  const std::string where = "window " + std::to_string(k + 1) + " " + interval_text(t0, t1);

  ProblemSpec w = spec;
  w.math.domain = geometry::time_product(whole.space(), t0, t1, time_name);
  w.pinn.network = model.network_specs().at(static_cast<std::size_t>(k));
  w.pinn.quiet = true;  // the run's own problem said it all
  if (!w.pinn.hard_constraint_bounds) w.pinn.hard_constraint_bounds = whole.bounds();
  if (w.pinn.conditions.empty()) w.pinn.conditions.assign(spec.math.conditions.size(), {});

  // Data and fixed points: the rows inside the window.
  for (std::size_t c = 0; c < w.math.conditions.size(); ++c) {
    Condition& cond = w.math.conditions[c];
    const auto cut = [&](MatrixD& points, MatrixD* values, const char* what) {
      const std::vector<Eigen::Index> rows = rows_in(points, time, t0, t1);
      if (rows.empty())
        throw UserError(std::string(kKey) + ": conditions[" + std::to_string(c) + "] has no " +
                        what + " in " + where + "; not supported yet: give fewer windows");
      if (values) *values = pick(*values, rows);
      points = pick(points, rows);
    };
    if (cond.kind == Condition::Kind::data) cut(cond.data_points, &cond.data_values, "data point");
    if (cond.at.rows() > 0) cut(cond.at, nullptr, "fixed point (`at`)");
  }
  if (k == 0) return w;
  if (!previous)
    throw UserError("time marching: window " + std::to_string(k + 1) +
                    " needs the previous window's solution");

  // The initial conditions from the previous window: data at points of the face t = t_k.
  const geometry::Geometry& domain = *w.math.domain;
  const auto face_points = [&](int count, std::size_t salt) {
    geometry::SampleOptions o = spec.pinn.sampling;
    // A seed of this window and condition's own (the initial face's draw is the problem's).
    o.seed = spec.pinn.sampling.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(k) +
             1000003ULL * salt;
    return geometry::sample_boundary(domain, static_cast<std::size_t>(count), o,
                                     geometry::BoundaryPiece::parse(domain, "initial"))
        .points;
  };
  std::vector<bool> handed(ctx.field_names().size(), false);
  for (std::size_t c = 0; c < w.math.conditions.size(); ++c) {
    Condition& cond = w.math.conditions[c];
    if (cond.kind != Condition::Kind::initial_value && cond.kind != Condition::Kind::initial_rate)
      continue;
    const bool rate = cond.kind == Condition::Kind::initial_rate;
    Condition data{.kind = Condition::Kind::data, .name = term_name(cond, c), .field = cond.field};
    if (rate) data.expression = "d(" + cond.field + ", " + time_name + ", 1)";
    data.data_points = face_points(w.pinn.conditions[c].points, c + 1);
    data.data_values = previous(data.data_points, {rate ? data.expression : cond.field});
    if (!rate) handed[static_cast<std::size_t>(ctx.field_index(cond.field))] = true;
    cond = std::move(data);
  }
  // A field the hard constraint fixes at t_0 only: handed over as data too.
  for (const HardConstraint& hc : spec.pinn.hard_constraints) {
    const int f = ctx.field_index(hc.field);
    if (f < 0 || handed[static_cast<std::size_t>(f)] || !constrains_initial(hc, time_name))
      continue;
    Condition data{
        .kind = Condition::Kind::data, .name = "handover_" + hc.field, .field = hc.field};
    const ConditionOptions options;
    data.data_points = face_points(options.points, w.math.conditions.size() + 1);
    data.data_values = previous(data.data_points, {hc.field});
    w.math.conditions.push_back(std::move(data));
    w.pinn.conditions.push_back(options);
  }
  return w;
}

const options::EnumTable<WindowShares>& window_shares_names() {
  static constexpr std::array<options::EnumName<WindowShares>, 2> names{{
      {WindowShares::equal, "equal", "each window an equal part of the time left"},
      {WindowShares::growing, "growing",
       "window k of K the part k / (k + ... + K) of the time left: 1 : 2 : ... : K"},
  }};
  static constexpr options::EnumTable<WindowShares> table("window shares", names);
  return table;
}

double window_share(WindowShares shares, int windows, int k) {
  if (shares == WindowShares::equal) return 1.0 / (windows - k);
  const double parts = (windows * (windows + 1.0) - k * (k + 1.0)) / 2;  // (k+1) + ... + windows
  return (k + 1) / parts;
}

void copy_parameters(Problem& from, const Eigen::VectorXd& theta_from,
                     const std::string& from_prefix, Problem& to, Eigen::VectorXd& theta_to,
                     const std::string& to_prefix) {
  std::map<std::string, const nn::ParameterLayout::Entry*> source;
  for (const auto& e : from.objective().layout().entries()) source[e.name] = &e;
  for (const auto& e : to.objective().layout().entries()) {
    if (e.name.rfind(to_prefix, 0) != 0) continue;
    const std::string name = from_prefix + e.name.substr(to_prefix.size());
    const auto it = source.find(name);
    if (it == source.end() ||
        it->second->shape.rows * it->second->shape.cols != e.shape.rows * e.shape.cols)
      throw UserError("time marching: no parameter '" + name + "' of the shape of '" + e.name +
                      "' to copy");
    theta_to.segment(e.offset, e.shape.rows * e.shape.cols) =
        theta_from.segment(it->second->offset, e.shape.rows * e.shape.cols);
  }
}

Solution Solver::march() {
  const SolveOptions& o = options_;
  const int windows = o.time_windows;
  Problem& full = *problem_;
  Solver& combined = *combined_;
  Problem& cp = *combined.problem_;
  const int time = full.math().context.time_index();
  const std::vector<std::string>& slots = full.objective().slot_names();
  // Every window's parameters in the combined layout, each window's put in when it is trained.
  Eigen::VectorXd theta = cp.initial_theta(o.seed);
  const double setup = clock_seconds() - started_;
  std::vector<StepInfo> history;
  std::vector<WindowRecord> records;
  std::optional<Solution> previous;
  std::string previous_prefix;
  std::string message;
  TrainResult::Status status = TrainResult::Status::finished;
  double loss = 0, seconds = 0;
  int offset = 0;
  std::map<std::string, double> first_scales;
  std::vector<std::pair<int, double>> checks;  // precision: auto, at the run's steps
  int switched_at = -1;
  for (int k = 0; k < windows; ++k) {
    WindowHandover handover;
    if (previous)
      handover = [&previous](const MatrixD& points, const std::vector<std::string>& expressions) {
        return previous->evaluate(points, expressions);
      };
    auto problem = std::make_unique<Problem>(window_spec(full.spec(), windows, k, handover),
                                             full.communicator());
    const std::string prefix = cp.model().network_specs()[static_cast<std::size_t>(k)].prefix;
    const auto [t0, t1] = window_interval(full.spec(), windows, k);
    std::vector<int> slot_of(slots.size(), -1);
    const std::vector<std::string>& own = problem->objective().slot_names();
    for (std::size_t j = 0; j < slots.size(); ++j)
      if (const auto it = std::find(own.begin(), own.end(), slots[j]); it != own.end())
        slot_of[j] = static_cast<int>(it - own.begin());
    const std::string tag = "w" + std::to_string(k + 1) + "/";

    SolveOptions wo = o;
    wo.time_windows = 1;
    // causal_scale initial: the first window's scales (measured from the run's initial network)
    // for every window; a warm-started window would measure its own far smaller, and its later
    // chunks, where the handed-over solution is still wrong, would stay silenced.
    if (k > 0 && o.weighting.causal_scales.empty()) wo.weighting.causal_scales = first_scales;
    // precision: auto: a window that went to fp32 leaves the later ones in fp32.
    if (switched_at >= 0) wo.precision_check.switched = true;
    wo.resume = nullptr;
    wo.started_at = started_;
    // The time budget in shares of what is left (window_share): each window may end early, and
    // the windows after it are still trained (a run-wide deadline would leave them untrained).
    if (o.max_time > 0) {
      const double used = clock_seconds() - started_;
      wo.max_time =
          used + std::max(0.0, o.max_time - used) * window_share(o.window_shares, windows, k);
    }
    wo.reference = window_reference(o.reference, time, t0, t1, k);
    wo.on_step = [&o, offset, seconds, tag, &slot_of](const StepInfo& info) {
      return o.on_step ? o.on_step(shifted(info, offset, seconds, tag, slot_of)) : true;
    };
    std::optional<WindowCheckpoints> checkpoints;
    if (o.checkpoint) {
      checkpoints.emplace(*o.checkpoint, *problem, prefix, cp, theta, offset, seconds);
      wo.checkpoint = &*checkpoints;
    }
    // Window 0 as a run starts (the seed's draw, PirateNet's fit); the others from the previous
    // window's parameters (a warm start).
    std::optional<Eigen::VectorXd> warm;
    if (previous) {
      warm = problem->initial_theta(o.seed);
      copy_parameters(previous->problem(), previous->theta(), previous_prefix, *problem, *warm,
                      prefix);
    }
    Solver solver(std::move(problem), std::move(wo));
    Solution w = warm ? solver.run_from(std::move(*warm)) : solver.run();
    copy_parameters(w.problem(), w.theta(), prefix, cp, theta, prefix);
    for (const StepInfo& info : w.history())
      history.push_back(shifted(info, offset, seconds, tag, slot_of));
    const TrainResult& r = w.result();
    if (k == 0) first_scales = r.causal_scales;
    for (const auto& [at, drift] : r.precision_checks) checks.emplace_back(at + offset, drift);
    if (switched_at < 0 && r.precision_switched_at > 0)
      switched_at = r.precision_switched_at + offset;
    records.push_back({.t0 = t0,
                       .t1 = t1,
                       .steps = r.steps,
                       .status = r.status,
                       .loss = r.loss,
                       .metrics = r.metrics,
                       .seconds = r.seconds});
    message += (message.empty() ? "" : "; ") + tag.substr(0, tag.size() - 1) + ": " + r.message;
    offset += r.steps;
    loss = r.loss;
    seconds += r.seconds;
    previous_prefix = prefix;
    previous = std::move(w);
    // A window that stopped (interrupt, callback, non-finite loss) ends the march; one that
    // reached the target error or spent its share of the time budget hands over as a finished
    // one does (the run's status then says time_limit).
    if (r.status == TrainResult::Status::time_limit) status = r.status;
    if (r.status != TrainResult::Status::finished &&
        r.status != TrainResult::Status::target_reached &&
        r.status != TrainResult::Status::time_limit) {
      status = r.status;
      // The windows not trained continue the last one's parameters (so the solution is whole).
      for (int j = k + 1; j < windows; ++j) {
        const std::string later = cp.model().network_specs()[static_cast<std::size_t>(j)].prefix;
        copy_parameters(previous->problem(), previous->theta(), prefix, cp, theta, later);
      }
      message += "; time marching stopped in window " + std::to_string(k + 1) + " of " +
                 std::to_string(windows);
      break;
    }
  }
  TrainResult result;
  result.status = status;
  result.steps = offset;
  result.loss = loss;
  result.message = std::to_string(windows) + " time windows: " + message;
  result.causal_scales = first_scales;  // every window's
  result.precision_checks = std::move(checks);
  result.precision_switched_at = switched_at;
  result.metrics = combined.validate(theta);  // the combined solution over the whole domain
  // The combined loss terms once (Solution::losses): the equations and conditions over the whole
  // domain, and the interface terms, which measure the jumps at the windows' edges.
  cp.objective().evaluate(theta);
  result.seconds = result.run_seconds = seconds;
  Solution s(std::move(combined.problem_), std::move(theta), exact_);
  s.result_ = std::move(result);
  s.history_ = std::move(history);
  s.validation_points_ = validation_points_;
  s.setup_seconds_ = setup;
  s.train_seconds_ = seconds;
  s.windows_ = std::move(records);
  trainer_.reset();
  combined_.reset();
  return s;
}

}  // namespace jetpde::solvers
