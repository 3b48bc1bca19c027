#include "io/checkpoint.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>

#include "autodiff/errors.h"
#include "io/hdf5_read.h"
#include "io/hdf5_write.h"

namespace jetpde::io {
namespace {

// Version 2 saves the optimizer state as named values of its kind's group, with an index; version
// 1 (before optimizers were registered kinds) always wrote both adam/ and lbfgs/ in a fixed layout.
constexpr const char* kFormat = "jetpde checkpoint 2";
constexpr const char* kFormat1 = "jetpde checkpoint 1";

std::vector<double> as_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

Eigen::VectorXd as_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// The index of an optimizer state, "<name> <type>" lines, says which datasets to read as what.
namespace types {
constexpr std::string_view real = "real";          // f64, rank 0
constexpr std::string_view integer = "integer";    // i64, rank 0
constexpr std::string_view integers = "integers";  // i64, rank 1
constexpr std::string_view vector = "vector";      // f64, rank 1
constexpr std::string_view matrix = "matrix";      // f64, rank 2
constexpr std::string_view text = "text";          // a string
}  // namespace types

// A name that is one HDF5 path component and one word of the index.
bool plain_name(const std::string& name) {
  return !name.empty() && name.find_first_of("/\n ") == std::string::npos;
}

void write_optimizer(Hdf5Writer& w, const solvers::OptimizerState& o) {
  w.write_string("optimizer", o.kind);
  if (o.empty()) return;
  // Not one of the file's other groups.
  if (!plain_name(o.kind) || o.kind == "inputs" || o.kind == "weights" || o.kind == "rng")
    throw UserError("checkpoint: optimizer state kind '" + o.kind + "' is not a plain name");
  std::string index;
  for (const auto& [name, value] : o.values) {
    if (!plain_name(name) || name == "entries")
      throw UserError("checkpoint: optimizer state '" + o.kind + "': '" + name +
                      "' is not a plain name");
    const std::string path = o.kind + "/" + name;
    const std::string_view type = std::visit(
        [&](const auto& v) -> std::string_view {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, double>) {
            w.write_scalar(path, v);
            return types::real;
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            w.write_scalar(path, v);
            return types::integer;
          } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
            w.write(path, v);
            return types::integers;
          } else if constexpr (std::is_same_v<T, Eigen::VectorXd>) {
            w.write(path, as_vector(v));
            return types::vector;
          } else if constexpr (std::is_same_v<T, MatrixD>) {
            w.write(path, v);
            return types::matrix;
          } else {
            w.write_string(path, v);
            return types::text;
          }
        },
        value);
    index += name + " " + std::string(type) + "\n";
  }
  w.write_string(o.kind + "/entries", index);
}

solvers::OptimizerState read_optimizer(const std::string& f) {
  solvers::OptimizerState o;
  o.kind = read_string_dataset(f, "optimizer");
  if (o.empty()) return o;
  std::stringstream index(read_string_dataset(f, o.kind + "/entries"));
  for (std::string name, type; index >> name >> type;) {
    const std::string path = o.kind + "/" + name;
    if (type == types::real)
      o.values[name] = read_dataset(f, path).values.at(0);
    else if (type == types::integer)
      o.values[name] = read_int_dataset(f, path).at(0);
    else if (type == types::integers)
      o.values[name] = read_int_dataset(f, path);
    else if (type == types::vector)
      o.values[name] = as_eigen(read_dataset(f, path).values);
    else if (type == types::matrix)
      o.values[name] = read_dataset(f, path).matrix();
    else if (type == types::text)
      o.values[name] = read_string_dataset(f, path);
    else
      throw UserError(f + ": " + o.kind + "/entries: unknown type '" + type + "' of '" + name +
                      "'");
  }
  return o;
}

// Version 1 wrote the state of both kinds, that of the stage's optimizer filled and the other's
// as constructed (empty vectors, zero counts): the filled one is the state; when both are
// empty, the stage's optimizer was as constructed. The values are named as version 2 names them.
solvers::OptimizerState read_optimizer_v1(const std::string& f) {
  solvers::OptimizerState o;
  const std::vector<std::int64_t> counts = read_int_dataset(f, "lbfgs/counts");
  const Eigen::VectorXd g = as_eigen(read_dataset(f, "lbfgs/g").values);
  if (g.size() > 0 || counts.at(0) != 0 || counts.at(1) != 0 || counts.at(2) != 0) {
    o.kind = "lbfgs";
    o.values = {{"s", read_dataset(f, "lbfgs/s").matrix()},
                {"y", read_dataset(f, "lbfgs/y").matrix()},
                {"g", g},
                {"f", read_dataset(f, "lbfgs/f").values.at(0)},
                {"counts", counts},
                {"detail", read_string_dataset(f, "lbfgs/detail")}};
    return o;
  }
  const Eigen::VectorXd m = as_eigen(read_dataset(f, "adam/m").values);
  const std::int64_t t = read_int_dataset(f, "adam/t").at(0);
  if (m.size() > 0 || t != 0) {
    o.kind = "adam";
    o.values = {{"m", m}, {"v", as_eigen(read_dataset(f, "adam/v").values)}, {"t", t}};
  }
  return o;
}

void write_state(Hdf5Writer& w, const solvers::TrainerState& s) {
  w.write_scalar("step", std::int64_t{s.step});
  w.write_scalar("stage", std::int64_t{s.stage});
  w.write_scalar("stage_step", std::int64_t{s.stage_step});
  if (s.precision_switched_at >= 0)
    w.write_scalar("precision_switched_at", std::int64_t{s.precision_switched_at});
  if (s.handed_steps > 0) w.write_scalar("handed_steps", std::int64_t{s.handed_steps});
  w.write_scalar("loss", s.loss);
  w.write_scalar("seconds", s.seconds);
  w.write_string("endings", s.endings);
  w.write("theta", as_vector(s.theta));
  w.write("weights/term", s.term_weights);
  w.write("weights/slot", s.slot_weights);
  w.write("slot_losses", s.slot_losses);
  if (!s.causal_scales.empty()) w.write("weights/causal_scale", s.causal_scales);
  if (s.runs_summed > 0) {
    w.write("average/sum", as_vector(s.run_sum));
    w.write_scalar("average/runs", std::int64_t{s.runs_summed});
  }
  if (s.run_ends.rows() > 0) w.write("average/ends", s.run_ends);
  write_optimizer(w, s.optimizer);
  std::string names;
  for (const auto& [name, value] : s.inputs) {
    w.write("inputs/" + name, value);
    names += (names.empty() ? "" : "\n") + name;
  }
  w.write_string("inputs/names", names);
}

std::int64_t read_int(const std::string& file, const std::string& name) {
  return read_int_dataset(file, name).at(0);
}

solvers::TrainerState read_state(const std::string& f, int version) {
  solvers::TrainerState s;
  s.step = static_cast<int>(read_int(f, "step"));
  s.stage = static_cast<int>(read_int(f, "stage"));
  s.stage_step = static_cast<int>(read_int(f, "stage_step"));
  if (has_dataset(f, "precision_switched_at"))
    s.precision_switched_at = static_cast<int>(read_int(f, "precision_switched_at"));
  if (has_dataset(f, "handed_steps"))  // Stage::hand_on
    s.handed_steps = static_cast<int>(read_int(f, "handed_steps"));
  s.loss = read_dataset(f, "loss").values.at(0);
  // Checkpoints written before the training time was kept have none: 0.
  s.seconds = has_dataset(f, "seconds") ? read_dataset(f, "seconds").values.at(0) : 0.0;
  s.endings = read_string_dataset(f, "endings");
  s.theta = as_eigen(read_dataset(f, "theta").values);
  s.term_weights = read_dataset(f, "weights/term").values;
  s.slot_weights = read_dataset(f, "weights/slot").values;
  s.slot_losses = read_dataset(f, "slot_losses").values;
  if (has_dataset(f, "weights/causal_scale"))
    s.causal_scales = read_dataset(f, "weights/causal_scale").values;
  if (has_dataset(f, "average/runs")) {  // a stage averaging its runs (Stage::average)
    s.runs_summed = static_cast<int>(read_int(f, "average/runs"));
    s.run_sum = as_eigen(read_dataset(f, "average/sum").values);
  }
  if (has_dataset(f, "average/ends"))  // the last runs' ends (Stage::average_last)
    s.run_ends = read_dataset(f, "average/ends").matrix();
  s.optimizer = version == 1 ? read_optimizer_v1(f) : read_optimizer(f);
  std::stringstream names(read_string_dataset(f, "inputs/names"));
  for (std::string name; std::getline(names, name);)
    if (!name.empty()) s.inputs[name] = read_dataset(f, "inputs/" + name).matrix();
  return s;
}

}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  Hdf5Writer w(path);
  w.attribute("format", kFormat);
  w.write_string("config", c.config);
  w.write_scalar("rng/seed", static_cast<std::int64_t>(c.seed));
  w.write_scalar("rng/step", std::int64_t{c.state.step});
  write_state(w, c.state);
  if (c.ranks > 1) {
    w.write_scalar("ranks/count", std::int64_t{c.ranks});
    for (const auto& [name, rows] : c.rows) w.write("ranks/rows/" + name, rows);
  }
  w.commit();
}

Checkpoint gather_checkpoint(const solvers::TrainerState& state, const std::string& config,
                             std::uint64_t seed, const solvers::Communicator& comm) {
  Checkpoint c{.state = state, .config = config, .seed = seed, .ranks = comm.size()};
  if (comm.size() == 1) return c;
  // The inputs are the only part that differs between ranks (the parameters, optimizer state
  // and weights are the same everywhere): every rank's rows, end to end, with the row counts.
  // A rank may lack an input another has (an XPINN interface of other ranks' pieces): the names
  // of all ranks first (as characters, each name ended by a 0), a missing one no rows.
  std::vector<double> mine_names;
  for (const auto& [name, value] : c.state.inputs) {
    for (char ch : name) mine_names.push_back(static_cast<unsigned char>(ch));
    mine_names.push_back(0);
  }
  std::set<std::string> names;
  std::string name;
  for (double ch : comm.allgather(mine_names)) {
    if (ch == 0) {
      names.insert(name);
      name.clear();
    } else {
      name += static_cast<char>(static_cast<int>(ch));
    }
  }
  Bindings gathered;
  for (const std::string& key : names) {
    const auto it = c.state.inputs.find(key);
    const MatrixD none;
    const MatrixD& mine = it != c.state.inputs.end() ? it->second : none;
    const std::vector<double> shape = comm.gather(
        std::vector<double>{static_cast<double>(mine.rows()), static_cast<double>(mine.cols())});
    const std::vector<double> all =
        comm.gather({mine.data(), static_cast<std::size_t>(mine.size())});
    if (comm.rank() != 0) continue;
    std::vector<std::int64_t> rows;
    Eigen::Index total = 0, cols = 0;
    for (std::size_t r = 0; r < shape.size(); r += 2) {
      rows.push_back(static_cast<std::int64_t>(shape[r]));
      total += static_cast<Eigen::Index>(shape[r]);
      cols = std::max(cols, static_cast<Eigen::Index>(shape[r + 1]));
    }
    gathered[key] = Eigen::Map<const MatrixD>(all.data(), total, cols);
    c.rows[key] = rows;
  }
  c.state.inputs = comm.rank() == 0 ? std::move(gathered) : Bindings{};
  return c;
}

solvers::TrainerState rank_state(const Checkpoint& c, const solvers::Communicator& comm,
                                 std::string* note) {
  solvers::TrainerState s = c.state;
  if (c.ranks == 1 && comm.size() == 1) return s;
  if (c.ranks != comm.size()) {
    // Another rank count: every rank keeps the points it drew at the start (its share of the
    // counts), so the run goes on from the same parameters and optimizer state, not bit for bit.
    s.inputs.clear();
    if (note)
      *note = "the checkpoint was written by " + std::to_string(c.ranks) + " rank" +
              (c.ranks == 1 ? "" : "s") + " and this run has " + std::to_string(comm.size()) +
              ": it continues from the same parameters and optimizer state with points drawn "
              "again (not bit for bit)";
    return s;
  }
  for (auto& [name, value] : s.inputs) {
    const auto rows = c.rows.find(name);
    if (rows == c.rows.end() || rows->second.size() != static_cast<std::size_t>(c.ranks))
      throw UserError("checkpoint: no row counts per rank for input '" + name + "'");
    Eigen::Index first = 0;
    for (int r = 0; r < comm.rank(); ++r) first += rows->second[static_cast<std::size_t>(r)];
    const auto n = static_cast<Eigen::Index>(rows->second[static_cast<std::size_t>(comm.rank())]);
    if (first + n > value.rows())
      throw UserError("checkpoint: input '" + name + "' has fewer rows than its counts say");
    value = MatrixD(value.middleRows(first, n));
  }
  // An input with no rows here is another rank's alone (not in this rank's graph).
  std::erase_if(s.inputs, [](const auto& entry) { return entry.second.rows() == 0; });
  return s;
}

Checkpoint read_checkpoint(const std::string& path) {
  const std::string format = read_root_attribute(path, "format");
  if (format != kFormat && format != kFormat1)
    throw UserError(path + ": not a jetpde checkpoint (no format attribute '" +
                    std::string(kFormat) + "')");
  Checkpoint c;
  c.config = read_string_dataset(path, "config");
  c.seed = static_cast<std::uint64_t>(read_int(path, "rng/seed"));
  c.state = read_state(path, format == kFormat1 ? 1 : 2);
  if (has_dataset(path, "ranks/count")) {
    c.ranks = static_cast<int>(read_int(path, "ranks/count"));
    for (const auto& [name, value] : c.state.inputs)
      c.rows[name] = read_int_dataset(path, "ranks/rows/" + name);
  }
  return c;
}

}  // namespace jetpde::io
