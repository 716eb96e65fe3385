#include "attnkit/cli/tool_hooks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <memory>

#include "attnkit/cli/progress.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/train/trainer.h"

namespace attnkit::cli {

GivenOption given(const App& app) {
  return [&app](const std::string& option) { return app.given(option); };
}

ProgressFn progress(App& app, const std::string& unit) {
  auto bar = std::make_shared<std::unique_ptr<Progress>>();
  const std::string name = app.name();
  const bool quiet = app.common().quiet;
  return [bar, name, quiet, unit](int64_t done, int64_t total) {
    if (!*bar) {
      *bar = std::make_unique<Progress>(name, total, quiet);
      (*bar)->set_unit(unit);
    }
    if (done > 0) (*bar)->update(done);
  };
}

ItemRange shard_range(const App& app) {
  if (!app.shard().given) return nullptr;
  const Shard shard = app.shard();
  return [shard](int64_t count) { return std::make_pair(shard.begin(count), shard.end(count)); };
}

void report(App& app, const std::vector<std::string>& lines) {
  if (app.common().quiet) return;
  for (const std::string& line : lines) std::cerr << app.name() << ": " << line << "\n";
}

void write_text(const std::string& path, std::string_view text) {
  if (path == "-") {
    std::cout << text;
  } else {
    io::write_file(path, text);
  }
}

namespace {

std::string file_of(const std::string& path) {
  if (path.empty() || path == "-") return "";
  return io::split_member(path).first;
}

}  // namespace

Outputs::Outputs(std::initializer_list<std::string> main, std::initializer_list<std::string> side)
    : exceptions_(std::uncaught_exceptions()) {
  for (const std::initializer_list<std::string>* group : {&main, &side})
    for (const std::string& p : *group)
      if (!file_of(p).empty()) train::check_writable(file_of(p));
  for (const std::string& p : side) {
    Side s;
    s.path = file_of(p);
    if (s.path.empty()) continue;
    struct stat st {};
    if (::stat(s.path.c_str(), &st) == 0) {
      s.existed = true;
      s.inode = st.st_ino, s.device = st.st_dev;
      s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    }
    side_.push_back(s);
  }
}

Outputs::~Outputs() {
  if (std::uncaught_exceptions() <= exceptions_) return;  // the run succeeded
  for (const Side& s : side_) {
    struct stat st {};
    if (::stat(s.path.c_str(), &st) != 0) continue;
    const long long mtime =
        static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    const bool written =
        !s.existed || st.st_ino != s.inode || st.st_dev != s.device || mtime != s.mtime_ns;
    if (written && S_ISREG(st.st_mode)) ::unlink(s.path.c_str());
  }
}

}  // namespace attnkit::cli
