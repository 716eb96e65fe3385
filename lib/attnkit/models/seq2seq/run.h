// Running a trained translator, the logic behind seq2seq-translate: the translations of
// source lines (or only their target-side tokenisation), with each sentence's alignment.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/hooks.h"

namespace attnkit::models {

// What seq2seq-translate was asked (its options, by their long names; "": not given).
struct TranslateRunOptions {
  std::string model, input = "-", output = "-", alignments, alignment_tokens, trace;
  int beam = 1;
  double length_penalty = 0.0;
  int64_t max_length = 50;
  bool tokenize_only = false, no_kv_cache = false;
  int threads = 0;
};

// Checks the options (UsageError naming them), then writes to o.output the translation of
// each line of o.input that `range` takes (null: all), or with o.tokenize_only each line as
// the model's target tokens would read; o.alignments (arrays s<i>, i the line's index in the
// whole input) and o.alignment_tokens (DIR/<i>.rows, DIR/<i>.cols) when named; o.trace
// (a syntactic-attention model: arrays s<i>, the arc potentials [T, S, S] of each emitted
// token's step, Seq2Seq::syntactic_arcs; UsageError for another model). `progress`
// counts the sentences translated.
void run_translate(const TranslateRunOptions& o, const ItemRange& range,
                   const ProgressFn& progress);

}  // namespace attnkit::models
