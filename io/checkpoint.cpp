#include "io/checkpoint.h"

#include <sstream>

#include "autodiff/errors.h"
#include "io/hdf5_read.h"
#include "io/hdf5_write.h"

namespace jetpde::io {
namespace {

constexpr const char* kFormat = "jetpde checkpoint 1";

std::vector<double> as_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

Eigen::VectorXd as_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// (s, y) pairs as the rows of one matrix.
MatrixD stack(const std::vector<Eigen::VectorXd>& rows, Eigen::Index n) {
  MatrixD m(static_cast<Eigen::Index>(rows.size()), n);
  for (std::size_t i = 0; i < rows.size(); ++i)
    m.row(static_cast<Eigen::Index>(i)) = rows[i].transpose().array();
  return m;
}

std::vector<Eigen::VectorXd> unstack(const MatrixD& m) {
  std::vector<Eigen::VectorXd> rows;
  for (Eigen::Index i = 0; i < m.rows(); ++i) rows.push_back(m.row(i).transpose().matrix());
  return rows;
}

void write_state(Hdf5Writer& w, const solvers::TrainerState& s) {
  w.write_scalar("step", std::int64_t{s.step});
  w.write_scalar("stage", std::int64_t{s.stage});
  w.write_scalar("stage_step", std::int64_t{s.stage_step});
  w.write_scalar("loss", s.loss);
  w.write_scalar("seconds", s.seconds);
  w.write_string("endings", s.endings);
  w.write("theta", as_vector(s.theta));
  w.write("weights/term", s.term_weights);
  w.write("weights/slot", s.slot_weights);
  w.write("slot_losses", s.slot_losses);
  w.write("adam/m", as_vector(s.adam.m));
  w.write("adam/v", as_vector(s.adam.v));
  w.write_scalar("adam/t", std::int64_t{s.adam.t});
  const Eigen::Index n = s.theta.size();
  w.write("lbfgs/s", stack(s.lbfgs.s, n));
  w.write("lbfgs/y", stack(s.lbfgs.y, n));
  w.write("lbfgs/g", as_vector(s.lbfgs.g));
  w.write_scalar("lbfgs/f", s.lbfgs.f);
  w.write("lbfgs/counts", std::vector<std::int64_t>{s.lbfgs.iterations, s.lbfgs.evaluations,
                                                    s.lbfgs.started ? 1 : 0,
                                                    static_cast<std::int64_t>(s.lbfgs.stop)});
  w.write_string("lbfgs/detail", s.lbfgs.detail);
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

solvers::TrainerState read_state(const std::string& f) {
  solvers::TrainerState s;
  s.step = static_cast<int>(read_int(f, "step"));
  s.stage = static_cast<int>(read_int(f, "stage"));
  s.stage_step = static_cast<int>(read_int(f, "stage_step"));
  s.loss = read_dataset(f, "loss").values.at(0);
  // Checkpoints written before the training time was kept have none: 0.
  s.seconds = has_dataset(f, "seconds") ? read_dataset(f, "seconds").values.at(0) : 0.0;
  s.endings = read_string_dataset(f, "endings");
  s.theta = as_eigen(read_dataset(f, "theta").values);
  s.term_weights = read_dataset(f, "weights/term").values;
  s.slot_weights = read_dataset(f, "weights/slot").values;
  s.slot_losses = read_dataset(f, "slot_losses").values;
  s.adam.m = as_eigen(read_dataset(f, "adam/m").values);
  s.adam.v = as_eigen(read_dataset(f, "adam/v").values);
  s.adam.t = static_cast<int>(read_int(f, "adam/t"));
  const Eigen::Index n = s.theta.size();
  const auto pairs = [&](const char* name) {
    Dataset d = read_dataset(f, name);
    const Eigen::Index rows = d.values.empty() ? 0 : static_cast<Eigen::Index>(d.values.size()) / n;
    MatrixD m(rows, n);
    for (Eigen::Index i = 0; i < rows; ++i)
      for (Eigen::Index j = 0; j < n; ++j) m(i, j) = d.values[static_cast<std::size_t>(i * n + j)];
    return unstack(m);
  };
  s.lbfgs.s = pairs("lbfgs/s");
  s.lbfgs.y = pairs("lbfgs/y");
  s.lbfgs.g = as_eigen(read_dataset(f, "lbfgs/g").values);
  s.lbfgs.f = read_dataset(f, "lbfgs/f").values.at(0);
  const std::vector<std::int64_t> counts = read_int_dataset(f, "lbfgs/counts");
  s.lbfgs.iterations = static_cast<int>(counts.at(0));
  s.lbfgs.evaluations = static_cast<int>(counts.at(1));
  s.lbfgs.started = counts.at(2) != 0;
  s.lbfgs.stop = static_cast<nn::LbfgsStop>(counts.at(3));
  s.lbfgs.detail = read_string_dataset(f, "lbfgs/detail");
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
  w.commit();
}

Checkpoint read_checkpoint(const std::string& path) {
  if (read_root_attribute(path, "format") != kFormat)
    throw UserError(path + ": not a jetpde checkpoint (no format attribute '" +
                    std::string(kFormat) + "')");
  Checkpoint c;
  c.config = read_string_dataset(path, "config");
  c.seed = static_cast<std::uint64_t>(read_int(path, "rng/seed"));
  c.state = read_state(path);
  return c;
}

}  // namespace jetpde::io
