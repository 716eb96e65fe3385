#include "attnkit/attention/online_softmax.h"

#include <algorithm>
#include <limits>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined_ps()
// when its functions are inlined into a target("avx512f") function: a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define ATTNKIT_HAVE_AVX512_PATH 1
#endif

namespace attnkit::attention::detail {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The out-row and running-sum part of the step, shared by both paths: mn is the new maximum
// (finite), sum the block's Σ e^(s - mn).
inline void rescale(float* m, double* l, float* o, int64_t d_v, float mn, double sum) {
  if (mn > *m) {
    const float corr = *m == kNegInf ? 0.0f : fast_exp(*m - mn);
    *l *= corr;
    if (corr != 1.0f)
      for (int64_t c = 0; c < d_v; ++c) o[c] *= corr;
    *m = mn;
  }
  *l += sum;
}

void block_portable(Mat s, float* m, double* l, Mat out) {
  const int64_t nk = s.cols, d_v = out.cols;
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    float bm = kNegInf;
    for (int64_t j = 0; j < nk; ++j) bm = row[j] > bm ? row[j] : bm;
    const float mn = std::max(m[i], bm);
    if (mn == kNegInf) {  // every key so far masked: nothing to add
      for (int64_t j = 0; j < nk; ++j) row[j] = 0.0f;
      continue;
    }
    for (int64_t j = 0; j < nk; ++j) row[j] = fast_exp(row[j] - mn);
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    for (; j + 4 <= nk; j += 4)
      for (int u = 0; u < 4; ++u) acc[u] += row[j + u];
    for (; j < nk; ++j) acc[0] += row[j];
    rescale(m + i, l + i, out.data + i * out.ld, d_v, mn, (acc[0] + acc[1]) + (acc[2] + acc[3]));
  }
}

#ifdef ATTNKIT_HAVE_AVX512_PATH

#define ATTNKIT_AVX512 __attribute__((target("avx512f")))

// e^x on 16 lanes: the range reduction and polynomial of fast_exp (Cephes expf) with fused
// multiply-adds, the scale 2^n by vscalefps. x below -87.3365 (and -inf) gives exactly 0;
// x above 88 gives e^88.
ATTNKIT_AVX512 inline __m512 exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.3365447504f), hi = _mm512_set1_ps(88.0f);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ);  // not below lo
  x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  const __m512 z = _mm512_mul_ps(r, r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, z, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(y, n));
}

// Σ of 16 floats in double.
ATTNKIT_AVX512 inline double sum16(__m512 v) {
  const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
  const __m512d b =
      _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  return _mm512_reduce_add_pd(_mm512_add_pd(a, b));
}

ATTNKIT_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return static_cast<__mmask16>((1u << left) - 1u);
}

ATTNKIT_AVX512 void block_avx512(Mat s, float* m, double* l, Mat out) {
  const int64_t nk = s.cols, d_v = out.cols;
  const __m512 ninf = _mm512_set1_ps(kNegInf);
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    // The block's row maximum, four chains.
    __m512 x0 = ninf, x1 = ninf, x2 = ninf, x3 = ninf;
    int64_t j = 0;
    for (; j + 64 <= nk; j += 64) {
      x0 = _mm512_max_ps(x0, _mm512_loadu_ps(row + j));
      x1 = _mm512_max_ps(x1, _mm512_loadu_ps(row + j + 16));
      x2 = _mm512_max_ps(x2, _mm512_loadu_ps(row + j + 32));
      x3 = _mm512_max_ps(x3, _mm512_loadu_ps(row + j + 48));
    }
    for (; j + 16 <= nk; j += 16) x0 = _mm512_max_ps(x0, _mm512_loadu_ps(row + j));
    if (j < nk) x1 = _mm512_max_ps(x1, _mm512_mask_loadu_ps(ninf, tail_mask(nk - j), row + j));
    const float bm =
        _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(x0, x1), _mm512_max_ps(x2, x3)));
    const float mn = std::max(m[i], bm);
    if (mn == kNegInf) {
      for (int64_t c = 0; c < nk; ++c) row[c] = 0.0f;
      continue;
    }
    // e^(s - mn) in place, summed in four float chains (each lane adds at most nk/64 terms
    // of at most 1), then in double.
    const __m512 vm = _mm512_set1_ps(mn);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    j = 0;
    for (; j + 64 <= nk; j += 64) {
      const __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j), vm));
      const __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j + 16), vm));
      const __m512 e2 = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j + 32), vm));
      const __m512 e3 = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j + 48), vm));
      _mm512_storeu_ps(row + j, e0);
      _mm512_storeu_ps(row + j + 16, e1);
      _mm512_storeu_ps(row + j + 32, e2);
      _mm512_storeu_ps(row + j + 48, e3);
      a0 = _mm512_add_ps(a0, e0);
      a1 = _mm512_add_ps(a1, e1);
      a2 = _mm512_add_ps(a2, e2);
      a3 = _mm512_add_ps(a3, e3);
    }
    for (; j + 16 <= nk; j += 16) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j), vm));
      _mm512_storeu_ps(row + j, e);
      a0 = _mm512_add_ps(a0, e);
    }
    if (j < nk) {
      const __mmask16 t = tail_mask(nk - j);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_mask_loadu_ps(ninf, t, row + j), vm));
      _mm512_mask_storeu_ps(row + j, t, e);
      a1 = _mm512_add_ps(a1, e);  // lanes past the tail are e^-inf = 0
    }
    const double sum = sum16(_mm512_add_ps(a0, a1)) + sum16(_mm512_add_ps(a2, a3));
    rescale(m + i, l + i, out.data + i * out.ld, d_v, mn, sum);
  }
}

ATTNKIT_AVX512 void exp_avx512(const float* x, float* y, int64_t n) {
  const __m512 ninf = _mm512_set1_ps(kNegInf);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) _mm512_storeu_ps(y + j, exp16(_mm512_loadu_ps(x + j)));
  if (j < n) {
    const __mmask16 t = tail_mask(n - j);
    _mm512_mask_storeu_ps(y + j, t, exp16(_mm512_mask_loadu_ps(ninf, t, x + j)));
  }
}

#endif  // ATTNKIT_HAVE_AVX512_PATH

bool detect_avx512() {
#ifdef ATTNKIT_HAVE_AVX512_PATH
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool use_avx512(SoftmaxPath path) {
  if (path == SoftmaxPath::Portable) return false;
  if (path == SoftmaxPath::Avx512 && !have_avx512())
    throw Error("the AVX-512 softmax path needs a CPU with AVX-512F");
  return have_avx512();
}

}  // namespace

bool have_avx512() {
  static const bool yes = detect_avx512();
  return yes;
}

void online_softmax_block(Mat s, float* m, double* l, Mat out, SoftmaxPath path) {
#ifdef ATTNKIT_HAVE_AVX512_PATH
  if (use_avx512(path)) return block_avx512(s, m, l, out);
#else
  use_avx512(path);
#endif
  block_portable(s, m, l, out);
}

void exp_block(const float* x, float* y, int64_t n, SoftmaxPath path) {
#ifdef ATTNKIT_HAVE_AVX512_PATH
  if (use_avx512(path)) return exp_avx512(x, y, n);
#else
  use_avx512(path);
#endif
  for (int64_t j = 0; j < n; ++j) y[j] = fast_exp(x[j]);
}

}  // namespace attnkit::attention::detail
