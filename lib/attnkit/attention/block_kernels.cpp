#include "attnkit/attention/block_kernels.h"

#include <algorithm>
#include <cstdint>

#include "attnkit/attention/online_softmax.h"
#include "attnkit/core/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
// See online_softmax.cpp: GCC 12 warns falsely inside its own avx512fintrin.h.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define ATTNKIT_BLOCK_KERNELS 1
#define ATTNKIT_AVX512 __attribute__((target("avx512f")))
#endif

namespace attnkit::attention::detail {

namespace {

#ifdef ATTNKIT_BLOCK_KERNELS

ATTNKIT_AVX512 inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

// Scores of MR query rows against one panel of 64 keys: s[r][0..cols) for cols <= 64.
template <int MR>
ATTNKIT_AVX512 void scores_tile(const float* q, int64_t ldq, const float* panel, int64_t d,
                                float scale, float* s, int64_t lds, int64_t cols) {
  __m512 a[MR][4];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = _mm512_setzero_ps();
  for (int64_t p = 0; p < d; ++p) {
    const float* row = panel + p * kKeyPanel;
    const __m512 b0 = _mm512_loadu_ps(row), b1 = _mm512_loadu_ps(row + 16),
                 b2 = _mm512_loadu_ps(row + 32), b3 = _mm512_loadu_ps(row + 48);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(q[r * ldq + p]);
      a[r][0] = _mm512_fmadd_ps(x, b0, a[r][0]);
      a[r][1] = _mm512_fmadd_ps(x, b1, a[r][1]);
      a[r][2] = _mm512_fmadd_ps(x, b2, a[r][2]);
      a[r][3] = _mm512_fmadd_ps(x, b3, a[r][3]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  if (cols == kKeyPanel) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(s + r * lds + 16 * c, _mm512_mul_ps(a[r][c], sc));
  } else {
    __mmask16 m[4];
#pragma GCC unroll 16
    for (int c = 0; c < 4; ++c) m[c] = lanes(std::max<int64_t>(0, cols - 16 * c));
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < 4; ++c)
        _mm512_mask_storeu_ps(s + r * lds + 16 * c, m[c], _mm512_mul_ps(a[r][c], sc));
  }
}

constexpr int kScoreRows = 6;

template <int MR = kScoreRows>
ATTNKIT_AVX512 void scores_rest(int rows, const float* q, int64_t ldq, const float* panel,
                                int64_t d, float scale, float* s, int64_t lds, int64_t cols) {
  if constexpr (MR > 1) {
    if (rows < MR) return scores_rest<MR - 1>(rows, q, ldq, panel, d, scale, s, lds, cols);
  }
  scores_tile<MR>(q, ldq, panel, d, scale, s, lds, cols);
}

// out[r][0..16·NV) += Σ_k p[r][k] v[k][..] for MR rows and nk keys; the last of the NV
// vectors takes the lanes of `last`. The sum over the keys starts from zero in registers and
// is added to out at the end, as sgemm does: out's running context then takes one rounding
// per call, not one per key.
template <int MR, int NV>
ATTNKIT_AVX512 void context_tile(const float* p, int64_t ldp, int64_t nk, const float* v,
                                 int64_t ldv, float* o, int64_t ldo, __mmask16 last) {
  __m512 a[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) a[r][c] = _mm512_setzero_ps();
  for (int64_t k = 0; k < nk; ++k) {
    const float* vk = v + k * ldv;
    __m512 b[NV];
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c)
      b[c] = c == NV - 1 ? _mm512_maskz_loadu_ps(last, vk + 16 * c) : _mm512_loadu_ps(vk + 16 * c);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(p[r * ldp + k]);
#pragma GCC unroll 4
      for (int c = 0; c < NV; ++c) a[r][c] = _mm512_fmadd_ps(x, b[c], a[r][c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) {
      const __mmask16 m = c == NV - 1 ? last : lanes(16);
      float* oc = o + r * ldo + 16 * c;
      _mm512_mask_storeu_ps(oc, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, oc), a[r][c]));
    }
}

constexpr int kContextRows = 6;

template <int NV, int MR = kContextRows>
ATTNKIT_AVX512 void context_rest(int rows, const float* p, int64_t ldp, int64_t nk, const float* v,
                                 int64_t ldv, float* o, int64_t ldo, __mmask16 last) {
  if constexpr (MR > 1) {
    if (rows < MR) return context_rest<NV, MR - 1>(rows, p, ldp, nk, v, ldv, o, ldo, last);
  }
  context_tile<MR, NV>(p, ldp, nk, v, ldv, o, ldo, last);
}

// Rows [0, rows) of one column chunk of at most 64 columns (nv vectors).
template <int NV>
ATTNKIT_AVX512 void context_chunk(int64_t rows, const float* p, int64_t ldp, int64_t nk,
                                  const float* v, int64_t ldv, float* o, int64_t ldo,
                                  __mmask16 last) {
  int64_t r = 0;
  for (; r + kContextRows <= rows; r += kContextRows)
    context_tile<kContextRows, NV>(p + r * ldp, ldp, nk, v, ldv, o + r * ldo, ldo, last);
  if (r < rows)
    context_rest<NV>(static_cast<int>(rows - r), p + r * ldp, ldp, nk, v, ldv, o + r * ldo, ldo,
                     last);
}

ATTNKIT_AVX512 void pack_avx512(ConstMat k, float* packed) {
  const int64_t nk = k.rows, d = k.cols;
  for (int64_t j0 = 0; j0 < nk; j0 += kKeyPanel) {
    float* panel = packed + j0 * d;
    const int64_t n = std::min(kKeyPanel, nk - j0);
    for (int64_t jj = 0; jj < n; ++jj) {
      const float* row = k.data + (j0 + jj) * k.ld;
      for (int64_t p = 0; p < d; ++p) panel[p * kKeyPanel + jj] = row[p];
    }
    for (int64_t jj = n; jj < kKeyPanel; ++jj)
      for (int64_t p = 0; p < d; ++p) panel[p * kKeyPanel + jj] = 0.0f;
  }
}

ATTNKIT_AVX512 void scores_avx512(ConstMat q, const float* packed, int64_t nk, float scale, Mat s) {
  const int64_t rows = q.rows, d = q.cols;
  for (int64_t j0 = 0; j0 < nk; j0 += kKeyPanel) {
    const float* panel = packed + j0 * d;
    const int64_t cols = std::min(kKeyPanel, nk - j0);
    int64_t r = 0;
    for (; r + kScoreRows <= rows; r += kScoreRows)
      scores_tile<kScoreRows>(q.data + r * q.ld, q.ld, panel, d, scale, s.data + r * s.ld + j0,
                              s.ld, cols);
    if (r < rows)
      scores_rest(static_cast<int>(rows - r), q.data + r * q.ld, q.ld, panel, d, scale,
                  s.data + r * s.ld + j0, s.ld, cols);
  }
}

// Keys per pass of the context: 64 rows of V (16 KB at 64 columns) stay in the L1 cache
// while every row tile of P runs over them.
constexpr int64_t kContextKeys = 64;

ATTNKIT_AVX512 void context_avx512(ConstMat p, ConstMat v, Mat out) {
  const int64_t rows = p.rows, nk = p.cols, d_v = v.cols;
  for (int64_t c0 = 0; c0 < d_v; c0 += 64) {
    const int64_t w = std::min<int64_t>(64, d_v - c0), nv = (w + 15) / 16;
    const __mmask16 last = lanes(w - 16 * (nv - 1));
    for (int64_t k0 = 0; k0 < nk; k0 += kContextKeys) {
      const int64_t kn = std::min(kContextKeys, nk - k0);
      const float* pp = p.data + k0;
      const float* vv = v.data + k0 * v.ld + c0;
      float* oo = out.data + c0;
      switch (nv) {
        case 1:
          context_chunk<1>(rows, pp, p.ld, kn, vv, v.ld, oo, out.ld, last);
          break;
        case 2:
          context_chunk<2>(rows, pp, p.ld, kn, vv, v.ld, oo, out.ld, last);
          break;
        case 3:
          context_chunk<3>(rows, pp, p.ld, kn, vv, v.ld, oo, out.ld, last);
          break;
        default:
          context_chunk<4>(rows, pp, p.ld, kn, vv, v.ld, oo, out.ld, last);
      }
    }
  }
}

#endif  // ATTNKIT_BLOCK_KERNELS

void require_on(const char* what) {
  if (!block_kernels_on())
    throw Error(std::string(what) + ": the attention's block kernels need the AVX-512 path");
}

}  // namespace

AlignedFloats::AlignedFloats(int64_t n) : store(static_cast<size_t>(n > 0 ? n + 16 : 0)) {
  if (n <= 0) return;
  const auto addr = reinterpret_cast<uintptr_t>(store.data());
  data = store.data() + ((64 - addr % 64) % 64) / sizeof(float);
}

bool block_kernels_on() {
#ifdef ATTNKIT_BLOCK_KERNELS
  return best_path() == SoftmaxPath::Avx512;
#else
  return false;
#endif
}

int64_t packed_keys_floats(int64_t nk, int64_t d) {
  return (nk + kKeyPanel - 1) / kKeyPanel * kKeyPanel * d;
}

void pack_keys(ConstMat k, float* packed) {
  require_on("pack_keys");
#ifdef ATTNKIT_BLOCK_KERNELS
  pack_avx512(k, packed);
#endif
}

void scores_packed(ConstMat q, const float* packed, int64_t nk, float scale, Mat s) {
  require_on("scores_packed");
  if (s.rows != q.rows || s.cols != nk) throw ShapeError("scores_packed: s does not fit q, k");
#ifdef ATTNKIT_BLOCK_KERNELS
  scores_avx512(q, packed, nk, scale, s);
#endif
  blas_add_flops(2 * q.rows * nk * q.cols);
}

void add_context(ConstMat p, ConstMat v, Mat out) {
  require_on("add_context");
  if (p.cols != v.rows || out.rows != p.rows || out.cols != v.cols)
    throw ShapeError("add_context: p, v and out do not fit");
#ifdef ATTNKIT_BLOCK_KERNELS
  context_avx512(p, v, out);
#endif
  blas_add_flops(2 * p.rows * p.cols * v.cols);
}

}  // namespace attnkit::attention::detail
