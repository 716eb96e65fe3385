// Structured attention (Kim, Denton, Hoang & Rush 2017): attention weights as the marginals
// of a graphical model over which inputs are selected, in double precision.
//
// Segmentation attention: a linear-chain CRF over binary selections z_1..z_n with
//   score(z) = Σ_i u_i z_i + Σ_{i<n} P_i[z_i, z_{i+1}],
// unary potentials u [n] (the score of z_i = 1; z_i = 0 scores 0) and pairwise potentials P_i
// [2, 2] per link (or one P shared by every link). p(z) = exp(score(z)) / Z. The attention
// weights are the marginals p(z_i = 1), from forward-backward in log space.
//
// Syntactic attention: a first-order projective dependency CRF over n words and a root,
//   score(y) = Σ_{arcs (h, m) of y} A[h, m],
// with arc potentials A [n, n] in torch-struct's convention: A[i, j] (i != j) is the score of
// word i heading word j, the diagonal A[j, j] the score of the root heading j. Every word has
// one head, arcs do not cross, and the root may head several words (Eisner's algorithm with
// the root as position 0). The marginals p(z_ij) have A's layout, so each column sums to 1.
// They come from Eisner's inside-outside, O(n³).
//
// Both are inside algorithms over a hypergraph (a chart item's log-score is the log-sum-exp
// of its incoming hyperedges' potentials plus their tails' log-scores). The marginals are
// the gradient of log Z, taken by a reverse (outside) pass in linear space: every adjoint is
// the probability of a chart item or hyperedge, in [0, 1], so nothing overflows and no
// log of a negative number is needed. The gradient of a loss L(marginals) with respect to
// the potentials is H g, with g = dL/dmarginals and H the Hessian of log Z (symmetric, so
// the Jacobian of the marginals is its own transpose): computed exactly by forward-mode
// (dual numbers) over the inside and outside passes in direction g. The inside tangents are
// convex combinations of tangents (log-sum-exp's derivative is a softmax) and the outside
// ones are products of bounded probabilities, so the signs that break a naive log-space
// backward (the paper's Section 3.3) never meet a logarithm.
//
// Masks: a batch item of length L < n uses its first L inputs (chain: u_0..u_{L-1} and links
// P_0..P_{L-2}; tree: the leading L x L block of A); the rest of its marginals are 0 and the
// padded potentials are never read. Length 0: log Z = 0 (one empty structure). A potential
// of -inf forbids its part (a structure with it has probability 0); every structure
// forbidden gives log Z = -inf and zero marginals.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::attention {

// ---- single instances, in double
struct ChainMarginals {
  double log_z = 0.0;
  std::vector<double> unary;     // [n]: p(z_i = 1)
  std::vector<double> pairwise;  // [(n-1) * 4]: p(z_i = a, z_{i+1} = b) at i*4 + a*2 + b
};
// unary: n values; pairwise: (n-1)*4 values (P_i[a][b] at i*4 + a*2 + b).
ChainMarginals chain_marginals(const double* unary, const double* pairwise, int64_t n);
// d L / d potentials = H g for g = d L / d p(z_i = 1) (n values) and, optionally,
// g_pair = d L / d pairwise marginals ((n-1)*4 values, nullptr: zeros). Writes (overwrites)
// grad_unary [n] and grad_pairwise [(n-1)*4].
void chain_marginals_backward(const double* unary, const double* pairwise, int64_t n,
                              const double* g, const double* g_pair, double* grad_unary,
                              double* grad_pairwise);
// The most likely selection (Viterbi; ties to the first maximising choice in the order z = 0,
// 1 of each link): n values 0 or 1.
std::vector<int> chain_argmax(const double* unary, const double* pairwise, int64_t n);

struct TreeMarginals {
  double log_z = 0.0;
  std::vector<double> arcs;  // [n * n], A's layout
};
// Two engines give the same results (to rounding; tests/unit/structured_test.cpp compares them):
//   Linear    Eisner's inside-outside on plain sums of products: each word's candidate heads
//             shifted by their maximum (every tree has one head a word, so that shifts log Z
//             only), the arc weights exp(A - max) in [0, 1], no exp or log per chart cell,
//             contiguous inner loops; H g by forward mode (value and tangent) over the same
//             passes. Allowed when every word has a finite best head and the shifted log Z is
//             at least -600 + 2n (then every chart item and adjoint that contributes more
//             than 1e-16 of Z is a normal double).
//   LogSpace  the hypergraph engine (any potentials).
// Auto takes Linear where it is allowed, else LogSpace (Linear falls back the same way).
enum class TreeEngine { Auto, Linear, LogSpace };
// Whether the Linear engine is allowed for these potentials (runs its inside pass).
bool tree_linear_ok(const double* arcs, int64_t n);
// arcs: n*n values, A's layout (above).
TreeMarginals tree_marginals(const double* arcs, int64_t n, TreeEngine engine = TreeEngine::Auto);
// d L / d arcs = H g for g = d L / d marginals (n*n values); writes grad [n*n].
void tree_marginals_backward(const double* arcs, int64_t n, const double* g, double* grad,
                             TreeEngine engine = TreeEngine::Auto);
// The most likely projective tree (Eisner's argmax): the head of every word, 1-based, 0 for
// the root (CoNLL's convention). Ties go to the first maximising split in Eisner's order.
std::vector<int64_t> tree_argmax(const double* arcs, int64_t n);

// A linear-chain CRF over K steps that each select one of S states (the memory network's
// CRF over its hops, Kim et al. 2017 section 4.3: hop k attends to memory z_k):
//   score(z) = Σ_k U[k][z_k] + Σ_{k<K-1} W_k[z_k][z_{k+1}],
// unary U [K, S] (U[k][s] at k*S + s), pairwise W [K-1, S, S] (W_k[a][b] at (k*S + a)*S + b).
// Marginals p(z_k = s) [K, S] (each row sums to 1) and p(z_k = a, z_{k+1} = b) [K-1, S, S].
// A state of -inf at every step (a padded memory slot) has marginal 0. The binary chain above
// is the case S = 2 with U[k][0] = 0.
struct HopChainMarginals {
  double log_z = 0.0;
  std::vector<double> unary;     // [K * S]
  std::vector<double> pairwise;  // [(K-1) * S * S]
};
// Two engines give the same results (to rounding; tests/unit/structured_test.cpp compares them):
//   Linear    forward-backward in linear space, each step's vector rescaled to a maximum of 1
//             and its log kept aside; a link is a matrix-vector product with exp(W_k - max W_k)
//             computed once, and H g comes from the forward and backward passes' tangents
//             (convex combinations, as in the log-space engine). Allowed when every link's
//             pairwise potentials are finite and span at most kHopLinearRange, and every
//             step's finite unary potentials span at most kHopLinearRange with at least one
//             finite (the rest -inf: padded states). Then every scaled value lies in
//             [e^-2R, 1] (R the range) and nothing underflows that matters.
//   LogSpace  the hypergraph engine of the chain and the tree (any potentials).
// Auto takes Linear where it is allowed, else LogSpace; Linear where it is not allowed also
// falls back to LogSpace.
enum class HopEngine { Auto, Linear, LogSpace };
constexpr double kHopLinearRange = 300.0;
// Whether the Linear engine is allowed for these potentials.
bool hop_chain_linear_ok(const double* unary, const double* pairwise, int64_t K, int64_t S);
HopChainMarginals hop_chain_marginals(const double* unary, const double* pairwise, int64_t K,
                                      int64_t S, HopEngine engine = HopEngine::Auto);
// H g for g = d L / d unary marginals ([K * S]) and g_pair (nullptr: zeros); writes
// grad_unary [K * S] and grad_pairwise [(K-1) * S * S].
void hop_chain_marginals_backward(const double* unary, const double* pairwise, int64_t K, int64_t S,
                                  const double* g, const double* g_pair, double* grad_unary,
                                  double* grad_pairwise, HopEngine engine = HopEngine::Auto);
// One item solved once, for its marginals now and H g later (the autodiff op keeps one per
// item between its forward and backward passes, so the Linear engine's exponentials and
// passes are not redone). Copyable (shares its state); the potentials are copied in.
class HopChainSolution {
 public:
  HopChainSolution(const double* unary, const double* pairwise, int64_t K, int64_t S,
                   HopEngine engine = HopEngine::Auto);
  const HopChainMarginals& marginals() const;
  // As hop_chain_marginals_backward.
  void backward(const double* g, const double* g_pair, double* grad_unary,
                double* grad_pairwise) const;

 private:
  struct State;
  std::shared_ptr<const State> s_;
};
// The most likely sequence of states (Viterbi), K values in [0, S).
std::vector<int64_t> hop_chain_argmax(const double* unary, const double* pairwise, int64_t K,
                                      int64_t S);

// ---- batches of float32 tensors (the tool's and the autodiff ops' front end)
enum class StructKind { Chain, Tree };
// "chain" / "tree"; anything else is a ChoiceError.
StructKind parse_struct_kind(const std::string& name);

// The largest tree: Eisner's hyperedges, about (2/3) n^3 of 16 bytes, are held in memory
// (300: about 290 MB, built once per process and length).
constexpr int64_t kMaxTreeSize = 300;

// A batch of potentials. Chain: unary [n] or [B, n]; pairwise [2, 2] (shared), [n-1, 2, 2]
// (per link, shared by the batch) or [B, n-1, 2, 2]. Tree: arcs [n, n] or [B, n, n]
// (`unary` holds them; `pairwise` is unused). lengths: empty (every item full length) or
// one per item in [0, n]. check() throws ShapeError / DataError for shapes that do not fit,
// trees above kMaxTreeSize, lengths out of range and NaN or +inf potentials (-inf is
// allowed: a forbidden part).
struct StructInput {
  StructKind kind = StructKind::Chain;
  const Tensor* unary = nullptr;
  const Tensor* pairwise = nullptr;
  std::vector<int64_t> lengths;
  void check() const;
  int64_t batch() const;  // B (1 for an unbatched input)
  int64_t size() const;   // n
  bool batched() const;   // unary (or arcs) has a batch dimension
  // One item's potentials as doubles (padded ones included: the chain's pairwise [n-1, 2, 2]
  // expanded).
  std::vector<double> item_unary(int64_t b) const;
  std::vector<double> item_pairwise(int64_t b) const;
  int64_t length(int64_t b) const;
};

struct StructOutput {
  Tensor marginals;  // chain [B, n] (B = 1 for unary [n]); tree [B, n, n] (or [n, n])
  Tensor log_z;      // [B] (or [1])
  Tensor argmax;     // chain: 0/1 selections, marginals' shape (padding 0); tree: heads
                     // [B, n] (or [n]), 1-based, 0 the root, -1 padding
  Tensor tree;       // tree: the argmax tree as a 0/1 matrix, marginals' shape
};
// Marginals, log partition and the most likely structure of every item (argmax only when
// `argmax`). Items run in parallel (core/parallel.h); the result does not depend on it.
StructOutput structured_attention(const StructInput& in, bool argmax = true);

// The context from values V [n, d] (shared) or [B, n, d]: chain Σ_i p(z_i = 1) v_i → [B, 1, d]
// (or [1, d]); tree, for every word i, Σ_{j != i} p(z_ij) v_j (its expected children) →
// [B, n, d] (or [n, d]). ShapeError for values that do not fit.
Tensor structured_context(StructKind kind, const Tensor& marginals, const Tensor& values,
                          bool batched);

// What attn-struct writes, by name in this order: "marginals", "log-partition", "argmax"
// (chain: the 0/1 selection; tree: the argmax tree as a 0/1 matrix in A's layout), "heads"
// (tree: StructOutput::argmax) and, with values, "context".
std::vector<std::pair<std::string, Tensor>> structured_arrays(StructKind kind, StructOutput out,
                                                              const Tensor* values, bool batched);

}  // namespace attnkit::attention
