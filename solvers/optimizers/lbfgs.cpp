// L-BFGS (nn::Lbfgs) as a trainer's optimizer: a step is one iteration, its line search
// evaluating as often as it needs (the first step also evaluates the starting point).
#include "nn/lbfgs.h"
#include "autodiff/errors.h"
#include "solvers/optimizer.h"

namespace jetpde::solvers {
namespace {

// (s, y) pairs as the rows of one matrix, and back.
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

class LbfgsOptimizer final : public Optimizer {
 public:
  LbfgsOptimizer(nn::LbfgsOptions options, Eigen::Index parameters)
      : lbfgs_(options), parameters_(parameters) {}

  Step step(const Evaluate& evaluate, Eigen::VectorXd& theta) override {
    // Only the start can be non-finite (inside a line search a non-finite value shortens the
    // step); the state before it is the constructed one, put back so that the call leaves none.
    const bool starting = !lbfgs_.state().started;
    const int before = lbfgs_.iterations();
    lbfgs_.run(evaluate, theta, 1);
    if (lbfgs_.stop() == nn::LbfgsStop::non_finite) {
      if (starting) lbfgs_ = nn::Lbfgs(lbfgs_.options());
      return {.kind = Step::Kind::non_finite};
    }
    return {.kind = lbfgs_.iterations() == before ? Step::Kind::done : Step::Kind::stepped,
            .loss = lbfgs_.value()};
  }
  bool loss_before_update() const override { return false; }
  bool finished() const override { return lbfgs_.stop() != nn::LbfgsStop::running; }
  int state_vectors() const override { return 2 * lbfgs_.options().history + 2; }

  // The trainer stops calling step() at the stage's steps, which are the iteration limit: a
  // state still running has reached it.
  std::string ending(int, double) const override {
    if (lbfgs_.stop() != nn::LbfgsStop::running) return lbfgs_.stop_message();
    nn::Lbfgs::State s = lbfgs_.state();
    s.stop = nn::LbfgsStop::iteration_limit;
    nn::Lbfgs limited(lbfgs_.options());
    limited.restore(std::move(s));
    return limited.stop_message();
  }

  // The layout checkpoints have always had: lbfgs/s, lbfgs/y [pairs, n], lbfgs/g, lbfgs/f,
  // lbfgs/counts (iterations, evaluations, started, stop), lbfgs/detail.
  OptimizerState state() const override {
    const nn::Lbfgs::State& s = lbfgs_.state();
    return {.kind = "lbfgs",
            .values = {
                {"s", stack(s.s, parameters_)},
                {"y", stack(s.y, parameters_)},
                {"g", s.g},
                {"f", s.f},
                {"counts", std::vector<std::int64_t>{s.iterations, s.evaluations, s.started ? 1 : 0,
                                                     static_cast<std::int64_t>(s.stop)}},
                {"detail", s.detail}}};
  }
  void restore(const OptimizerState& state) override {
    if (state.empty()) return;
    if (state.kind != "lbfgs")
      throw UserError("lbfgs: cannot restore the state of a '" + state.kind + "' optimizer");
    nn::Lbfgs::State s;
    s.s = unstack(state.get<MatrixD>("s"));
    s.y = unstack(state.get<MatrixD>("y"));
    s.g = state.get<Eigen::VectorXd>("g");
    s.f = state.get<double>("f");
    const std::vector<std::int64_t>& counts = state.get<std::vector<std::int64_t>>("counts");
    if (counts.size() != 4) throw UserError("lbfgs: the saved counts are not 4 numbers");
    s.iterations = static_cast<int>(counts[0]);
    s.evaluations = static_cast<int>(counts[1]);
    s.started = counts[2] != 0;
    if (counts[3] < 0 || counts[3] > static_cast<std::int64_t>(nn::LbfgsStop::non_finite))
      throw UserError("lbfgs: an unknown saved stop rule " + std::to_string(counts[3]));
    s.stop = static_cast<nn::LbfgsStop>(counts[3]);
    s.detail = state.get<std::string>("detail");
    for (const auto* pairs : {&s.s, &s.y})
      for (const Eigen::VectorXd& v : *pairs)
        if (v.size() != parameters_)
          throw UserError("lbfgs: the saved history is for " + std::to_string(v.size()) +
                          " parameters, not " + std::to_string(parameters_));
    lbfgs_.restore(std::move(s));
  }

 private:
  nn::Lbfgs lbfgs_;
  Eigen::Index parameters_;
};

}  // namespace

std::any read_lbfgs_options(const Stage&, const options::Values& values) {
  nn::LbfgsOptions o;
  nn::lbfgs_options().read(o, values);
  return o;
}

std::unique_ptr<Optimizer> make_lbfgs(const Stage& stage, const nn::ParameterLayout& layout) {
  nn::LbfgsOptions options = stage.options_as<nn::LbfgsOptions>();
  options.max_iterations = stage.steps;  // a stage's steps are its iterations
  return std::make_unique<LbfgsOptimizer>(options, layout.size());
}

}  // namespace jetpde::solvers
