// Multi-head attention of files, the logic behind attn-mha: the checks of what was asked,
// PyTorch's parameters, then the operands read from their files and multi_head_attention()
// on them, with errors naming the file at fault.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/attention/mha.h"
#include "attnkit/attention/score_run.h"
#include "attnkit/core/hooks.h"

namespace attnkit::attention {

// What attn-mha was asked (its options, by their long names; "": not given).
struct MhaRunOptions {
  std::string query, key, value, params, mask, padding, emit = "context";
  int64_t heads = 0;
};

// The options and parameters that o asks for, checked in the tool's order (UsageError naming
// the options; a DataError naming the parameters' file).
struct MhaRun {
  MhaRunOptions files;
  MhaOptions opt;
  MhaParams params;
};
MhaRun prepare_mha_run(const MhaRunOptions& o, const GivenOption& given);
// --shard: context and weights only (UsageError).
void check_mha_shard(const MhaRun& r);

// Reads the operands (self-attention without --key) and attends: the result of the items
// `range` gives (of the batch for 3-D queries, else of the query rows; null: all).
PartResult run_mha(MhaRun& r, const GivenOption& given, const ItemRange& range);

}  // namespace attnkit::attention
