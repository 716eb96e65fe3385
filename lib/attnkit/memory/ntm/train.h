// Training and running a Neural Turing Machine, the logic behind ntm-train and ntm-run:
// training options and their optimiser, the training module (fresh task episodes or a data
// set in shuffled epochs) that the training layer runs; loading a model file, evaluation by
// length, outputs of a data set and the arrays of a trace.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/fields.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/memory/ntm/model.h"
#include "attnkit/memory/ntm/task.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/basic_module.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"

namespace attnkit::memory {

// ntm-train's optimisation keys (the shared ones, --steps, --batch-size, --lr and --clip,
// come through the training layer's flags into these fields).
struct NtmTrainOptions {
  int64_t batch = 1;
  std::string optimizer = "rmsprop";  // Graves' centred RMSProp, or adam
  double lr = 3e-4, momentum = 0.9, decay = 0.95, eps = 1e-4;
  double clip_value = 10, clip_norm = 0;  // 0: off
  double write_penalty = 0;               // λ on the writes' change of stored values (0: off)
  void validate() const;                  // UsageError naming the field
  // ntm-train's optimiser keys (batch, lr and clip_norm come from its training options).
  template <class V>
  void fields(V& v) {
    v(optimizer, {"optimizer", "KIND", "rmsprop (Graves' centred form) or adam"});
    v(momentum, {"momentum", "M", "rmsprop: momentum"});
    v(decay, {"decay", "D", "rmsprop: decay of the averages"});
    v(eps, {"eps", "E", "rmsprop: epsilon inside the square root; adam: outside"});
    v(clip_value, {"clip-value", "V", "clamp gradients to [-V, V] (0: off)"});
    v(write_penalty,
      {"write-penalty", "L",
       "add this times the writes' change of stored values (sum over cells of |M| |dM|, "
       "smoothed) to the cost: filling empty memory is free, wearing down what is stored "
       "costs (0: off)"});
  }
};

// The optimiser of the model's trainable parameters.
std::unique_ptr<nn::Optimizer> make_ntm_optimizer(const Ntm& ntm, const NtmTrainOptions& o);

// What an NTM trains on: fresh episodes of a task every step (drawn from a generator saved in
// checkpoints), or a data set's episodes in shuffled epochs (nn::epoch_order(seed, epoch)):
// seqtask-gen's bit vectors, or symbol pairs (transduce-gen's, ntm_task.h's NtmPairs).
struct NtmSource {
  bool fresh = true;
  data::SeqTaskOptions task;  // fresh
  NtmDataset data;            // else, bit vectors
  bool symbols = false;       // else, symbol pairs:
  NtmPairs pairs;
  int64_t input_width() const {
    return fresh ? task.input_width() : symbols ? pairs.width() : data.input_width();
  }
  int64_t output_width() const {
    return fresh ? task.output_width() : symbols ? pairs.width() : data.output_width();
  }
  int64_t count() const { return symbols ? pairs.count() : data.count(); }  // not fresh
};
// The source of `path`: seqtask-gen's .npz data set or transduce-gen's SOURCE<TAB>TARGET pairs
// (told apart by content: an .npz archive is a data set, anything else is read as pairs).
NtmSource read_ntm_source(const std::string& path);

// Training an NTM as a module of the training layer (train/module.h): a step is o.batch
// episodes, one slice each (each on its own tape, the gradients added in episode order: the
// same model for any number of threads or MPI ranks); the loss is the mean over the batch of
// nats per sequence (plus λ times the writes' change with a write penalty); the gradients
// are clipped to a global norm of o.clip_norm (when set) and then to [-clip_value,
// clip_value]. Step metrics: bits_per_seq (wrong bits per sequence, the paper's unit) or,
// on symbol pairs, symbols_per_seq (wrong symbols per sequence), and write_change with a
// write penalty. On symbol pairs the model file keeps the vocabulary (texts "vocab").
class NtmTraining : public train::DrawnModule {
 public:
  NtmTraining(NtmConfig config, NtmTrainOptions options, NtmSource source, int64_t steps,
              uint64_t seed, std::string config_yaml = "");

  const Ntm& ntm() const { return *ntm_; }
  const NtmConfig& config() const { return cfg_; }
  const std::vector<data::Episode>& batch() const { return batch_; }  // after begin_batch

  std::string kind() const override { return "ntm"; }
  int64_t batches_per_epoch() const override;
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int slices() const override { return static_cast<int>(o_.batch); }
  int64_t begin_batch(const nn::TrainState& s) override;
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  std::vector<std::string> slice_sums() const override { return {"wrong_bits", "write_change"}; }
  double clip_gradients(double clip) override;
  train::StepEnd end_step(const nn::TrainState&, double, const train::Metrics& sums) override;
  std::vector<std::string> step_metrics() const override;

 private:
  NtmConfig cfg_;
  NtmTrainOptions o_;
  NtmSource src_;
  std::unique_ptr<Ntm> ntm_;
  train::EpochBatches epochs_;  // a data set's epochs (not fresh)
  std::vector<data::Episode> batch_;
};

struct LoadedNtm : train::Loaded<NtmConfig, Ntm> {
  int64_t input = 0, output = 0;
  bool symbols = false;  // trained on symbol pairs: vocab holds their symbols
  data::Vocab vocab;
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

// Coarse and fine accuracy on symbol pairs by bucket of target lengths (data/transduce.h's
// metrics, as stackmem-run --eval reports them); and the answer of one pair.
// `done(i)` (when given) after each pair, for progress.
std::map<int64_t, data::Accuracy> evaluate_ntm_pairs(
    const Ntm& ntm, ad::Tape& tape, const NtmPairs& pairs, int64_t bucket,
    const std::function<void(int64_t)>& done = nullptr);
std::vector<int32_t> ntm_answer(const Ntm& ntm, ad::Tape& tape, const data::Episode& e);

// Element-wise logistic σ(y) of the logits.
Tensor output_probabilities(const Tensor& logits);
// The softmax of each row of the logits [T, V] (a symbol model's outputs).
Tensor symbol_probabilities(const Tensor& logits);

// The named arrays of a trace (the read<k>, reads<k>, write<k>, erase<k>, add<k> per head,
// memory, inputs and outputs), as ntm-run --trace writes them.
std::vector<std::pair<std::string, Tensor>> trace_arrays(const NtmTrace& trace,
                                                         const NtmConfig& cfg, Tensor inputs,
                                                         Tensor outputs);

}  // namespace attnkit::memory
