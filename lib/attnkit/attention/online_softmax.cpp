#include "attnkit/attention/online_softmax.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined_ps()
// when its functions are inlined into a target("avx512f") function: a false positive.
// (clang has no such warning, and would warn that the name is unknown.)
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
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

#ifdef ATTNKIT_HAVE_AVX512_PATH

#define ATTNKIT_AVX2 __attribute__((target("avx2,fma")))

// e^x on 8 lanes: exp16's steps in the same order (the same fused multiply-adds), the scale
// 2^n as exponent bits (n is in [-126, 127] after the clamp, so 2^n is a normal float and
// y · 2^n rounds as vscalefps does): the same bits as the AVX-512 path.
ATTNKIT_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3365447504f), hi = _mm256_set1_ps(88.0f);
  const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ);  // not below lo
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, z, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e)), keep);
}

// Σ of 8 floats in double.
ATTNKIT_AVX2 inline double sum8(__m256 v) {
  const __m256d a = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                  _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));
}

// The largest of 8 floats.
ATTNKIT_AVX2 inline float max8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// Lanes [0, left) set, for left in [1, 7].
ATTNKIT_AVX2 inline __m256i tail_mask8(int64_t left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

ATTNKIT_AVX2 void block_avx2(Mat s, float* m, double* l, Mat out) {
  const int64_t nk = s.cols, d_v = out.cols;
  const __m256 ninf = _mm256_set1_ps(kNegInf);
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = s.data + i * s.ld;
    // The block's row maximum, four chains.
    __m256 x0 = ninf, x1 = ninf, x2 = ninf, x3 = ninf;
    int64_t j = 0;
    for (; j + 32 <= nk; j += 32) {
      x0 = _mm256_max_ps(x0, _mm256_loadu_ps(row + j));
      x1 = _mm256_max_ps(x1, _mm256_loadu_ps(row + j + 8));
      x2 = _mm256_max_ps(x2, _mm256_loadu_ps(row + j + 16));
      x3 = _mm256_max_ps(x3, _mm256_loadu_ps(row + j + 24));
    }
    for (; j + 8 <= nk; j += 8) x0 = _mm256_max_ps(x0, _mm256_loadu_ps(row + j));
    const int64_t tail = nk - j;
    __m256i tm = _mm256_setzero_si256();
    if (tail > 0) {
      tm = tail_mask8(tail);
      x1 = _mm256_max_ps(
          x1, _mm256_blendv_ps(ninf, _mm256_maskload_ps(row + j, tm), _mm256_castsi256_ps(tm)));
    }
    const float bm = max8(_mm256_max_ps(_mm256_max_ps(x0, x1), _mm256_max_ps(x2, x3)));
    const float mn = std::max(m[i], bm);
    if (mn == kNegInf) {
      for (int64_t c = 0; c < nk; ++c) row[c] = 0.0f;
      continue;
    }
    // e^(s - mn) in place, summed in four float chains (each lane adds at most nk/32 terms
    // of at most 1), then in double.
    const __m256 vm = _mm256_set1_ps(mn);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    j = 0;
    for (; j + 32 <= nk; j += 32) {
      const __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm));
      const __m256 e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j + 8), vm));
      const __m256 e2 = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j + 16), vm));
      const __m256 e3 = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j + 24), vm));
      _mm256_storeu_ps(row + j, e0);
      _mm256_storeu_ps(row + j + 8, e1);
      _mm256_storeu_ps(row + j + 16, e2);
      _mm256_storeu_ps(row + j + 24, e3);
      a0 = _mm256_add_ps(a0, e0);
      a1 = _mm256_add_ps(a1, e1);
      a2 = _mm256_add_ps(a2, e2);
      a3 = _mm256_add_ps(a3, e3);
    }
    for (; j + 8 <= nk; j += 8) {
      const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm));
      _mm256_storeu_ps(row + j, e);
      a0 = _mm256_add_ps(a0, e);
    }
    if (tail > 0) {
      // Lanes past the tail load as 0 and are cleared after the exponential.
      const __m256 e = _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(row + j, tm), vm)),
                                     _mm256_castsi256_ps(tm));
      _mm256_maskstore_ps(row + j, tm, e);
      a1 = _mm256_add_ps(a1, e);
    }
    const double sum = sum8(_mm256_add_ps(a0, a1)) + sum8(_mm256_add_ps(a2, a3));
    rescale(m + i, l + i, out.data + i * out.ld, d_v, mn, sum);
  }
}

ATTNKIT_AVX2 void exp_avx2(const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, exp8(_mm256_loadu_ps(x + j)));
  if (j < n) {
    const __m256i t = tail_mask8(n - j);
    _mm256_maskstore_ps(y + j, t, exp8(_mm256_maskload_ps(x + j, t)));
  }
}

#endif  // ATTNKIT_HAVE_AVX512_PATH

// The best path this CPU (and operating system) runs, capped by ATTNKIT_SIMD when it is set
// (portable, avx2 or avx512: a cap, never a demand; another value is an Error).
SoftmaxPath detect_best() {
  SoftmaxPath best = SoftmaxPath::Portable;
#ifdef ATTNKIT_HAVE_AVX512_PATH
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = SoftmaxPath::Avx2;
  if (__builtin_cpu_supports("avx512f")) best = SoftmaxPath::Avx512;
#endif
  const char* cap = std::getenv("ATTNKIT_SIMD");
  if (cap && *cap) {
    SoftmaxPath c;
    const std::string v = cap;
    if (v == "portable")
      c = SoftmaxPath::Portable;
    else if (v == "avx2")
      c = SoftmaxPath::Avx2;
    else if (v == "avx512")
      c = SoftmaxPath::Avx512;
    else
      throw Error("ATTNKIT_SIMD='" + v + "': expected portable, avx2 or avx512");
    if (static_cast<int>(c) < static_cast<int>(best)) best = c;
  }
  return best;
}

bool cpu_has(SoftmaxPath path) {
#ifdef ATTNKIT_HAVE_AVX512_PATH
  __builtin_cpu_init();
  if (path == SoftmaxPath::Avx2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (path == SoftmaxPath::Avx512) return __builtin_cpu_supports("avx512f");
#endif
  return path == SoftmaxPath::Portable;
}

// The path to run: Auto is the best one; an explicit path the CPU lacks is an Error.
SoftmaxPath resolve(SoftmaxPath path) {
  if (path == SoftmaxPath::Auto) return best_path();
  if (!have_path(path))
    throw Error(std::string("the ") + path_name(path) + " softmax path needs a CPU with " +
                (path == SoftmaxPath::Avx2 ? "AVX2 and FMA" : "AVX-512F"));
  return path;
}

}  // namespace

SoftmaxPath best_path() {
  static const SoftmaxPath best = detect_best();
  return best;
}

bool have_path(SoftmaxPath path) { return path == SoftmaxPath::Auto || cpu_has(path); }

const char* path_name(SoftmaxPath path) {
  switch (path) {
    case SoftmaxPath::Portable:
      return "portable";
    case SoftmaxPath::Avx2:
      return "avx2";
    case SoftmaxPath::Avx512:
      return "avx512";
    case SoftmaxPath::Auto:
      break;
  }
  return path_name(best_path());
}

void online_softmax_block(Mat s, float* m, double* l, Mat out, SoftmaxPath path) {
  switch (resolve(path)) {
#ifdef ATTNKIT_HAVE_AVX512_PATH
    case SoftmaxPath::Avx512:
      return block_avx512(s, m, l, out);
    case SoftmaxPath::Avx2:
      return block_avx2(s, m, l, out);
#endif
    default:
      return block_portable(s, m, l, out);
  }
}

void exp_block(const float* x, float* y, int64_t n, SoftmaxPath path) {
  switch (resolve(path)) {
#ifdef ATTNKIT_HAVE_AVX512_PATH
    case SoftmaxPath::Avx512:
      return exp_avx512(x, y, n);
    case SoftmaxPath::Avx2:
      return exp_avx2(x, y, n);
#endif
    default:
      for (int64_t j = 0; j < n; ++j) y[j] = fast_exp(x[j]);
  }
}

}  // namespace attnkit::attention::detail
