// One step of the online softmax of the streaming kernel (fused.h), over one score block:
// for each row i of s,
//
//   m' = max(m_i, max_j s_ij),   s_ij <- e^(s_ij - m'),   l_i <- l_i e^(m_i - m') + Σ_j s_ij,
//   out row i <- out row i · e^(m_i - m')  (the partial context, when the maximum grew),
//
// in place over the block: one pass for the row maximum, one pass that writes the
// exponentials and sums them. A row whose keys are all masked so far (m' = -inf) gets zeros.
// Two implementations: AVX-512 (16 lanes, FMA, chosen at run time when the CPU has AVX-512F
// and DQ) and a portable one (the plain-float fast_exp of fastmath.h, which the compiler
// vectorises for the baseline ISA). Both give e^x within a few ulp; on one machine the choice
// is fixed, so results do not depend on the thread count. Internal to lib/attnkit/attention.
#pragma once

#include <cstdint>

#include "attnkit/core/blas.h"

namespace attnkit::attention::detail {

enum class SoftmaxPath { Auto, Portable, Avx512 };

// True when the AVX-512 path can run on this CPU (and operating system).
bool have_avx512();

// The step above for the rows of s [rows, nk] against running maxima m, sums l and the
// partial context out [rows, d_v]. Avx512 on a CPU without it is an Error.
void online_softmax_block(Mat s, float* m, double* l, Mat out,
                          SoftmaxPath path = SoftmaxPath::Auto);

// e^x for n floats by the path's exponential (for tests): x in, y out (may alias).
void exp_block(const float* x, float* y, int64_t n, SoftmaxPath path);

}  // namespace attnkit::attention::detail
