// A tree memory: Hierarchical Attentive Memory (Andrychowicz & Kurach 2016, "Learning
// Efficient Algorithms with Hierarchical Attentive Memory", arXiv:1602.03218), exercise
// 8-4's "memory organised as a tree".
//
// A full binary tree over n = 2^d leaves; each node holds a vector of width m. The leaves hold
// the memory (the input's embeddings, at the start); each inner node a summary of its two
// children made by a learned JOIN:
//   JOIN(l, r)     = tanh(W_j [l; r] + b_j)                 (W_j [m, 2m])
// An access from a controller's state h (width c) descends from the root, one decision per
// level, by a learned SEARCH, reads the leaf reached, writes it and updates the summaries on
// the path back:
//   SEARCH(x, h)   = σ(w_s · [x; h] + b_s)   the probability of going right (w_s [m + c])
//   WRITE(x, h)    = tanh(W_w [x; h] + b_w)  the leaf's new value       (W_w [m, m + c])
// Two forms, as the paper's:
//   hard (HAM)  each node goes to its likelier child (the paper samples and trains the
//               choices by REINFORCE; here the greedy descent); one leaf is read (r = x_leaf)
//               and replaced by WRITE(x_leaf, h); the log n summaries on its path are
//               re-JOINed. O(log n) nodes a step (O(m (m + c) + m² log n) multiply-adds).
//   soft (DHAM) the leaf weights are the products of the branch probabilities on each
//               leaf's path (they sum to 1); r = Σ_i a_i x_i; every leaf is blended,
//               x_i ← (1 − a_i) x_i + a_i WRITE(x_i, h), and every summary re-JOINed: O(n)
//               nodes a step, but differentiable end to end (what training uses).
// The read comes before the write, as in the paper (the leaf's value is the output).
//
// Two implementations: tree_step() in double precision over explicit vectors (what
// `stackmem-step --memory tree` prints, checked against an independent NumPy one,
// testdata/make_ham_golden.py), and ham_build() / ham_access() on the tape (the soft form).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/rng.h"

namespace attnkit::memory {

// ---- one step in double precision

struct TreeWeights {
  int64_t m = 0, c = 0;                // node width, controller width
  std::vector<double> join_w, join_b;  // [m, 2m], [m]
  std::vector<double> search_w;        // [m + c]
  double search_b = 0;
  std::vector<double> write_w, write_b;  // [m, m + c], [m]
};

struct TreeStepIn {
  std::vector<double> leaves;     // n × m, n a power of 2 (≥ 2)
  std::vector<double> summaries;  // (n − 1) × m in heap order (root first, then its
                                  // children, ...); empty: built from the leaves by JOIN
  std::vector<double> h;          // c: the controller's state
  bool hard = false;
};

struct TreeStepOut {
  std::vector<double> summaries;  // the new (n − 1) × m, heap order
  std::vector<double> leaves;     // the new n × m
  std::vector<double> weights;    // n: the leaf weights a_i (hard: one-hot)
  std::vector<double> branch;     // n − 1: SEARCH's probability of going right, per node
                                  // (hard: only the path's; NaN elsewhere)
  std::vector<double> read;       // m
  int64_t leaf = -1;              // hard: the leaf reached
  int64_t build_ops = 0;          // multiply-adds of building the summaries (0 when given)
  int64_t ops = 0;                // multiply-adds (and exps) of the access itself
};

// ShapeError for sizes that do not fit (n not a power of 2, widths), DataError for
// non-finite input.
TreeStepOut tree_step(const TreeWeights& w, const TreeStepIn& in);
// stackmem-step --memory tree's output: lines "summaries", "leaves", "weights", "branch",
// ["leaf",] "read", "build_ops", "ops"; numbers with 17 significant digits.
std::string format_tree_step(const TreeStepOut& o, bool hard);

// ---- on the tape (the soft form), for a batch of B trees

// JOIN and SEARCH are one affine layer each (as tree_step's) unless their hidden layer is
// given (the paper's networks, MLPs of one hidden layer of H ReLU units):
//   JOIN(l, r)   = tanh(W_j relu(U_j [l; r] + c_j) + b_j)     (U_j [H, 2m], W_j [m, H])
//   SEARCH(x, h) = σ(w_s · relu(U_s [x; h] + c_s) + b_s)       (U_s [H, m + c], w_s [1, H])
// A tanh layer of the two children can only approximate carrying a subtree's minimum up
// (min(a, b) = b − relu(b − a) is exact with one hidden ReLU layer).
struct HamWeights {
  ad::Var join_w, join_b;            // [m, 2m] ([m, H] with join_hw), [m]
  ad::Var search_w, search_b;        // [1, m + c] ([1, H] with search_hw), [1]
  ad::Var write_w, write_b;          // [m, m + c], [m]
  ad::Var join_hw{}, join_hb{};      // JOIN's hidden layer [H, 2m], [H]; invalid: none
  ad::Var search_hw{}, search_hb{};  // SEARCH's hidden layer [H, m + c], [H]; invalid: none
};

// The tree as its levels: levels[0] the root [B, 1, m], ..., levels[d] the leaves [B, n, m].
using HamTree = std::vector<ad::Var>;

// The summaries over leaves [B, n, m] (n = 2^d ≥ 2).
HamTree ham_build(ad::Var leaves, const HamWeights& w);

struct HamAccess {
  HamTree tree;     // after the write
  ad::Var read;     // [B, m]
  ad::Var weights;  // [B, n]: the leaf weights
};

// One soft access from controller states h [B, c].
HamAccess ham_access(const HamTree& tree, ad::Var h, const HamWeights& w);

// ---- on the tape, the hard form (HAM's own, trained by REINFORCE)
//
// The tree as one table of nodes, so that an access replaces only its path's rows: row
// b·2n + k holds node k of tree b (heap order, 1-based: node k's children are 2k and 2k + 1,
// the leaves n .. 2n − 1; row b·2n is unused and zero).
struct HamTable {
  ad::Var nodes;  // [B·2n, m]
  int64_t batch = 0, n = 0, m = 0;
};
// The table of ham_build's levels (their values copied once: O(n) for the whole sequence).
HamTable ham_table(const HamTree& levels);

struct HamHardAccess {
  HamTable tree;     // after the write: the path's d + 1 rows of each active tree replaced
  ad::Var read;      // [B, m]: the leaf reached, before its write
  ad::Var log_prob;  // [B, 1]: Σ over the d levels of log π(the decision taken)
  ad::Var entropy;   // [B, 1] (HamDescent::entropy): Σ over the d levels of the entropy of the
                    // decision at the node reached, H(p) = −p log p − (1 − p) log(1 − p) (the
                    // path's; an entropy bonus on it keeps the descent from collapsing)
  std::vector<int64_t> leaf;          // per row: the leaf reached, in [0, n)
  std::vector<std::vector<float>> p;  // per row: SEARCH's p(right) at each level's node
  int64_t rows_replaced = 0;          // table rows written: (d + 1) per active row
  int64_t multiply_adds = 0;          // of SEARCH, WRITE and JOIN (no other node is touched)
};

// How an access chooses at each node: sample right with probability p (training, `rng`),
// the likelier child (greedy: test), or the given decisions (`forced[b][l]`, 1 = right: for
// enumerating the paths in tests).
struct HamDescent {
  Rng* rng = nullptr;                                         // sample
  const std::vector<std::vector<uint8_t>>* forced = nullptr;  // or forced; neither: greedy
  bool entropy = false;  // also give the path's entropy (HamHardAccess::entropy)
};

// One hard access from controller states h [B, c]: per row, d = log2 n decisions from the
// root, each SEARCH(x_node, h) on the node reached only; the leaf is read and replaced by
// WRITE(x_leaf, h), and the d summaries above it re-JOINed from their children. Rows whose
// `active` flag is 0 leave their tree as it was (their read and log_prob are still given).
// The gradient flows into the read (and so into the leaves, JOIN and WRITE) by backprop and,
// through log_prob, into SEARCH (and the summaries it read) by the score function.
HamHardAccess ham_hard_access(const HamTable& tree, ad::Var h, const HamWeights& w,
                              const std::vector<uint8_t>& active, const HamDescent& how = {});

}  // namespace attnkit::memory
