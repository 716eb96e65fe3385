// What every family's training module shares (train/module.h), and the module of a family
// whose steps draw fresh problems:
//   - train::BasicModule: the parameters ps_, the optimiser opt_, the run's length steps_,
//     the seed, the stored configuration (describe()), and the last evaluation: score() and
//     finish() evaluate first when nothing has been yet, finish() stores the metrics as the
//     file's result/<name> numbers. A module records an evaluation with evaluated(metrics,
//     score) (lower is better).
//   - train::DrawnModule: a BasicModule whose every step draws new problems (bandits,
//     few-shot episodes, copy tasks) from one generator that checkpoints keep under a name
//     (add_rngs), so a resumed run draws what the uninterrupted one would have; no epochs.
// A family that trains on a fixed set uses train::DatasetModule (train/dataset_module.h).
//
//   class BanditTraining : public train::DrawnModule {
//     BanditTraining(..., int64_t steps, uint64_t seed, std::string config_yaml)
//         : DrawnModule(steps, seed, std::move(config_yaml), "bandits", seed ^ 0xBA4D17ULL) {
//       policy_ = ...(ps_, cfg_, init);
//       opt_ = std::make_unique<nn::Adam>(ps_.params(), o_.lr);
//     }
//     int64_t begin_batch(const nn::TrainState&) override {
//       batch_ = draw_bandits(o_.batch, cfg_.arms, draws());
//       return o_.batch;
//     }
//     train::Metrics evaluate() override { ...; return evaluated(metrics, score); }
//   };
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attnkit/core/rng.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/train/loop.h"
#include "attnkit/train/module.h"

namespace attnkit::train {

class BasicModule : public Module {
 public:
  nn::ParamStore& params() override { return ps_; }
  nn::Optimizer& optimizer() override { return *opt_; }
  int64_t total_steps() const override { return steps_; }
  // The stored configuration (a family that stores more overrides and calls this).
  void describe(nn::ModelFile& f) const override { f.config_yaml = config_yaml_; }
  // The last evaluation's score (evaluating first when none ran; 0 when none recorded one).
  double score() override;
  // The last evaluation's metrics as the file's result/<name> numbers (evaluating first when
  // none ran).
  void finish(nn::ModelFile& f) override;

 protected:
  BasicModule(uint64_t seed, std::string config_yaml)
      : seed_(seed), config_yaml_(std::move(config_yaml)) {}
  // Records an evaluation (its metrics and its score, lower is better) and returns the metrics.
  const Metrics& evaluated(Metrics m, double score);
  const Metrics& last() const { return last_; }

  nn::ParamStore ps_;
  std::unique_ptr<nn::Optimizer> opt_;
  uint64_t seed_;
  int64_t steps_ = 0;
  std::string config_yaml_;

 private:
  Metrics last_;
  double last_score_ = 0.0;
  bool evaluated_ = false;
};

class DrawnModule : public BasicModule {
 public:
  // Fresh problems every step: an epoch that never ends.
  int64_t batches_per_epoch() const override;
  void add_rngs(Loop& t) override { t.add_rng(rng_name_, draws_); }

 protected:
  // A run of `steps` steps (UsageError when fewer than 1); the problems drawn from a
  // generator seeded with `draws_seed`, kept in checkpoints under `rng_name`.
  DrawnModule(int64_t steps, uint64_t seed, std::string config_yaml, std::string rng_name,
              uint64_t draws_seed);
  Rng& draws() { return draws_; }

 private:
  std::string rng_name_;
  Rng draws_;
};

}  // namespace attnkit::train
