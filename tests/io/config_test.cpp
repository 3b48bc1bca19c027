// The YAML config: schema checks with key paths and lines, defaults, --set overrides, conversion
// into a ProblemSpec, data sources, and docs/config.md against the schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "geometry/stl.h"
#include "io/config.h"
#include "io/config_schema.h"
#include "nn/soap.h"
#include "tests/support/user_error.h"

namespace jetpde::io {
namespace {

using jetpde::testing::expect_user_error;
namespace fs = std::filesystem;

const std::string kBurgers = R"(name: b
geometry:
  type: interval
  min: [-1]
  max: [1]
  time: [0, 1]
constants:
  nu: 0.01/pi
equations:
  - expression: u_t + u*u_x - nu*u_xx
conditions:
  - kind: initial_value
    value: -sin(pi*x)
  - kind: dirichlet
    on: spatial
training:
  stages:
    - optimizer: adam
      steps: 10
)";

RunConfig from(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return run_config_from_text(text, "test.yaml", "", overrides);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Config, DefaultsFillEveryKey) {
  const RunConfig c = from(kBurgers);
  EXPECT_EQ(c.name, "b");
  EXPECT_EQ(c.resolved["precision"].as<std::string>(), "fp32");
  EXPECT_EQ(c.resolved["network"]["hidden"].size(), 4u);
  EXPECT_EQ(c.resolved["sampling"]["interior_points"].as<int>(), 2048);
  EXPECT_EQ(c.resolved["training"]["stages"][0]["learning_rate"].as<double>(), 1e-3);
  EXPECT_EQ(c.resolved["output"]["checkpoint_every"].as<int>(), 1000);
  EXPECT_FALSE(c.resolved["reference"]["data"]);  // an optional object stays absent
  EXPECT_EQ(c.output.dir, "runs/b");
  ASSERT_EQ(c.spec.math.conditions.size(), 2u);
  EXPECT_EQ(c.spec.math.conditions[0].value, "-sin(pi*x)");
  EXPECT_EQ(c.spec.math.context.coordinate_names(), (std::vector<std::string>{"x", "t"}));
  EXPECT_NEAR(c.spec.math.context.find("nu")->value, 0.01 / 3.141592653589793, 1e-17);
  EXPECT_EQ(c.stages.size(), 1u);
  EXPECT_EQ(c.stages[0].steps, 10);
  ASSERT_TRUE(c.spec.pinn.network.normalization.has_value());
  EXPECT_EQ(c.spec.pinn.network.normalization->lower, (std::vector<double>{-1, 0}));
}

TEST(Config, OverridesWithSet) {
  const RunConfig c = from(kBurgers, {"training.stages.0.steps=77", "network.hidden=[8, 8]",
                                      "sampling.method=halton", "output.dir=/tmp/x"});
  EXPECT_EQ(c.stages[0].steps, 77);
  EXPECT_EQ(c.spec.pinn.network.hidden, (std::vector<int>{8, 8}));
  EXPECT_EQ(c.output.dir, "/tmp/x");
  expect_user_error([] { from(kBurgers, {"training.stages.3.steps=1"}); },
                    "--set training.stages.3.steps=1: 3 is out of range (the list has 1 entries)");
  expect_user_error([] { from(kBurgers, {"seed"}); },
                    "--set seed: expected KEY=VALUE (e.g. training.stages.0.steps=100)");
  // An override is checked like the file, without a line.
  expect_user_error([] { from(kBurgers, {"seed=abc"}); },
                    "test.yaml: seed: 'abc' is not an integer");
  expect_user_error(
      [] { from(kBurgers, {"netwrok.hidden=[1]"}); },
      "test.yaml: netwrok: unknown key (known here: name, seed, precision, device, "
      "require_device, threads, memory_budget, geometry, fields, constants, parameters, "
      "definitions, equations, conditions, hard_constraints, network, decomposition, sampling, "
      "parallel, training, reference, solver, output)");
}

// memory_budget: a size with its unit, a share of the memory free, or auto (the problem's default
// share); anything else names the key, its line and what it accepts.
TEST(Config, AMemoryBudget) {
  EXPECT_EQ(from(kBurgers).spec.pinn.memory.budget, 0);
  EXPECT_EQ(from(kBurgers).spec.pinn.memory.share, 0.5);
  EXPECT_EQ(from(kBurgers, {"memory_budget=2 GB"}).spec.pinn.memory.budget, 2000000000);
  EXPECT_EQ(from(kBurgers, {"memory_budget=512MiB"}).spec.pinn.memory.budget, 536870912);
  EXPECT_EQ(from(kBurgers, {"memory_budget=1e9"}).spec.pinn.memory.budget, 1000000000);
  // The units jetpde prints sizes in ("1.5 kB", "3.91 MB") are read back.
  EXPECT_EQ(from(kBurgers, {"memory_budget=1500 kB"}).spec.pinn.memory.budget, 1500000);
  const RunConfig share = from(kBurgers, {"memory_budget=25%"});
  EXPECT_EQ(share.spec.pinn.memory.budget, 0);
  EXPECT_EQ(share.spec.pinn.memory.share, 0.25);
  const std::string accepts =
      " (a size such as 2 GB, 512 MiB or 1e9 bytes, a share of the memory free such as 25%, or "
      "auto)";
  expect_user_error([] { from("memory_budget: 2 GiBs\n" + kBurgers); },
                    "test.yaml:1:16: memory_budget: '2 GiBs': unknown unit 'GiBs'" + accepts);
  expect_user_error([&] { from("memory_budget: lots\n" + kBurgers); },
                    "test.yaml:1:16: memory_budget: 'lots': not a number" + accepts);
  expect_user_error([&] { from("memory_budget: 150%\n" + kBurgers); },
                    "test.yaml:1:16: memory_budget: '150%': more than 100%" + accepts);
  expect_user_error([&] { from("memory_budget: -1 GB\n" + kBurgers); },
                    "test.yaml:1:16: memory_budget: '-1 GB': not a positive amount" + accepts);
  expect_user_error([&] { from("memory_budget: 100 KB\n" + kBurgers); },
                    "test.yaml:1:16: memory_budget: '100 KB': less than 1 MB" + accepts);
}

TEST(Config, MalformedYamlNamesTheLine) {
  expect_user_error([] { from("geometry:\n  type: interval\n  min: [-1\n"); },
                    "test.yaml:4:1: not valid YAML: end of sequence flow not found");
}

TEST(Config, UnknownKeyNamesThePathAndLine) {
  expect_user_error(
      [] {
        from(replaced(kBurgers, "    - optimizer: adam\n",
                      "    - optimizer: adam\n      lr: 0.1\n"));
      },
      "test.yaml:19:7: training.stages[0].lr: unknown key (known here: name, "
      "optimizer, steps, learning_rate, schedule, decay_rate, decay_steps, "
      "min_learning_rate, warmup_steps, weight_decay, history, gradient_tolerance, "
      "function_tolerance, max_evaluations, precondition_frequency, max_precondition_dim, "
      "precision, time_share, resample_every, average, average_last, hand_on)");
}

// RAD needs something that draws: sampling.resample_every, or a stage's own resample_every (an
// L-BFGS stage that draws by residual while Adam keeps its points).
TEST(Config, AdaptiveSamplingNeedsADraw) {
  const std::string adaptive =
      replaced(kBurgers, "training:\n", "sampling:\n  adaptive: true\ntraining:\n");
  expect_user_error([&] { from(adaptive); },
                    "test.yaml:17:13: sampling.adaptive: needs sampling.resample_every > 0 or a "
                    "training.stages[].resample_every");
  const RunConfig c = from(replaced(adaptive, "      steps: 10\n",
                                    "      steps: 10\n    - optimizer: lbfgs\n      steps: 10\n"
                                    "      resample_every: 5\n"));
  EXPECT_TRUE(c.adaptive);
  EXPECT_EQ(c.resample_every, 0);
  ASSERT_EQ(c.stages.size(), 2u);
  EXPECT_EQ(c.stages[1].resample_every, 5);
}

TEST(Config, WrongTypesAndValues) {
  expect_user_error([] { from(replaced(kBurgers, "steps: 10", "steps: ten")); },
                    "test.yaml:19:14: training.stages[0].steps: 'ten' is not an integer");
  expect_user_error([] { from(replaced(kBurgers, "optimizer: adam", "optimizer: adma")); },
                    "test.yaml:18:18: training.stages[0].optimizer: 'adma' is not one of adam, "
                    "adamw, lbfgs, soap");
  expect_user_error([] { from(replaced(kBurgers, "min: [-1]", "min: -1")); },
                    "test.yaml:4:8: geometry.min: expected a list of numbers, got '-1'");
  expect_user_error([] { from(replaced(kBurgers, "min: [-1]", "min: [a]")); },
                    "test.yaml:4:9: geometry.min[0]: 'a' is not a number");
  expect_user_error([] { from(replaced(kBurgers, "type: interval", "type: rectangle")); },
                    "test.yaml:4:8: geometry.min: a rectangle needs 2 values, got 1");
  expect_user_error([] { from(replaced(kBurgers, "  type: interval\n", "")); },
                    "test.yaml:3:3: geometry.type: missing (required)");
  expect_user_error([] { from(replaced(kBurgers, "steps: 10", "steps: 0")); },
                    "test.yaml:19:14: training.stages[0].steps: '0' is out of range (at least 1)");
}

// A SOAP stage: its keys parse into nn::SoapOptions, a bad value names its key path.
TEST(Config, ASoapStage) {
  const RunConfig c = from(replaced(kBurgers, "    - optimizer: adam\n      steps: 10\n",
                                    "    - {optimizer: soap, steps: 100, learning_rate: 3e-3}\n"));
  ASSERT_EQ(c.stages.size(), 1u);
  EXPECT_EQ(c.stages[0].optimizer, "soap");
  EXPECT_EQ(c.stages[0].steps, 100);
  const nn::SoapOptions o = c.stages[0].options_as<nn::SoapOptions>();
  EXPECT_EQ(o.schedule.lr, 3e-3);
  EXPECT_EQ(o.precondition_frequency, 10);
  expect_user_error(
      [] {
        from(replaced(kBurgers, "    - optimizer: adam\n      steps: 10\n",
                      "    - {optimizer: soap, steps: 100, precondition_frequency: 0}\n"));
      },
      "test.yaml:18:61: training.stages[0].precondition_frequency: '0' is out of range (at "
      "least 1)");
}

// A stage's precision: absent, the run's (an empty Stage::precision); given, that policy; a name
// that is not one is refused with the key's path and place.
TEST(Config, AStagePrecision) {
  const RunConfig c = from(replaced(kBurgers, "    - optimizer: adam\n      steps: 10\n",
                                    "    - {optimizer: adam, steps: 10}\n"
                                    "    - {optimizer: lbfgs, steps: 5, precision: fp64}\n"));
  ASSERT_EQ(c.stages.size(), 2u);
  EXPECT_FALSE(c.stages[0].precision.has_value());
  EXPECT_FALSE(c.resolved["training"]["stages"][0]["precision"]);  // absent stays absent
  ASSERT_TRUE(c.stages[1].precision.has_value());
  EXPECT_EQ(*c.stages[1].precision, compiler::PrecisionPolicy::fp64);
  EXPECT_EQ(c.spec.compile.pipeline.precision, compiler::PrecisionPolicy::fp32);  // the run's
  EXPECT_EQ(*from(kBurgers, {"training.stages.0.precision=bf16"}).stages[0].precision,
            compiler::PrecisionPolicy::bf16);
  expect_user_error(
      [] {
        from(replaced(kBurgers, "    - optimizer: adam\n      steps: 10\n",
                      "    - {optimizer: lbfgs, steps: 5, precision: f64}\n"));
      },
      "test.yaml:18:47: training.stages[0].precision: 'f64' is not one of fp64, fp32, bf16, "
      "bf16_wgrad, fp16, auto");
}

// Numbers written as constant expressions are evaluated once; the resolved config holds the
// value, with the node's place kept for later errors.
TEST(Config, NumbersMayBeConstantExpressions) {
  const RunConfig c = from(replaced(kBurgers, "time: [0, 1]", "time: [0, pi/2]"),
                           {"training.stages.0.learning_rate=0.01/pi"});
  EXPECT_DOUBLE_EQ(c.spec.math.domain->bounds().hi.back(), M_PI / 2);
  EXPECT_DOUBLE_EQ(c.resolved["geometry"]["time"][1].as<double>(), M_PI / 2);
  EXPECT_DOUBLE_EQ(c.stages[0].options_as<nn::AdamOptions>().schedule.lr, 0.01 / M_PI);
  EXPECT_EQ(c.resolved["geometry"]["time"][1].Mark().line, 5);
  expect_user_error([] { from(replaced(kBurgers, "time: [0, 1]", "time: [0, 1/0]")); },
                    "test.yaml:6:13: geometry.time[1]: '1/0' is not a finite number (it "
                    "evaluates to inf)");
  double v = 0;
  std::string why;
  EXPECT_TRUE(number_value("2*pi", &v, &why));
  EXPECT_DOUBLE_EQ(v, 2 * M_PI);
  EXPECT_FALSE(number_value("x", &v, &why));
  EXPECT_EQ(why, "is not a number");
}

// Ranges come from the schema: checked with the key, and listed in docs/config.md's table.
TEST(Config, RangesAreDeclaredOnceAndChecked) {
  expect_user_error([] { from(kBurgers, {"training.stages.0.steps=3000000000"}); },
                    "test.yaml: training.stages[0].steps: '3000000000' is out of range (at most "
                    "2147483647)");
  expect_user_error([] { from(kBurgers, {"seed=-1"}); },
                    "test.yaml: seed: '-1' is out of range (at least 0)");
  expect_user_error([] { from(kBurgers, {"training.weighting.momentum=2"}); },
                    "test.yaml: training.weighting.momentum: '2' is out of range (below 1)");
  const std::string table = schema_markdown();
  EXPECT_NE(table.find("| `training.stages[].steps` | integer, at least 1 | `1000` |"),
            std::string::npos);
  EXPECT_NE(table.find("| `output.time_steps` | integer, from 1 to 10000 | `11` |"),
            std::string::npos);
  EXPECT_NE(table.find("| `training.stages[].learning_rate` | number, above 0 |"),
            std::string::npos);
}

// YAML aliases that expand a small file without bound (or into a cycle) are refused up front.
TEST(Config, AliasExpansionIsBounded) {
  std::string laughs =
      "geometry:\n  type: union\n  of:\n    - &g0 {type: interval, min: [0], "
      "max: [1]}\n";
  for (int i = 1; i < 20; ++i) {
    laughs += "    - &g" + std::to_string(i) + " {type: union, of: [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", *g" : "*g") + std::to_string(i - 1);
    laughs += "]}\n";
  }
  try {
    from(laughs + "equations: [{expression: u_xx}]\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the config expands to more than 100000 values"),
              std::string::npos)
        << e.what();
  }
  try {
    from("geometry: &g {type: union, of: [*g, *g]}\nequations: [{expression: u_xx}]\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 32 levels deep"), std::string::npos)
        << e.what();
  }
}

TEST(Config, ExpressionErrorsKeepTheirColumn) {
  try {
    from(replaced(kBurgers, "u_t + u*u_x - nu*u_xx", "u_t + u*w_x - nu*u_xx"));
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("test.yaml:10:17: equations[0].expression: in 'u_t + u*w_x - nu*u_xx': "
                      "column 9: unknown field 'w'",
                      0),
              0u)
        << m;
    EXPECT_NE(m.find("          ^"), std::string::npos) << m;  // the caret under the column
  }
}

TEST(Config, AMissingReferenceFileIsNamed) {
  expect_user_error([] { from(kBurgers + "reference:\n  data:\n    file: /no/such/file.h5\n"); },
                    "test.yaml:22:11: reference.data.file: no such file: /no/such/file.h5");
}

TEST(Config, EveryGeometryAndLibraryEquations) {
  const std::string ldc = R"(geometry:
  type: difference
  of:
    - {type: rectangle, min: [0, 0], max: [1, 1]}
    - {type: disk, center: [0.5, 0.5], radius: 0.1}
equations:
  - library: navier_stokes
    parameters: {Re: 100, steady: 1}
)";
  const RunConfig c = from(ldc);
  EXPECT_EQ(c.spec.math.context.field_names(), (std::vector<std::string>{"u", "v", "p"}));
  EXPECT_EQ(c.spec.math.equations.size(), 3u);
  EXPECT_FALSE(c.spec.math.domain->is_box());
  EXPECT_EQ(c.spec.math.context.find("Re")->value, 100.0);
  // A library equation on a domain whose coordinates do not match.
  try {
    from(replaced(ldc, "steady: 1", "steady: 0"));
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "test.yaml:7:14: equations[0].library: the equation's coordinates are (x, y, t) "
              "but the geometry's are (x, y): set geometry.coordinates / geometry.time, or the "
              "library's dim/steady");
  }
  expect_user_error(
      [] {
        from(
            "geometry: {type: union, of: [{type: disk, center: [0, 0], radius: 1}]}\nequations: "
            "[{expression: u}]\n");
      },
      "test.yaml:1:18: geometry.of: a union needs at least two shapes in `of`");
  expect_user_error(
      [] {
        from(
            "geometry: {type: interval, min: [0], max: [1]}\nequations: [{expression: u, library: "
            "heat}]\n");
      },
      "test.yaml:2:38: equations[0]: give exactly one of `expression` and `library`");
}

TEST(Config, DataSourcesFromCsv) {
  const fs::path dir = fs::temp_directory_path() / ("jetpde-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream csv(dir / "d.csv");
    csv << "x,t,u\n0,0,1\n0.5,0.5,2\n1,1,3\n";
  }
  const RunConfig c = run_config_from_text(
      kBurgers + "  weighting: {kind: ntk}\nreference:\n  data:\n    file: d.csv\n", "test.yaml",
      dir.string());
  ASSERT_TRUE(c.reference.data.has_value());
  EXPECT_EQ(c.reference.data->points.rows(), 3);
  EXPECT_EQ(c.reference.data->values(2, 0), 3.0);
  EXPECT_EQ(c.weighting.kind, solvers::Weighting::Kind::ntk);
  // The resolved config holds the absolute path, so that the run folder's copy finds the file.
  EXPECT_EQ(c.resolved["reference"]["data"]["file"].as<std::string>(), (dir / "d.csv").string());
  expect_user_error(
      [&] {
        run_config_from_text(
            kBurgers + "reference:\n  data:\n    file: d.csv\n    fields: {w: u}\n", "test.yaml",
            dir.string());
      },
      "test.yaml:23:13: reference.data.fields: 'w' is not a field of this problem");
  fs::remove_all(dir);
}

TEST(Config, ConditionsAtFixedPoints) {
  const std::string square = R"(geometry: {type: rectangle, min: [0, 0], max: [1, 1]}
equations:
  - expression: laplacian(u)
conditions:
  - kind: neumann
  - kind: dirichlet
    at: [[0, 0], [1, 0.5]]
)";
  const RunConfig c = from(square);
  ASSERT_EQ(c.spec.math.conditions.size(), 2u);
  EXPECT_EQ(c.spec.math.conditions[0].at.rows(), 0);
  MatrixD expected(2, 2);
  expected << 0, 0, 1, 0.5;
  ASSERT_EQ(c.spec.math.conditions[1].at.rows(), 2);
  EXPECT_TRUE((c.spec.math.conditions[1].at == expected).all());
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[0, 0]")); },
                    "test.yaml:7:10: conditions[1].at[0]: expected a point (a list of numbers), "
                    "got '0'");
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[[0, 0], [1]]")); },
                    "test.yaml:7:18: conditions[1].at[1]: has 1 coordinates, point 1 has 2");
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[[0, 0], [1, b]]")); },
                    "test.yaml:7:22: conditions[1].at[1][1]: 'b' is not a number");
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[[0, 0, 0]]")); },
                    "test.yaml:7:9: conditions[1].at: the points `at` have 3 coordinates, the "
                    "domain has 2 (x, y)");
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[[0, 0], [2, 0.5]]")); },
                    "test.yaml:7:9: conditions[1].at: point 2 (2, 0.5) lies outside the domain's "
                    "bounds: x must be in [0, 1]");
  expect_user_error([&] { from(replaced(square, "[[0, 0], [1, 0.5]]", "[]")); },
                    "test.yaml:7:9: conditions[1].at: no points (give at least one, or leave out "
                    "`at`)");
}

TEST(Config, StlGeometry) {
  const fs::path dir =
      fs::temp_directory_path() / ("jetpde-config-stl-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    // The unit cube, 12 triangles, outward.
    std::ofstream stl(dir / "cube.stl");
    stl << "solid cube\n";
    const int faces[12][3][3] = {
        {{0, 0, 0}, {0, 1, 0}, {1, 1, 0}}, {{0, 0, 0}, {1, 1, 0}, {1, 0, 0}},
        {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}}, {{0, 0, 1}, {1, 1, 1}, {0, 1, 1}},
        {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}}, {{0, 0, 0}, {1, 0, 1}, {0, 0, 1}},
        {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}}, {{0, 1, 0}, {1, 1, 1}, {1, 1, 0}},
        {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}}, {{0, 0, 0}, {0, 1, 1}, {0, 1, 0}},
        {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}, {{1, 0, 0}, {1, 1, 1}, {1, 0, 1}}};
    for (const auto& f : faces) {
      stl << "facet normal 0 0 0\nouter loop\n";
      for (const auto& v : f) stl << "vertex " << v[0] << " " << v[1] << " " << v[2] << "\n";
      stl << "endloop\nendfacet\n";
    }
    stl << "endsolid cube\n";
  }
  const std::string text = R"(geometry:
  type: difference
  of:
    - {type: stl, file: cube.stl}
    - {type: sphere, center: [0.5, 0.5, 0.5], radius: 0.25}
equations:
  - expression: laplacian(u)
)";
  if (!geometry::stl_supported()) {
    expect_user_error([&] { run_config_from_text(text, "test.yaml", dir.string()); },
                      "test.yaml:4:25: geometry.of[0].file: stl '" + (dir / "cube.stl").string() +
                          "': this jetpde was built without VTK (IOGeometry), which reads STL "
                          "files; install libvtk9-dev (scripts/bootstrap.sh) and configure again");
    fs::remove_all(dir);
    return;
  }
  const RunConfig c = run_config_from_text(text, "test.yaml", dir.string());
  EXPECT_EQ(c.spec.math.domain->dim(), 3);
  EXPECT_GT(c.spec.math.domain->signed_distance(std::vector<double>{0.5, 0.5, 0.5}),
            0.0);  // the hole
  EXPECT_LT(c.spec.math.domain->signed_distance(std::vector<double>{0.1, 0.1, 0.1}), 0.0);
  // The resolved config holds the absolute path, so that the run folder's copy finds the file.
  EXPECT_EQ(c.resolved["geometry"]["of"][0]["file"].as<std::string>(), (dir / "cube.stl").string());
  expect_user_error(
      [&] {
        run_config_from_text(replaced(text, "cube.stl", "none.stl"), "test.yaml", dir.string());
      },
      "test.yaml:4:25: geometry.of[0].file: stl '" + (dir / "none.stl").string() +
          "': no such file");
  expect_user_error(
      [&] {
        run_config_from_text(replaced(text, "{type: stl, file: cube.stl}", "{type: stl}"),
                             "test.yaml", dir.string());
      },
      "test.yaml:4:14: geometry.of[0].file: missing (an stl geometry needs it)");
  fs::remove_all(dir);
}

// docs/config.md documents every key of the schema, and nothing else.
TEST(Config, DocsListEveryKeyOfTheSchema) {
  std::ifstream in(std::string(JETPDE_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in) << "docs/config.md is missing";
  std::set<std::string> documented;
  const std::regex row(R"(^\| `([^`]+)` \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) documented.insert(m[1]);
  }
  std::set<std::string> schema;
  for (const std::string& p : schema_paths()) schema.insert(p);
  for (const std::string& p : schema) EXPECT_TRUE(documented.count(p)) << "undocumented key " << p;
  for (const std::string& p : documented)
    EXPECT_TRUE(schema.count(p)) << "docs/config.md lists " << p
                                 << ", which the schema does not have";
}

}  // namespace
}  // namespace jetpde::io
