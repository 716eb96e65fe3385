// Continuous stacks, queues and deques (Grefenstette, Hermann, Suleyman & Blunsom 2015,
// "Learning to Transduce with Unbounded Memory", Section 3): memories without parameters
// whose push and pop are strengths in [0, 1], so that a controller can learn to use them by
// backpropagation. Exercise 8-4 of the textbook.
//
// The neural stack, at step t with push strength d_t, pop strength u_t and value v_t:
//   V_t = V_{t−1} with v_t appended                                             (1)
//   s_t[i] = max(0, s_{t−1}[i] − max(0, u_t − Σ_{j=i+1}^{t−1} s_{t−1}[j]))  i < t
//   s_t[t] = d_t                                                                (2)
//   r_t = Σ_i min(s_t[i], max(0, 1 − Σ_{j=i+1}^{t} s_t[j])) · V_t[i]           (3)
// The pop removes strength from the top down; the read is the top of the stack up to a total
// strength of 1. The queue is the same with the sums over j < i instead (it pops and reads
// from the bottom: the oldest values). The deque has two ends: at each step it pops u_top
// from the top, then u_bot from the bottom of what is left, pushes v_bot (strength d_bot)
// at the bottom and v_top (d_top) at the top, and reads both ends; its read is [r_top, r_bot].
//
// Two implementations: stack_step() in double precision over explicit vectors (what
// `stackmem-step` prints; the reference of the tests, checked against an independent NumPy
// one), and stack_update() on the tape for training (its pop and read are fused nodes,
// memory/stackmem/ops.h), with exact gradients of max and min (away from ties).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/tape.h"

namespace attnkit::memory {

enum class StackKind { Stack, Queue, Deque };
StackKind parse_stack_kind(const std::string& name);  // stack, queue or deque
std::string stack_kind_name(StackKind k);

// ---- one step in double precision (index 0 = the bottom, the oldest value)

struct StackStepIn {
  std::vector<double> values;              // n × m, row-major: the memory's values, bottom first
  std::vector<double> strengths;           // n
  int64_t m = 0;                           // value width
  double push = 0, pop = 0;                // d and u (the deque's top end)
  std::vector<double> value;               // v, m values (the deque's top value)
  double push_bottom = 0, pop_bottom = 0;  // the deque's bottom end
  std::vector<double> value_bottom;        // m values (deque)
};

struct StackStepOut {
  std::vector<double> values;     // (n + 1) × m (deque: n + 2)
  std::vector<double> strengths;  // n + 1 (deque: n + 2)
  std::vector<double> read;       // m (deque: 2m, the top read then the bottom read)
  // The step's operations, its access cost: 2 a stored strength for each pop (its share and
  // the running sum) and m + 2 a value for each read (its weight, the running sum, the m
  // multiply-adds). A stack or queue of n: 2n + (n + 1)(m + 2); a deque: 4n + 2(n + 2)(m + 2).
  int64_t ops = 0;
};

// Sizes that do not fit are ShapeErrors; strengths outside [0, 1], or non-finite input,
// DataErrors (the equations are defined for strengths in [0, 1]).
StackStepOut stack_step(StackKind kind, const StackStepIn& in);

// ---- on the tape, for a batch of B memories

struct StackState {
  ad::Var values;     // [B, n, m] (absent while n = 0)
  ad::Var strengths;  // [B, n]
  int64_t size = 0;   // n
};

struct StackUpdate {
  StackState state;
  ad::Var read;  // [B, m] (deque: [B, 2m])
};

// push, pop [B, 1] (deque: [B, 2], top then bottom); value [B, m] (deque: [B, 2m]).
StackUpdate stack_update(ad::Tape& t, StackKind kind, const StackState& prev, ad::Var push,
                         ad::Var pop, ad::Var value);

// Joulin & Mikolov 2015's stack (eq. 5-6), for N stacks of scalars at once: stacks [N, n]
// (column 0 the top), actions [N, 3] (the probabilities of PUSH, POP, NO-OP, each row summing
// to 1), value [N, 1] (what PUSH puts on top). The new stacks are [N, n + 1]: the stack grows
// by a slot so that nothing falls off the bottom; a POP brings up a 0 from below.
//   s'[0] = push · value + pop · s[1] + no-op · s[0]
//   s'[i] = push · s[i − 1] + pop · s[i + 1] + no-op · s[i]
ad::Var stack_rnn_update(ad::Tape& t, ad::Var stacks, ad::Var actions, ad::Var value);

}  // namespace attnkit::memory
