// The Neural Turing Machine paper's algorithmic tasks (Graves, Wayne & Danihelka 2014, 4.1-4.3)
// as input/target matrices, one row per time step.
//
// copy (width W, length L): W + 1 input channels, 2L + 1 steps. Steps 0..L-1 carry random
//   bits on channels 0..W-1, step L the delimiter (channel W alone), steps L+1..2L are zero
//   input while the target (W channels) is the sequence again.
// repeat-copy (width W, length L, repeats n): W + 2 input channels, W + 1 output channels.
//   Steps 0..L-1 the sequence, step L the delimiter (channel W), step L+1 the repeat count as
//   n / max_repeats on channel W+1; then n·L output steps of the sequence repeated and one
//   step of the end marker (output channel W). L + 2 + nL + 1 steps.
// associative-recall (width W, items n of `item_len` vectors each): W + 2 input channels, W
//   output channels. Each item is a delimiter step (channel W) then its vectors; then the
//   query: a delimiter step (channel W+1), the vectors of one of the first n-1 items (drawn
//   uniformly), a second query delimiter; then item_len output steps whose target is the item
//   that followed the query item: n(item_len + 1) + 2 item_len + 2 steps.
// Bits are fair coin flips. mask marks the steps whose outputs are scored.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::data {

enum class SeqTask { Copy, RepeatCopy, AssociativeRecall };
// "copy", "repeat-copy", "associative-recall"; ChoiceError otherwise.
SeqTask parse_seq_task(const std::string& name);
std::string seq_task_name(SeqTask task);

struct SeqTaskOptions {
  SeqTask task = SeqTask::Copy;
  int64_t width = 8;
  int64_t min_len = 1, max_len = 20;  // copy, repeat-copy: length; associative recall: items
  int64_t min_repeats = 1, max_repeats = 10;  // repeat-copy
  int64_t item_len = 3;                       // associative recall
  // The paper's defaults of a task: copy 8 bits, 1..20; repeat copy 8 bits, 1..10, 1..10
  // repeats; associative recall 6 bits, 2..6 items of 3 vectors.
  static SeqTaskOptions defaults(SeqTask task);
  void validate() const;  // UsageError naming the option
  int64_t input_width() const;
  int64_t output_width() const;
  // Number of steps of an episode of this length (and repeats).
  int64_t steps(int64_t len, int64_t repeats = 1) const;
};

struct Episode {
  Tensor input;         // [T, input_width]
  Tensor target;        // [T, output_width], zero where not scored
  Tensor mask;          // [T], 1 at scored steps
  int64_t len = 0;      // length (items for associative recall)
  int64_t repeats = 0;  // repeat copy; 0 otherwise
};

// One episode; len = 0 draws the length uniformly from [min_len, max_len] (repeats likewise).
Episode make_episode(const SeqTaskOptions& opt, Rng& rng, int64_t len = 0, int64_t repeats = 0);

}  // namespace attnkit::data
