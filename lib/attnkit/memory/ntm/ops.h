// Fused tape ops of the Neural Turing Machine: one node for a head's whole addressing step
// and one for a write, each with a hand-written backward. They compute exactly what the
// composed ops of Ntm::address (and the erase/add products) compute — the unit tests check
// values and gradients against those — with 2 nodes per head instead of about 25, which is
// what makes small-batch NTM training fast (the work per node is tiny: N = 128, M = 20).
#pragma once

#include <cstdint>

#include "attnkit/autodiff/tape.h"

namespace attnkit::memory {

// w [1, N] from memory [N, M], the previous weighting prev [1, N], and a head's raw
// (pre-activation) controller outputs p [1, P] whose columns off … off + M + 2 + K are
//   k (M), β̂, ĝ, ŝ (K = 2R + 1), γ̂
// activated as β = softplus(β̂), g = σ(ĝ), s = softmax(ŝ), γ = 1 + softplus(γ̂).
ad::Var ntm_address_fused(ad::Var memory, ad::Var p, int64_t off, int shift_range, ad::Var prev);

// Memory after one write: M ∘ (1 − wᵀ e) + wᵀ a with e = σ(ê), a = tanh(â) (or â when
// tanh_add is false), ê = p[off … off + M), â = p[off + M … off + 2M).
ad::Var ntm_write_fused(ad::Var memory, ad::Var w, ad::Var p, int64_t off, bool tanh_add);

}  // namespace attnkit::memory
