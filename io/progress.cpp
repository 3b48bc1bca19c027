#include "io/progress.h"

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

Progress::Mode Progress::mode_from_name(const std::string& name, std::FILE* out) {
  if (name == "line") return Mode::line;
  if (name == "plain") return Mode::plain;
  if (name == "none") return Mode::none;
  return isatty(fileno(out)) ? Mode::line : Mode::plain;
}

Progress::Progress(Mode mode, int total_steps, int every, std::vector<std::string> slot_names,
                   std::FILE* out)
    : mode_(mode),
      total_(total_steps),
      every_(std::max(1, every)),
      slots_(std::move(slot_names)),
      out_(out) {}

std::string Progress::describe(const solvers::StepInfo& info) const {
  std::ostringstream s;
  s << "step " << info.step << "/" << total_ << " [" << info.stage << "] loss " << sci(info.loss);
  std::string terms;
  for (std::size_t k = 0; k < slots_.size() && k < info.slot_losses.size(); ++k)
    if (slots_.size() <= 6 || k < 5)
      terms += (terms.empty() ? "" : " ") + slots_[k] + " " + sci(info.slot_losses[k]);
  if (!terms.empty()) s << " (" << terms << (slots_.size() > 6 ? " ..." : "") << ")";
  for (const auto& [name, value] : info.metrics) s << " " << name << " " << sci(value);
  const double elapsed = info.seconds - first_seconds_;
  const int done = info.step - first_step_;
  if (done > 0 && elapsed > 0) {
    const double rate = done / elapsed;
    s << " | " << nn::detail::short_number(rate, 3) << " steps/s, ETA "
      << format_duration((total_ - info.step) / rate);
  }
  return s.str();
}

void Progress::update(const solvers::StepInfo& info, bool last) {
  if (mode_ == Mode::none) return;
  if (first_step_ < 0) {
    first_step_ = info.step - 1;
    first_seconds_ = 0;
  }
  if (mode_ == Mode::plain) {
    if (info.step % every_ == 0 || last || !info.metrics.empty())
      std::fprintf(out_, "%s\n", describe(info).c_str());
    std::fflush(out_);
    return;
  }
  // A terminal: redraw at most ten times a second.
  if (!last && info.seconds - last_draw_ < 0.1) return;
  last_draw_ = info.seconds;
  std::fprintf(out_, "\r\033[K%s", describe(info).c_str());
  std::fflush(out_);
  open_line_ = true;
}

void Progress::finish() {
  if (open_line_) std::fprintf(out_, "\n");
  open_line_ = false;
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
  out_ << info.step << "," << info.stage << "," << nn::detail::short_number(info.seconds, 6) << ","
       << nn::detail::short_number(info.loss, 17) << ","
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
