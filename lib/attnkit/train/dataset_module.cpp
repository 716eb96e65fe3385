#include "attnkit/train/dataset_module.h"

#include <algorithm>
#include <utility>

#include "attnkit/core/error.h"

namespace attnkit::train {

std::vector<int64_t> EpochBatches::batch(const nn::TrainState& s) {
  if (order_epoch_ != s.epoch)
    order_ = nn::epoch_order(seed_, s.epoch, items_), order_epoch_ = s.epoch;
  std::vector<int64_t> out;
  for (int64_t i = s.position * batch_; i < std::min(items_, (s.position + 1) * batch_); ++i)
    out.push_back(order_[static_cast<size_t>(i)]);
  return out;
}

DatasetModule::DatasetModule(int64_t batch, uint64_t seed, std::string config_yaml)
    : BasicModule(seed, std::move(config_yaml)), batch_size_(batch) {}

void DatasetModule::set_run(int64_t items, int64_t steps_or_0, int64_t epochs) {
  epochs_ = EpochBatches(items, batch_size_, seed_);
  steps_ = steps_or_0 > 0 ? steps_or_0 : epochs * batches_per_epoch();
  if (steps_ < 1) throw UsageError("steps or epochs must be >= 1");
}

void DatasetModule::use_adam(double lr, const std::string& schedule, int64_t warmup) {
  opt_ = std::make_unique<nn::Adam>(ps_.params(), lr, 0.9, 0.999, 1e-8, 0.0,
                                    nn::parse_schedule(schedule, warmup, steps_));
}

int64_t DatasetModule::begin_batch(const nn::TrainState& s) {
  batch_ = epochs_.batch(s);
  on_batch(s);
  return batch_items();
}

}  // namespace attnkit::train
