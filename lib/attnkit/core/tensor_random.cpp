#include "attnkit/core/tensor_random.h"

#include <cmath>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit {

Distribution parse_distribution(const std::string& name) {
  return parse_choice<Distribution>("distribution", name,
                                    {
                                        {"normal", Distribution::Normal},
                                        {"uniform", Distribution::Uniform},
                                        {"sign", Distribution::Sign},
                                    });
}

void fill_random(Tensor& t, Rng& rng, const RandomSpec& spec) {
  float* v = t.data();
  const int64_t n = t.size();
  switch (spec.dist) {
    case Distribution::Normal:
      if (!std::isfinite(spec.mean) || !std::isfinite(spec.std) || spec.std < 0)
        throw DataError("normal distribution needs a finite mean and a finite std >= 0");
      for (int64_t i = 0; i < n; ++i)
        v[i] = static_cast<float>(spec.mean + spec.std * rng.normal());
      break;
    case Distribution::Uniform: {
      if (!std::isfinite(spec.low) || !std::isfinite(spec.high) || !(spec.low < spec.high))
        throw DataError("uniform distribution needs finite low < high");
      const float hi = static_cast<float>(spec.high);
      // The largest float below high: rounding must not reach the open end of [low, high).
      const float below_hi = std::nextafter(hi, -INFINITY);
      const float lo = static_cast<float>(spec.low);
      for (int64_t i = 0; i < n; ++i) {
        const float x = static_cast<float>(spec.low + (spec.high - spec.low) *
                                                          static_cast<double>(rng.uniform()));
        v[i] = x < hi ? (x < lo ? lo : x) : below_hi;
      }
      break;
    }
    case Distribution::Sign:
      for (int64_t i = 0; i < n; ++i) v[i] = (rng.next() >> 63) ? 1.0f : -1.0f;
      break;
  }
}

}  // namespace attnkit
