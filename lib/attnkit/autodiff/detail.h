// Helpers shared by the op implementations (internal to lib/attnkit/autodiff).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/tensor.h"

namespace attnkit::ad::detail {

// The tape of a and b (ShapeError-free check that they share one).
inline Tape& tape_of(Var a, Var b) {
  Tape& t = a.tape();
  if (b.valid() && &b.tape() != &t) throw Error("ad: operands from two different tapes");
  return t;
}

// A tensor viewed as a matrix [rows, cols] with cols its last dimension (rank 0: [1, 1]).
inline int64_t last_dim(const Tensor& t) { return t.rank() == 0 ? 1 : t.shape().back(); }
inline int64_t lead_rows(const Tensor& t) {
  const int64_t n = last_dim(t);
  return n == 0 ? 0 : t.size() / n;
}
inline ConstMat rows_view(const Tensor& t) {
  const int64_t n = last_dim(t);
  return {t.data(), lead_rows(t), n, n > 0 ? n : 1};
}
inline Mat rows_view(Tensor& t) {
  const int64_t n = last_dim(t);
  return {t.data(), lead_rows(t), n, n > 0 ? n : 1};
}
inline ConstMat view(const float* p, int64_t r, int64_t c) { return {p, r, c, c > 0 ? c : 1}; }
inline Mat view(float* p, int64_t r, int64_t c) { return {p, r, c, c > 0 ? c : 1}; }

// The mask of ad::dropout (ops.h) for n elements: 0 or 1/(1-p), p in (0, 1).
void dropout_mask(Rng& rng, float p, float* mask, int64_t n);

inline int norm_axis(int axis, int rank, const Shape& shape) {
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw ShapeError("axis " + std::to_string(axis) + " out of range for shape " +
                     shape_str(shape));
  return a;
}

inline void need_same_shape(const char* op, const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    throw ShapeError(std::string(op) + ": shapes " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()) + " differ");
}

// y += x elementwise.
inline void acc(Tensor& y, const Tensor& x) {
  float* p = y.data();
  const float* q = x.data();
  const int64_t n = y.size();
  for (int64_t i = 0; i < n; ++i) p[i] += q[i];
}

}  // namespace attnkit::ad::detail
