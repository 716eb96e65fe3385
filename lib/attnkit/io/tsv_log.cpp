#include "attnkit/io/tsv_log.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // Whole numbers (steps, counts) in full: the shortest form of 100000 is "1e+05", which
  // sort -n and awk's numeric comparisons of a TSV read as 1.
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {
std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> v;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    v.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return v;
}
}  // namespace

TsvLog::TsvLog(std::string path) : path_(std::move(path)) { open("w"); }

TsvLog::TsvLog(std::string path, int64_t resume_step) : path_(std::move(path)) {
  if (path_ == "-") {
    open("w");
    return;
  }
  std::string old;
  if (std::FILE* probe = std::fopen(path_.c_str(), "rb")) {
    std::fclose(probe);
    old = read_all(path_);
  }
  if (old.empty()) {
    open("w");
    return;
  }
  // Keep the header and the rows up to resume_step; a torn last line (a kill mid-write) goes.
  std::istringstream in(old);
  std::string line, kept;
  long lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (in.eof() && old.back() != '\n') break;  // incomplete last line
    if (lineno == 1) {
      columns_ = split_tabs(line);
      kept += line + "\n";
      continue;
    }
    const std::string first = line.substr(0, line.find('\t'));
    char* end = nullptr;
    const double step = std::strtod(first.c_str(), &end);
    if (end == first.c_str())
      throw DataError("log row does not start with a step number", path_, lineno);
    if (step <= static_cast<double>(resume_step)) kept += line + "\n";
  }
  if (kept != old) {
    write_file(path_, kept);
  }
  open("a");
}

TsvLog::~TsvLog() {
  if (f_ && own_) std::fclose(f_);
}

void TsvLog::open(const char* mode) {
  if (path_ == "-") {
    f_ = stdout;
    own_ = false;
    return;
  }
  f_ = std::fopen(path_.c_str(), mode);
  if (!f_) throw IoError("cannot open the log for writing", path_);
  own_ = true;
}

void TsvLog::row(const Row& values) {
  std::string line;
  if (columns_.empty()) {
    for (const auto& [k, v] : values) {
      if (k.empty() || k.find_first_of("\t\n") != std::string::npos)
        throw Error("bad log column name '" + k + "'");
      columns_.push_back(k);
      line += (line.empty() ? "" : "\t") + k;
    }
    line += "\n";
  }
  if (values.size() != columns_.size())
    throw Error("log row has " + std::to_string(values.size()) + " values for " +
                std::to_string(columns_.size()) + " columns");
  std::string row;
  for (size_t c = 0; c < columns_.size(); ++c) {
    const std::pair<std::string, double>* found = nullptr;
    if (values[c].first == columns_[c]) {
      found = &values[c];
    } else {
      for (const auto& kv : values)
        if (kv.first == columns_[c]) found = &kv;
    }
    if (!found) throw Error("log row has no value for column '" + columns_[c] + "'");
    row += (c ? "\t" : "") + format_double(found->second);
  }
  line += row + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw IoError("write error", path_);
}

}  // namespace attnkit::io
