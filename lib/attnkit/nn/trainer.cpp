#include "attnkit/nn/trainer.h"

#include "attnkit/core/error.h"

namespace attnkit::nn {

std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t n) {
  if (n < 0) throw Error("epoch_order: negative size");
  uint64_t x = seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1));
  // SplitMix64 finaliser: nearby (seed, epoch) pairs give unrelated streams.
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  Rng rng(x);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(rng.below(static_cast<uint64_t>(i + 1)))]);
  return order;
}

}  // namespace attnkit::nn
