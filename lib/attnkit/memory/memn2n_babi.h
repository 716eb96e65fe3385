// MemN2N on bAbI: examples as ids, batches, the paper's training procedure (section 4.2 of
// Sukhbaatar et al. 2015) and evaluation per task.
//
// Training, as the paper: SGD without momentum on the loss summed over a batch (not averaged),
// learning rate `lr` halved every `anneal_every` epochs, each weight's gradient rescaled to a
// norm of at most `clip` (the authors' code: its spectral norm, a word table with its temporal
// rows; `clip_spectral` false: its L2 norm; `clip_global`: the L2 norm of all of them
// together), batches of 32, 10% of the training questions held out for validation (the last
// ones after a seeded shuffle). Linear start (ls): the run begins without the hops' softmax
// at rate `ls_lr`; after `ls_max_epochs` (the authors' code: a fixed 20, 30 joint) or, with
// `ls_patience` P > 0, when the validation loss has not made a new best for P epochs (the
// paper's "stopped decreasing"), the softmax is put back and the ordinary `epochs` epochs
// begin from `lr`. Random noise (rn): during training the sentences'
// ages (temporal rows) are spread by inserting up to 10% empty time slots at random places
// (the reference implementation's way of adding empty memories).
//
// Every random choice is drawn from Rngs seeded by (seed, epoch, batch), so a run resumed
// from a checkpoint continues exactly as the uninterrupted run. A batch is computed as
// kBatchChunks sub-batches, each on its own copy of the model and tape (in parallel, up to
// max_threads()), whose gradients are summed in a fixed order: the result does not depend
// on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/rng.h"
#include "attnkit/data/babi.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/memn2n.h"
#include "attnkit/nn/optim.h"

namespace attnkit::memory {

// A question in ids: its memory (the last M sentences of the story, oldest first), query
// and answer id.
struct EncodedQA {
  std::vector<std::vector<int32_t>> memory;
  std::vector<int32_t> query;
  int32_t answer = 0;
  int task = 0;
  int64_t story_offset = 0;  // index in the story of memory[0] (earlier sentences dropped)
};

// The vocabulary of examples: every word of the stories and questions and every answer as
// written ("n,w" is one answer token), with Vocab's reserved ids (0 = <pad> is "no word").
data::Vocab babi_vocab(const std::vector<data::BabiExample>& examples);

// Examples in ids, keeping the last `memory` sentences. Unknown words and answers map to
// <unk>.
std::vector<EncodedQA> encode_babi(const std::vector<data::BabiExample>& examples,
                                   const data::Vocab& vocab, int64_t memory);

// A batch of the examples at `idx` (see MemBatch). With `noise` (training with random noise),
// ages are spread by up to 10% empty slots, drawn from it; ages are capped at time_rows - 1.
MemBatch make_batch(const std::vector<EncodedQA>& data, const std::vector<size_t>& idx,
                    const MemN2NConfig& cfg, Rng* noise);

struct TrainOptions {
  int epochs = 100;           // epochs with the softmax (after linear start)
  int64_t batch = 32;
  double lr = 0.01;
  int anneal_every = 25;      // halve the rate every this many epochs (0: never)
  double clip = 40.0;         // max gradient norm (0: no clipping)
  bool clip_global = false;   // clip the norm of all gradients together (else each weight's)
  bool clip_spectral = true;  // each weight's norm is its largest singular value (Matlab's
                              // norm(G), the authors' code), a word table stacked with its
                              // temporal rows; else its L2 norm
  bool ls = false;            // linear start
  double ls_lr = 0.005;
  int ls_max_epochs = 20;
  int ls_patience = 0;        // end linear start after this many epochs without a new best
                              // validation loss (0: never; ls_max_epochs end it)
  bool rn = false;            // random noise
  uint64_t seed = 1;
};

// The training phase: enough, with the epoch number, to resume a run (saved in checkpoints).
struct Phase {
  bool linear = false;         // still in linear start
  int ls_epochs = 0;           // epochs spent in linear start
  double best_val_loss = 1e300;
  int ls_stale = 0;            // linear-start epochs since the best validation loss
  // the current epoch so far
  double loss_sum = 0.0;       // summed loss
  double wrong = 0.0;          // questions answered wrong
  double grad_norm = 0.0;      // largest global norm before clipping
};

struct EpochStats {
  int epoch = 0;              // 1-based, over the whole run
  bool linear = false;        // trained without softmax
  double lr = 0.0;
  double train_loss = 0.0;    // mean per question, as trained (noise, linear start)
  double train_error = 0.0;   // fraction wrong while training
  double val_loss = 0.0;      // mean per question, without noise, with the current softmax
  double val_error = 0.0;
  double grad_norm = 0.0;     // largest global norm before clipping
};

// Splits examples into training and validation sets: a seeded shuffle, then the last
// round(fraction * n) go to validation (none when fraction is 0 or n < 2).
void split_validation(const std::vector<EncodedQA>& all, double fraction, uint64_t seed,
                      std::vector<EncodedQA>* train, std::vector<EncodedQA>* val);

// One run of the paper's procedure, batch by batch, so that a step-based driver (nn::Trainer:
// checkpoints, resume, NaN guard) can run it. Batch `position` of epoch `epoch` (0-based) is
// taken from nn::epoch_order(seed, epoch, n) and its noise from an Rng seeded by (seed,
// epoch, position): nothing but the parameters, the epoch, the position and the Phase is
// needed to resume.
class MemN2NTraining {
 public:
  static constexpr int64_t kBatchChunks = 4;
  MemN2NTraining(MemN2N& model, const std::vector<EncodedQA>& train,
                 const std::vector<EncodedQA>& val, const TrainOptions& opt, Phase phase = {});
  int64_t batches() const { return batches_; }  // per epoch
  // Epochs of the run as far as known now (linear start counted at its maximum while on).
  int total_epochs() const;
  // Steps of the longest possible run (the Trainer's budget).
  int64_t max_steps() const;
  double lr(int64_t epoch) const;  // the rate of a (0-based) epoch in the current phase

  struct StepOut {
    double loss = 0.0;       // summed over the batch
    double grad_norm = 0.0;  // before clipping
    bool epoch_end = false;  // this batch ended the epoch: `stats` is filled
    bool done = false;       // ... and the run
    EpochStats stats;
  };
  // Trains on one batch (forward, backward, clipping, SGD step). A non-finite loss is
  // returned as it is (the driver's guard reports it) and no update is made.
  StepOut step(int64_t epoch, int64_t position);

  Phase& phase() { return phase_; }
  nn::SGD& optimizer() { return sgd_; }

 private:
  MemN2N& model_;
  const std::vector<EncodedQA>& train_;
  const std::vector<EncodedQA>& val_;
  TrainOptions opt_;
  Phase phase_;
  nn::SGD sgd_;
  std::vector<std::unique_ptr<MemN2N>> replicas_;  // one per sub-batch
  std::vector<std::unique_ptr<ad::Tape>> tapes_;
  int64_t batches_;
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

struct TrainHooks {
  // After every batch: questions done this epoch, of `total`.
  std::function<void(int64_t done, int64_t total)> on_batch;
  // After every epoch (epoch = epochs done) with the phase to resume from. Returning false
  // stops the run.
  std::function<bool(const EpochStats&, int epoch, const Phase&)> on_epoch;
};

// Trains `model` to the end, from the start or from `start_epoch` epochs done in `phase`.
// A non-finite loss is a DataError naming the epoch. Returns the final phase.
Phase train_memn2n(MemN2N& model, const std::vector<EncodedQA>& train,
                   const std::vector<EncodedQA>& val, const TrainOptions& opt,
                   const TrainHooks& hooks = {}, int start_epoch = 0, Phase phase = {});

struct EvalResult {
  double loss = 0.0;                  // mean cross-entropy per question
  std::vector<int32_t> predicted;     // answer id per question
  std::vector<Tensor> attention;      // when asked: per question [sentences, hops]
};

// Answers every question (softmax unless `linear`), in batches of `batch`.
EvalResult evaluate(const MemN2N& model, const std::vector<EncodedQA>& data, bool linear = false,
                    bool want_attention = false, int64_t batch = 32);

// Fraction of predictions that differ from the answers.
double error_rate(const std::vector<EncodedQA>& data, const std::vector<int32_t>& predicted);

}  // namespace attnkit::memory
