// Glue between the NTM model, its data and its files: episodes from seqtask-gen's .npz data
// sets, scoring (loss, wrong bits), the model file ("ntm" kind: hyper-parameters as YAML,
// input/output sizes, parameters), and evaluation by sequence length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm.h"
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
