// The command-line options every training tool shares, so that they are spelt the same in
// seq2seq-train, ntm-train and memn2n-train:
//   --checkpoint-every N   (a configuration key: may be set in the --config YAML)
//   --checkpoint FILE      (default: MODEL.ckpt beside the model)
//   --resume               continue from the checkpoint
//   --log FILE             metrics as TSV (appended to, after the checkpoint's step, on --resume)
//
//   cli::TrainingFlags tf;
//   cli::add_training_options(app, tf);
//   app.parse();
//   nn::TrainerOptions o = tf.trainer_options("seq2seq", model_path, steps);
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/nn/trainer.h"

namespace attnkit::cli {

struct TrainingFlags {
  int64_t checkpoint_every = 0;
  std::string checkpoint;  // "" = model + ".ckpt"
  bool resume = false;
  std::string log;         // "" = no log

  nn::TrainerOptions trainer_options(const std::string& kind, const std::string& model_path,
                                     int64_t steps) const;
  // The --log file (nullptr without --log): new, or on a resumed run (resume_step > 0) kept up
  // to that step and appended to.
  std::unique_ptr<io::TsvLog> open_log(int64_t resume_step) const;
};

void add_training_options(App& app, TrainingFlags& flags);

}  // namespace attnkit::cli
