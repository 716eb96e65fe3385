#include "attnkit/cli/tool_hooks.h"

#include <iostream>
#include <memory>

#include "attnkit/cli/progress.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::cli {

GivenOption given(const App& app) {
  return [&app](const std::string& option) { return app.given(option); };
}

ProgressFn progress(App& app) {
  auto bar = std::make_shared<std::unique_ptr<Progress>>();
  const std::string name = app.name();
  const bool quiet = app.common().quiet;
  return [bar, name, quiet](int64_t done, int64_t total) {
    if (!*bar) *bar = std::make_unique<Progress>(name, total, quiet);
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

}  // namespace attnkit::cli
