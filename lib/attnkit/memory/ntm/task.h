// Glue between the NTM model, its data and its files: episodes from seqtask-gen's .npz data
// sets, scoring (loss, wrong bits), the model file ("ntm" kind: hyper-parameters as YAML,
// input/output sizes, parameters), and evaluation by sequence length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/data/transduce.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/ntm/model.h"
#include "attnkit/nn/model_file.h"

namespace attnkit::memory {

// A data set written by seqtask-gen: inputs [C, T, in], targets [C, T, out], mask [C, T],
// steps [C], lengths [C]. Read checks every shape and value range (DataError naming the file
// and the array).
struct NtmDataset {
  Tensor inputs, targets, mask, steps, lengths;
  int64_t count() const { return inputs.dim(0); }
  int64_t input_width() const { return inputs.dim(2); }
  int64_t output_width() const { return targets.dim(2); }
  data::Episode episode(int64_t i) const;
};
NtmDataset read_ntm_dataset(const std::string& path);
// The same from an archive's bytes (`path` for messages).
NtmDataset parse_ntm_dataset(std::string_view bytes, const std::string& path);

// Symbol transductions (transduce-gen's SOURCE<TAB>TARGET lines of space-separated symbols,
// read by data::read_tsv) as NTM episodes over a vocabulary of V ids (data/vocab.h: ids 0-3
// reserved). Inputs and outputs are V channels, one-hot: the source symbols, one step of the
// delimiter <bos>, then T + 1 steps of zero input whose targets are the T target symbols and
// <eos> (the scored steps; the NTM copy task's layout, with the end of the answer to find).
// The loss is a softmax cross-entropy over the V channels of a scored step, and the output
// of a step is its likeliest symbol besides <pad>, <bos> and <unk>; the answer is the outputs
// up to the first <eos>, scored by data::score_transduction (stackmem-run's metrics).
struct NtmPairs {
  std::string file;  // for messages
  data::Vocab vocab;
  std::vector<std::vector<int32_t>> sources, targets;
  int64_t count() const { return static_cast<int64_t>(sources.size()); }
  int64_t width() const { return vocab.size(); }
  data::Episode episode(int64_t i) const;  // len = the target's length
};
// The pairs of a file with the vocabulary of its symbols (a model's training data); or with a
// model's vocabulary, where a symbol outside it is a DataError naming the file and line. A
// malformed line (no tab, an empty side, an empty line), a reserved spelling such as <eos> as
// a symbol, or a file without pairs is a DataError naming the file (and line).
NtmPairs read_ntm_pairs(const std::string& path);
NtmPairs read_ntm_pairs(const std::string& path, const data::Vocab& vocab);
// The same from a text (`name` for messages); vocab null: the text's own.
NtmPairs parse_ntm_pairs(std::string_view text, const std::string& name,
                         const data::Vocab* vocab = nullptr);
// One pair as an episode of `width` channels (ids in [kReserved, width)).
data::Episode symbol_episode(const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                             int64_t width);
// The answer of logits [T, V] on a symbol episode: the likeliest symbol (not <pad>, <bos>,
// <unk>) of each scored step, up to the first <eos>.
std::vector<int32_t> symbol_answer(const Tensor& logits, const data::Episode& e);
// The target of a symbol episode (its scored steps' symbols, up to <eos>).
std::vector<int32_t> symbol_target(const data::Episode& e);

// The mask of an episode widened to the targets' shape (the scored outputs).
Tensor output_mask(const data::Episode& e);

// One episode through the model: the binary cross-entropy summed over the scored outputs
// (nats per sequence, a Var on the tape; the sum, not the mean, so that gradient sizes and
// RMSProp's epsilon match Graves' per-sequence cost), and the wrong bits after thresholding
// at 0.5. With write_penalty λ > 0, objective = loss + λ · how much the writes changed stored
// values (Ntm::forward's write_change, also in write_change); otherwise objective is loss.
struct EpisodeResult {
  ad::Var loss, objective, write_change;
  int64_t wrong_bits = 0;
  int64_t scored_bits = 0;
};
EpisodeResult run_episode(const Ntm& ntm, ad::Tape& t, const data::Episode& e,
                          double write_penalty = 0);
// The same for a symbol episode: the loss is the softmax cross-entropy summed over the scored
// steps (nats per sequence), and wrong_bits counts the scored steps whose likeliest symbol is
// wrong (scored_bits: the scored steps).
EpisodeResult run_symbol_episode(const Ntm& ntm, ad::Tape& t, const data::Episode& e,
                                 double write_penalty = 0);

// ntm-train's task keys: fresh episodes of a task, each size 0 for the task's default; stored
// with the model (ntm-run draws the same task's episodes).
struct NtmTaskConfig {
  std::string task;  // empty: trained on a data file
  int64_t width = 0, min_len = 0, max_len = 0;
  int64_t min_repeats = 1, max_repeats = 10, item_len = 3;
  // Each key once (core/fields.h): ntm-train's options, the stored YAML, ntm_task_from_yaml.
  template <class V>
  void fields(V& v) {
    v(fields::unset(task),
      {"task", "TASK", "copy, repeat-copy or associative-recall (fresh episodes every step)"});
    v(width, {"width", "N", "task: bits per vector (0: the task's, 8 or 6)", nullptr, true});
    v(min_len,
      {"len-min", "N", "task: shortest length or fewest items (0: the task's)", "min-len", true});
    v(max_len, {"len-max", "N", "task: longest length or most items (0: the task's, 20, 10 or 6)",
                "max-len", true});
    v(min_repeats, {"repeats-min", "N", "repeat-copy: fewest repeats", "min-repeats", true});
    v(max_repeats, {"repeats-max", "N", "repeat-copy: most repeats", "max-repeats", true});
    v(item_len, {"item-len", "N", "associative recall: vectors per item", nullptr, true});
  }
  // The task's options: its defaults (SeqTaskOptions::defaults), the sizes given here over
  // them (UsageError for an unknown task; not validated).
  data::SeqTaskOptions options() const;
};

// Model configuration and task keys read back from the YAML stored in a model file (the keys
// ntm-train declares); DataError naming `file` and the key.
NtmConfig ntm_config_from_yaml(const std::string& yaml, const std::string& file, int64_t input,
                               int64_t output);
// The task ("" when the model was trained on a data file) and its options.
std::string ntm_task_from_yaml(const std::string& yaml, const std::string& file,
                               data::SeqTaskOptions* opt);

// Bits per sequence by length on `count` fresh episodes per length (drawn from rng), and the
// fraction of scored bits that are wrong.
struct LengthScore {
  int64_t length = 0, sequences = 0, wrong = 0, bits = 0;
  double bits_per_sequence() const { return sequences ? double(wrong) / sequences : 0.0; }
  double wrong_fraction() const { return bits ? double(wrong) / bits : 0.0; }
};

}  // namespace attnkit::memory
