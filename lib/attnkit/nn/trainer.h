// The bookkeeping under the training layer (train/trainer.h: train::run, which every trainer
// uses; write a train::Module rather than calling this directly): checkpoints every N steps
// (atomic), exact resume, a NaN/Inf guard that never overwrites the last good checkpoint, an
// interrupt that checkpoints, and the final model written atomically. Model-agnostic: the
// caller owns the model, the data and the step; the Trainer owns the files.
//
//   nn::TrainerOptions o;
//   o.kind = "seq2seq"; o.model_path = out; o.steps = steps;
//   o.checkpoint_every = every; o.resume = resume;          // checkpoint: out + ".ckpt"
//   nn::Trainer trainer(o, store, adam);
//   trainer.add_rng("tape", tape.rng());                    // every RNG the steps draw from
//   trainer.base().config_yaml = app.config_yaml();         // saved in every file written
//   trainer.base().texts["vocab.source"] = vocab.format();
//   trainer.resume();                                       // loads the checkpoint if o.resume
//   trainer.run([&](nn::TrainState& s) {
//     const auto order = nn::epoch_order(seed, s.epoch, n_batches);
//     ... batch order[s.position]: forward, backward, clip, adam.step() ...
//     s.advance(n_batches);                                 // next position / epoch
//     return nn::StepResult{loss, grad_norm};
//   }, [&](const nn::TrainState& s, const nn::StepResult& r) { bar.update(s.step, ...); });
//
// Exact resume: a checkpoint holds the parameters, the optimiser state, the state of every
// added RNG and the TrainState (step, epoch, position in the epoch's data order). A step
// function that depends only on these (draw the data order from epoch_order(), not from a
// stream whose state is not saved) makes a run resumed after a kill end with the same model,
// bit for bit, as an uninterrupted one (with --threads 1).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/rng.h"
#include "attnkit/nn/model_file.h"

namespace attnkit::nn {

class ParamStore;
class Optimizer;

using Metrics = std::vector<std::pair<std::string, double>>;

struct TrainState {
  int64_t step = 0;      // steps done
  int64_t epoch = 0;     // passes over the data done
  int64_t position = 0;  // items (batches, examples) of the current epoch's order consumed
  // One more item consumed from an epoch of `items`: the position moves on, and at the end
  // of the epoch wraps to 0 with the epoch counted.
  void advance(int64_t items) {
    if (++position >= items) position = 0, ++epoch;
  }
};

struct StepResult {
  double loss = 0.0;
  double grad_norm = 0.0;    // checked like the loss (leave 0 when not computed)
  Metrics metrics = {};      // anything else to report
  bool stop = false;         // end the run after this step (early stopping)
  bool interrupted = false;  // a signal asked to stop: checkpoint, then throw Interrupted
};

struct TrainerOptions {
  std::string kind;              // model kind written in every file ("seq2seq")
  std::string model_path;        // the final model
  std::string checkpoint_path;   // "" = model_path + ".ckpt"
  int64_t steps = 0;             // total steps of the run (a resumed run counts from 0 too)
  int64_t checkpoint_every = 0;  // 0 = no periodic checkpoints
  bool resume = false;           // resume() loads checkpoint_path
  bool writer = true;            // writes files (false on the ranks after the first)
  bool save_model = true;        // run() ends by writing the model (train::run writes its own)
};

class Trainer {
 public:
  Trainer(TrainerOptions options, ParamStore& params, Optimizer& optimizer);

  // A generator whose state is saved in checkpoints under `name` and restored on resume.
  void add_rng(const std::string& name, Rng& rng);
  // Content every written file carries besides parameters and training state: the
  // configuration YAML, vocabularies, ... (its kind is options.kind).
  ModelFile& base() { return base_; }
  // More state for checkpoints (written after the Trainer's own, read on resume).
  void on_save(std::function<void(ModelFile&)> f) { on_save_ = std::move(f); }
  void on_load(std::function<void(const ModelFile&)> f) { on_load_ = std::move(f); }

  // With options.resume: loads the checkpoint (a DataError/IoError naming it when it is
  // missing, of another kind, damaged, or does not fit the model) and returns true.
  // Without: returns false and changes nothing.
  bool resume();
  // Resumes from a checkpoint already loaded (e.g. to read its configuration first).
  void resume_from(const ModelFile& checkpoint);

  // Calls step() until options.steps steps are done or a step asks to stop; after each step
  // checks the loss and gradient norm (non-finite: DataError naming the step and the last
  // good checkpoint), calls report(), and writes a checkpoint when one is due. Ends by
  // writing a checkpoint (when checkpoints are on) and the final model. A step that reports
  // `interrupted` ends the run with a checkpoint and an Interrupted error saying how to
  // resume.
  void run(const std::function<StepResult(TrainState&)>& step,
           const std::function<void(const TrainState&, const StepResult&)>& report = {});

  const TrainState& state() const { return state_; }
  const std::string& checkpoint_path() const { return checkpoint_path_; }
  int64_t last_checkpoint_step() const { return last_good_; }  // -1: none yet

  // The files as they would be written now (checks every parameter is finite first).
  ModelFile checkpoint() const;
  ModelFile final_model() const;
  void save_checkpoint();
  void save_model() const;

 private:
  void check_finite(const char* what, double v) const;
  void check_params() const;
  std::string last_good_text() const;
  TrainerOptions opt_;
  std::string checkpoint_path_;
  ParamStore& params_;
  Optimizer& optimizer_;
  std::vector<std::pair<std::string, Rng*>> rngs_;
  ModelFile base_;
  std::function<void(ModelFile&)> on_save_;
  std::function<void(const ModelFile&)> on_load_;
  TrainState state_;
  int64_t last_good_ = -1;
};

// A permutation of 0..n-1 for one epoch, from the seed and the epoch number alone (so a
// resumed run finds the same order without saving it): Fisher–Yates with Rng::below over an
// Rng seeded by SplitMix64 of (seed, epoch).
std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t n);

}  // namespace attnkit::nn
