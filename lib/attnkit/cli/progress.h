// Progress of long work on standard error (DESIGN.md, "Command-line conventions"):
// - on a terminal, one line redrawn in place at most 10 times a second:
//     seq2seq-train [#######.............]  3400/10000  34% 212.5/s ETA 0:31 loss=2.315
// - otherwise (a log file, a pipe), a plain line every `every_seconds` seconds (and every
//   `every_steps` steps when that is not 0), and always the last one:
//     seq2seq-train: step 3400/10000 (34%) 212.5/s ETA 0:31 loss=2.315
// - nothing with --quiet.
// A total of 0 means unknown: no bar, percentage or ETA.
//
//   cli::Progress bar(app.name(), steps, app.common().quiet);
//   for (...) { ...; bar.update(step, {{"loss", loss}, {"acc", acc}}); }
//   bar.finish();   // ends the terminal line (also done by the destructor)
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace attnkit::cli {

using Metrics = std::vector<std::pair<std::string, double>>;

class Progress {
 public:
  // On std::cerr, a terminal when isatty(stderr).
  Progress(std::string name, int64_t total, bool quiet);
  // For tests: any stream, terminal or not, and a clock in seconds.
  Progress(std::string name, int64_t total, bool quiet, std::ostream& out, bool terminal,
           std::function<double()> clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Plain-line period (non-terminal output): every `seconds` (default 10) and, when `steps`
  // is > 0, every `steps` steps.
  void set_plain_interval(double seconds, int64_t steps = 0);
  // What is counted, named in the plain lines ("step" unless set: "problem 30/100").
  void set_unit(std::string unit) { unit_ = std::move(unit); }
  // Progress from a step other than 0 (a resumed run): the rate and ETA count from here.
  void set_start(int64_t step);

  // Step `step` (of total) is done; shown when it is time to (and always for step == total).
  void update(int64_t step, const Metrics& metrics = {});
  // Shows the last update if it was not shown, and ends a terminal line. Idempotent.
  void finish();

  // The text of one report (without the terminal's "\r" or the newline), for tests.
  std::string line(int64_t step, const Metrics& metrics, double elapsed) const;

 private:
  void show(bool final);
  std::string name_, unit_ = "step";
  int64_t total_;
  bool quiet_, terminal_;
  std::ostream* out_;
  std::function<double()> clock_;
  double start_time_, last_shown_;
  int64_t start_step_ = 0, step_ = 0, last_step_shown_ = 0, plain_steps_ = 0;
  double plain_seconds_ = 10.0;
  size_t last_width_ = 0;
  Metrics metrics_;
  bool pending_ = false, finished_ = false, drawn_ = false, ever_shown_ = false;
};

// "1:02:03", "4:05" — a duration for ETAs.
std::string format_duration(double seconds);
// A metric value for humans: 4 significant digits ("2.315", "0.0001234", "1.235e+06").
std::string format_metric(double v);

}  // namespace attnkit::cli
