// What a run shows while it trains, and the per-step record it leaves (DESIGN.md section 10).
//
// Progress: on a terminal, one line rewritten in place (step, loss and its terms, steps per
// second, ETA); elsewhere (a batch job's log), a plain line every `every` steps. History: one CSV
// row every `every` steps (and at the last), appended as training goes, so that a killed run
// keeps what it did.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "solvers/trainer.h"

namespace jetpde::io {

class Progress {
 public:
  enum class Mode { line, plain, none };
  // "auto" picks line when `out` is a terminal, else plain.
  static Mode mode_from_name(const std::string& name, std::FILE* out);

  Progress(Mode mode, int total_steps, int every, std::vector<std::string> slot_names,
           std::FILE* out = stderr);
  void update(const solvers::StepInfo& info, bool last);
  // Ends the updating line (a newline) so that later output starts on its own line.
  void finish();

 private:
  std::string describe(const solvers::StepInfo& info) const;
  Mode mode_;
  int total_, every_;
  std::vector<std::string> slots_;
  std::FILE* out_;
  double last_draw_ = -1;
  int first_step_ = -1;
  double first_seconds_ = 0;
  bool open_line_ = false;
};

class HistoryWriter {
 public:
  // Opens `path`; with `resume_step` >= 0 keeps the rows up to that step (an earlier run of the
  // same config) and appends after them, else starts the file with its header.
  HistoryWriter(const std::string& path, std::vector<std::string> slot_names,
                std::vector<std::string> metric_names, int every, int resume_step = -1);
  void record(const solvers::StepInfo& info, bool last);

 private:
  std::ofstream out_;
  std::vector<std::string> slots_, metrics_;
  int every_;
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace jetpde::io
