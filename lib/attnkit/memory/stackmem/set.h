// A set memory: slots without order, read and erased by content (exercise 8-4's "memory
// organised as a set"). A slot is a strength s in [0, 1], a key k and a value v (width m).
// At each step, from a controller's interface (write strength w, key k_w, value v_w, read
// key q, erase strength ε, erase key e, each a function of the controller's state):
//   erase   a_i = s_i exp(e·k_i) / (1 + Σ_j s_j exp(e·k_j))     (content weights, < 1)
//           s_i ← s_i (1 − ε a_i)                                                    (1)
//   read    ρ_i = s_i exp(q·k_i) / (exp(τ) + Σ_j s_j exp(q·k_j))                    (2)
//           r = [Σ_i ρ_i v_i, Σ_i ρ_i]
//   write   a new slot (w, k_w, v_w) joins the set                                  (3)
// The read sees the set as the step found it (after the erase, before the write): "was this
// seen before?" is one read, and a controller whose read and write keys both follow the
// symbol it reads cannot find that symbol merely because it has just written it (with the
// write first, trained controllers did exactly that and learned nothing of membership).
// The 1 and the exp(τ) in the denominators are a sentinel slot of logit 0 (the erase's) or τ
// (the read's threshold, from the controller) and no value: when nothing in the set scores
// above τ, the weights sum to well under 1, and the read's last number (how much was found)
// says so; membership reads straight off it. (With τ = 0, the slots that merely resemble the
// key outweigh the sentinel: 16 random ±1 keys of width 32 against a key score about e^19
// in all, and a trained set with the sentinel at 0 read "found" for every query.) Nothing refers to
// a slot's position: every sum runs over the slots in any order, so a permutation of the slots
// changes no read (the sums are accumulated in double, so that the float read differs by at most an
// ulp). The cost of a step is O(n m) for n slots (two content passes), as an NTM's.
//
// Two implementations, as for the stack (memory/stackmem/memory.h): set_step() in double precision
// over explicit vectors (what `stackmem-step --memory set` prints, checked against an
// independent NumPy one, testdata/make_setmem_golden.py), and set_update() on the tape for
// training (fused ops with hand-written backwards: set_weights, set_read).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::memory {

// ---- one step in double precision

struct SetStepIn {
  std::vector<double> strengths;     // n
  std::vector<double> keys, values;  // n × m each, row-major
  int64_t m = 0;
  double write = 0;                // w
  std::vector<double> key, value;  // k_w, v_w (m each)
  std::vector<double> read_key;    // q (m)
  double erase = 0;                // ε
  std::vector<double> erase_key;   // e (m)
  double threshold = 0;            // τ: the read's sentinel logit
};

struct SetStepOut {
  std::vector<double> strengths;      // n + 1 (the new slot last)
  std::vector<double> keys, values;   // (n + 1) × m
  std::vector<double> erase_weights;  // n: a_i of (1)
  std::vector<double> read_weights;   // n: ρ_i of (2)
  std::vector<double> read;           // m + 1: Σ ρ_i v_i, then Σ ρ_i
  int64_t ops = 0;  // multiply-adds (and exps) the step took: the access cost, O(n m)
};

// Sizes that do not fit are ShapeErrors; strengths outside [0, 1] or non-finite input,
// DataErrors.
SetStepOut set_step(const SetStepIn& in);
// stackmem-step --memory set's output: lines "strengths", "erase_weights", "read_weights" (n),
// "read" and "ops", numbers with 17 significant digits.
std::string format_set_step(const SetStepOut& o);

// ---- on the tape, for a batch of B sets

struct SetState {
  ad::Var strengths;     // [B, n] (absent while n = 0)
  ad::Var keys, values;  // [B, n, m]
  int64_t size = 0;
};

struct SetUpdate {
  SetState state;
  ad::Var read;     // [B, m + 1]
  ad::Var weights;  // [B, n]: the read weights ρ over the slots before the write (for
                    // traces; absent when the set was empty)
};

// write, erase [B, 1] (strengths in [0, 1]); key, value, read_key, erase_key [B, m].
// threshold [B, 1]: the read's τ (an invalid Var: 0).
SetUpdate set_update(ad::Tape& t, const SetState& prev, ad::Var write, ad::Var key, ad::Var value,
                     ad::Var read_key, ad::Var erase, ad::Var erase_key,
                     ad::Var threshold = ad::Var());

// The content weights of (1) and (2), one fused node accumulated in double: s [B, n],
// keys [B, n, m], q [B, m], τ [B, 1] (optional: 0) → ρ [B, n],
// ρ_i = s_i exp(q·k_i) / (exp(τ) + Σ_j s_j exp(q·k_j)).
ad::Var set_weights(ad::Var s, ad::Var keys, ad::Var q, ad::Var tau = ad::Var());
// The read of (2): ρ [B, n], values [B, n, m] → [B, m + 1] = [Σ_i ρ_i v_i, Σ_i ρ_i], one fused
// node accumulated in double.
ad::Var set_read(ad::Var rho, ad::Var values);

}  // namespace attnkit::memory
