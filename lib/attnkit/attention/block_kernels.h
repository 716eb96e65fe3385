// Hand-written AVX-512 kernels for the two products of the streaming attention's step
// (fused.h): the scores S = scale · Q Kᵀ of a block of queries against a block of keys, and
// the context update O += P V. The keys are first packed into panels of 64 (zero-padded), so
// that the scores' micro-kernel reads them as four vectors per depth step; V is read in place.
// The micro-kernels keep a tile of the result in registers (6 rows × 64 keys for the scores,
// 6 rows × 64 columns for the context) with fused multiply-adds in index order: a score over
// its whole depth; the context's sum over each 64 keys from zero, then added to out (as sgemm
// adds its product to C). The same bits for any thread count. Both count their arithmetic in
// blas_flops (blas.h) as a gemm of their shape would.
//
// They run where the softmax's path (online_softmax.h) is AVX-512: on CPUs with AVX-512F,
// unless ATTNKIT_SIMD caps the path lower. Elsewhere the caller keeps BLAS's sgemm. Internal
// to lib/attnkit/attention.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/core/blas.h"

namespace attnkit::attention::detail {

// Keys per panel of pack_keys.
constexpr int64_t kKeyPanel = 64;

// Room for n floats from a 64-byte boundary (16 floats of slack), for packed keys: the
// kernels' panel loads then never cross a cache line. For n = 0 none, and data is null.
struct AlignedFloats {
  std::vector<float> store;
  float* data = nullptr;
  explicit AlignedFloats(int64_t n);
  AlignedFloats(const AlignedFloats&) = delete;  // data points into store
  AlignedFloats& operator=(const AlignedFloats&) = delete;
};

// True when the kernels below may run: the softmax's best path is AVX-512.
bool block_kernels_on();

// Floats that pack_keys writes for nk keys of width d.
int64_t packed_keys_floats(int64_t nk, int64_t d);

// Keys k [nk, d] as panels of kKeyPanel keys: key j's entry p at
// packed[(j / 64) · 64 · d + p · 64 + j % 64], zeros past nk. An Error when the kernels are off.
void pack_keys(ConstMat k, float* packed);

// s [rows, nk] = scale · q [rows, d] · kᵀ, from pack_keys of k [nk, d].
void scores_packed(ConstMat q, const float* packed, int64_t nk, float scale, Mat s);

// out [rows, d_v] += p [rows, nk] · v [nk, d_v].
void add_context(ConstMat p, ConstMat v, Mat out);

}  // namespace attnkit::attention::detail
