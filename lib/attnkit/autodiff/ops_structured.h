// Structured attention as tape ops (Kim et al. 2017; attention/structured.h): the marginals
// and the log partition function of the linear-chain CRF over binary selections and of the
// projective dependency CRF. Values are computed in double and stored as float.
//
// Gradients: the log partition's gradient is the marginals. The marginals' gradient is H g
// (H the Hessian of log Z, g the marginals' gradient), computed exactly by forward mode over
// the inside and outside passes (structured.h says why that is stable where a naive
// log-space backward is not). Checked against brute-force enumeration, central differences
// and ad::check_gradients in tests/unit/structured_test.cpp and autodiff_structured_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::ad {

// p(z_i = 1) of the chain CRF with unary [n] or [B, n] and pairwise [2, 2] (shared by every
// link), [n-1, 2, 2] or [B, n-1, 2, 2] (pairwise may be an invalid Var: zeros, independent
// selections) → unary's shape. lengths: empty or one per item (a mask: later positions have
// marginal 0 and get no gradient).
Var chain_marginals(Var unary, Var pairwise, const std::vector<int64_t>& lengths = {});
// log Z of every item → [B] (a batch) or [] (one chain).
Var chain_log_partition(Var unary, Var pairwise, const std::vector<int64_t>& lengths = {});

// p(z_ij) of the dependency CRF with arc potentials [n, n] or [B, n, n] (A[i, j]: head i of
// word j; the diagonal: the root heads j) → arcs' shape; lengths as above (the leading
// L x L block of an item is used).
Var tree_marginals(Var arcs, const std::vector<int64_t>& lengths = {});
// log Z of every item → [B] or [].
Var tree_log_partition(Var arcs, const std::vector<int64_t>& lengths = {});

// p(z_k = s) of the hop chain (K steps of S states; attention/structured.h) with unary
// [K, S] or [B, K, S] and pairwise [S, S] (shared by every link), [K-1, S, S] or
// [B, K-1, S, S] (an invalid Var: zeros) → unary's shape. states: empty or one count per item
// in [0, S]: states >= the count (padded memory slots) are excluded at every step (marginal
// 0, no gradient).
Var hop_chain_marginals(Var unary, Var pairwise, const std::vector<int64_t>& states = {});
// log Z of every item → [B] or [] (-inf for an item with no state).
Var hop_chain_log_partition(Var unary, Var pairwise, const std::vector<int64_t>& states = {});

// Syntactic attention (Kim et al. 2017, sections 3.2 and 5.1) over a batch of B sources of S
// states X [B, S, H], for one query each, as seq2seq-train --attention syntactic uses it:
//   arc potentials   A[i, j] = Σ_k Hd[i, k] g[k] Md[j, k]   (i != j: word i heads word j; the
//                    query gate g [B, H] and the head and modifier projections Hd, Md
//                    [B, S, H] of the states), A[j, j] = r_j (the root heads j);
//   marginals        P = tree_marginals(A) (Eisner's inside-outside; each column sums to 1);
//   soft parent      par_j = Σ_{i != j} P[i, j] x_i (zero where the root heads j);
//   selection        p_j = softmax_j(r_j) (r [B, S]: the query's scores of the words);
//   context          c = Σ_j p_j [x_j ; par_j]  → [B, 2H].
// lengths: empty (every source S long) or one per item in [1, S]: later positions are
// padding (selection 0, marginals 0, no gradient reaches them). alpha (if given) receives p
// [B, S], arcs (if given) the potentials A [B, S, S] (padded entries as computed).
// One tape op: the backward pass is written out (the context's, the softmax's and the arcs'
// gradients by hand; the marginals' by tree_marginals_backward), so no [B, S, S] or
// [B, S, 2H] intermediate is allocated on the tape. Items run in parallel; each writes only
// its own gradient rows, so the result does not depend on the thread count.
Var syntactic_attention(Var g, Var r, Var X, Var Hd, Var Md,
                        const std::vector<int64_t>& lengths = {}, Tensor* alpha = nullptr,
                        Tensor* arcs = nullptr);

}  // namespace attnkit::ad
