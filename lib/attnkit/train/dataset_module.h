// What every module over a fixed training set shares (train/module.h): the set trained in
// epochs of batches, each epoch a seeded shuffle (nn::epoch_order(seed, epoch, n)), the batch
// at (epoch, position) its items [position · batch, (position + 1) · batch) in that order;
// and what every module shares (train::BasicModule, train/basic_module.h): the parameters,
// the optimiser, the run's length, the stored configuration, and the last evaluation
// (score() and finish() evaluate first when nothing has been yet; a module without
// validation data returns no metrics).
//
// A family's module derives from DatasetModule and brings its model, its data and the rest:
//
//   class PtrTraining : public train::DatasetModule {
//    public:
//     PtrTraining(..., std::vector<PtrProblem> train, ..., int64_t steps_or_0,
//                 int64_t epochs, uint64_t seed, std::string config_yaml)
//         : DatasetModule(o.batch, seed, std::move(config_yaml)), ... {
//       set_run(train_.size(), steps_or_0, epochs);  // after checking the data
//       model_ = std::make_unique<PtrNet>(ps_, cfg_, init);
//       use_adam(o.lr, o.schedule, o.warmup);
//     }
//     train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int) const override {
//       ... the items train_[batch()[i]] for i in [begin, end) ...
//     }
//     train::Metrics evaluate() override { ...; return evaluated(metrics, score); }
//   };
//
// The items of a batch are indices into the set (batch()); a module that prepares more per
// batch (images gathered, examples drawn) does so in on_batch().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/basic_module.h"
#include "attnkit/train/module.h"

namespace attnkit::train {

// The epochs of a set of `items` items in batches of `batch`: the seeded shuffle of each
// epoch (made once per epoch) and the items of the batch at a position.
class EpochBatches {
 public:
  EpochBatches() = default;
  EpochBatches(int64_t items, int64_t batch, uint64_t seed)
      : items_(items), batch_(batch), seed_(seed) {}
  int64_t items() const { return items_; }
  int64_t per_epoch() const { return (items_ + batch_ - 1) / batch_; }
  // The indices of the items of s's batch (epoch, position), in the epoch's order.
  std::vector<int64_t> batch(const nn::TrainState& s);

 private:
  int64_t items_ = 0, batch_ = 1;
  uint64_t seed_ = 0;
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

class DatasetModule : public BasicModule {
 public:
  int64_t batches_per_epoch() const override { return epochs_.per_epoch(); }
  // Makes s's batch current (batch()), then on_batch(s); its item count.
  int64_t begin_batch(const nn::TrainState& s) override;

 protected:
  // Batches of `batch` items (batch >= 1 by the time set_run is called); `seed` shuffles the
  // epochs and is the module's seed_.
  DatasetModule(int64_t batch, uint64_t seed, std::string config_yaml);
  // The training set's size and the run's length: steps_or_0 steps, or `epochs` epochs when
  // it is 0 (UsageError when the run would have no step). Call it once, in the constructor,
  // once the data are checked.
  void set_run(int64_t items, int64_t steps_or_0, int64_t epochs);
  // Adam (β 0.9, 0.999, ε 1e-8, no weight decay) over every parameter, at `lr` under the
  // schedule (nn::parse_schedule) over the run's steps: the families' optimiser.
  void use_adam(double lr, const std::string& schedule, int64_t warmup);
  // The current batch's items: indices into the training set.
  const std::vector<int64_t>& batch() const { return batch_; }
  int64_t batch_items() const { return static_cast<int64_t>(batch_.size()); }
  // Pointers to the current batch's items [begin, end) of `set` (a slice's items).
  template <class Item>
  std::vector<const Item*> slice_items(const std::vector<Item>& set, int64_t begin,
                                       int64_t end) const {
    std::vector<const Item*> items;
    for (int64_t i = begin; i < end; ++i)
      items.push_back(&set[static_cast<size_t>(batch_[static_cast<size_t>(i)])]);
    return items;
  }
  // Called by begin_batch once batch() holds s's items.
  virtual void on_batch(const nn::TrainState&) {}

 private:
  int64_t batch_size_;
  EpochBatches epochs_;
  std::vector<int64_t> batch_;
};

}  // namespace attnkit::train
