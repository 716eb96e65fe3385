#include "attnkit/core/tensor_stats.h"

#include <cmath>
#include <limits>

namespace attnkit {

TensorStats tensor_stats(const Tensor& t) {
  TensorStats s;
  s.count = t.size();
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < t.size(); ++i) {
    const float x = t[i];
    if (std::isnan(x)) {
      ++s.nan;
    } else if (std::isinf(x)) {
      ++s.inf;
    } else {
      ++s.finite;
      sum += x;
      lo = std::fmin(lo, x);
      hi = std::fmax(hi, x);
    }
  }
  if (s.finite == 0) {
    s.min = s.max = s.mean = s.std = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.min = lo;
  s.max = hi;
  s.mean = sum / static_cast<double>(s.finite);
  double sq = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const float x = t[i];
    if (std::isfinite(x)) sq += (x - s.mean) * (x - s.mean);
  }
  s.std = std::sqrt(sq / static_cast<double>(s.finite));
  return s;
}

}  // namespace attnkit
