// Fused tape ops of the neural stack, queue and deque (memory/stackmem/memory.h): the pop of
// equation (2) and the read of equation (3), each one node with a hand-written backward.
// The sums "of the strengths nearer the end" are running sums, O(n) a row, where the
// composition of ops.h multiplied by an n × n triangular constant (O(n²) and a matmul node,
// plus five elementwise nodes, every step). They compute what that composition computes,
// with the same one-sided derivatives at the kinks (max(0, x) has derivative 0 at x = 0;
// min(a, b) = a − max(0, a − b)); tests/unit/stackmem_test.cpp checks values and gradients
// against it and by finite differences.
#pragma once

#include "attnkit/autodiff/tape.h"

namespace attnkit::memory {

// Strengths after a pop of u [B, 1] from s [B, n]: from_top (the stack's end, the last
// column) or from the bottom (column 0, the queue's end):
//   out[i] = max(0, s[i] − max(0, u − Σ_{j nearer the end than i} s[j]))
ad::Var stack_pop(ad::Var s, ad::Var u, bool from_top);

// The read [B, m] of values [B, n, m] with strengths s [B, n] from one end:
//   r = Σ_i min(s[i], max(0, 1 − Σ_{j nearer the end than i} s[j])) · values[i]
ad::Var stack_read(ad::Var s, ad::Var values, bool from_top);

}  // namespace attnkit::memory
