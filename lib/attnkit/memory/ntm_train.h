// Training and running a Neural Turing Machine, the logic behind ntm-train and ntm-run:
// training options and their optimiser, the episode stream (fresh task episodes or a data set
// in shuffled epochs), one optimiser step, averages over log windows; loading a model file,
// evaluation by length, outputs of a data set and the arrays of a trace.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm.h"
#include "attnkit/memory/ntm_io.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/trainer.h"

namespace attnkit::memory {

// ntm-train's optimisation keys.
struct NtmTrainOptions {
  int64_t batch = 1;
  std::string optimizer = "rmsprop";  // Graves' centred RMSProp, or adam
  double lr = 1e-4, momentum = 0.9, decay = 0.95, eps = 1e-4;
  double clip_value = 10, clip_norm = 0;  // 0: off
  double write_penalty = 0;               // λ on the writes' change of stored values (0: off)
  void validate() const;                  // UsageError naming the option
};

// The optimiser of the model's trainable parameters.
std::unique_ptr<nn::Optimizer> make_ntm_optimizer(const Ntm& ntm, const NtmTrainOptions& o);

// Training episodes: fresh ones of a task drawn from `rng` (the caller keeps it, e.g. in the
// trainer's checkpointed RNGs), or a data set's episodes in the order nn::epoch_order(seed,
// epoch) with the position kept in the TrainState (so that a resumed run continues exactly).
class NtmEpisodeSource {
 public:
  NtmEpisodeSource(const data::SeqTaskOptions& task, Rng& rng) : task_(task), rng_(&rng) {}
  NtmEpisodeSource(const NtmDataset& ds, uint64_t seed) : ds_(&ds), seed_(seed) {}
  data::Episode next(nn::TrainState& s);

 private:
  data::SeqTaskOptions task_;
  Rng* rng_ = nullptr;
  const NtmDataset* ds_ = nullptr;
  uint64_t seed_ = 0;
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

// One optimiser step on o.batch episodes: forward, backward (the batch's mean of the
// per-sequence cost), the gradient's global norm (clipped to o.clip_norm when set), clipping
// by value, the update; with o.write_penalty λ > 0 the gradient is that of the cost plus λ
// times the writes' change of stored values (run_episode). loss: nats per sequence (the cost alone);
// grad_norm; metric bits_per_seq, and write_change (per sequence) when λ > 0.
nn::StepResult ntm_train_step(const Ntm& ntm, ad::Tape& tape, nn::Optimizer& opt,
                              const NtmTrainOptions& o, NtmEpisodeSource& episodes,
                              nn::TrainState& s);

// Averages of step results over a log window (per step; bits per sequence over the window's
// sequences).
struct NtmLogWindow {
  int64_t steps = 0, sequences = 0, wrong = 0;
  double loss_sum = 0, norm_sum = 0;
  void add(const nn::StepResult& r, int64_t batch);
  double loss() const { return steps ? loss_sum / static_cast<double>(steps) : 0.0; }
  double grad_norm() const { return steps ? norm_sum / static_cast<double>(steps) : 0.0; }
  double bits_per_sequence() const {
    return sequences ? static_cast<double>(wrong) / static_cast<double>(sequences) : 0.0;
  }
  void reset() { *this = NtmLogWindow(); }
};

// A model file of kind "ntm" with its configuration and parameters in place (DataError
// naming the file).
struct LoadedNtm {
  nn::ModelFile file;
  NtmConfig config;
  std::unique_ptr<nn::ParamStore> params;
  std::unique_ptr<Ntm> ntm;
  int64_t input = 0, output = 0;
};
LoadedNtm load_ntm(const std::string& path);

// Whether `path` (no ":NAME" member) is an .npz data set from seqtask-gen (arrays inputs and
// steps); false for any other file and for standard input.
bool is_ntm_dataset(const std::string& path);

// "3,10,20" → lengths in [1, 100000]; UsageError naming --lengths.
std::vector<int64_t> parse_lengths(const std::string& text);

// Bits per sequence by length (evaluation without gradients).
struct LengthReport {
  std::map<int64_t, LengthScore> by_length;
  LengthScore all;
  void add(const Ntm& ntm, ad::Tape& tape, const data::Episode& e);
  // TSV: length, sequences, bits_per_seq, wrong_fraction, and a last row "all".
  std::string tsv() const;
};

// Element-wise logistic σ(y) of the logits.
Tensor output_probabilities(const Tensor& logits);

// The named arrays of a trace (the read<k>, reads<k>, write<k>, erase<k>, add<k> per head,
// memory, inputs and outputs), as ntm-run --trace writes them.
std::vector<std::pair<std::string, Tensor>> trace_arrays(const NtmTrace& trace,
                                                         const NtmConfig& cfg, Tensor inputs,
                                                         Tensor outputs);

}  // namespace attnkit::memory
