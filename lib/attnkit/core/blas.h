// The one BLAS boundary: every matrix product in attnkit goes through these functions, and
// only blas.cpp includes <cblas.h>. Shapes are checked on every call (ShapeError names both
// operands); m, n, k and the leading dimensions are worked out here and nowhere else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit {

// A row-major matrix view: `rows x cols`, row i starts at data + i * ld (ld >= cols).
struct ConstMat {
  const float* data;
  int64_t rows, cols, ld;
};
struct Mat {
  float* data;
  int64_t rows, cols, ld;
  operator ConstMat() const { return {data, rows, cols, ld}; }
};

// Rows [r0, r1) of a matrix view.
inline ConstMat rows_of(ConstMat m, int64_t r0, int64_t r1) {
  return {m.data + r0 * m.ld, r1 - r0, m.cols, m.ld};
}
inline Mat rows_of(Mat m, int64_t r0, int64_t r1) {
  return {m.data + r0 * m.ld, r1 - r0, m.cols, m.ld};
}

// Views of a rank-2 tensor, or of matrix b of a rank-3 tensor (rank 1: one row).
ConstMat mat(const Tensor& t);
Mat mat(Tensor& t);
ConstMat mat(const Tensor& t, int64_t b);
Mat mat(Tensor& t, int64_t b);

enum class Trans { No, Yes };

// C = alpha * op(A) * op(B) + beta * C, op(X) = X or Xᵀ. Throws ShapeError on a mismatch.
void gemm(Trans ta, Trans tb, float alpha, ConstMat a, ConstMat b, float beta, Mat c);
// y = alpha * op(A) * x + beta * y, with x and y contiguous vectors of the right lengths.
void gemv(Trans ta, float alpha, ConstMat a, const float* x, int64_t nx, float beta, float* y,
          int64_t ny);
// Σ x_i y_i over n contiguous floats.
float dot(int64_t n, const float* x, const float* y);
// y += alpha * x over n contiguous floats.
void axpy(int64_t n, float alpha, const float* x, float* y);

// ---- counting the arithmetic (for benches): with counting on, every gemm adds 2·m·n·k and
// every gemv 2·m·k to a process-wide counter (relaxed atomics: exact totals across threads,
// a few nanoseconds a call). Off by default; turning it on resets the count.
void blas_count_flops(bool on);
// Floating-point operations counted since counting was last turned on.
uint64_t blas_flops();
// Adds flops to that counter when counting is on: for a product computed outside BLAS (the
// attention's hand-written block kernels), so that counts do not depend on which kernel ran.
void blas_add_flops(int64_t flops);

// ---- recording the products (for benches): with recording on, every gemm and gemv appends
// its shape to a process-wide list (under a mutex: exact across threads, and only when on),
// so that a bench can replay a training step's products alone at their own shapes and learn
// the rate they reach without the rest of the step. Off by default; turning it on clears the
// list. A gemv is recorded as a product with n = 1 and `gemv` set.
struct GemmCall {
  bool ta = false, tb = false;  // op(A) = Aᵀ, op(B) = Bᵀ
  int64_t m = 0, n = 0, k = 0;  // op(A) is m x k, op(B) k x n
  bool accumulate = false;      // beta != 0: C is read as well as written
  bool gemv = false;
};
void blas_record_calls(bool on);
// The calls recorded since recording was last turned on, in the order they were made (the
// threads' calls interleaved as they happened).
std::vector<GemmCall> blas_recorded_calls();

// ---- the BLAS runtime
// OpenBLAS's name for the kernel it runs ("SkylakeX", "Haswell", "Prescott", ...).
std::string blas_core();
// The library's version/configuration string (e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ...").
std::string blas_config();
// Threads OpenBLAS may use for one call; n >= 1.
void blas_set_threads(int n);
int blas_threads();

// The OpenBLAS core type this CPU deserves, from its SIMD features: "SkylakeX" (AVX-512 F,
// CD, BW, DQ, VL), "Haswell" (AVX2 + FMA), "Sandybridge" (AVX), or "" when nothing better
// than the generic kernel applies.
std::string preferred_blas_core();
// True when `running` is a weaker kernel than `preferred` (by SIMD level): OpenBLAS
// mis-detected the CPU and `OPENBLAS_CORETYPE=preferred` would be faster.
bool blas_core_is_weaker(const std::string& running, const std::string& preferred);

}  // namespace attnkit
