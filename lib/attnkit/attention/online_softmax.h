// One step of the online softmax of the streaming kernel (fused.h), over one score block:
// for each row i of s,
//
//   m' = max(m_i, max_j s_ij),   s_ij <- e^(s_ij - m'),   l_i <- l_i e^(m_i - m') + Σ_j s_ij,
//   out row i <- out row i · e^(m_i - m')  (the partial context, when the maximum grew),
//
// in place over the block: one pass for the row maximum, one pass that writes the
// exponentials and sums them. A row whose keys are all masked so far (m' = -inf) gets zeros.
// Three implementations, chosen at run time: AVX-512 (16 lanes) when the CPU has AVX-512F,
// AVX2 (8 lanes) when it has AVX2 and FMA, and a portable one (the plain-float fast_exp of
// fastmath.h, which the compiler vectorises for the build's ISA). The two vector paths give
// the same exponentials bit for bit (the same fused steps); all give e^x within a few ulp.
// The environment variable ATTNKIT_SIMD (portable, avx2, avx512) caps the choice, never
// raises it above what the CPU has. On one machine the choice is fixed, so results do not
// depend on the thread count. Internal to lib/attnkit/attention.
#pragma once

#include <cstdint>

#include "attnkit/core/blas.h"

namespace attnkit::attention::detail {

// Ordered from the weakest: a cap compares by this order.
enum class SoftmaxPath { Portable, Avx2, Avx512, Auto };

// The path Auto takes: the best this CPU runs, capped by ATTNKIT_SIMD (an unknown value is an
// Error). Decided once per process.
SoftmaxPath best_path();
// True when the path can run on this CPU (Auto always can); ATTNKIT_SIMD does not matter.
bool have_path(SoftmaxPath path);
// "portable", "avx2" or "avx512" (Auto: the name of best_path()).
const char* path_name(SoftmaxPath path);

// The step above for the rows of s [rows, nk] against running maxima m, sums l and the
// partial context out [rows, d_v]. A path the CPU lacks is an Error.
void online_softmax_block(Mat s, float* m, double* l, Mat out,
                          SoftmaxPath path = SoftmaxPath::Auto);

// e^x for n floats by the path's exponential (for tests): x in, y out (may alias).
void exp_block(const float* x, float* y, int64_t n, SoftmaxPath path);

}  // namespace attnkit::attention::detail
