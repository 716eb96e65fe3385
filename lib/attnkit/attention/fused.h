// Dot-product attention over many (Q, K, V) problems at once — the heads and batch items of
// multi-head attention, the batch of attn-score — in two forms that must agree:
//
//   streaming (fused_context): for each block of query rows, the keys are visited a block at a
//     time; scores of the block, a running row maximum m and a running sum l (the online
//     softmax: m' = max(m, max s), l' = l e^(m - m') + Σ e^(s - m'), the partial context
//     rescaled by e^(m - m')) and the partial context C += P V. No n_q x n_k matrix is held:
//     memory beyond inputs and outputs is one score block per thread.
//   naive (naive_weights + gemm): the whole score matrix, its softmax, then A V — the
//     reference, and the path for --output scores|weights.
//
// Scores are s_ij = scale · q_i · k_j (scale 1: dot; 1/√d: scaled-dot). Work is spread over
// (problem, block of query rows) tasks with parallel_for; every task computes the same numbers
// whatever the thread count. The streaming form's two products (the scores and C += P V) run
// through hand-written AVX-512 kernels where the softmax's path is AVX-512 (block_kernels.h),
// and through sgemm elsewhere.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/core/blas.h"

namespace attnkit::attention {

// Which keys query i may see, beyond its scores.
struct KeyMask {
  bool causal = false;              // keys j <= i only (rows and columns aligned at 0)
  ConstMat mask{nullptr, 0, 0, 1};  // 0/1 [n_q, n_k], 0 = masked; data == nullptr: none
  int64_t key_len = -1;             // keys j >= key_len are padding (masked); -1: none
  // Local attention (monotonic, Luong): keys with |j - i| > window masked; -1: none.
  int64_t window = -1;
};

// One attention problem: q [n_q, d], k [n_k, d], v [n_k, d_v] and the context out [n_q, d_v];
// views may be strided (a head's columns of a wider matrix).
struct Problem {
  ConstMat q, k, v;
  Mat out;
  KeyMask mask;
  // Only the row blocks holding query rows [row_begin, row_end) are computed (row_end < 0:
  // every row); the other rows of out are left as they are. The blocks are those of the whole
  // problem, so those rows get the same numbers, bit for bit (a slice of the rows as its own
  // problem would be blocked differently, and sgemm rounds a block's edge rows differently).
  int64_t row_begin = 0, row_end = -1;
};

// Block sizes of the streaming kernel (query rows x keys per score block). 256 x 256 (a
// 256 KB score block that stays in L2 between the two gemms) measured best or level with the
// best on an AVX-512 machine with 2 threads (bench/attention.cpp: 128 x 512 was 5-20% slower at
// N = 1024-16384; 256 x 384 and 256 x 512 about even). When all problems together have few
// rows, the row block shrinks (never below 32 rows) so that there are about 8 tasks to share
// among the threads; the split depends on the shapes only, never on the thread count.
struct FusedBlocks {
  int64_t rows = 256;
  int64_t keys = 256;
};

// Contexts of every problem by the streaming kernel. A query with every key masked gets a
// zero context. Throws ShapeError when a problem's views do not fit together.
void fused_context(const std::vector<Problem>& problems, float scale, FusedBlocks blocks = {},
                   int threads = 0);

// Scores of one problem with its mask applied (-inf where masked) into s [n_q, n_k]; row0 is
// the index of q's first row in the full problem (for blocks of rows: causal and window masks
// and the rows of mask.mask are taken from there).
void masked_scores(ConstMat q, ConstMat k, float scale, const KeyMask& mask, int64_t row0, Mat s);

// Masks of KeyMask applied to scores s (rows row0.., columns col0.. of the full matrix).
void apply_key_mask(const KeyMask& mask, int64_t row0, int64_t col0, Mat s);

// The reference: contexts through the whole n_q x n_k weight matrix of each problem
// (masked_scores, softmax_rows, then A V), in parallel over problems and row blocks.
void naive_context(const std::vector<Problem>& problems, float scale, int threads = 0);

}  // namespace attnkit::attention
