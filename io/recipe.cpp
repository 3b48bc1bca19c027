#include "io/recipe.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "autodiff/text.h"
#include "equations/analysis.h"
#include "equations/parser.h"
#include "geometry/geometry.h"
#include "io/config_schema.h"
#include "solvers/marching.h"

namespace jetpde::io {

namespace {

constexpr std::array<options::EnumName<RecipeKind>, 2> kRecipes{{
    {RecipeKind::none, "none",
     "the config's training as written; what it leaves out takes the schema's defaults"},
    {RecipeKind::automatic, "auto",
     "network, sampling and training chosen from the problem where the config gives none "
     "(docs/config.md, the default recipe)"},
}};

}  // namespace

const options::EnumTable<RecipeKind>& recipe_names() {
  static constexpr options::EnumTable<RecipeKind> table("recipe", kRecipes);
  return table;
}

namespace {

std::string flow(const YAML::Node& n) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << n;
  return out.c_str();
}

bool given(const YAML::Node& parent, const std::string& key) {
  if (!parent || !parent.IsMap()) return false;
  const YAML::Node v = parent[key];
  return v && !v.IsNull();
}

// A count the config gives (`time_windows: 4`, `2^2`), read before the config is resolved; 0 where
// it is not a whole number of at least 1 (the run's reading then says what is wrong with it).
int given_count(const YAML::Node& v) {
  double value = 0;
  std::string why;
  if (!v.IsScalar() || !number_value(v.Scalar(), &value, &why)) return 0;
  return value >= 1 && value <= 1e6 && value == std::floor(value) ? static_cast<int>(value) : 0;
}

// Adam for `adam_steps` with an exponential decay to about a third of the rate; then L-BFGS in
// the run's precision until it no longer changes the loss (f32 sometimes stops it within a few
// iterations of Adam's end, at a loss far above its rounding: wave's seed 0 and windows of
// reaction, Allen-Cahn and advection stopped after 2-7, even with the history forgotten and -g
// tried); then the fp64 polish, L-BFGS on the same parameters in double (the stage that takes a
// PINN from 1e-3 to 1e-4: bench/README.md). The iterations the f32 stage leaves go on in fp64 on
// the same draw (Stage::hand_on to `fp64_continue`, whose own single iteration is all it does
// when f32 ran its 5000): wave's seed 0 went from 1.0e-3 to 8.2e-5, Allen-Cahn's seed 2 and
// advection's seed 2 from 1.27e-3 and 1.33e-3 (the iterations handed to the polish's restarted
// runs instead) to 7.4e-4 and 7.8e-4 (bench/README.md, "An fp64 continuation of the f32 stage").
// What the continuation leaves in turn goes to the polish, which then averages only its last
// polish_steps / kQuasiNewtonDraw runs (Stage::average_last; as many as it has without handed
// iterations: the mean of all 28 runs' ends, most from where the loss was still falling, was
// worse than none handed on; "A tail average for the handed-on polish"). Under a time budget
// (training.max_time, and each time window's share of it) Adam takes at most 0.7 of the time and
// each L-BFGS stage half of what is left, so that the polish always runs. The fp64 polish draws
// its points anew (RAD, as Adam's) every kQuasiNewtonDraw iterations and restarts on them: on one
// draw the thousands of quasi-Newton iterations overfit it (Burgers' error fell early in the polish
// and then rose while the loss fell). The f32 L-BFGS stage keeps its one draw: restarting it every
// 250 iterations cost advection 3x and Burgers' seed 2 2.7x its error, where Allen-Cahn's two
// seeds split (bench/README.md, "Fresh points for the polish only"). Each run on a draw still
// fits that draw (the loss at the next draw's points, before fitting them, is 2-13x the run's
// last), so the polish ends at the mean of its runs' ends (Stage::average; bench/README.md,
// "The polish's runs averaged").
constexpr int kQuasiNewtonDraw = 250;
YAML::Node stages(int adam_steps, int polish_steps) {
  YAML::Node adam;
  adam["optimizer"] = "adam";
  adam["steps"] = adam_steps;
  adam["learning_rate"] = "1e-3";
  adam["schedule"] = "exponential";
  adam["decay_rate"] = "0.9";
  adam["decay_steps"] = adam_steps / 10;
  adam["time_share"] = "0.7";
  YAML::Node lbfgs;
  lbfgs["optimizer"] = "lbfgs";
  lbfgs["steps"] = 5000;
  lbfgs["function_tolerance"] = 0;
  lbfgs["time_share"] = "0.5";
  lbfgs["hand_on"] = true;
  YAML::Node fp64;
  fp64["name"] = "fp64_continue";
  fp64["optimizer"] = "lbfgs";
  fp64["steps"] = 1;
  fp64["function_tolerance"] = 0;
  fp64["precision"] = "fp64";
  fp64["time_share"] = "0.5";
  fp64["hand_on"] = true;
  YAML::Node polish;
  polish["name"] = "polish";
  polish["optimizer"] = "lbfgs";
  polish["steps"] = polish_steps;
  polish["function_tolerance"] = 0;
  polish["precision"] = "fp64";
  polish["resample_every"] = kQuasiNewtonDraw;
  polish["average"] = true;
  polish["average_last"] = polish_steps / kQuasiNewtonDraw;
  YAML::Node list(YAML::NodeType::Sequence);
  list.push_back(adam);
  list.push_back(lbfgs);
  list.push_back(fp64);
  list.push_back(polish);
  return list;
}

}  // namespace

ProblemFacts problem_facts(const solvers::ProblemSpec& spec) {
  ProblemFacts f;
  const equations::Context& ctx = spec.math.context;
  const auto& names = ctx.coordinate_names();
  const geometry::Bounds b = spec.math.domain->bounds();
  for (int a = 0; a < b.dim(); ++a) f.extents.push_back(b.hi[a] - b.lo[a]);
  const int ti = ctx.time_index();
  f.time = ti >= 0;
  if (f.time) {
    f.t0 = b.lo[ti];
    f.t1 = b.hi[ti];
  }
  for (int s : ctx.spatial()) f.spatial.push_back(names[s]);
  f.spatial_dims = static_cast<int>(f.spatial.size());
  std::vector<equations::Equation> eqs;
  for (const std::string& e : spec.math.equations) eqs.push_back(equations::parse(e, ctx));
  const equations::Needs needs = equations::analyze(eqs, ctx);
  f.max_order = needs.max_order;
  if (f.time)
    for (const auto& [field, n] : needs.fields)
      for (const auto& mi : n.partials)
        if (static_cast<std::size_t>(ti) < mi.size()) f.time_order = std::max(f.time_order, mi[ti]);
  for (const solvers::Condition& c : spec.math.conditions)
    if (c.kind == solvers::Condition::Kind::periodic) {
      ++f.periodic_conditions;
      const auto it = std::find(names.begin(), names.end(), c.coordinate);
      if (it == names.end()) continue;
      const auto a = static_cast<std::size_t>(it - names.begin());
      const bool seen = std::any_of(f.periodic.begin(), f.periodic.end(),
                                    [&](const auto& p) { return p.first == c.coordinate; });
      if (!seen) f.periodic.emplace_back(c.coordinate, f.extents[a]);
    }
  f.loss_terms = static_cast<int>(spec.math.equations.size() + spec.math.conditions.size());
  if (f.time) try {
      solvers::check_time_windows(spec, 4);
      f.can_march = true;
    } catch (const UserError&) {
      // trainable constants, a condition on a time face: not marched
    }
  return f;
}

std::string Recipe::describe() const {
  std::string s = "recipe auto: " + facts;
  for (const auto& [key, value] : chosen) s += "\n  chose " + key + ": " + value;
  if (!kept.empty()) {
    s += "\n  kept from the config:";
    for (std::size_t i = 0; i < kept.size(); ++i) s += (i ? ", " : " ") + kept[i];
  }
  return s;
}

bool wants_recipe(const YAML::Node& raw) {
  if (!raw || !raw.IsMap()) return true;
  const YAML::Node solver = raw["solver"];
  if (given(solver, "type") && solver["type"].IsScalar() && solver["type"].Scalar() != "pinn")
    return false;
  if (!given(raw, "training")) return true;
  const YAML::Node t = raw["training"];
  if (!t.IsMap()) return false;  // the schema says what is wrong with it
  if (given(t, "recipe")) return t["recipe"].IsScalar() && t["recipe"].Scalar() == "auto";
  return !given(t, "stages");
}

Recipe apply_recipe(YAML::Node& raw, const ProblemFacts& f) {
  // A section the recipe fills key by key that is not a mapping (`sampling: 5`, `training:
  // [adam]`) is left as written, and so is the rest: the run's reading of the config then names
  // what is wrong with it, where filling it would throw (a scalar) or turn it into a mapping.
  const auto not_a_map = [](const YAML::Node& parent, const char* key) {
    return given(parent, key) && !parent[key].IsMap();
  };
  if (not_a_map(raw, "sampling") || not_a_map(raw, "training") ||
      (given(raw, "training") && not_a_map(raw["training"], "weighting")))
    return Recipe{};
  Recipe r;
  r.applied = true;
  // The facts, as the log says them.
  {
    std::ostringstream s;
    s << (f.time ? "time-dependent (t in [" + geometry::format_number(f.t0) + ", " +
                       geometry::format_number(f.t1) + "])"
                 : std::string("steady"));
    s << ", " << f.spatial_dims << " spatial dimension" << (f.spatial_dims == 1 ? "" : "s");
    s << ", derivatives to order " << f.max_order;
    if (f.time) s << " (" << f.time_order << " in time)";
    for (std::size_t i = 0; i < f.periodic.size(); ++i)
      s << (i ? ", " : ", periodic in ") << f.periodic[i].first;
    s << ", " << f.loss_terms << " loss term" << (f.loss_terms == 1 ? "" : "s");
    r.facts = s.str();
  }
  const int dims = f.spatial_dims + (f.time ? 1 : 0);

  // The network: a whole section or nothing (a width chosen for one architecture does not fit
  // another). Time-dependent problems get the modified MLP (Wang, Teng & Perdikaris 2021), which
  // the causal-training guide uses; periodic coordinates become exactly periodic inputs (the
  // periodic conditions then hold by construction).
  const bool decomposed_network =
      given(raw, "decomposition") && given(raw["decomposition"], "network");
  int satisfied = 0;  // periodic conditions the chosen network satisfies exactly
  if (given(raw, "network") || decomposed_network) {
    r.kept.push_back(decomposed_network ? "decomposition.network" : "network");
  } else {
    YAML::Node net;
    net["architecture"] = f.time ? "modified_mlp" : "mlp";
    YAML::Node hidden(YAML::NodeType::Sequence);
    for (int i = 0; i < 4; ++i) hidden.push_back(64);
    net["hidden"] = hidden;
    net["hidden"].SetStyle(YAML::EmitterStyle::Flow);
    net["activation"] = "tanh";
    if (!f.periodic.empty()) {
      YAML::Node periodic(YAML::NodeType::Sequence);
      for (const auto& [coordinate, period] : f.periodic) {
        YAML::Node p;
        p["coordinate"] = coordinate;
        p["period"] = exact_text(period);  // 6.28319 for 2 pi: not periodic over the box
        periodic.push_back(p);
      }
      net["periodic"] = periodic;
      satisfied = f.periodic_conditions;
    }
    raw["network"] = net;
    r.chosen.emplace_back("network", flow(net));
  }

  // Sampling, key by key: more points with more dimensions, drawn again every 500 steps by
  // residual; with time, 32 time chunks for causal weighting (Wang, Sankaran & Perdikaris 2022).
  YAML::Node sampling = given(raw, "sampling") ? raw["sampling"] : YAML::Node(YAML::NodeType::Map);
  const auto fill = [&r](YAML::Node& section, const std::string& path, const std::string& key,
                         const YAML::Node& value) {
    if (given(section, key)) {
      r.kept.push_back(path + key);
      return;
    }
    section[key] = value;
    r.chosen.emplace_back(path + key, flow(value));
  };
  // Time marching for a time-dependent problem on a periodic domain, where the solution travels
  // or keeps changing over the interval (transport, phase separation: Allen-Cahn, advection,
  // reaction): four windows trained in sequence, each with its own stages, so a window's steps
  // are fewer. bench/README.md has the measurements behind it.
  const YAML::Node given_training = given(raw, "training") ? raw["training"] : YAML::Node();
  const bool marching =
      f.time && !f.periodic.empty() && f.can_march && !given(raw, "decomposition");
  const int windows = given(given_training, "time_windows")
                          ? given_count(given_training["time_windows"])
                          : (marching ? 4 : 1);
  // A marched window covers a part of the interval, so half the points still sample it at twice
  // the density of one run over the whole, and its steps cost half: Allen-Cahn, short of steps
  // in its windows' shares of the budget, went from 1.48e-3 to 1.10e-3 with 2048 points in place
  // of 4096 (bench/README.md, "Half the points in a marched window").
  const int interior = std::min(16384, 2048 << std::max(0, dims - 1)) / (windows > 1 ? 2 : 1);
  fill(sampling, "sampling.", "interior_points", YAML::Node(interior));
  fill(sampling, "sampling.", "method", YAML::Node(f.time ? "random" : "sobol"));
  fill(sampling, "sampling.", "resample_every", YAML::Node(500));
  // Residual-based adaptive sampling (RAD; Wu et al. 2023): the points drawn where the residual is
  // large, which is where a front or a shock is.
  fill(sampling, "sampling.", "adaptive", YAML::Node(true));
  if (f.time) fill(sampling, "sampling.", "time_chunks", YAML::Node(32));
  raw["sampling"] = sampling;

  // Training: the stages when the config has none, then the weighting key by key.
  YAML::Node training = given(raw, "training") ? raw["training"] : YAML::Node(YAML::NodeType::Map);
  training["recipe"] = "auto";
  if (marching) fill(training, "training.", "time_windows", YAML::Node(windows));
  if (given(training, "stages")) {
    r.kept.push_back("training.stages");
  } else {
    // Each window polishes as long as a single run does: under a budget the window's share ends
    // it first (Allen-Cahn's last window had 120 s of the budget left after 500 iterations).
    const YAML::Node s = stages(f.time && windows == 1 ? 10000 : 5000, 2000);
    training["stages"] = s;
    r.chosen.emplace_back("training.stages", flow(s));
  }
  YAML::Node weighting =
      given(training, "weighting") ? training["weighting"] : YAML::Node(YAML::NodeType::Map);
  // Grad-norm balancing (Wang et al. 2023) when there is more than one term to balance (a
  // periodic condition the network satisfies exactly is nothing to balance). A marched window
  // after the first always has two: its residual and the initial condition handed over from the
  // previous window as data, which a hard constraint holds in the first window only; balanced,
  // the solution's jumps at Allen-Cahn's window edges were 4-8x smaller (bench/README.md).
  if (f.loss_terms - satisfied > 1 || windows > 1) {
    fill(weighting, "training.weighting.", "kind", YAML::Node("gradnorm"));
    fill(weighting, "training.weighting.", "every", YAML::Node(1000));
  }
  // Causal training with epsilon 1, the chunk losses measured against their start where that is
  // above 1 (causal_scale initial): the paper's epsilon 1 assumes residuals of order 1, and
  // silences the later chunks of a residual that starts near 110 (advection at speed 30).
  if (f.time) {
    fill(weighting, "training.weighting.", "causal_epsilon", YAML::Node("1.0"));
    fill(weighting, "training.weighting.", "causal_scale", YAML::Node("initial"));
  }
  if (weighting.size() > 0) training["weighting"] = weighting;
  raw["training"] = training;
  return r;
}

}  // namespace jetpde::io
