// Options declared once (autodiff/options.h): the enum name tables (round trip, errors, the
// schema's choices taken from them) and the declarations that drive the schema, docs/config.md and
// the config reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "compiler/passes.h"
#include "geometry/sequences.h"
#include "io/config_schema.h"
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/network.h"
#include "nn/schedule.h"
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
  expect_user_error([] { compiler::precision_names().from_name("as_built"); },
                    "unknown precision 'as_built' (known: fp64, fp32, bf16, fp16, auto)");
  EXPECT_EQ(compiler::precision_names().from_name("auto"), compiler::PrecisionPolicy::automatic);
  // The device's error keeps its prefix.
  expect_user_error([] { solvers::device_from_name("gpu"); },
                    "device: unknown device 'gpu' (known: auto, cpu, cuda)");
  EXPECT_EQ(options::not_one_of("adma", {"adam", "adamw", "lbfgs"}),
            "'adma' is not one of adam, adamw, lbfgs");
}

}  // namespace
}  // namespace jetpde
