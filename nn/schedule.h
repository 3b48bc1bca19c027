// Learning-rate schedules: the rate at optimizer step k (k = 0, 1, ...).
//
//   constant     lr
//   exponential  lr * gamma^(k / decay_steps)                       (smooth decay)
//   step         lr * gamma^floor(k / decay_steps)                  (staircase)
//   cosine       min_lr + (lr - min_lr) (1 + cos(pi min(k, total) / total)) / 2
// Any of them with warmup_steps > 0 starts with a linear ramp from lr / warmup_steps at k = 0 to
// the schedule's value at k = warmup_steps - 1, and continues with the schedule from there.
#pragma once

#include <string>

#include "autodiff/options.h"

namespace jetpde::nn {

struct Schedule {
  enum class Kind { constant, exponential, step, cosine };
  Kind kind = Kind::constant;
  double lr = 1e-3;
  double gamma = 0.9;       // exponential, step
  int decay_steps = 1000;   // exponential, step
  int total_steps = 10000;  // cosine
  double min_lr = 0.0;      // cosine
  int warmup_steps = 0;

  double operator()(int k) const;
  // UserError naming the field for a non-positive rate, gamma outside (0, 1], a non-positive
  // step count, or min_lr above lr.
  void validate() const;
};

const options::EnumTable<Schedule::Kind>& schedule_kind_names();  // stages[].schedule
Schedule::Kind schedule_kind_from_name(const std::string& name);  // UserError naming the known
std::string schedule_kind_name(Schedule::Kind kind);

}  // namespace jetpde::nn
