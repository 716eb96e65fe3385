#include "attnkit/cli/training.h"

namespace attnkit::cli {

void add_training_options(App& app, TrainingFlags& f) {
  app.options().add_options()(
      "checkpoint", po::value(&f.checkpoint)->value_name("FILE"),
      "checkpoint file (default: the model's name + .ckpt)")(
      "resume", po::bool_switch(&f.resume),
      "continue from the checkpoint (the same final model as a run never stopped)")(
      "log", po::value(&f.log)->value_name("FILE"), "write training metrics to FILE as TSV");
  app.config_options().add_options()(
      "checkpoint-every", po::value(&f.checkpoint_every)->value_name("N")->default_value(0),
      "write a checkpoint every N steps and at the end (0: no checkpoints)");
}

nn::TrainerOptions TrainingFlags::trainer_options(const std::string& kind,
                                                  const std::string& model_path,
                                                  int64_t steps) const {
  if (checkpoint_every < 0) throw UsageError("--checkpoint-every must be 0 or more");
  nn::TrainerOptions o;
  o.kind = kind;
  o.model_path = model_path;
  o.checkpoint_path = checkpoint;
  o.steps = steps;
  o.checkpoint_every = checkpoint_every;
  o.resume = resume;
  return o;
}

std::unique_ptr<io::TsvLog> TrainingFlags::open_log(int64_t resume_step) const {
  if (log.empty()) return nullptr;
  if (resume && resume_step > 0) return std::make_unique<io::TsvLog>(log, resume_step);
  return std::make_unique<io::TsvLog>(log);
}

}  // namespace attnkit::cli
