// Bad input, one row per case: a change to a small valid config (or a whole file, or other
// arguments), the exit status `jetpde` must give and a fragment of its message. Each runs the real
// binary with `run --check` (everything a run checks before it touches the run folder, then a
// stop), so no row trains; none may leave the run folder behind.
//
// Adding a case is one line in kRows: {yaml, command, status, fragment}.
//   yaml     top-level keys that replace the base config's (`seed: -1`; `equations: ~` removes
//            one); "raw:" then a whole file instead of the base.
//   command  empty: `run {cfg} --check`; starting with "--": those arguments after it; else the
//            whole command line after `jetpde`. {cfg} is the config file, {dir} the scratch folder,
//            {trained} a run folder trained for one step (made once, for the rows that name it).
//   fragment what the output must hold; " ... " between parts that must come in this order.
//   status   1: a user error (the message starts "jetpde: error: "); 0: accepted; 2: a command
//            line error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"

namespace jetpde {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string yaml, command;
  int status;
  std::string fragment;
};

// The base: -u'' = pi^2 sin(pi x) on (0, 1), tiny network, two Adam steps.
const char* const kBase =
    "geometry: {type: interval, min: [0], max: [1]}\n"
    "equations:\n"
    "  - expression: u_xx + pi^2*sin(pi*x)\n"
    "conditions:\n"
    "  - {kind: dirichlet, points: 2}\n"
    "network: {hidden: [8]}\n"
    "sampling: {interior_points: 16}\n"
    "training:\n"
    "  stages:\n"
    "    - {optimizer: adam, steps: 2}\n"
    "output: {dir: {dir}/run, grid: [5], progress: none, checkpoint_every: 1}\n"
    "threads: 1\n";

// 20 levels of 10 aliases each: 10^20 shapes from 1.7 KB.
std::string billion_laughs() {
  std::string s =
      "geometry:\n  type: union\n  of:\n    - &g0 {type: interval, min: [0], max: [1]}\n";
  for (int i = 1; i < 20; ++i) {
    s += "    - &g" + std::to_string(i) + " {type: union, of: [";
    for (int k = 0; k < 10; ++k) s += (k ? ", *g" : "*g") + std::to_string(i - 1);
    s += "]}\n";
  }
  return s + "equations:\n  - expression: u_xx\n";
}

// `--set equations.0.expression=...` for the expression rows.
std::string expression(const std::string& text) {
  return "--set 'equations.0.expression=" + text + "'";
}
std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
const std::string kRect =
    "geometry: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
    "equations: [{expression: u_xx + u_yy + 1}]\n"
    "output: {dir: {dir}/run, progress: none, grid: [5]}\n";

const std::string kLaughs = "raw:" + billion_laughs();
const std::string kCheck = "the config is valid";
const std::string kDisk =
    "geometry: {type: disk, center: [0, 0], radius: 1}\n"
    "equations: [{expression: u_xx + u_yy + 1}]\n"
    "output: {dir: {dir}/run, progress: none, grid: [5]}\n";

const std::vector<Row> kRows = {
    // The base itself is valid; so are numbers written as constant expressions (issue 18).
    {"", "", 0, kCheck},
    {"geometry: {type: interval, min: [0], max: [pi/2]}", "", 0, kCheck},
    {"geometry: {type: interval, min: [0], max: [1], time: [0, pi/2]}", "", 0, kCheck},
    {"training: {stages: [{optimizer: adam, steps: 2, learning_rate: 0.01/pi}]}", "", 0, kCheck},
    {"", "--set network.fourier_sigma=2*pi", 0, kCheck},
    {"", "--set seed=+5", 0, kCheck},
    {"", "--set training.stages.0.steps=1e4 --set sampling.interior_points=2^4", 0, kCheck},
    {"", "--set training.stages.0.steps=1e10", 1,
     "training.stages[0].steps: '1e10' (= 10000000000) is out of range (at most 2147483647)"},
    {"", "--set training.stages.0.steps=2.5", 1, "'2.5' is not an integer"},
    {"constants: {c: 0.01/pi}", "", 0, kCheck},
    // Alias expansion is bounded (issue 11 item 3).
    {kLaughs, "", 1, "the config expands to more than 100000 values"},
    {"raw:geometry: &g {type: union, of: [*g, *g]}\nequations: [{expression: u_xx}]\n", "", 1,
     "nested more than 32 levels deep"},
    // threads (item 4).
    {"threads: 100000", "", 1, "threads: 100000 is more than 4 x the"},
    {"threads: -1", "", 1, "threads: '-1' is out of range (at least 0)"},
    {"", "--threads 100000", 1, "threads: 100000 is more than 4 x the"},
    {"", "--threads -1", 2, "--threads"},
    // Output settings found before training (item 5).
    {"", "--set output.grid=[1]", 1, "output.grid[0]: '1' is out of range (at least 2)"},
    {"", "--set output.grid=[5,5]", 1,
     "output.grid: give one count (every axis) or one per spatial axis (1), got 2"},
    {"", "--set output.quantities=[u_q]", 1,
     "output.quantities[0]: in 'u_q': column 3: 'q' in 'u_q' is not a coordinate"},
    {"", "--set output.quantities=[foo]", 1, "output.quantities[0]: in 'foo': column 1: unknown"},
    {"", "--set 'output.quantities=[u, u_x+(]'", 1, "output.quantities[1]: in 'u_x+('"},
    {"", "--set output.time_steps=10000000", 1,
     "output.time_steps: '10000000' is out of range (at most 10000)"},
    {"", "--set output.time_steps=0", 1, "output.time_steps: '0' is out of range (at least 1)"},
    {kDisk, "--set output.grid=[1000000]", 1,
     "output.grid: an output grid of 1e+12 points needs about"},
    {kDisk, "--set output.grid=[10000000]", 1,
     "output.grid: an output grid of 1e+14 points needs about"},
    {"name: \"run\xff\"", "", 1, "name: not valid UTF-8 text"},
    {"conditions: [{kind: dirichlet, name: \"b\xe9\"}]", "", 1,
     "conditions[0].name: not valid UTF-8 text"},
    {"", "--set sampling.interior_points=1000000000", 1,
     "sampling: training on 1e+09 points (interior and conditions)"},
    {"", "--set conditions.0.points=2000000000", 1, "sampling: training on 2e+09 points"},
    {"", "--set network.hidden=[100000,100000,100000]", 1,
     "network: a network of 2e+10 parameters (with the optimizer's state) needs about"},
    {"", "--set network.fourier_features=1000000000", 1, "needs about"},
    {"sampling: {interior_points: 16, resample_every: 10, adaptive: true, adaptive_candidates: "
     "2000000000}",
     "", 1, "sampling.adaptive_candidates: adaptive resampling over 2e+09 candidates needs about"},
    {"", "--set sampling.time_chunks=100", 1,
     "sampling.time_chunks: 100 chunks of 16 interior points"},
    {"", "--set training.time_windows=0", 1,
     "training.time_windows: '0' is out of range (at least 1)"},
    {"", "--set training.time_windows=2", 1,
     "training.time_windows: time marching needs a time coordinate (a domain with `time`); this "
     "problem has none"},
    {"geometry: {type: interval, min: [0], max: [1], time: [0, 1]}\n"
     "decomposition: {method: fbpinn, subdomains: [2]}\n"
     "training: {time_windows: 2, stages: [{optimizer: adam, steps: 2}]}",
     "", 1,
     ":8:26: training.time_windows: time marching with a decomposition is not supported yet"},
    // No internal error for user input (item 6).
    {"seed: -1", "", 1, "seed: '-1' is out of range (at least 0)"},
    {"seed: 99999999999999999999999", "", 1, "seed: '99999999999999999999999' is out of range"},
    {"seed: 1.5", "", 1, "seed: '1.5' is not an integer"},
    {"", "--set training.stages.0.steps=3000000000", 1,
     "training.stages[0].steps: '3000000000' is out of range (at most 2147483647)"},
    {"", "--set threads.x=1", 1, "--set threads.x=1: 'threads' is a value, not a mapping"},
    {"", "--set seed.x=1", 1, "seed: expected integer, got a mapping"},
    {"", "--set training.stages.x=1", 1, "'stages' is a list: give an index (0, 1, ...)"},
    {"", "--set training.stages.5.steps=1", 1, "5 is out of range (the list has 1 entries)"},
    {"", "--set =1", 1, "expected KEY=VALUE"},
    {"", "--set a..b=1", 1, "empty key in 'a..b'"},
    {"", "--set 'seed=[1'", 1, "the value is not valid YAML"},
    {"equations: ~", "", 1, "equations: missing (at least one equation)"},
    {"equations: []", "", 1, "equations: missing (at least one equation)"},
    {"raw:geometry: {type: interval, min: [0], max: [1]}\n? [a, b]\n: 1\n", "", 1,
     ":2:3: config: a key must be a name, got a list"},
    {"constants: {[a]: 1}", "", 1, "constants: a key must be a name, got a list"},
    {"network: {[hidden]: [8]}", "", 1, "network: a key must be a name, got a list"},
    // Values that were silently changed are errors (item 7).
    {"constants: {c: 1/0}", "", 1,
     "constants.c: '1/0' evaluates to inf: a constant must be finite"},
    {"constants: {c: log(0)}", "", 1, "constants.c: 'log(0)' evaluates to -inf"},
    {"constants: {c: sqrt(0-1)}", "", 1, "constants.c: 'sqrt(0-1)' evaluates to"},
    {"parameters: {k: 1/0}", "", 1, "parameters.k: '1/0' evaluates to inf"},
    {"conditions: [{kind: data, data: {file: {dir}/uheader.csv}}]", "", 1,
     "conditions[0].data: '{dir}/uheader.csv' holds no data: no rows after the header line"},
    {"reference: {data: {file: {dir}/uheader.csv}}", "", 1,
     "reference.data: '{dir}/uheader.csv' holds no data"},
    {"conditions: [{kind: data, data: {file: d.csv, samples: -1}}]", "", 1,
     "conditions[0].data.samples: '-1' is out of range (at least 0)"},
    {"conditions: [{kind: data, data: {file: d.csv, noise: -0.5}}]", "", 1,
     "conditions[0].data.noise: '-0.5' is out of range (at least 0)"},
    {"", "--set sampling.resample_every=-1", 1,
     "sampling.resample_every: '-1' is out of range (at least 0)"},
    {"", "--set output.checkpoint_every=0", 1,
     "output.checkpoint_every: '0' is out of range (at least 1)"},
    {"", "--set output.checkpoint_every=-5", 1, "output.checkpoint_every: '-5' is out of range"},
    {"", "--set output.history_every=0", 1, "output.history_every: '0' is out of range"},
    {"", "--set output.progress_every=0", 1, "output.progress_every: '0' is out of range"},
    {"geometry: {type: union, of: [{type: interval, min: [0], max: [1], time: [0, 1]}, {type: "
     "interval, min: [1], max: [2]}]}",
     "", 1,
     "geometry.of[0].time: a time interval belongs on the outermost geometry, not on a shape it "
     "combines"},
    {"geometry: {type: interval, min: [0], max: [1/0]}", "", 1,
     "geometry.max[0]: '1/0' is not a finite number (it evaluates to inf)"},
    // Messages keep their place (item 8).
    {"conditions: [{kind: dirichlet, value: sin(pi*q)}]", "", 1,
     ":4:39: conditions[0].value: in 'sin(pi*q)': column 8: unknown name 'q'"},
    {"conditions: [{kind: dirichlet, field: w}]", "", 1,
     "conditions[0].field: 'w' is not a field (fields: u)"},
    {"conditions: [{kind: residual, expression: u_x + }]", "", 1,
     "conditions[0].expression: in 'u_x +'"},
    {"conditions: [{kind: periodic, coordinate: y}]", "", 1,
     "conditions[0].coordinate: 'y' is not a coordinate (coordinates: x)"},
    {"hard_constraints: [{field: u, value: u_q}]", "", 1, "hard_constraints[0].value: in 'u_q'"},
    {"hard_constraints: [{field: w}]", "", 1, "hard_constraints[0].field: 'w' is not a field"},
    {"", "--set equations.0.weight=-1", 1,
     "equations[0].weight: '-1' is out of range (at least 0)"},
    {"", "--set conditions.0.weight=-1", 1, "conditions[0].weight: '-1' is out of range"},
    {"", "--set network.hidden=[0]", 1, "network.hidden[0]: '0' is out of range (at least 1)"},
    {"", "--set network.hidden=[8,-3]", 1, "network.hidden[1]: '-3' is out of range"},
    {"", "run {dir}", 1, "is a folder, not a config file (give a .yaml file)"},
    {"", "run {dir}/nothere.yaml", 1, "cannot read the config file"},
    {"", "eval {trained} --points {dir}/header.csv", 1,
     "--points: '{dir}/header.csv' holds no data"},
    {"", "eval {trained} --points {dir}", 1, "--points: '{dir}' is a folder; give a data file"},
    {"", "eval {trained} --points {dir}/points.csv --output {dir}", 1,
     "--output: '{dir}' is a folder; give a file name ending in .csv, .h5 or .vtu"},
    {"", "eval {trained} --points {dir}/points.csv --output {dir}/no/such/u.csv", 1,
     "no folder '{dir}/no/such'"},
    {"", "eval {dir}/nothere --points {dir}/points.csv", 1, "is not a run folder"},
    {"", "eval {trained} --points {dir}/points.csv --fields w", 1,
     "--fields: in 'w': column 1: unknown name 'w'"},
    {"", "export {trained} --grid 1", 1, "output.grid[0]: '1' is out of range (at least 2)"},
    {"", "export {trained} --grid 5,5", 1, "output.grid: give one count (every axis) or one per"},
    {"", "export {trained} --quantities u_q", 1, "output.quantities[0]: in 'u_q'"},
    {"", "export {trained} --time-steps 100000", 1,
     "output.time_steps: '100000' is out of range (at most 10000)"},
    // A flow mapping split at a comma (issue 18).
    {"conditions: [{kind: dirichlet, on: left, right}]", "", 1,
     "conditions[0].right: unknown key (known here: kind, ... ); in a {flow mapping} a comma ends "
     "the value: quote a value that holds one"},
    {"", "--set training.stages.0.learning_rate=1/x", 1,
     "training.stages[0].learning_rate: '1/x' is not a number or a constant expression (in '1/x': "
     "column 3: unknown name 'x'"},
    {"", "--set training.stages.0.learning_rate=2*", 1,
     "'2*' is not a number or a constant expression"},
    {"", "--set training.stages.0.learning_rate=fast", 1, "'fast' is not a number"},
    {"", "--set training.stages.0.learning_rate=true", 1, "'true' is not a number"},
    {"", "--set training.stages.0.learning_rate=.inf", 1, "'.inf' is not a number"},
    // Ranges of the schema, one a key.
    {"", "--set training.stages.0.learning_rate=0", 1,
     "learning_rate: '0' is out of range (above 0)"},
    {"", "--set training.stages.0.decay_steps=0", 1, "decay_steps: '0' is out of range"},
    {"", "--set training.stages.0.decay_rate=-1", 1, "decay_rate: '-1' is out of range (above 0)"},
    {"", "--set training.stages.0.warmup_steps=-1", 1, "warmup_steps: '-1' is out of range"},
    {"", "--set training.stages.0.weight_decay=-1", 1, "weight_decay: '-1' is out of range"},
    {"", "--set training.stages.0.min_learning_rate=-1", 1, "min_learning_rate: '-1' is out of"},
    {"", "--set training.stages.0.history=0", 1, "history: '0' is out of range (at least 1)"},
    {"", "--set training.stages.0.max_evaluations=-1", 1, "max_evaluations: '-1' is out of range"},
    {"", "--set training.stages.0.gradient_tolerance=-1", 1, "gradient_tolerance: '-1' is out of"},
    {"", "--set training.weighting.every=0", 1, "training.weighting.every: '0' is out of range"},
    {"", "--set training.weighting.momentum=1.5", 1,
     "training.weighting.momentum: '1.5' is out of range (below 1)"},
    {"", "--set training.weighting.momentum=1", 1,
     "training.weighting.momentum: '1' is out of range (below 1)"},
    {"", "--set training.weighting.causal_epsilon=-1", 1, "causal_epsilon: '-1' is out of range"},
    {"", "--set network.fourier_sigma=0", 1,
     "network.fourier_sigma: '0' is out of range (above 0)"},
    {"", "--set network.fourier_features=-1", 1, "network.fourier_features: '-1' is out of range"},
    {"network: {hidden: [8], periodic: [{coordinate: x, period: 0}]}", "", 1,
     "network.periodic[0].period: '0' is out of range (above 0)"},
    {"network: {hidden: [8], periodic: [{coordinate: x, period: 1, harmonics: 0}]}", "", 1,
     "network.periodic[0].harmonics: '0' is out of range (at least 1)"},
    {"geometry: {type: disk, center: [0, 0], radius: 0}", "", 1,
     "geometry.radius: '0' is out of range (above 0)"},
    {"", "--set sampling.interior_points=0", 1, "sampling.interior_points: '0' is out of range"},
    {"", "--set sampling.time_chunks=0", 1, "sampling.time_chunks: '0' is out of range"},
    {"", "--set sampling.adaptive_candidates=-1", 1, "adaptive_candidates: '-1' is out of range"},
    {"", "--set conditions.0.derivatives=9", 1,
     "conditions[0].derivatives: '9' is out of range (at most 8)"},
    {"", "--set conditions.0.points=0", 1,
     "conditions[0].points: '0' is out of range (at least 1)"},
    {"", "--set reference.every=-1", 1, "reference.every: '-1' is out of range (at least 0)"},
    // The expression language: deep or long input, derivative orders and symbolic blow-up are
    // user errors (issue 11 items 1, 2); tests/equations/robustness_test.cpp has the rest.
    {"", expression("u_xx + " + std::string(10000, '(') + "x" + std::string(10000, ')')), 1,
     "the expression is nested more than 256 levels deep"},
    {"", expression("u_xx + " + std::string(100000, '-') + "x"), 1, "nested more than 256 levels"},
    {"", expression("u_xx + " + repeated("x^", 50000) + "x"), 1, "nested more than 256 levels"},
    {"", expression("d(d(u, x, 64), x, 64)"), 1,
     "in 'd(d(u, x, 64), x, 64)': column 1: d() asks for a derivative of total order 128 "
     "(multi-index 128 over x); the highest order is 64"},
    {"", expression("d(u, x, 65)"), 1, "the order of a derivative is an integer from 1 to 64"},
    {"", expression("d(u^6, x, 64)"), 1, "takes more than 100000 distinct terms"},
    {"equations: [{expression: \"u_xx\\0 + 1\"}]", "", 1,
     "column 5: unexpected NUL byte (0x00) in the expression"},
    // New functions (item 10): valid uses and argument errors.
    {"", expression("u_xx - where(x < 0.5 and not x < 0, sinh(x) + cosh(x), erf(x))"), 0, kCheck},
    {"", expression("u_xx - atan2(x, 1) - min(x, u) + max(asin(x/2), acos(x/2))"), 0, kCheck},
    {"", expression("u_xx - atan2(x)"), 1, "column 8: atan2 takes 2 arguments, found 1"},
    {"", expression("u_xx - (0 < x < 1)"), 1, "column 15: comparisons do not chain"},
    // Data files (item 11; the readers' own tests are tests/io/data_files_test.cpp).
    {"reference: {data: {file: {dir}/u.dat, columns: [x, u]}}", "", 0, kCheck},
    {"reference: {data: {file: {dir}/nan.dat, columns: [x, u]}}", "", 1,
     "nan.dat:3: column 'u': 'nan' is not a finite number"},
    {"reference: {data: {file: {dir}/u.dat, columns: [x]}}", "", 1,
     "u.dat:2: 2 fields, `columns` names 1 (x)"},
    {"reference: {data: {file: {dir}/u.xyz}}", "", 1, "no such file"},
    // STL geometry and points as condition locations (item 14; issue 18 item 4).
    {"geometry: {type: stl, file: {dir}/nothere.stl}", "", 1,
     "geometry.file: stl '{dir}/nothere.stl': no such file"},
    {"geometry: {type: stl, file: {dir}/empty.stl}", "", 1, "the file holds no triangles"},
    {"conditions: [{kind: dirichlet, at: [[2]]}]", "", 1,
     "conditions[0].at: point 1 (2) lies outside the domain's bounds: x must be in [0, 1]"},
    {"conditions: [{kind: dirichlet, at: [[0.5, 1]]}]", "", 1,
     "conditions[0].at: the points `at` have 2 coordinates, the domain has 1 (x)"},
    {"raw:" + kRect + "conditions: [{kind: dirichlet, on: \"x == 0 and y == 0\"}]\n", "", 1,
     ":4:14: conditions[0]: boundary piece 'x == 0 and y == 0' of rectangle [0, 1] x [0, 1] is "
     "empty ... give the points as `at: [[x, y], ...]` instead of `on`"},
    {"raw:" + kRect + "conditions: [{kind: dirichlet, at: [[0, 0]]}]\n", "", 0, kCheck},
    // Training stops and metrics (items 12, 15; issue 18 item 3).
    {"", "--set training.target_error=0.01", 1,
     "training.target_error: needs a reference to measure the error against"},
    {"", "--set training.max_time=-1", 1, "training.max_time: '-1' is out of range (at least 0)"},
    {"", "--set 'reference.metrics={s: sqrt(w)}'", 1,
     "reference.metrics.s: in 'sqrt(w)': column 6: unknown name 'w'"},
    {"", "--set reference.points=-1", 1, "reference.points: '-1' is out of range (at least 0)"},
    // What was checked before stays checked.
    {"sede: 1", "", 1, "sede: unknown key (known here: name, seed,"},
    {"seed: one", "", 1, "seed: 'one' is not an integer"},
    {"raw:geometry: [1, 2\n", "", 1, ":2:1: not valid YAML"},
    {"raw:", "", 1, "the config is empty"},
    {"raw:- a\n- b\n", "", 1, "expected a mapping of keys at the top, got a list"},
    {"training: {stages: [{optimizer: adma}]}", "", 1, "'adma' is not one of adam, adamw, lbfgs"},
    {"reference: {expressions: {w: x}}", "", 1, "reference.expressions.w: 'w' is not a field"},
    {"conditions: [{kind: dirichlet, on: nowhere}]", "", 1,
     ":4:36: conditions[0].on: interval [0, 1] has no boundary piece 'nowhere'"},
    {"conditions: [{kind: dirichlet, on: \"x == \"}]", "", 1, "conditions[0].on: "},
    {"conditions: [{kind: initial_value}]", "", 1,
     "conditions[0].kind: an initial condition needs a time coordinate (give geometry.time)"},
};

struct Output {
  int status = -1;
  std::string text;
};

Output jetpde(const std::string& args) {
  const std::string command =
      "OMP_NUM_THREADS=1 " + std::string(JETPDE_BINARY) + " " + args + " 2>&1 </dev/null";
  Output out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) {  // e.g. an argument longer than the kernel's 128 KiB limit for one
    ADD_FAILURE() << "cannot start: " << command.substr(0, 200);
    return out;
  }
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.text.append(buf, n);
  const int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The top-level entries of a YAML text, in order: (key, the lines of its entry).
std::vector<std::pair<std::string, std::string>> entries(const std::string& yaml) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ' && line[0] != '-')
      out.push_back({line.substr(0, line.find(':')), ""});
    out.back().second += line + "\n";
  }
  return out;
}

// The base with `yaml`'s top-level keys replacing (or following) its own.
std::string mutated(const std::string& yaml) {
  if (yaml.rfind("raw:", 0) == 0) return yaml.substr(4);
  auto base = entries(kBase);
  for (const auto& [key, text] : entries(yaml)) {
    bool found = false;
    for (auto& [k, t] : base)
      if (k == key) {
        t = text;
        found = true;
      }
    if (!found) base.push_back({key, text});
  }
  std::string out;
  for (const auto& e : base) out += e.second;
  return out;
}

class BadInput : public jetpde::testing::ScratchDirTest {};

TEST_F(BadInput, EveryRowGivesItsStatusAndMessageAndWritesNothing) {
  ASSERT_GE(kRows.size(), 80u);
  const std::string dir = dir_.string();
  std::ofstream(dir_ / "header.csv") << "x\n";
  std::ofstream(dir_ / "points.csv") << "x\n0.5\n";
  std::ofstream(dir_ / "uheader.csv") << "x,u\n";
  std::ofstream(dir_ / "u.dat") << "% x u\n0 0\n0.5 1\n";
  std::ofstream(dir_ / "nan.dat") << "# x u\n0 0\n0.5 nan\n";
  std::ofstream(dir_ / "empty.stl") << "solid empty\nendsolid empty\n";
  std::string trained;
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const Row& row = kRows[i];
    SCOPED_TRACE("row " + std::to_string(i) + ": yaml '" + row.yaml + "', command '" + row.command +
                 "'");
    const std::string cfg = dir + "/row" + std::to_string(i) + ".yaml";
    std::ofstream(cfg) << replace_all(mutated(row.yaml), "{dir}", dir);
    if (row.command.find("{trained}") != std::string::npos && trained.empty()) {
      trained = dir + "/trained";
      const Output t = jetpde("run " + cfg + " --max-steps 1 --output " + trained);
      ASSERT_EQ(t.status, 0) << t.text;
    }
    std::string command = row.command.empty()               ? "run {cfg} --check"
                          : row.command.rfind("--", 0) == 0 ? "run {cfg} --check " + row.command
                                                            : row.command;
    command = replace_all(replace_all(replace_all(command, "{cfg}", cfg), "{dir}", dir),
                          "{trained}", trained);
    const Output r = jetpde(command);
    EXPECT_EQ(r.status, row.status) << r.text;
    // The fragment's parts (split at " ... "), in this order.
    const std::string fragment = replace_all(row.fragment, "{dir}", dir);
    std::size_t at = 0;
    for (std::size_t from = 0; at != std::string::npos && from <= fragment.size();) {
      const std::size_t end = std::min(fragment.find(" ... ", from), fragment.size());
      at = r.text.find(fragment.substr(from, end - from), at);
      from = end + 5;
    }
    EXPECT_NE(at, std::string::npos) << "expected: " << fragment << "\n" << r.text;
    if (row.status == 1) {
      EXPECT_EQ(r.text.rfind("jetpde: error: ", 0), 0u) << r.text;  // no internal error
    }
    EXPECT_FALSE(fs::exists(dir_ / "run")) << "a run folder was written";
  }
}

// A corrupt line in history.csv on --resume: the file and line, not "internal error: stol".
TEST_F(BadInput, ACorruptHistoryLineOnResumeNamesTheLine) {
  const std::string out = (dir_ / "run").string();
  const std::string cfg = (dir_ / "p.yaml").string();
  std::ofstream(cfg) << replace_all(kBase, "{dir}", dir_.string());
  Output r = jetpde("run " + cfg + " --max-steps 1");
  ASSERT_EQ(r.status, 0) << r.text;
  std::ifstream in(out + "/history.csv");
  std::string header;
  std::getline(in, header);
  in.close();
  std::ofstream(out + "/history.csv") << header << "\n0,adam,0,1,1\nnot-a-step,adam\n";
  r = jetpde("run " + cfg + " --resume");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_NE(r.text.find("jetpde: error: " + out +
                        "/history.csv:3: --resume: not a row of history.csv (it starts with "
                        "'not-a-step', not a step number)"),
            std::string::npos)
      << r.text;
}

}  // namespace
}  // namespace jetpde
