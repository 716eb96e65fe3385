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

#include "attnkit/core/fields.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/babi.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/nn/optim.h"
#include "attnkit/train/best.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/module.h"

namespace attnkit::memory {

// A question in ids: its memory (the last M sentences of the story, oldest first), query
// and answer id.
struct EncodedQA {
  std::vector<std::vector<int32_t>> memory;
  std::vector<int32_t> query;
  int32_t answer = 0;
  int task = 0;
  int64_t story_offset = 0;  // index in the story of memory[0] (earlier sentences dropped)
  // The supporting facts bAbI marks, in the file's order: indexes into `memory`, -1 for a
  // fact older than the memory holds.
  std::vector<int64_t> support;
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
  int epochs = 100;  // epochs with the softmax (after linear start)
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
  int ls_patience = 0;  // end linear start after this many epochs without a new best
                        // validation loss (0: never; ls_max_epochs end it)
  bool rn = false;      // random noise
  // Keep the parameters of the epoch after linear start with the lowest validation error
  // (the first of equals) rather than the last epoch's: the authors' struct-attn code's model
  // selection (its held-out accuracy, every epoch). crf-kim's epochs of linear start are
  // candidates too, as in that code (a model kept from one keeps its potentials: kim_full).
  bool keep_best = false;
  uint64_t seed = 1;
  // UsageError when a value is out of range; 0 (epochs, lr, ls_max_epochs) and -1
  // (anneal_every) pass as "the recipe's" (memn2n_recipe fills them in).
  void validate() const;
};

// The training phase: enough, with the epoch number, to resume a run (saved in checkpoints).
struct Phase {
  bool linear = false;  // still in linear start
  int ls_epochs = 0;    // epochs spent in linear start
  double best_val_loss = 1e300;
  int ls_stale = 0;  // linear-start epochs since the best validation loss
  // the current epoch so far
  double loss_sum = 0.0;   // summed loss
  double wrong = 0.0;      // questions answered wrong
  double grad_norm = 0.0;  // largest global norm before clipping
};

struct EpochStats {
  int epoch = 0;        // 1-based, over the whole run
  bool linear = false;  // trained without softmax
  double lr = 0.0;
  double train_loss = 0.0;   // mean per question, as trained (noise, linear start)
  double train_error = 0.0;  // fraction wrong while training
  double val_loss = 0.0;     // mean per question, without noise, with the current softmax
  double val_error = 0.0;
  double grad_norm = 0.0;  // largest global norm before clipping
};

// Splits examples into training and validation sets: a seeded shuffle, then the last
// round(fraction * n) go to validation (none when fraction is 0 or n < 2).
void split_validation(const std::vector<EncodedQA>& all, double fraction, uint64_t seed,
                      std::vector<EncodedQA>* train, std::vector<EncodedQA>* val);

// One run of the paper's procedure as a module of the training layer (train/module.h; the
// layer's train::run drives it in memn2n-train, with checkpoints, resume, the NaN guard and
// the log), on train::DatasetModule: batch `position` of epoch `epoch` (0-based) is taken
// from nn::epoch_order(seed, epoch, n) and its noise from an Rng seeded by (seed, epoch,
// position): nothing but the
// parameters, the epoch, the position and the Phase (save_state) is needed to resume. A batch
// is kBatchChunks slices of consecutive questions (fewer for a shorter batch), each on its
// own tape with the model's parameters, their summed losses' gradients added in slice order:
// the same model for any thread count and under mpirun. At each epoch's end the module
// validates and moves the phase on (end_step); evaluate() reports that epoch's statistics.
class MemN2NTraining : public train::DatasetModule {
 public:
  static constexpr int64_t kBatchChunks = 4;
  // `config_yaml`: the stored configuration (describe()).
  MemN2NTraining(MemN2N& model, const std::vector<EncodedQA>& train,
                 const std::vector<EncodedQA>& val, const TrainOptions& opt, Phase phase = {},
                 std::string config_yaml = {});
  // The data is kept by reference: a temporary would dangle.
  MemN2NTraining(MemN2N&, const std::vector<EncodedQA>&, std::vector<EncodedQA>&&,
                 const TrainOptions&, Phase = {}) = delete;
  MemN2NTraining(MemN2N&, std::vector<EncodedQA>&&, const std::vector<EncodedQA>&,
                 const TrainOptions&, Phase = {}) = delete;
  int64_t batches() const { return batches_per_epoch(); }
  // Epochs of the run as far as known now (linear start counted at its maximum while on).
  int total_epochs() const;
  // Steps of the longest possible run (the layer's budget; the run stops at its real end).
  int64_t max_steps() const;
  double lr(int64_t epoch) const;  // the rate of a (0-based) epoch in the current phase

  struct StepOut {
    double loss = 0.0;       // summed over the batch
    double grad_norm = 0.0;  // before clipping
    bool epoch_end = false;  // this batch ended the epoch: `stats` is filled
    bool done = false;       // ... and the run
    EpochStats stats;
  };
  // One step as the training layer makes it (train::step, then end_step), for drivers
  // without files (tests). A non-finite loss is returned as it is and no update
  // is made.
  StepOut step(int64_t epoch, int64_t position);

  Phase& phase() { return phase_; }
  const EpochStats& last_epoch() const { return last_; }

  // ---- train::Module
  std::string kind() const override;
  nn::ParamStore& params() override { return model_.params(); }  // the net's own
  void save_state(nn::ModelFile& f) const override;
  void load_state(const nn::ModelFile& f) override;
  int slices() const override { return static_cast<int>(kBatchChunks); }
  train::Reduction reduction() const override { return train::Reduction::Sum; }
  std::vector<std::string> slice_sums() const override { return {"wrong"}; }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  double clip_gradients(double clip) override;
  train::StepEnd end_step(const nn::TrainState& s, double loss,
                          const train::Metrics& sums) override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  std::vector<std::string> eval_metrics() const override;
  train::Metrics evaluate() override;
  // The paper's criterion for the best of several runs: the error on the training questions
  // (with the softmax, without noise); finish() records it, the validation error and the seed.
  double score() override;
  void finish(nn::ModelFile& f) override;

 protected:
  void on_batch(const nn::TrainState& s) override;

 private:
  MemN2N& model_;
  const std::vector<EncodedQA>& train_;
  const std::vector<EncodedQA>& val_;
  TrainOptions o_;
  Phase phase_;
  nn::SGD* sgd_;                 // opt_
  std::vector<MemBatch> parts_;  // the current batch's slices
  bool linear_ = false;          // the current batch trains without the softmax
  double last_norm_ = 0.0;
  EpochStats last_;
  int64_t calls_ = 0;  // step() calls (its tapes' seeds)
  train::Tapes tapes_;
  double score_ = -1.0;
  train::BestParams best_{"val_error", false};  // with keep_best
  bool best_linear_ = false;                    // ... kept from a linear-start epoch
};

// The data of memn2n-train: each task's training file in DIR (bAbI's qaN_*_train.txt), one
// vocabulary for all, the last `memory` sentences of each story, and `val_fraction` of each
// task's questions held out (a shuffle seeded by `seed`).
struct MemN2NDataOptions {
  std::string dir;
  std::vector<int> tasks;
  int64_t memory = 50;
  double val_fraction = 0.1;
};
struct MemN2NData {
  data::Vocab vocab;
  std::vector<int> tasks;
  std::vector<EncodedQA> train, val;
  int64_t examples = 0;  // questions before the split
  int64_t longest = 1;   // words of the longest sentence or question
};
MemN2NData load_memn2n_data(const MemN2NDataOptions& o, uint64_t seed);

// The paper's schedule for this data where the options hold 0 (-1 for anneal_every): one
// task 100 epochs halved every 25, 20 of linear start; joint 60 halved every 15, 30 of
// linear start (the authors' config_babi_joint.m); joint with 10k questions a task 20 halved
// every 5 (the paper, sec. 4.2), 20 of linear start; rate 0.01, or 0.005 with linear start;
// embedding 20 for one task, 50 joint. With pe_longest, the position encoding's J is the
// longest sentence (+1 for the time word with temporal encoding): the authors' code.
void memn2n_recipe(const MemN2NData& d, TrainOptions& opt, MemN2NConfig& cfg, bool pe_longest);

// "spectral" (true: each weight's largest singular value, the authors' code) or "l2";
// UsageError naming clip-kind otherwise.
bool parse_clip_kind(const std::string& text);

// memn2n-train's switches --pe, --te, --ls and --rn (the paper's techniques), which had no
// effect once the techniques became the defaults (--no-pe, --no-te, --no-ls and --no-rn turn
// them off): no longer offered, but the YAML its model files store still begins with them,
// as false (fields::retired), so that the files stay what they were.
struct MemN2NRetired {
  template <class V>
  void fields(V& v) {
    for (const char* key : {"pe", "te", "ls", "rn"}) v(fields::retired(), {key, "", ""});
  }
};

// memn2n-train's configuration keys, each once (core/fields.h), in the order of its --help and
// of the YAML its model files store: the data's, the architecture's and the training's. The
// defaults are the paper's best configuration (PE, TE, LS, RN), with 0 (-1 for anneal-every)
// for "the recipe's" (memn2n_recipe). The model file's architecture is its own list
// (file.cpp); the stored YAML is the run's record.
struct MemN2NSettings {
  MemN2NRetired retired;  // stored before the training options (memn2n-train)
  MemN2NDataOptions data;
  MemN2NConfig model;
  TrainOptions train;
  std::string task = "1";              // N, all, or a list such as 1,2,4-20
  bool joint = false;                  // one model for all the listed tasks
  std::string pe_length = "sentence";  // or longest (memn2n_recipe's pe_longest)
  MemN2NSettings() {
    model.dim = 0, model.pe = model.te = true;
    train.anneal_every = -1, train.ls_max_epochs = 0, train.ls = train.rn = true;
  }
  template <class V>
  void fields(V& v) {
    auto pe_form = fields::text(
        model.pe_form, [](const std::string& s, const std::string&) { return parse_pe_form(s); },
        [](PeForm f) { return std::string(pe_form_name(f)); });
    auto tying = fields::text(
        model.tying, [](const std::string& s, const std::string&) { return parse_tying(s); },
        [](Tying t) { return std::string(tying_name(t)); });
    auto clip_kind = fields::text(
        train.clip_spectral,
        [](const std::string& s, const std::string&) { return parse_clip_kind(s); },
        [](bool spectral) { return std::string(spectral ? "spectral" : "l2"); });
    v(task, {"task", "LIST", "tasks: N, all, or a list such as 1,2,4-20"});
    v(joint, {"joint", "", "one model for all the listed tasks"});
    v(model.hops, {"hops", "K", "memory hops (1-10)"});
    v(model.dim, {"embed", "N", "embedding size (0: 20 for one task, 50 joint)", "dim"});
    v(data.memory,
      {"memory-size", "N", "the last N sentences of a story form the memory", "memory"});
    v(fields::negated(model.pe), {"no-pe", "", "bag of words instead of position encoding"});
    v(pe_form, {"pe-form", "F",
                "the position encoding's weights: code (the authors' Matlab code, around 1) or "
                "paper (the formula as printed, around 1/2)"});
    v(pe_length, {"pe-length", "L",
                  "the position encoding's J: sentence (each sentence's word count, the paper) or "
                  "longest (the training data's longest sentence or question, + 1 for the time "
                  "word with temporal encoding: the authors' code)"});
    v(fields::negated(model.te), {"no-te", "", "no temporal encoding"});
    v(fields::negated(train.ls), {"no-ls", "", "no linear start"});
    v(fields::negated(train.rn),
      {"no-rn", "", "no random noise (up to 10% empty time slots in training)"});
    v(tying, {"tying", "T", "adjacent or layerwise weight tying"});
    v(model.kv, {"kv", "", "the Key-Value Memory Network instead"});
    v(model.mask_empty, {"mask-empty", "",
                         "empty memory slots get no attention (default: as the authors' code, "
                         "they take part in the softmax with score 0)"});
    v(train.anneal_every, {"anneal-every", "E",
                           "halve the learning rate every E epochs (0: never; -1: 25; joint 15, "
                           "or 5 with 10k questions a task)"});
    v(train.ls_lr, {"ls-lr", "R", "learning rate during linear start"});
    v(train.ls_patience, {"ls-patience", "E",
                          "end linear start after E epochs without a new best validation loss "
                          "(0: never, only --ls-max-epochs)"});
    v(train.ls_max_epochs,
      {"ls-max-epochs", "E",
       "longest linear start (0: 20, or 30 joint on 1k: the authors' code's fixed lengths)"});
    v(clip_kind, {"clip-kind", "KIND",
                  "each weight's gradient norm that --clip bounds: spectral (its largest singular "
                  "value, a word table stacked with its temporal rows: the authors' code) or l2"});
    v(train.clip_global,
      {"clip-global", "",
       "clip the norm of all the gradients together (default: each weight's on its own)"});
    v(model.init_std, {"init-std", "S",
                       "the weights are drawn from N(0, S^2) (the authors' struct-attn code: "
                       "0.316, 1/sqrt(10))"});
    v(train.keep_best,
      {"keep-best", "",
       "keep the parameters of the epoch after linear start (crf-kim: of any epoch) with the "
       "lowest validation error (the first of equals; the authors' struct-attn code), not the "
       "last epoch's"});
    v(data.val_fraction,
      {"valid-fraction", "F", "fraction of each task's training questions held out for validation",
       "val-fraction"});
  }
};

// memn2n-train's module: a run that owns its model (drawn from `seed`) and reads the shared
// data; its files carry the configuration, the vocabulary and the tasks.
class MemN2NJob : public MemN2NTraining {
 public:
  MemN2NJob(std::shared_ptr<const MemN2NData> data, std::unique_ptr<MemN2N> model,
            const TrainOptions& opt, std::string config_yaml);
  void describe(nn::ModelFile& f) const override;

 private:
  std::shared_ptr<const MemN2NData> data_;
  std::unique_ptr<MemN2N> model_;
};

struct EvalResult {
  double loss = 0.0;               // mean cross-entropy per question
  std::vector<int32_t> predicted;  // answer id per question
  std::vector<Tensor> attention;   // when asked: per question [sentences, hops]
};

// Answers every question (softmax unless `linear`), in batches of `batch`.
EvalResult evaluate(const MemN2N& model, const std::vector<EncodedQA>& data, bool linear = false,
                    bool want_attention = false, int64_t batch = 32);

// Fraction of predictions that differ from the answers.
double error_rate(const std::vector<EncodedQA>& data, const std::vector<int32_t>& predicted);

// Supporting-fact selection (Kim et al. 2017, Table 4): hop k's choice is the argmax of its
// attention over the question's sentences (the first of equal maxima, oldest first), scored
// against the k-th fact bAbI marks (the file's order). Hops and facts are aligned by index
// only: with F facts and K hops, the first min(F, K) pairs are scored; the hops after the
// F-th (fewer facts than hops) and the facts after the K-th are not. A fact the memory does
// not hold (older than its M sentences) is a miss. `attention`: per question [sentences,
// hops], as evaluate() gives it (oldest first).
struct FactSelection {
  int64_t correct = 0;  // scored pairs whose hop chose its fact
  int64_t scored = 0;   // pairs scored (0: the data marks no facts)
  double rate() const {
    return scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
  }
};
FactSelection fact_selection(const std::vector<EncodedQA>& data,
                             const std::vector<Tensor>& attention);

}  // namespace attnkit::memory
