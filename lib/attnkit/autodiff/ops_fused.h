// Fused ops for the seq2seq models: one tape node (and one pass over memory) where the
// composition of ops.h would take several. Each is checked against its unfused composition
// and by finite differences in tests/unit/autodiff_fused_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::ad {

// Additive (Bahdanau) attention in one node: for keys [B, S, A], query projection q [B, A],
// v [A], memory [B, S, H] and an optional 0/1 mask [B, S] (0 = padded; masked positions get
// weight exactly 0, a row with every position masked gets zero weights),
//   scores_bs = vᵀ tanh(keys_bs + q_b),  α_b = masked softmax(scores_b),
//   ctx_b = Σ_s α_bs memory_bs
// and returns ctx [B, H]. Up to rounding the same as, with a = masked_softmax(
// additive_scores(keys, q, v), mask),
//   reshape(matmul(reshape(a, {B,1,S}), memory), {B,H}). alpha (if given) receives α [B, S].
Var additive_attention(Var keys, Var q, Var v, Var memory, const Tensor* mask = nullptr,
                       Tensor* alpha = nullptr);

// Mean cross-entropy (label smoothing ε) of logits = x Wᵀ + b over the rows of x [N, F] whose
// target is not ignore_index, with W [V, F], b [V] (optional): nn::cross_entropy(linear(x,
// W, b), targets, ...) without keeping the logits as a node: the softmax is computed into
// one scratch buffer and turned into the logits' gradient in place by backward. Rows with
// an ignored target are skipped in both passes (no product rows for them). No counted row:
// 0. A target outside [0, V) that is not ignore_index is a DataError.
Var linear_cross_entropy(Var x, Var w, Var b, const std::vector<int32_t>& targets,
                         int32_t ignore_index = 0, float label_smoothing = 0.0f);

// Multi-head scaled dot-product attention in one node: for projected queries q [B, n_q, d],
// keys k [B, n_k, d] and values v [B, n_k, d_v], head h reads the column block h of width
// d/heads (d_v/heads) of each, and
//   A_bh = softmax(scale · q_bh k_bhᵀ) over the unmasked keys,  out_bh = A_bh v_bh
// written into the same column block of out [B, n_q, d_v] (the heads concatenated). mask
// (0/1, [n_q, n_k] shared or [B, n_q, n_k]) and causal (key j > query i) exclude keys:
// their weight is exactly 0, and a row with every key excluded has zero weights. weights
// (if given) receives A [B, heads, n_q, n_k] (before dropout). dropout p > 0 on a training
// tape drops attention weights: out_bh = (A_bh ⊙ M_bh) v_bh with M = 0 with probability p,
// else 1/(1-p), drawn from the tape's rng over [B, heads, n_q, n_k] in order (the draws
// ad::dropout would make on A laid out so). The same as the composed
// reshape/permute/matmul/masked_softmax/dropout ops up to rounding (the scale is applied to
// the product instead of to q). ShapeError when the shapes do not fit.
Var multi_head_attention(Var q, Var k, Var v, int64_t heads, float scale,
                         const Tensor* mask = nullptr, bool causal = false,
                         Tensor* weights = nullptr, float dropout = 0.0f);

}  // namespace attnkit::ad
