// The one training layer: every trainer (seq2seq, MemN2N, NTM, and the models to come) is a
// train::Module (module.h) run by train::run. The layer owns:
//   - the data-parallel step over threads and MPI ranks (module.h, dist.h);
//   - clipping (the module's clip_gradients) and the optimiser step, skipped for a
//     non-finite loss or norm, which then stops the run with a DataError naming the step and
//     the last good checkpoint (the NaN/Inf guard);
//   - output paths checked before the first step (the model, the checkpoint, the log);
//   - checkpoints every N steps, on an interrupt (Hooks::interrupted), and exact resume
//     (parameters, optimiser, TrainState, the module's state and generators, and the log
//     window's running sums, so that a resumed log equals an uninterrupted one); the
//     checkpoint locked for the run's life (CheckpointLock), and stale temporaries of a
//     killed write of the checkpoint or the model removed at every start;
//   - the TSV log (a row every log_every steps, or at every epoch's end with log_every 0):
//     step, epoch, loss, grad_norm, lr, the module's step metrics (means over the rows'
//     window) and its evaluation metrics (at evaluation rows; NaN otherwise);
//   - periodic evaluation (every eval_every steps and at the end), on rank 0;
//   - best of several runs (train::best_of_runs).
// Library code: it prints nothing; progress goes through Hooks (cli/training.h draws it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "attnkit/train/module.h"

namespace attnkit::train {

struct TrainOptions {
  std::string model_path;        // the final model (required)
  std::string checkpoint_path;   // "" = model_path + ".ckpt"
  std::string log_path;          // "" = no log
  int64_t checkpoint_every = 0;  // 0: checkpoints only at the end and on an interrupt
  int64_t log_every = 10;        // 0: at the end of every epoch
  int64_t eval_every = 0;        // 0: at the end only
  double clip = 0;               // passed to Module::clip_gradients (0: off)
  bool resume = false;
  double lr_override = 0;  // > 0: the optimiser's rate after a resume (a --lr given again)
  uint64_t seed = 1;       // the tapes' seeds (dropout, sampling) derive from it
  int run = 0;             // which of best_of_runs' runs (its seed is the base seed + run)
  // The tool's options of the run (data files, log; YAML), stored in checkpoints (text
  // "run/options") for a --resume that gives only -o; not in the model file.
  std::string run_options;
  void validate() const;  // UsageError naming the field
};

struct Hooks {
  std::function<bool()> interrupted;  // polled once a step (a signal arrived)
  // After every step: the step, the total, and what to show (window mean loss, last eval).
  std::function<void(int64_t step, int64_t total, const Metrics& shown)> progress;
  std::function<void(int64_t start_step)> started;  // before the first step (after resume)
};

struct RunResult {
  int64_t steps = 0;
  Metrics eval;      // the last evaluation (empty: the module has none)
  double score = 0;  // Module::score() at the end (best_of_runs keeps the lowest)
};

// Checks that `path` can be created or replaced (its folder exists and is writable), by
// creating and removing a temporary file beside it; IoError naming it otherwise. "-" and
// "" pass.
void check_writable(const std::string& path);

// Removes the temporaries (".NAME.tmp.XXXXXX") that an interrupted atomic write of `path`
// left beside it; returns how many.
int remove_stale_temporaries(const std::string& path);

// An advisory lock (flock) on a checkpoint for a run's life, so that two runs never share
// one: it holds the file ".NAME.lock" beside the checkpoint (NAME its file name), which holds
// the process id and is removed when the lock is released. The checkpoint itself is replaced
// by renames, so it cannot carry the lock. IoError naming the checkpoint when another process
// holds it.
class CheckpointLock {
 public:
  explicit CheckpointLock(const std::string& checkpoint);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;
  static std::string lock_path(const std::string& checkpoint);

 private:
  std::string path_;
  int fd_ = -1;
};

RunResult run(Module& m, const TrainOptions& o, const Hooks& hooks = {});

// `runs` runs of make(seed + r), r = 0..runs-1, each to its own file (the model path +
// ".runR"); the one with the lowest score becomes the model file (renamed: written once) and
// the others are removed. With resume, finished runs are not trained again.
RunResult best_of_runs(int runs, const TrainOptions& o,
                       const std::function<std::unique_ptr<Module>(uint64_t seed)>& make,
                       const Hooks& hooks = {},
                       const std::function<void(int run, const RunResult&)>& done = {});

}  // namespace attnkit::train
