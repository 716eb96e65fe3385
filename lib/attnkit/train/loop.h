// The loop under the training layer (train/trainer.h: train::run, which every trainer uses;
// write a train::Module rather than calling this directly): checkpoints every N steps
// (atomic), exact resume, a NaN/Inf guard that never overwrites the last good checkpoint, an
// interrupt that checkpoints, and the final model written atomically. Model-agnostic: the
// caller owns the model, the data and the step; the Loop owns the files.
//
//   train::LoopOptions o;
//   o.kind = "seq2seq"; o.model_path = out; o.steps = steps;
//   o.checkpoint_every = every; o.resume = resume;          // checkpoint: out + ".ckpt"
//   train::Loop loop(o, store, adam);
//   loop.add_rng("tape", tape.rng());                    // every RNG the steps draw from
//   loop.base().config_yaml = app.config_yaml();         // saved in every file written
//   loop.base().texts["vocab.source"] = vocab.format();
//   loop.resume();                                       // loads the checkpoint if o.resume
//   loop.run([&](nn::TrainState& s) {
//     const auto order = nn::epoch_order(seed, s.epoch, n_batches);
//     ... batch order[s.position]: forward, backward, clip, adam.step() ...
//     s.advance(n_batches);                                 // next position / epoch
//     return train::LoopStep{loss, grad_norm};
//   }, [&](const nn::TrainState& s, const train::LoopStep& r) { bar.update(s.step, ...); });
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
#include "attnkit/nn/trainer.h"

namespace attnkit::nn {
class ParamStore;
class Optimizer;
}  // namespace attnkit::nn

namespace attnkit::train {

struct LoopStep {
  double loss = 0.0;
  double grad_norm = 0.0;    // checked like the loss (leave 0 when not computed)
  nn::Metrics metrics = {};  // anything else to report
  bool stop = false;         // end the run after this step (early stopping)
  bool interrupted = false;  // a signal asked to stop: checkpoint, then throw Interrupted
  bool dropped = false;      // with interrupted: the step was not made (stopped before or
                             // within it; nothing changed): the state before it is checkpointed
};

struct LoopOptions {
  std::string kind;              // model kind written in every file ("seq2seq")
  std::string model_path;        // the final model
  std::string checkpoint_path;   // "" = model_path + ".ckpt"
  int64_t steps = 0;             // total steps of the run (a resumed run counts from 0 too)
  int64_t checkpoint_every = 0;  // 0 = no periodic checkpoints
  bool resume = false;           // resume() loads checkpoint_path
  bool writer = true;            // writes files (false on the ranks after the first)
  bool save_model = true;        // run() ends by writing the model (train::run writes its own)
};

class Loop {
 public:
  Loop(LoopOptions options, nn::ParamStore& params, nn::Optimizer& optimizer);

  // A generator whose state is saved in checkpoints under `name` and restored on resume.
  void add_rng(const std::string& name, Rng& rng);
  // Content every written file carries besides parameters and training state: the
  // configuration YAML, vocabularies, ... (its kind is options.kind).
  nn::ModelFile& base() { return base_; }
  // More state for checkpoints (written after the Loop's own, read on resume).
  void on_save(std::function<void(nn::ModelFile&)> f) { on_save_ = std::move(f); }
  void on_load(std::function<void(const nn::ModelFile&)> f) { on_load_ = std::move(f); }

  // With options.resume: loads the checkpoint (a DataError/IoError naming it when it is
  // missing, of another kind, damaged, or does not fit the model) and returns true.
  // Without: returns false and changes nothing.
  bool resume();
  // Resumes from a checkpoint already loaded (e.g. to read its configuration first).
  void resume_from(const nn::ModelFile& checkpoint);

  // Calls step() until options.steps steps are done or a step asks to stop; after each step
  // checks the loss and gradient norm (non-finite: DataError naming the step and the last
  // good checkpoint), calls report(), and writes a checkpoint when one is due. Ends by
  // writing a checkpoint (when checkpoints are on) and the final model. A step that reports
  // `interrupted` ends the run with a checkpoint and an Interrupted error saying how to
  // resume; one that reports `dropped` too was not made, and is neither counted, checked nor
  // reported.
  void run(const std::function<LoopStep(nn::TrainState&)>& step,
           const std::function<void(const nn::TrainState&, const LoopStep&)>& report = {});

  const nn::TrainState& state() const { return state_; }
  const std::string& checkpoint_path() const { return checkpoint_path_; }
  int64_t last_checkpoint_step() const { return last_good_; }  // -1: none yet

  // The files as they would be written now (checks every parameter is finite first).
  nn::ModelFile checkpoint() const;
  nn::ModelFile final_model() const;
  void save_checkpoint();
  void save_model() const;

 private:
  // Checkpoints the state (unless it is the last checkpoint's) and throws Interrupted.
  [[noreturn]] void stop_interrupted();
  void check_finite(const char* what, double v) const;
  void check_params() const;
  std::string last_good_text() const;
  LoopOptions opt_;
  std::string checkpoint_path_;
  nn::ParamStore& params_;
  nn::Optimizer& optimizer_;
  std::vector<std::pair<std::string, Rng*>> rngs_;
  nn::ModelFile base_;
  std::function<void(nn::ModelFile&)> on_save_;
  std::function<void(const nn::ModelFile&)> on_load_;
  nn::TrainState state_;
  int64_t last_good_ = -1;
};

}  // namespace attnkit::train
