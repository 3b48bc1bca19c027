#include "io/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "autodiff/errors.h"
#include "nn/detail/names.h"

namespace jetpde::io {
namespace {

std::string sci(double x) { return nn::detail::short_number(x, 3); }

std::string header(const std::vector<std::string>& slots, const std::vector<std::string>& metrics) {
  std::string h = "step,stage,seconds,loss,learning_rate";
  for (const auto& s : slots) h += ",loss_" + s;
  for (const auto& s : slots) h += ",weight_" + s;
  for (const auto& m : metrics) h += "," + m;
  return h;
}

}  // namespace

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = std::lround(s);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

namespace {
constexpr std::array<options::EnumName<Progress::Mode>, 4> kModes{{
    {Progress::Mode::automatic, "auto", "one updating line on a terminal, plain lines otherwise"},
    {Progress::Mode::line, "line", "one updating line"},
    {Progress::Mode::plain, "plain", "a line every progress_every steps (batch logs)"},
    {Progress::Mode::none, "none", "nothing"},
}};
}  // namespace

const options::EnumTable<Progress::Mode>& Progress::mode_names() {
  static constexpr options::EnumTable<Mode> table("progress mode", kModes);
  return table;
}

Progress::Mode Progress::mode_from_name(const std::string& name, std::FILE* out) {
  const Mode mode = mode_names().from_name(name);
  if (mode != Mode::automatic) return mode;
  return isatty(fileno(out)) ? Mode::line : Mode::plain;
}

Progress::Progress(Mode mode, const std::vector<solvers::Stage>& stages, int every,
                   std::vector<std::string> slot_names, std::FILE* out,
                   const solvers::Communicator* comm)
    : mode_(mode),
      stages_(stages),
      total_(0),
      every_(std::max(1, every)),
      slots_(std::move(slot_names)),
      out_(out),
      comm_(comm && comm->size() > 1 ? comm : nullptr) {
  for (const solvers::Stage& st : stages_) total_ += st.steps;
}

std::vector<std::string> wrap(const std::vector<std::string>& pieces, std::size_t width) {
  std::vector<std::string> lines;
  for (const std::string& p : pieces) {
    if (!lines.empty() && lines.back().size() + 1 + p.size() <= width)
      lines.back() += " " + p;
    else
      lines.push_back(p);
  }
  return lines;
}

// Time left: the rest of this stage at its measured rate, later stages at the same rate; a
// line-search stage (L-BFGS; this one or a later one) may end early: at most its steps.
std::string Progress::eta(const solvers::StepInfo& info) const {
  const int done = info.step - stage_begin_step_;
  const double elapsed = info.seconds - stage_begin_seconds_;
  if (done <= 0 || elapsed <= 0 || stage_ >= stages_.size()) return "";
  const double rate = done / elapsed;
  const auto is_lbfgs = [&](std::size_t k) { return stages_[k].line_search(); };
  const int left = std::max(0, stage_end_step_ - info.step);
  double adam_seconds = is_lbfgs(stage_) ? 0 : left / rate;
  int lbfgs_later = 0;
  for (std::size_t k = stage_ + 1; k < stages_.size(); ++k)
    if (is_lbfgs(k))
      lbfgs_later += stages_[k].steps;
    else
      adam_seconds += stages_[k].steps / rate;
  std::string out = "| " + nn::detail::short_number(rate, 3) + " steps/s, ETA ";
  if (is_lbfgs(stage_)) return out + "at most " + format_duration((left / rate) + adam_seconds);
  out += format_duration(adam_seconds);
  if (lbfgs_later > 0) out += " + L-BFGS (at most " + std::to_string(lbfgs_later) + " steps)";
  return out;
}

std::vector<std::string> Progress::describe(const solvers::StepInfo& info) {
  track(info);
  return pieces(info);
}

void Progress::track(const solvers::StepInfo& info) {
  // A new stage begins when the name changes or the step passes the stage's last one.
  if (stage_begin_step_ < 0) {
    stage_begin_step_ = info.step - 1;
    stage_name_ = info.stage;
    // A resumed run starts inside a stage: the one whose steps hold this step.
    stage_end_step_ = 0;
    for (stage_ = 0; stage_ < stages_.size(); ++stage_) {
      stage_end_step_ += stages_[stage_].steps;
      if (info.step <= stage_end_step_ || stage_ + 1 == stages_.size()) break;
    }
  } else if (stage_ + 1 < stages_.size() &&
             (info.stage != stage_name_ || info.step > stage_end_step_)) {
    ++stage_;
    stage_end_step_ = previous_step_ + stages_[stage_].steps;
    stage_begin_step_ = previous_step_;
    stage_begin_seconds_ = previous_seconds_;
    stage_name_ = info.stage;
  }
  previous_step_ = info.step;
  previous_seconds_ = info.seconds;
}

std::vector<std::string> Progress::pieces(const solvers::StepInfo& info) const {
  // A stage in a precision of its own says so: "[polish fp64]".
  std::string stage = info.stage;
  if (stage_ < stages_.size() && stages_[stage_].precision)
    stage += " " + compiler::precision_name(*stages_[stage_].precision);
  std::vector<std::string> out{"step " + std::to_string(info.step) + "/" + std::to_string(total_) +
                               " [" + stage + "] loss " + sci(info.loss)};
  for (std::size_t k = 0; k < slots_.size() && k < info.slot_losses.size(); ++k)
    out.push_back(std::string(k == 0 ? "(" : "") + slots_[k] + " " + sci(info.slot_losses[k]) +
                  (k + 1 == slots_.size() ? ")" : ""));
  for (const auto& [name, value] : info.metrics) out.push_back(name + " " + sci(value));
  const std::string e = eta(info);
  if (!e.empty()) out.push_back(e);
  return out;
}

namespace {

std::size_t terminal_width(std::FILE* out) {
  winsize w{};
  if (ioctl(fileno(out), TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 120;
}

std::string joined(const std::vector<std::string>& pieces) {
  std::string s;
  for (const std::string& p : pieces) s += (s.empty() ? "" : " ") + p;
  return s;
}

}  // namespace

std::string Progress::ranks(const solvers::StepInfo& info) {
  if (!comm_) return "";
  const double seconds = comm_->seconds();
  const int steps = info.step - comm_step_;
  const double per_step = steps > 0 ? (seconds - comm_seconds_) / steps : 0.0;
  comm_seconds_ = seconds;
  comm_step_ = info.step;
  return "| " + std::to_string(comm_->size()) + " ranks, comm " +
         nn::detail::short_number(per_step * 1e3, 3) + " ms/step";
}

void Progress::update(const solvers::StepInfo& info, bool last) {
  if (mode_ == Mode::none) return;
  track(info);
  if (mode_ == Mode::plain) {
    if (info.step % every_ == 0 || last || !info.metrics.empty()) {
      std::vector<std::string> p = pieces(info);
      if (comm_) p.push_back(ranks(info));
      std::fprintf(out_, "%s\n", joined(p).c_str());
    }
    std::fflush(out_);
    return;
  }
  // A terminal: redraw at most ten times a second, over the lines of the last draw.
  if (!last && info.seconds - last_draw_ < 0.1) return;
  last_draw_ = info.seconds;
  std::vector<std::string> p = pieces(info);
  if (comm_) p.push_back(ranks(info));
  const std::vector<std::string> lines = wrap(p, terminal_width(out_) - 1);
  std::string text = "\r";
  if (lines_drawn_ > 1) text += "\033[" + std::to_string(lines_drawn_ - 1) + "A";
  text += "\033[J";
  for (std::size_t k = 0; k < lines.size(); ++k) text += (k ? "\n" : "") + lines[k];
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  lines_drawn_ = static_cast<int>(lines.size());
}

void Progress::finish() {
  if (lines_drawn_ > 0) std::fprintf(out_, "\n");
  lines_drawn_ = 0;
  std::fflush(out_);
}

HistoryWriter::HistoryWriter(const std::string& path, std::vector<std::string> slot_names,
                             std::vector<std::string> metric_names, int every, int resume_step)
    : slots_(std::move(slot_names)), metrics_(std::move(metric_names)), every_(std::max(1, every)) {
  const std::string head = header(slots_, metrics_);
  std::vector<std::string> kept;
  if (resume_step >= 0 && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    if (line == head)
      for (int number = 2; std::getline(in, line); ++number) {
        if (line.empty()) break;
        const std::string first = line.substr(0, line.find(','));
        long step = 0;
        const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), step);
        if (ec != std::errc() || end != first.data() + first.size())
          throw UserError(path + ":" + std::to_string(number) +
                          ": --resume: not a row of history.csv (it starts with '" +
                          first.substr(0, 40) + "', not a step number); remove the line");
        if (step > resume_step) break;
        kept.push_back(line);
      }
  }
  out_.open(path, std::ios::trunc);
  if (!out_) throw UserError(path + ": cannot write the history file");
  out_ << head << "\n";
  for (const auto& line : kept) out_ << line << "\n";
  out_.flush();
}

void HistoryWriter::record(const solvers::StepInfo& info, bool last) {
  if (info.step % every_ != 0 && !last && info.metrics.empty()) return;
  out_ << info.step << "," << info.stage << "," << nn::detail::short_number(info.run_seconds, 6)
       << "," << nn::detail::short_number(info.loss, 17) << ","
       << nn::detail::short_number(info.learning_rate, 6);
  for (std::size_t k = 0; k < slots_.size(); ++k)
    out_ << ","
         << (k < info.slot_losses.size() ? nn::detail::short_number(info.slot_losses[k], 17) : "");
  for (std::size_t k = 0; k < slots_.size(); ++k)
    out_ << "," << (k < info.weights.size() ? nn::detail::short_number(info.weights[k], 17) : "");
  for (const auto& m : metrics_) {
    const auto it = info.metrics.find(m);
    out_ << "," << (it == info.metrics.end() ? "" : nn::detail::short_number(it->second, 17));
  }
  out_ << "\n";
  out_.flush();
}

}  // namespace jetpde::io
