// The command-line side of the training layer (train/trainer.h): one flag vocabulary for
// every trainer, the resume rule, signals, progress and the closing summary.
//
// Shared flags (man/training.x describes them once for every trainer's man page):
//   --batch-size N          items per step
//   --epochs N | --steps N  the run's length (--steps wins when > 0)
//   --lr R, --schedule S, --warmup N, --clip C
//   --checkpoint FILE       (default: MODEL.ckpt), --checkpoint-every N
//   --resume                continue from the checkpoint: options not given again (the
//                           configuration, and the data files, --log and --runs) come from
//                           it, options given win; the same in every trainer
//   --log FILE, --log-every N, --eval-every N, --runs K
//   and the common --seed, --threads, --config, --dump-config, --quiet.
// The configuration keys among them (all but --checkpoint, --resume, --log and --runs) can
// be set in a --config YAML file. A tool sets the defaults of its recipe in TrainingFlags
// before add_training_options(), and may leave out flags that mean nothing for it.
//
//   cli::TrainingFlags tf;                    // tf.lr = 3e-4; ... the recipe's defaults
//   cli::add_training_options(app, tf);
//   app.parse();
//   train::TrainOptions o = cli::resolve_training(app, tf, "ntm", out);
//   auto module = ...;                        // built from the (resumed) configuration
//   cli::train(app, *module, o);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/train/trainer.h"

namespace attnkit::cli {

enum TrainingFlag : unsigned {
  kEpochs = 1u << 0,    // --epochs
  kSchedule = 1u << 1,  // --schedule, --warmup
  kEval = 1u << 2,      // --eval-every
  kRuns = 1u << 3,      // --runs
  kSteps = 1u << 4,     // --steps
  kAllTraining = 0xffu,
};

struct TrainingFlags {
  int64_t batch_size = 32;
  int64_t epochs = 10, steps = 0;
  double lr = 1e-3;
  std::string schedule = "constant";
  int64_t warmup = 0;
  double clip = 0;
  std::string checkpoint;  // "" = model + ".ckpt"
  int64_t checkpoint_every = 0;
  bool resume = false;
  std::string log;         // "" = no log
  int64_t log_every = 10;  // 0: every epoch's end
  int64_t eval_every = 0;
  int runs = 1;
  unsigned offered = kAllTraining;
  bool zero_is_recipe = false;  // --lr 0 and --epochs 0 mean "the recipe's, for this data"
  // Help texts that a trainer words for its recipe (empty: the shared wording).
  std::string schedule_help, lr_help, clip_help, batch_help;

  // Set by --resume while the options are parsed: the checkpoint read, its kind and base
  // seed (-1: none stored).
  std::string resumed_from, resumed_kind;
  int64_t resumed_seed = -1, resumed_batch = 0;  // resumed_batch: its --batch-size (0: none)

  // The run's length in steps for `batches` batches an epoch.
  int64_t total_steps(int64_t batches) const { return steps > 0 ? steps : epochs * batches; }
};

void add_training_options(App& app, TrainingFlags& flags);

// After app.parse(): with --resume the checkpoint's configuration
// for every key not given again (and its seed when --seed is not given), then the checks.
// Returns the layer's options for a model written to `model_path`.
train::TrainOptions resolve_training(App& app, TrainingFlags& flags, const std::string& kind,
                                     const std::string& model_path);

// Runs a module: the progress bar (rank 0, unless --quiet), SIGINT/SIGTERM (the first one
// ends the run after the current step with a checkpoint and exit 130; a second one ends it
// at once), and a closing line with the evaluation. With --runs K > 1, `make` builds each
// run's module from its seed (train::best_of_runs).
train::RunResult train(App& app, train::Module& m, const train::TrainOptions& o);
train::RunResult train_runs(App& app, int runs, const train::TrainOptions& o,
                            const std::function<std::unique_ptr<train::Module>(uint64_t)>& make);

}  // namespace attnkit::cli
