// Summary statistics of a tensor (tensor-info), accumulated in double.
#pragma once

#include <cstdint>

#include "attnkit/core/tensor.h"

namespace attnkit {

struct TensorStats {
  int64_t count = 0;   // elements
  int64_t finite = 0;  // elements that are neither NaN nor ±Inf
  int64_t nan = 0, inf = 0;
  // Over the finite elements only (NaN when there are none); std is the population standard
  // deviation (NumPy's default, ddof = 0), computed in two passes.
  double min = 0, max = 0, mean = 0, std = 0;
};

TensorStats tensor_stats(const Tensor& t);

}  // namespace attnkit
