// Attention of files, the logic behind attn-score: the checks of what was asked (score,
// local attention, parameters, what to emit, hard attention), then the operands read from
// their files and attend() on them, with errors naming the file at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/attention/score.h"
#include "attnkit/core/hooks.h"

namespace attnkit::attention {

// What attn-score was asked (its options, by their long names; "": not given).
struct ScoreRunOptions {
  std::string query, key, value, score = "scaled-dot", params, mask, padding, local, emit, hard;
  int64_t window = -1;
  float beta = 1.0f;
  uint64_t seed = 0;
};

// The scorer and options that o asks for, checked in the tool's order (UsageError naming the
// options); the parameters are not read yet.
struct ScoreRun {
  ScoreRunOptions files;
  Scorer scorer;
  LocalSpec local;
  Options opt;
  bool takes_params = false;
};
ScoreRun prepare_score_run(const ScoreRunOptions& o, const GivenOption& given);
// --shard: not with --hard sample (UsageError).
void check_score_shard(const ScoreRun& r);

// What an attention run computed: the result of the items a range gave (all of them without
// one), and the index of the first of them in the whole result (for cli::write_shard_tensor).
struct PartResult {
  Tensor result;
  int64_t first = 0;
};

// Reads the parameters and operands, and attends: the result of the items `range` gives (of
// the batch when an operand is 3-D, else of the query rows; null: all).
PartResult run_score(ScoreRun& r, const GivenOption& given, const ItemRange& range);

// The arrays the score (and predictive local attention) need from an .npz archive; a missing
// array is a DataError naming it and the archive.
void load_score_params(Scorer& s, LocalSpec& local, const std::string& path);

}  // namespace attnkit::attention
