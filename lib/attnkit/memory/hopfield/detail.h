// Shared by the Hopfield sources (hopfield.cpp: storage, fields, energy; hopfield_recall.cpp:
// the dynamics). Private: not installed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "attnkit/core/error.h"
#include "attnkit/core/tensor.h"

namespace attnkit::memory::detail {

// [rows, cols] of a rank-1 or rank-2 tensor; ShapeError otherwise.
inline std::pair<int64_t, int64_t> rows_cols(const Tensor& x, const char* what) {
  if (x.rank() == 1) return {1, x.dim(0)};
  if (x.rank() == 2) return {x.dim(0), x.dim(1)};
  throw ShapeError(std::string(what) + " must be a matrix (one per row), not shape " +
                   shape_str(x.shape()));
}

inline Tensor as_matrix(const Tensor& x, const char* what) {
  auto [r, c] = rows_cols(x, what);
  Tensor t = x.clone();
  t.reshape({r, c});
  return t;
}

// E from the fields: -1/2 s'(h - b) - b's.
inline double energy_from_fields(const float* s, const float* h, const float* b, int64_t n) {
  double e = 0.0;
  for (int64_t i = 0; i < n; ++i) e += -0.5 * s[i] * (double(h[i]) - b[i]) - double(b[i]) * s[i];
  return e;
}

}  // namespace attnkit::memory::detail
