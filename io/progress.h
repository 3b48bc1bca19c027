// What a run shows while it trains, and the per-step record it leaves (docs/design.md section 10).
//
// Progress: on a terminal, one line rewritten in place (step, loss and every one of its terms,
// metrics, steps per second, ETA), wrapped onto more lines when wider than the terminal;
// elsewhere (a batch job's log), a plain line every `every` steps. The ETA uses the rate of the
// current stage; an L-BFGS stage's is an upper bound ("at most": it stops at its tolerances).
// History: one CSV row every `every` steps (and at the last), appended as training goes, so that a
// killed run keeps what it did.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "autodiff/options.h"
#include "solvers/trainer.h"

namespace jetpde::io {

class Progress {
 public:
  // automatic is resolved by mode_from_name (a Progress given it draws lines).
  enum class Mode { automatic, line, plain, none };
  static const options::EnumTable<Mode>& mode_names();  // output.progress's choices
  // "auto" picks line when `out` is a terminal, else plain; UserError for an unknown name.
  static Mode mode_from_name(const std::string& name, std::FILE* out);

  // `stages` as the trainer runs them (their names and step counts: an L-BFGS stage's count is
  // an upper bound, it stops at its tolerances).
  // With `comm` of several ranks each line also says how many and the seconds per step spent in
  // collectives since the previous line.
  Progress(Mode mode, const std::vector<solvers::Stage>& stages, int every,
           std::vector<std::string> slot_names, std::FILE* out = stderr,
           const solvers::Communicator* comm = nullptr);
  void update(const solvers::StepInfo& info, bool last);
  // Ends the updating line (a newline) so that later output starts on its own line.
  void finish();
  // The text of a progress line, in pieces that a line wraps between (every loss term, every
  // metric, the rate and the ETA): public for tests.
  std::vector<std::string> describe(const solvers::StepInfo& info);

 private:
  void track(const solvers::StepInfo& info);  // follows the stages (every step)
  std::vector<std::string> pieces(const solvers::StepInfo& info) const;
  std::string eta(const solvers::StepInfo& info) const;
  // "| 4 ranks, comm 1.2 ms/step" since the last call; empty serial.
  std::string ranks(const solvers::StepInfo& info);
  Mode mode_;
  std::vector<solvers::Stage> stages_;
  int total_, every_;
  std::vector<std::string> slots_;
  std::FILE* out_;
  const solvers::Communicator* comm_;
  double comm_seconds_ = 0;  // comm_'s seconds at the last line drawn
  int comm_step_ = 0;        // and the step
  double last_draw_ = -1;
  int lines_drawn_ = 0;  // lines of the last redraw (a terminal line wraps when too long)
  // The current stage: its index, where it began (step, and seconds since train() began), and
  // the previous update (a stage begins after it).
  std::size_t stage_ = 0;
  int stage_begin_step_ = -1, stage_end_step_ = 0;
  double stage_begin_seconds_ = 0;
  std::string stage_name_;
  int previous_step_ = -1;
  double previous_seconds_ = 0;
};

// Pieces joined by spaces into lines of at most `width` characters (a piece longer than that
// has a line of its own).
std::vector<std::string> wrap(const std::vector<std::string>& pieces, std::size_t width);

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
