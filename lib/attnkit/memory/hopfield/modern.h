// Modern (dense, continuous) Hopfield networks, Ramsauer et al. 2020, "Hopfield Networks is
// All You Need": stored patterns X ([P, d], one per row, any real values), states xi ([d],
// one per row of a [n, d] tensor), inverse temperature beta > 0.
//
//   update   xi <- X' softmax(beta X xi)      for all rows at once: softmax(beta Xi X') X
//   energy   E = -lse(beta, X xi) + 1/2 xi'xi + beta^-1 log P + 1/2 M^2,
//            lse(beta, z) = beta^-1 log sum_mu exp(beta z_mu), M = max_mu |x_mu|
//
// One update is exactly softmax attention with the queries beta xi and X as keys and values
// (attn-score --score dot). Sums and the log-sum-exp are taken in double.
#pragma once

#include <cstdint>

#include "attnkit/core/tensor.h"

namespace attnkit::memory {

// softmax(beta Xi X') row by row: [n, P]. Throws ShapeError when the columns differ,
// DataError for beta <= 0 or not finite.
Tensor modern_weights(const Tensor& x, const Tensor& xi, float beta);

// `steps` updates (>= 1) of every row of xi: [n, d]. If `last_weights` is given it receives
// the weights of the last update.
Tensor modern_update(const Tensor& x, const Tensor& xi, float beta, int steps,
                     Tensor* last_weights = nullptr);

// The energy of every row of xi: [n].
Tensor modern_energy(const Tensor& x, const Tensor& xi, float beta);

}  // namespace attnkit::memory
