#include "nn/schedule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "autodiff/errors.h"

namespace jetpde::nn {

double Schedule::operator()(int k) const {
  k = std::max(k, 0);
  const auto decayed = [&](int s) {
    switch (kind) {
      case Kind::constant:
        return lr;
      case Kind::exponential:
        return lr * std::pow(gamma, static_cast<double>(s) / decay_steps);
      case Kind::step:
        return lr * std::pow(gamma, static_cast<double>(s / decay_steps));
      case Kind::cosine: {
        const double t = static_cast<double>(std::min(s, total_steps)) / total_steps;
        return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
      }
    }
    return lr;
  };
  if (k < warmup_steps) return decayed(k) * (k + 1) / warmup_steps;
  return decayed(k);
}

void Schedule::validate() const {
  if (!(lr > 0)) throw UserError("schedule: lr must be positive");
  if ((kind == Kind::exponential || kind == Kind::step) && !(gamma > 0 && gamma <= 1))
    throw UserError("schedule: gamma must be in (0, 1]");
  if ((kind == Kind::exponential || kind == Kind::step) && decay_steps <= 0)
    throw UserError("schedule: decay_steps must be positive");
  if (kind == Kind::cosine && total_steps <= 0)
    throw UserError("schedule: total_steps must be positive");
  if (kind == Kind::cosine && !(min_lr >= 0 && min_lr <= lr))
    throw UserError("schedule: min_lr must be in [0, lr]");
  if (warmup_steps < 0) throw UserError("schedule: warmup_steps must not be negative");
}

namespace {
constexpr std::array<options::EnumName<Schedule::Kind>, 4> kKinds{{
    {Schedule::Kind::constant, "constant", "lr"},
    {Schedule::Kind::exponential, "exponential", "lr * gamma^(k / decay_steps)"},
    {Schedule::Kind::step, "step", "lr * gamma^floor(k / decay_steps)"},
    {Schedule::Kind::cosine, "cosine", "min_lr + (lr - min_lr) (1 + cos(pi k / total)) / 2"},
}};
}  // namespace

const options::EnumTable<Schedule::Kind>& schedule_kind_names() {
  static constexpr options::EnumTable<Schedule::Kind> table("schedule", kKinds);
  return table;
}

Schedule::Kind schedule_kind_from_name(const std::string& name) {
  return schedule_kind_names().from_name(name);
}

std::string schedule_kind_name(Schedule::Kind kind) { return schedule_kind_names().name(kind); }

}  // namespace jetpde::nn
