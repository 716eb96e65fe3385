#include "attnkit/cli/progress.h"

#include <cmath>
#include <cstdio>
#include <iostream>

#include "attnkit/cli/cli.h"

namespace attnkit::cli {

namespace {
double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}
constexpr double kTerminalPeriod = 0.1;  // at most 10 redraws a second
constexpr int kBarWidth = 20;
constexpr size_t kLineWidth = 80;  // a report fits a terminal of 80 columns
}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string format_metric(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

Progress::Progress(std::string name, int64_t total, bool quiet)
    : Progress(std::move(name), total, quiet, std::cerr, stderr_is_tty(), steady_seconds) {}

Progress::Progress(std::string name, int64_t total, bool quiet, std::ostream& out, bool terminal,
                   std::function<double()> clock)
    : name_(std::move(name)),
      total_(total < 0 ? 0 : total),
      quiet_(quiet),
      terminal_(terminal),
      out_(&out),
      clock_(std::move(clock)) {
  start_time_ = last_shown_ = clock_();
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {
  }
}

void Progress::set_plain_interval(double seconds, int64_t steps) {
  plain_seconds_ = seconds;
  plain_steps_ = steps;
}

void Progress::set_start(int64_t step) {
  start_step_ = step;
  step_ = step;
  last_step_shown_ = step;
  start_time_ = last_shown_ = clock_();
}

std::string Progress::line(int64_t step, const Metrics& metrics, double elapsed) const {
  std::string s;
  char buf[128];
  const double rate = elapsed > 0 ? static_cast<double>(step - start_step_) / elapsed : 0.0;
  if (terminal_) {
    s = name_ + " ";
    if (total_ > 0) {
      const int filled = static_cast<int>(kBarWidth * std::min<int64_t>(step, total_) / total_);
      s += "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] ";
    }
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(step));
    s += buf;
  } else {
    std::snprintf(buf, sizeof buf, " %lld", static_cast<long long>(step));
    s += name_ + ": " + unit_ + buf;
  }
  if (total_ > 0) {
    std::snprintf(buf, sizeof buf, "/%lld", static_cast<long long>(total_));
    s += buf;
    const double pct = 100.0 * static_cast<double>(step) / static_cast<double>(total_);
    std::snprintf(buf, sizeof buf, terminal_ ? " %3.0f%%" : " (%.0f%%)", pct);
    s += buf;
  }
  if (elapsed > 0 && step > start_step_) {
    std::snprintf(buf, sizeof buf, " %.4g/s", rate);
    s += buf;
    if (total_ > 0 && step < total_)
      s += " ETA " + format_duration(static_cast<double>(total_ - step) / rate);
    else
      s += " in " + format_duration(elapsed);
  }
  // The metrics that fit in 80 columns, in order (the first, the loss, the one that matters);
  // the rest are in the --log file and the summary (bert-pretrain's line was 400 wide).
  for (const auto& [k, v] : metrics) {
    const std::string m = " " + k + "=" + format_metric(v);
    if (s.size() + m.size() > kLineWidth) break;
    s += m;
  }
  return s;
}

void Progress::show(bool final) {
  const double now = clock_();
  const std::string text = line(step_, metrics_, now - start_time_);
  if (terminal_) {
    std::string out = "\r" + text;
    if (text.size() < last_width_) out += std::string(last_width_ - text.size(), ' ');
    last_width_ = text.size();
    if (final) out += "\n";
    *out_ << out << std::flush;
    drawn_ = !final;
  } else {
    *out_ << text << "\n" << std::flush;
  }
  last_shown_ = now;
  last_step_shown_ = step_;
  ever_shown_ = true;
  pending_ = false;
}

void Progress::update(int64_t step, const Metrics& metrics) {
  if (quiet_ || finished_) return;
  step_ = step;
  metrics_ = metrics;
  pending_ = true;
  const double now = clock_();
  const bool last = total_ > 0 && step >= total_;
  bool due;
  if (terminal_)
    due = !ever_shown_ || now - last_shown_ >= kTerminalPeriod;
  else
    due = now - last_shown_ >= plain_seconds_ ||
          (plain_steps_ > 0 && step - last_step_shown_ >= plain_steps_);
  if (last) {
    show(true);
    finished_ = true;
  } else if (due) {
    show(false);
  }
}

void Progress::finish() {
  if (quiet_ || finished_) return;
  finished_ = true;
  if (pending_ && step_ != last_step_shown_) {
    show(true);
  } else if (terminal_ && drawn_) {
    *out_ << "\n" << std::flush;
    drawn_ = false;
  }
}

}  // namespace attnkit::cli
