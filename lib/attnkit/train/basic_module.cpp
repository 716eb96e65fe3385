#include "attnkit/train/basic_module.h"

#include <limits>
#include <utility>

#include "attnkit/core/error.h"

namespace attnkit::train {

const Metrics& BasicModule::evaluated(Metrics m, double score) {
  last_ = std::move(m);
  last_score_ = score;
  evaluated_ = true;
  return last_;
}

double BasicModule::score() {
  if (!evaluated_) evaluate();
  return last_score_;
}

void BasicModule::finish(nn::ModelFile& f) {
  if (!evaluated_) evaluate();
  for (const auto& [k, v] : last_) f.numbers["result/" + k] = v;
}

DrawnModule::DrawnModule(int64_t steps, uint64_t seed, std::string config_yaml,
                         std::string rng_name, uint64_t draws_seed)
    : BasicModule(seed, std::move(config_yaml)),
      rng_name_(std::move(rng_name)),
      draws_(draws_seed) {
  steps_ = steps;
  if (steps_ < 1) throw UsageError("steps must be >= 1");
}

int64_t DrawnModule::batches_per_epoch() const { return std::numeric_limits<int64_t>::max(); }

}  // namespace attnkit::train
