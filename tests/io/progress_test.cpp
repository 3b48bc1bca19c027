// The progress line: every loss term (wrapped, never dropped), and an ETA from the current
// stage's rate, an upper bound in an L-BFGS stage.
#include "io/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace jetpde::io {
namespace {

std::string joined(const std::vector<std::string>& pieces) {
  std::string s;
  for (const auto& p : pieces) s += (s.empty() ? "" : " ") + p;
  return s;
}

TEST(Progress, ShowsEveryLossTermAndWrapsThem) {
  std::vector<std::string> slots;
  for (int k = 0; k < 9; ++k) slots.push_back("term" + std::to_string(k));
  const std::vector<solvers::Stage> stages{{.name = "adam", .steps = 100}};
  Progress progress(Progress::Mode::none, stages, 10, slots);
  solvers::StepInfo info{.step = 1, .stage = "adam", .loss = 1.0, .seconds = 0.5};
  info.slot_losses.assign(9, 0.25);
  const std::string line = joined(progress.describe(info));
  for (const auto& s : slots) EXPECT_NE(line.find(s + " 0.25"), std::string::npos) << line;
  EXPECT_EQ(line.find("..."), std::string::npos) << line;
  // Wrapped at 40 characters: every piece is still there, no line is longer (but a longer piece).
  const std::vector<std::string> lines = wrap(progress.describe(info), 40);
  EXPECT_GT(lines.size(), 2u);
  std::string all;
  for (const auto& l : lines) {
    EXPECT_LE(l.size(), 40u) << l;
    all += (all.empty() ? "" : " ") + l;
  }
  EXPECT_EQ(all, joined(progress.describe(info)));
}

// On a terminal (here a file: 120 columns), a line longer than the width is drawn on several
// lines, and the next draw goes back up over all of them.
TEST(Progress, ATerminalLineWrapsAndIsRedrawnInPlace) {
  std::vector<std::string> slots;
  for (int k = 0; k < 12; ++k) slots.push_back("dirichlet_boundary_" + std::to_string(k));
  const std::vector<solvers::Stage> stages{{.name = "adam", .steps = 100}};
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Progress progress(Progress::Mode::line, stages, 10, slots, out);
  solvers::StepInfo info{.step = 1, .stage = "adam", .loss = 1.0, .seconds = 0.5};
  info.slot_losses.assign(slots.size(), 0.25);
  progress.update(info, false);
  info.step = 2;
  info.seconds = 1.0;
  progress.update(info, false);
  progress.finish();
  std::rewind(out);
  std::string text;
  for (int ch; (ch = std::fgetc(out)) != EOF;) text += static_cast<char>(ch);
  std::fclose(out);
  for (const auto& s : slots) EXPECT_NE(text.find(s + " 0.25"), std::string::npos) << s;
  // 12 terms of about 25 characters and the rest: 4 lines of at most 119 characters, so the
  // redraw moves up 3 lines and clears to the end of the screen.
  const std::size_t redraw = text.find("\r\033[3A\033[Jstep 2/100");
  ASSERT_NE(redraw, std::string::npos) << text;
  std::size_t newlines = 0, longest = 0, line = 0;
  for (std::size_t k = 0; k < redraw; ++k) {
    if (text[k] == '\n') ++newlines, line = 0;
    longest = std::max(longest, ++line);
  }
  EXPECT_EQ(newlines, 3u);
  EXPECT_LE(longest, 120u + 4);  // the leading "\r\033[J"
  EXPECT_EQ(text.back(), '\n');
}

// A stage in a precision of its own shows it next to its name; one in the run's precision does not.
TEST(Progress, AStageWithItsOwnPrecisionSaysSo) {
  const std::vector<solvers::Stage> stages{{.name = "lbfgs", .optimizer = "lbfgs", .steps = 2},
                                           {.name = "polish",
                                            .optimizer = "lbfgs",
                                            .steps = 2,
                                            .precision = compiler::PrecisionPolicy::fp64}};
  Progress progress(Progress::Mode::none, stages, 10, {"pde"});
  solvers::StepInfo info{.step = 1, .stage = "lbfgs", .loss = 1.0, .slot_losses = {1.0}};
  EXPECT_EQ(progress.describe(info).front(), "step 1/4 [lbfgs] loss 1");
  info.step = 3;
  info.stage = "polish";
  EXPECT_EQ(progress.describe(info).front(), "step 3/4 [polish fp64] loss 1");
}

TEST(Progress, EtaFromTheStageRateAndAnUpperBoundForLbfgs) {
  const std::vector<solvers::Stage> stages{{.name = "adam", .steps = 100},
                                           {.name = "lbfgs", .optimizer = "lbfgs", .steps = 50}};
  Progress progress(Progress::Mode::none, stages, 10, {"pde"});
  solvers::StepInfo info{.step = 0, .stage = "adam", .loss = 1.0, .slot_losses = {1.0}};
  std::string line;
  for (int step = 1; step <= 100; ++step) {  // 10 steps a second
    if (step == 11) {
      EXPECT_NE(line.find("10 steps/s, ETA 9s + L-BFGS (at most 50 steps)"), std::string::npos)
          << line;
    }
    info.step = step;
    info.seconds = step * 0.1;
    line = joined(progress.describe(info));
  }
  info.stage = "lbfgs";
  for (int step = 101; step <= 110; ++step) {  // L-BFGS at 2 steps a second, from t = 10 s
    info.step = step;
    info.seconds = 10 + (step - 100) * 0.5;
    line = joined(progress.describe(info));
  }
  EXPECT_NE(line.find("2 steps/s, ETA at most 20s"), std::string::npos) << line;
}

}  // namespace
}  // namespace jetpde::io
