// What the library's run functions (the logic behind the *-run tools) ask of their caller:
// - GivenOption: whether the user gave an option (by its long name), for checks that depend
//   on what was asked, not only on the values (a flag for one kind of model only, a default
//   that the model overrides);
// - ProgressFn: `done` of `total` items finished, for a progress bar (null: no reports);
// - ItemRange: the items [begin, end) of `count` that the run computes (--shard K/N's slice;
//   null: all of them).
// The command line passes cli::given(app), cli::progress(app) and cli::shard_range(app)
// (cli/tool_hooks.h); a program that links the library passes its own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace attnkit {

using GivenOption = std::function<bool(const std::string&)>;
using ProgressFn = std::function<void(int64_t done, int64_t total)>;
using ItemRange = std::function<std::pair<int64_t, int64_t>(int64_t count)>;

// Reports progress when there is a ProgressFn: (0, total) when the work starts, then each
// (done, total).
inline void tick(const ProgressFn& progress, int64_t done, int64_t total) {
  if (progress) progress(done, total);
}

}  // namespace attnkit
