// The tree's and the set's accesses in place, in float, without a tape: what decoding with a
// hard tree costs per access, against the set's, as the memory grows (bench/memaccess.sh, beside
// the same accesses in PyTorch, bench/memaccess_torch.py). B memories side by side.
//
//   TreeMemory  HAM's hard access (memory/stackmem/ham.h): from the controller's state h, d =
//               log2 n SEARCH decisions (the likelier child), the leaf read, replaced by
//               WRITE(x_leaf, h), and the d summaries above it re-JOINed. Only the path's d + 1
//               nodes are read or written: O(d m (m + c)) a row.
//   SetMemory   the set's step (memory/stackmem/set.h) from h: the control layer (write and
//               erase strengths, key, value, read key, erase key, threshold: one product by
//               [3 + 4m, c]), the erase and the read by content over the n slots, and the
//               new slot: O(n m) a row. In float (set_step and the tape's form accumulate in
//               double, for a read invariant to the slots' order to an ulp). The set is held at n
//               slots: each access writes its new slot at position n, where the next access
//               overwrites it (so that every access meets n; the bench's fixed size).
//   StackMemory the stack's or the queue's step (memory/stackmem/memory.h) from h: the control
//               layer (push and pop strengths, value: one product by [2 + m, c]), the pop over
//               the n stored strengths from the memory's end, the new value pushed at position
//               n, and the read from the end up to a strength of 1: O(n m) a row, with no early
//               exit (as the trained form: a strength deep down may still count). Held at n
//               as the set is: the next access overwrites the pushed slot.
// All three are checked against the double-precision steps (tree_step, set_step, stack_step)
// in tests/unit/memaccess_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/memory/stackmem/ham.h"
#include "attnkit/memory/stackmem/memory.h"
#include "attnkit/memory/stackmem/set.h"

namespace attnkit::memory {

class TreeMemory {
 public:
  // w's numbers as floats; `leaves` [B, n, m] (n a power of 2), the summaries JOINed from them.
  TreeMemory(const TreeWeights& w, int64_t batch, const std::vector<float>& leaves);
  // One hard access of every row from h [B, c]: read [B, m] (the leaves reached, before their
  // write); leaf[b] the leaf reached. Returns the multiply-adds it took.
  int64_t access(const float* h, float* read, int64_t* leaf = nullptr);
  int64_t n() const { return n_; }
  // Node k (1-based heap order; the leaves n .. 2n − 1) of row b.
  const float* node(int64_t b, int64_t k) const { return x_.data() + (b * 2 * n_ + k) * m_; }

 private:
  void join(float* nodes, int64_t k);
  int64_t B_, n_, m_, c_, d_ = 0;
  std::vector<float> join_w_, join_b_, search_w_, write_w_, write_b_;
  float search_b_;
  std::vector<float> x_;    // B × 2n × m
  std::vector<float> buf_;  // m + c
};

class SetMemory {
 public:
  // The control layer [3 + 4m, c] (rows: write, erase, key m, value m, read key m, erase key m,
  // threshold) and its bias; `slots` n slots per row: strengths [B, n], keys and values
  // [B, n, m].
  SetMemory(int64_t m, int64_t c, const std::vector<float>& control_w, std::vector<float> control_b,
            int64_t batch, const std::vector<float>& strengths, const std::vector<float>& keys,
            const std::vector<float>& values);
  // One step of every row from h [B, c]: read [B, m + 1] (Σ ρ v, Σ ρ). Returns the
  // multiply-adds (and exps). In float throughout (fastmath's exp and tanh, sums in 16 lanes):
  // the control layer of all rows as c axpys of its transposed weights, then per row one pass
  // over the keys (held transposed, [m, n + 1], so that both content scores are axpys over
  // the slots: e·k_i and q·k_i together), the erase and the read's weights in one pass, and
  // the read as axpys of the values. No allocation.
  int64_t access(const float* h, float* read);
  int64_t n() const { return n_; }
  // Row b's n + 1 strengths and values (slot n: the last access's new slot), and key j of
  // slot i.
  const float* strengths(int64_t b) const { return s_.data() + b * cap_; }
  float key(int64_t b, int64_t i, int64_t j) const { return kt_[(b * m_ + j) * cap_ + i]; }
  const float* values(int64_t b) const { return v_.data() + b * cap_ * m_; }

 private:
  int64_t m_, c_, B_, n_, cap_;
  std::vector<float> cwt_, cb_, s_, kt_, v_, ctrl_, de_, dq_, r_;
};

class StackMemory {
 public:
  // kind Stack or Queue (a deque is a ShapeError); the control layer [2 + m, c] (rows: push,
  // pop, value m) and its bias; n stored values a row: strengths [B, n] (bottom first, in
  // [0, 1]) and values [B, n, m].
  StackMemory(StackKind kind, int64_t m, int64_t c, const std::vector<float>& control_w,
              std::vector<float> control_b, int64_t batch, const std::vector<float>& strengths,
              const std::vector<float>& values);
  // One step of every row from h [B, c]: push d = σ(o_0), pop u = σ(o_1), value tanh(o_2..);
  // read [B, m]. Returns the multiply-adds (and the pop's and read's operations, counted as
  // stack_step counts them). In float; no allocation.
  int64_t access(const float* h, float* read);
  int64_t n() const { return n_; }
  // Row b's n + 1 strengths and values (slot n: the last access's pushed value).
  const float* strengths(int64_t b) const { return s_.data() + b * (n_ + 1); }
  const float* values(int64_t b) const { return v_.data() + b * (n_ + 1) * m_; }

 private:
  bool top_;
  int64_t m_, c_, B_, n_;
  std::vector<float> cwt_, cb_, s_, v_, ctrl_;
};

}  // namespace attnkit::memory
