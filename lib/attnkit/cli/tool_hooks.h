// Small helpers of the run tools (the thin mains over the library's run functions): the
// options a user gave, a progress bar, a report on stderr, and text output to a file or standard
// output.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/hooks.h"

namespace attnkit::cli {

// After app.parse(): whether an option was given on the command line (App::given).
GivenOption given(const App& app);

// A cli::Progress bar (named app.name(), silent with --quiet) made at the first report, with
// the total that report gives; it ends when the last copy of the function is destroyed.
// `unit` names what is counted in the plain lines ("problem 30/100").
ProgressFn progress(App& app, const std::string& unit = "step");

// With --shard K/N, its slice of the items (Shard::begin, Shard::end); without, null (all).
ItemRange shard_range(const App& app);

// Unless --quiet, each line on standard error after the tool's name ("<tool>: <line>").
void report(App& app, const std::vector<std::string>& lines);

// Text to `path`: standard output when "-" (through std::cout), else io::write_file.
void write_text(const std::string& path, std::string_view text);

// A run's output files, declared before its work: each named one ("" and "-" are none; an
// .npz member's file for "F.npz:NAME") is checked at once (train::check_writable), so that a
// bad name fails before the work; and when the run fails (the guard is destroyed by an
// exception), the side outputs (--trace, --draw, --alignments, ...) that it wrote are
// removed, as the main output's atomic write leaves nothing. A side file that was there
// before and was not written again stays.
//   const cli::Outputs outputs({out}, {trace, draw});
class Outputs {
 public:
  Outputs(std::initializer_list<std::string> main, std::initializer_list<std::string> side);
  ~Outputs();
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;

 private:
  struct Side {
    std::string path;
    bool existed = false;
    unsigned long long inode = 0, device = 0;
    long long mtime_ns = 0;
  };
  std::vector<Side> side_;
  int exceptions_ = 0;
};

}  // namespace attnkit::cli
