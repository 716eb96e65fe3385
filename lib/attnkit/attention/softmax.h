// Masks, the row softmax and hard attention over a matrix of scores [n_q, n_k] (one row per
// query, one column per key). All functions work in place on a row-major view.
#pragma once

#include <cstdint>
#include <limits>

#include "attnkit/core/blas.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::attention {

// The score of a masked key (softmax gives it weight 0), and the start of a running maximum.
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Causal mask: query i sees keys j <= i and scores of keys j > i become -inf. The rows and
// columns are aligned at the start (numpy.tril, PyTorch is_causal): with n_q > n_k the queries
// i >= n_k see every key, with n_q < n_k query i sees only the first i + 1 keys. `row0` is the
// index of s's first row within the full score matrix (for blocks of rows).
void mask_causal(Mat s, int64_t row0 = 0);

// Checks that every value of a 0/1 mask is exactly 0 or 1; throws DataError naming the first
// other value and its position ("mask value 0.5 at [1, 2] is not 0 or 1").
void check_mask_values(const Tensor& mask);

// Scores where mask is 0 become -inf; mask has the shape of s (ShapeError otherwise).
void apply_mask(ConstMat mask, Mat s);

// Softmax of each row, in place: w_ij = e^(s_ij - m_i) / Σ_j e^(s_ij - m_i) with m_i the row's
// maximum (no overflow), the sum accumulated in double. -inf scores (masked keys) get exactly
// 0. A row whose scores are all -inf (every key masked) gets all-zero weights, never NaN.
void softmax_rows(Mat s);

// Hard attention by argmax, in place on scores: each row becomes one-hot at its largest score
// (the first one on ties); a row of all -inf (every key masked) becomes all zeros.
void argmax_rows(Mat s);

// Hard attention by sampling, in place on weights (rows of softmax_rows): each row becomes
// one-hot at key j drawn with probability w_ij. Exactly one uniform u = rng.uniform_double()
// is drawn per row, in row order, also for an all-zero row (which stays all zeros); j is the
// first index whose cumulative sum c_j = w_i0 + ... + w_ij (in double) exceeds u · c_last (the
// inverse CDF; scaling by c_last makes rounding in the row sum harmless).
void sample_rows(Mat w, Rng& rng);

}  // namespace attnkit::attention
