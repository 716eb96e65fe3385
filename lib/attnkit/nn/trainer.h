// The state of a training run and the order of its epochs: where a run stands (steps, epochs,
// the position in the epoch's order), kept in checkpoints by the training loop
// (train/loop.h), and the seeded order of an epoch's items.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/rng.h"

namespace attnkit::nn {

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

// A permutation of 0..n-1 for one epoch, from the seed and the epoch number alone (so a
// resumed run finds the same order without saving it): Fisher–Yates with Rng::below over an
// Rng seeded by SplitMix64 of (seed, epoch).
std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t n);

}  // namespace attnkit::nn
