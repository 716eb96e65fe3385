// Filling tensors with seeded random numbers (attnkit::Rng): the same seed gives the same
// values on every machine. Values are drawn in row-major order, one draw per element.
#pragma once

#include <string>

#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit {

enum class Distribution {
  Normal,   // mean + std · N(0, 1) (Box–Muller in double, rounded to float)
  Uniform,  // uniform in [low, high)
  Sign,     // -1 or +1, each with probability 1/2
};

struct RandomSpec {
  Distribution dist = Distribution::Normal;
  double mean = 0.0, std = 1.0;  // Normal
  double low = 0.0, high = 1.0;  // Uniform
};

// "normal", "uniform", "sign" → the distribution; ChoiceError otherwise.
Distribution parse_distribution(const std::string& name);

// Fills t from rng. Throws DataError for std < 0, low >= high or a non-finite parameter.
void fill_random(Tensor& t, Rng& rng, const RandomSpec& spec);

}  // namespace attnkit
