// Training metrics as a TSV file (--log FILE): a header line of column names taken from the
// first row's keys, then one line per row in that column order, flushed as it is written (a
// run that is killed leaves every row so far). Numbers are written as the shortest decimal
// that reads back to the same double ("nan", "inf", "-inf" for the non-finite).
//
// Resuming: open with `append` and the step the run resumes from; the file keeps its header
// and the rows whose first column is at most that step (rows a killed run wrote after its
// last checkpoint are dropped, so the log of a resumed run is the log of an uninterrupted
// one), and new rows go after them. A later row's keys must be the header's columns, in any
// order; a missing or extra key is an Error naming it.
//
//   io::TsvLog log(path);                   // new file (replaces an old one)
//   log.row({{"step", 100}, {"loss", 2.31}, {"lr", 1e-3}});
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace attnkit::io {

class TsvLog {
 public:
  using Row = std::vector<std::pair<std::string, double>>;
  // A new log (truncated). "-" writes to standard output.
  explicit TsvLog(std::string path);
  // Appending to the log of a run resumed at `resume_step` (see above); a missing or empty
  // file starts a new log.
  TsvLog(std::string path, int64_t resume_step);
  ~TsvLog();
  TsvLog(const TsvLog&) = delete;
  TsvLog& operator=(const TsvLog&) = delete;

  void row(const Row& values);
  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }

 private:
  void open(const char* mode);
  std::string path_;
  std::FILE* f_ = nullptr;
  bool own_ = false;
  std::vector<std::string> columns_;
};

// The shortest decimal text of v that reads back to v.
std::string format_double(double v);

}  // namespace attnkit::io
