// Options declared once (autodiff/options.h): the enum name tables (round trip, errors, the
// schema's choices taken from them) and the declarations that drive the schema, docs/config.md and
// the config reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <fstream>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "compiler/passes.h"
#include "geometry/sequences.h"
#include "io/config_schema.h"
#include "io/progress.h"
#include "nn/activation.h"
#include "nn/adam.h"
#include "nn/init.h"
#include "nn/lbfgs.h"
#include "nn/network.h"
#include "nn/schedule.h"
#include "solvers/exact_solutions.h"
#include "solvers/optimizer.h"
#include "solvers/problem.h"
#include "solvers/solve.h"
#include "solvers/trainer.h"
#include "tests/support/user_error.h"

namespace jetpde {
namespace {

using jetpde::testing::expect_user_error;

const options::Key& schema_key(const std::string& path) {
  const options::Key* k = &io::config_schema();
  std::string rest = path;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    std::string part = rest.substr(0, dot);
    if (part.size() > 2 && part.ends_with("[]")) part.resize(part.size() - 2);
    k = k->child(part);
    if (!k) {
      ADD_FAILURE() << "no key " << path;
      return io::config_schema();
    }
    rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
  }
  return *k;
}

// Every row names its value and back; from_name refuses what is not a choice with the known ones;
// the schema key of the option offers exactly the table's names.
template <class E>
void check_table(const options::EnumTable<E>& table, const std::string& schema_path) {
  SCOPED_TRACE(table.what());
  ASSERT_FALSE(table.rows().empty());
  for (const auto& row : table.rows()) {
    EXPECT_EQ(table.name(row.value), row.name);
    EXPECT_FALSE(std::string(row.meaning).empty()) << row.name;
    if (row.choice) {
      EXPECT_EQ(table.from_name(row.name), row.value);
    }
    if (row.alias) {
      EXPECT_EQ(table.from_name(row.alias), row.value);
    }
  }
  expect_user_error([&] { table.from_name("no_such_name"); },
                    "unknown " + std::string(table.what()) +
                        " 'no_such_name' (known: " + options::joined(table.names()) + ")");
  const options::Key& k = schema_key(schema_path);
  EXPECT_EQ(k.type, options::Key::Type::choice);
  EXPECT_EQ(k.choices, table.names()) << schema_path;
}

TEST(EnumTables, RoundTripErrorsAndSchemaChoices) {
  check_table(nn::activation_names(), "network.activation");
  check_table(nn::init_names(), "network.init");
  check_table(nn::architecture_names(), "network.architecture");
  check_table(nn::schedule_kind_names(), "training.stages[].schedule");
  check_table(geometry::sample_method_names(), "sampling.method");
  check_table(compiler::precision_names(), "precision");
  check_table(solvers::condition_kind_names(), "conditions[].kind");
  check_table(solvers::device_names(), "device");
  check_table(solvers::weighting_kind_names(), "training.weighting.kind");
  check_table(solvers::builtin_exact_names(), "reference.exact");
  check_table(io::Progress::mode_names(), "output.progress");
  EXPECT_EQ(schema_key("training.stages[].optimizer").choices, solvers::optimizer_names());
}

TEST(EnumTables, ExactNamesAndAliases) {
  EXPECT_EQ(nn::activation_names().from_name("silu"), nn::Activation::silu);
  expect_user_error([] { nn::activation_names().from_name("relu"); },
                    "unknown activation 'relu' (known: tanh, sin, silu, sigmoid, softplus)");
  // An alias is accepted but not offered.
  EXPECT_EQ(geometry::sample_method_from_name("latin_hypercube"),
            geometry::SampleMethod::latin_hypercube);
  EXPECT_EQ(geometry::sample_method_names().names(),
            (std::vector<std::string>{"random", "lhs", "halton", "sobol", "grid"}));
  // A value code sets has a name but is no choice.
  EXPECT_EQ(compiler::precision_name(compiler::PrecisionPolicy::as_built), "as_built");
  expect_user_error(
      [] { compiler::precision_names().from_name("as_built"); },
      "unknown precision 'as_built' (known: fp64, fp32, bf16, bf16_wgrad, fp16, auto)");
  EXPECT_EQ(compiler::precision_names().from_name("auto"), compiler::PrecisionPolicy::automatic);
  // The device's error keeps its prefix.
  expect_user_error([] { solvers::device_from_name("gpu"); },
                    "device: unknown device 'gpu' (known: auto, cpu, cuda)");
  EXPECT_EQ(options::not_one_of("adma", {"adam", "adamw", "lbfgs"}),
            "'adma' is not one of adam, adamw, lbfgs");
}

// A declaration drives the struct: values set through member pointers and setters, keys without a
// setter left alone, values of other declarations ignored.
TEST(Declarations, ReadSetsTheDeclaredMembers) {
  nn::AdamOptions adam;
  nn::adam_options().read(adam, {{"learning_rate", 0.5},
                                 {"schedule", std::string("cosine")},
                                 {"decay_steps", 7LL},
                                 {"weight_decay", 1LL},  // an integer read as a number
                                 {"history", 3LL}});     // L-BFGS's: not Adam's
  EXPECT_EQ(adam.schedule.lr, 0.5);
  EXPECT_EQ(adam.schedule.kind, nn::Schedule::Kind::cosine);
  EXPECT_EQ(adam.schedule.decay_steps, 7);
  EXPECT_EQ(adam.weight_decay, 1.0);
  nn::NetworkSpec net;
  nn::network_options().read(net, {{"hidden", std::vector<long long>{8, 9}},
                                   {"activation", std::string("sin")},
                                   {"normalize", false}});  // declared, read by hand
  EXPECT_EQ(net.hidden, (std::vector<int>{8, 9}));
  EXPECT_EQ(net.activation, nn::Activation::sin);
  expect_user_error(
      [&] {
        nn::network_options().read(net, {{"init", std::string("xavier")}});
      },
      "unknown initializer 'xavier' (known: glorot_normal, glorot_uniform, "
      "he_normal, he_uniform)");
  // The stage from its values: the kind's options, the schedule over the stage's steps.
  const solvers::Stage stage = solvers::stage_from_values(
      {{"optimizer", std::string("adamw")}, {"steps", 40LL}, {"learning_rate", 0.01}});
  EXPECT_EQ(stage.name, "adamw");
  const auto options = stage.options_as<nn::AdamOptions>();
  EXPECT_TRUE(options.decoupled);
  EXPECT_EQ(options.schedule.total_steps, 40);
  EXPECT_EQ(options.schedule.lr, 0.01);
  const solvers::Stage polish = solvers::stage_from_values(
      {{"optimizer", std::string("lbfgs")}, {"name", std::string("polish")}, {"history", 9LL}});
  EXPECT_EQ(polish.name, "polish");
  EXPECT_EQ(polish.options_as<nn::LbfgsOptions>().history, 9);
  // Each kind's own keys, and all of them in the schema's stage.
  std::vector<std::string> lbfgs;
  for (const auto& k : solvers::stage_keys("lbfgs")) lbfgs.push_back(k->name);
  EXPECT_EQ(lbfgs, (std::vector<std::string>{
                       "name", "optimizer", "steps", "history", "gradient_tolerance",
                       "function_tolerance", "max_evaluations", "precision", "time_share",
                       "resample_every", "average", "average_last", "hand_on"}));
  std::vector<std::string> stage_paths;
  for (const auto& k : schema_key("training.stages[]").children) stage_paths.push_back(k->name);
  std::vector<std::string> all;
  for (const auto& k : solvers::stage_keys()) all.push_back(k->name);
  EXPECT_EQ(stage_paths, all);
}

// The options of the test kind below: a momentum-free Adam whose rate is its one key.
struct TestKindOptions {
  double rate = 0.5;
};

const options::Declaration<TestKindOptions>& test_kind_options() {
  static const options::Declaration<TestKindOptions> d = [] {
    options::Declaration<TestKindOptions> d;
    d.add(options::within(0, 1,
                          options::key("test_kind_rate", options::Key::Type::number, "0.5",
                                       "test_kind: its learning rate.")),
          &TestKindOptions::rate);
    return d;
  }();
  return d;
}

// A kind registered with a key of its own: a schema built afterwards has the key (paths, the docs
// table, the optimizer's choices), a config gets its default or is refused with the key's place,
// and the stage read from the resolved config carries the value into the kind's factory.
TEST(Declarations, AKeyDeclaredOnceReachesSchemaDocsAndReader) {
  (void)io::config_schema();  // the shared schema keeps the built-in kinds (docs/config.md's)
  static const bool once = [] {
    solvers::register_optimizer(
        "test_kind", {.make =
                          [](const solvers::Stage& s, const nn::ParameterLayout& layout) {
                            solvers::Stage adam = s;
                            adam.optimizer = "adam";
                            adam.options = nn::AdamOptions{
                                .schedule = {.lr = s.options_as<TestKindOptions>().rate}};
                            return solvers::make_optimizer(adam, layout);
                          },
                      .keys = test_kind_options().keys(),
                      .read_options =
                          [](const solvers::Stage&, const options::Values& values) {
                            TestKindOptions o;
                            test_kind_options().read(o, values);
                            return std::any(o);
                          }});
    return true;
  }();
  (void)once;
  static const auto* const schema = new options::KeyPtr(io::build_config_schema());
  const std::vector<std::string> paths = io::schema_paths(**schema);
  EXPECT_NE(std::find(paths.begin(), paths.end(), "training.stages[].test_kind_rate"), paths.end());
  const std::vector<std::string> shared = io::schema_paths();
  EXPECT_EQ(std::find(shared.begin(), shared.end(), "training.stages[].test_kind_rate"),
            shared.end());
  EXPECT_NE(io::schema_markdown(**schema).find(
                "| `training.stages[].test_kind_rate` | number, from 0 to 1 | `0.5` | test_kind: "
                "its learning rate. |"),
            std::string::npos);
  const auto& choices = io::schema_key(**schema, "training.stages[].optimizer")->choices;
  EXPECT_NE(std::find(choices.begin(), choices.end(), "test_kind"), choices.end());

  const auto stage_of = [&](const std::string& stage) {
    const YAML::Node resolved = io::resolve_config(
        YAML::Load("geometry: {type: interval, min: [0], max: [1]}\ntraining:\n  stages:\n" +
                   stage),
        "t.yaml", **schema);
    return solvers::stage_from_values(
        io::option_values(solvers::stage_keys(), resolved["training"]["stages"][0]));
  };
  const solvers::Stage given = stage_of("    - {optimizer: test_kind, test_kind_rate: 0.25}\n");
  EXPECT_EQ(given.options_as<TestKindOptions>().rate, 0.25);
  EXPECT_EQ(given.steps, 1000);
  EXPECT_EQ(stage_of("    - optimizer: test_kind\n").options_as<TestKindOptions>().rate, 0.5);
  expect_user_error([&] { stage_of("    - optimizer: test_kind\n      test_kind_rate: 2\n"); },
                    "t.yaml:5:23: training.stages[0].test_kind_rate: '2' is out of range (at most "
                    "1)");
  // Adam's keys are not the test kind's, and the kind's factory gets the value.
  EXPECT_EQ(solvers::stage_keys("test_kind").size(), 10u);  // its key and the nine every stage has
  EXPECT_EQ(solvers::make_optimizer(given, nn::ParameterLayout{})->state_vectors(), 2);
}

// docs/config.md's table is the generated one, row for row (a meaning changed in a declaration
// shows there once the table is regenerated: `jetpde info --config-reference`).
TEST(Declarations, DocsTableIsTheGeneratedOne) {
  std::ifstream in(std::string(JETPDE_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in);
  std::string table, line;
  bool inside = false;
  while (std::getline(in, line)) {
    inside = inside ? !line.empty() && line[0] == '|' : line.rfind("| key |", 0) == 0;
    if (inside) table += line + "\n";
  }
  EXPECT_EQ(table, io::schema_markdown())
      << "regenerate the table of docs/config.md with jetpde info --config-reference";
  // The choices' meanings come from the enum tables.
  EXPECT_NE(table.find("`sobol`: the Sobol sequence (scrambled by the seed)"), std::string::npos);
}

}  // namespace
}  // namespace jetpde
