// Running a pointer network, the logic behind ptr-run: the answers to problems (or their
// scores), each decoding's attention, and a picture of the first tours; and the problems of
// its tasks with their exact answers, the logic behind ptrtask-gen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attnkit/core/hooks.h"
#include "attnkit/data/ptrtask.h"

namespace attnkit::models {

// What ptr-run was asked (its options, by their long names; "": not given).
struct PtrRunOptions {
  std::string model, input, attention, draw, output = "-";
  bool eval = false;
  int beam = 1;
  int64_t draw_count = 8;
  int threads = 0;
};

// Checks the options (UsageError naming them) and that the outputs can be written, then
// returns the answers, a line each (the indices pointed at), or with o.eval the scores
// (ptr_score_tsv); writes o.attention (arrays s<i>) and o.draw (.svg or .png: the first
// o.draw_count tours) when named.
std::string run_ptrnet(const PtrRunOptions& o);

// ptrtask-gen: `count` problems of o (o.task set; --n, when given, sets n_min and n_max) drawn
// in order from `seed`, then solved on `threads` threads (`progress` counts the tours solved;
// the other tasks are quick). The options are checked first (UsageError naming them), and the
// output `path` checked writable. Returns the problems as text, one a line; or, for a path
// ending in .npz, writes the arrays points and answers there and returns nothing.
std::optional<std::string> generate_ptr_problems(data::PtrGenOptions o, int64_t count,
                                                 const std::string& path, uint64_t seed,
                                                 int threads, const GivenOption& given, int64_t n,
                                                 const ProgressFn& progress);

}  // namespace attnkit::models
