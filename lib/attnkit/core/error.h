// attnkit error types. The library never prints or exits: it throws one of these, and the
// command-line layer (lib/attnkit/cli) maps them to an exit status and a message
// `<tool>: <file>:<line>: <what>`.
#pragma once

#include <stdexcept>
#include <string>

namespace attnkit {

// Base of every attnkit error. `file` and `line` locate the cause when it is in a file
// (line 0: no line; empty file: no file). exit_status() is what a tool returns for it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, std::string file = {}, long line = 0)
      : std::runtime_error(what), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }
  // Attach a file (and line) to an error thrown without one; an existing one is kept.
  void locate(const std::string& file, long line = 0) {
    if (file_.empty()) {
      file_ = file;
      if (line_ == 0) line_ = line;
    }
  }
  virtual int exit_status() const { return 1; }

 private:
  std::string file_;
  long line_;
};

// Bad command-line usage or configuration: exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_status() const override { return 2; }
};

// Malformed or inconsistent input data: exit status 1.
class DataError : public Error {
 public:
  using Error::Error;
};

// Tensor shapes that do not fit together; the message names both shapes. Exit status 1.
class ShapeError : public DataError {
 public:
  using DataError::DataError;
};

// A file that cannot be opened, read or written. Exit status 1.
class IoError : public Error {
 public:
  using Error::Error;
};

// A run stopped by SIGINT or SIGTERM after saving what it needs to resume: exit status 130,
// as a shell reports a process ended by Ctrl-C.
class Interrupted : public Error {
 public:
  using Error::Error;
  int exit_status() const override { return 130; }
};

}  // namespace attnkit
