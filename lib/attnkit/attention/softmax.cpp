#include "attnkit/attention/softmax.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

namespace attnkit::attention {

void mask_causal(Mat s, int64_t row0) {
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    for (int64_t j = row0 + i + 1; j < s.cols; ++j) row[j] = kNegInf;
  }
}

void check_mask_values(const Tensor& mask) {
  for (int64_t f = 0; f < mask.size(); ++f) {
    const float x = mask[f];
    if (x == 0.0f || x == 1.0f) continue;
    // The position as an index of the tensor's own shape.
    std::vector<int64_t> idx(mask.shape().size());
    int64_t rest = f;
    for (size_t d = idx.size(); d-- > 0;) {
      idx[d] = rest % mask.shape()[d];
      rest /= mask.shape()[d];
    }
    std::ostringstream msg;
    msg << "mask value " << x << " at " << shape_str(idx) << " is not 0 or 1";
    throw DataError(msg.str());
  }
}

void apply_mask(ConstMat mask, Mat s) {
  if (mask.rows != s.rows || mask.cols != s.cols)
    throw ShapeError("mask [" + std::to_string(mask.rows) + ", " + std::to_string(mask.cols) +
                     "] does not fit scores [" + std::to_string(s.rows) + ", " +
                     std::to_string(s.cols) + "]");
  for (int64_t i = 0; i < s.rows; ++i) {
    const float* m = mask.data + i * mask.ld;
    float* row = s.data + i * s.ld;
    for (int64_t j = 0; j < s.cols; ++j) row[j] = m[j] == 0.0f ? kNegInf : row[j];
  }
}

void softmax_rows(Mat s) {
  const int64_t n = s.cols;
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    float mx = kNegInf;
    for (int64_t j = 0; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
    if (mx == kNegInf) {  // every key masked (or no keys): zero weights
      for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
      continue;
    }
    if (mx == -kNegInf) {
      // Scores of finite inputs beyond float's range (q . k of 1e30s): softmax's limit, the
      // weight shared by the largest scores, rather than inf - inf = NaN everywhere.
      int64_t top = 0;
      for (int64_t j = 0; j < n; ++j) top += row[j] == mx;
      for (int64_t j = 0; j < n; ++j) row[j] = row[j] == mx ? 1.0f / static_cast<float>(top) : 0.0f;
      continue;
    }
    // e^(s - max) with s - max <= 0 (a -inf score gives exactly 0); four partial sums in
    // double keep the sum accurate and the loop free of a long dependency chain.
    for (int64_t j = 0; j < n; ++j) row[j] = detail::fast_exp(row[j] - mx);
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
      for (int u = 0; u < 4; ++u) acc[u] += row[j + u];
    for (; j < n; ++j) acc[0] += row[j];
    const float inv = static_cast<float>(1.0 / ((acc[0] + acc[1]) + (acc[2] + acc[3])));
    for (int64_t jj = 0; jj < n; ++jj) row[jj] *= inv;
  }
}

void argmax_rows(Mat s) {
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    int64_t best = -1;
    float bv = kNegInf;
    for (int64_t j = 0; j < s.cols; ++j)
      if (row[j] > bv) {  // strict: the first index wins ties; -inf never wins
        bv = row[j];
        best = j;
      }
    for (int64_t j = 0; j < s.cols; ++j) row[j] = 0.0f;
    if (best >= 0) row[best] = 1.0f;
  }
}

void sample_rows(Mat w, Rng& rng) {
  for (int64_t i = 0; i < w.rows; ++i) {
    float* row = w.data + i * w.ld;
    const double u = rng.uniform_double();
    double total = 0.0;
    for (int64_t j = 0; j < w.cols; ++j) total += row[j];
    int64_t pick = -1;
    if (total > 0.0) {
      const double target = u * total;
      double c = 0.0;
      for (int64_t j = 0; j < w.cols; ++j) {
        if (row[j] <= 0.0f) continue;  // a zero-weight key is never drawn
        c += row[j];
        pick = j;
        if (c > target) break;
      }
    }
    for (int64_t j = 0; j < w.cols; ++j) row[j] = 0.0f;
    if (pick >= 0) row[pick] = 1.0f;
  }
}

}  // namespace attnkit::attention
