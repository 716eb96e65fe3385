// Format detection, whole-file reading, tensor reading/writing by path, atomic files.
#include "attnkit/io/tensor_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include "attnkit/core/error.h"
#include "attnkit/core/fault.h"

namespace attnkit::io {

namespace {

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

}  // namespace

void require_finite(const Tensor& t, const std::string& name) {
  for (int64_t i = 0; i < t.size(); ++i) {
    const float v = t[i];
    if (std::isfinite(v)) continue;
    const int64_t cols = t.rank() >= 1 ? t.dim(t.rank() - 1) : 1;
    const int64_t rows = t.rank() >= 2 ? t.dim(t.rank() - 2) : 1;
    const int64_t row = cols ? i / cols : 0;
    std::string where = "row " + std::to_string(row % rows + 1);
    if (t.rank() >= 3) where = "matrix " + std::to_string(row / rows + 1) + ", " + where;
    throw DataError(where + ", column " + std::to_string(cols ? i % cols + 1 : 1) + " is " +
                        (std::isnan(v) ? "NaN"
                         : v > 0       ? "+inf"
                                       : "-inf") +
                        ": inputs must be finite numbers",
                    name);
  }
}

void write_file(const std::string& path, std::string_view bytes) {
  AtomicFile out(path);
  out.write(bytes);
  out.commit();
}

Format detect_format(std::string_view head) {
  if (head.substr(0, 6) == std::string_view("\x93NUMPY", 6)) return Format::Npy;
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
      head.substr(0, 4) == std::string_view("PK\x05\x06", 4))
    return Format::Npz;
  if (is_idx(head)) return Format::Idx;
  if (is_png(head)) return Format::Png;
  if (is_pgm(head)) return Format::Pgm;
  return Format::Text;
}

std::string read_all(const std::string& path) {
  const bool std_in = path == "-";
  // Standard input holds one stream: a second reader would see it empty and report a
  // misleading "no numbers".
  static std::atomic<bool> stdin_used{false};
  if (std_in && stdin_used.exchange(true))
    throw UsageError("standard input ('-') can be read only once; it was given twice");
  const int fd = std_in ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(errno_text("cannot open", errno), path);
  std::string out;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    try {
      out.reserve(static_cast<size_t>(st.st_size));
    } catch (const std::bad_alloc&) {
      if (!std_in) ::close(fd);
      throw IoError("out of memory while reading it (" + std::to_string(st.st_size >> 20) + " MB)",
                    path);
    }
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (!std_in) ::close(fd);
      throw IoError(errno_text("read error", err), path);
    }
    if (got == 0) break;
    try {
      out.append(buf, static_cast<size_t>(got));
    } catch (const std::bad_alloc&) {
      if (!std_in) ::close(fd);
      throw IoError(
          "out of memory while reading it (" + std::to_string(out.size() >> 20) + " MB read)",
          path);
    }
  }
  if (!std_in) ::close(fd);
  return out;
}

std::pair<std::string, std::string> split_member(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) return {spec, ""};
  std::string file = spec.substr(0, colon);
  if (file != "-" && !ends_with_ci(file, ".npz")) return {spec, ""};
  struct stat st;
  if (file != "-" && ::stat(spec.c_str(), &st) == 0) return {spec, ""};  // a file named so
  return {std::move(file), spec.substr(colon + 1)};
}

Tensor read_tensor(const std::string& spec, SourceInfo* info) {
  const auto [file, member] = split_member(spec);
  const std::string bytes = read_all(file);
  return parse_tensor(bytes, file, member, info);
}

void write_tensor(const std::string& path, const Tensor& t, const WriteOptions& opt) {
  std::string bytes;
  std::string target = path;
  try {
    if (path == "-") {
      bytes = opt.npy_on_stdout ? format_npy(t, opt.f64) : format_text(t, opt.precision);
    } else if (ends_with_ci(path, ".npy")) {
      bytes = format_npy(t, opt.f64);
    } else if (ends_with_ci(path, ".pgm")) {
      bytes = format_pgm(t);
    } else if (ends_with_ci(path, ".png")) {
      bytes = format_png(t);
    } else {
      auto [file, member] = split_member(path);
      if (ends_with_ci(file, ".npz")) {
        target = file;
        bytes = format_npz({{member.empty() ? "arr_0" : member, &t}}, opt.f64);
      } else {
        bytes = format_text(t, opt.precision);
      }
    }
  } catch (Error& e) {
    e.locate(path == "-" ? "<stdout>" : path);
    throw;
  }
  write_file(target, bytes);
}

void write_npz(const std::string& path,
               const std::vector<std::pair<std::string, const Tensor*>>& arrays, bool f64) {
  write_file(path, format_npz(arrays, f64));
}

void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& arrays,
               bool f64) {
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& [name, t] : arrays) refs.emplace_back(name, &t);
  write_npz(path, refs, f64);
}

// ---- AtomicFile

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    direct_ = true;
    return;
  }
  struct stat st;
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO: no temporary (never beside /dev/null), the bytes go straight in.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw IoError(errno_text("cannot open for writing", errno), path_);
    direct_ = true;
    return;
  }
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  if (base.empty()) throw IoError("is a folder, not a file name", path_);
  std::string tmpl = dir + "." + base + ".tmp.XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) throw IoError(errno_text("cannot create a file", errno), path_);
  tmp_ = tmpl;
  // mkstemp makes the file private (0600): give it the mode a plain open() would, or keep
  // the mode of the file it replaces.
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd_, mode);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  if (committed_) throw IoError("write after commit", path_);
  const std::string shown = path_ == "-" ? "<stdout>" : path_;
  int fd = fd_;
  if (path_ == "-") {
    // Whatever stdio holds goes first; then the bytes bypass its buffer, so that a failed
    // write is reported here, once, and leaves no pending data behind.
    std::cout.flush();
    if (std::fflush(stdout) != 0) throw IoError(errno_text("write error", errno), shown);
    fd = STDOUT_FILENO;
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  // The tests' kill point (core/fault.h): half the bytes written, then the kill.
  const bool fault = !direct_ && path_ != "-" && left > 1 && fault_armed("write");
  size_t until_fault = fault ? left / 2 : 0;
  while (left > 0) {
    const size_t chunk = until_fault > 0 ? until_fault : left;
    const ssize_t put = ::write(fd, p, chunk);
    if (put < 0) {
      if (errno == EINTR) continue;
      throw IoError(errno_text("write error", errno), shown);
    }
    p += put;
    left -= static_cast<size_t>(put);
    if (until_fault > 0) {
      until_fault -= static_cast<size_t>(put);
      if (until_fault == 0) fault_point("write");
    }
  }
}

void AtomicFile::commit() {
  if (committed_) return;
  if (path_ == "-") {
    committed_ = true;
    return;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw IoError(errno_text("write error", errno), path_);
  if (!direct_ && ::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw IoError(errno_text("cannot rename the finished file into place", errno), path_);
  committed_ = true;
}

}  // namespace attnkit::io
