// Soft and hard attention over one (Q, K, V) or a batch of them:
//   scores  S = score(Q, K), masked entries -inf          [n_q, n_k]
//   weights A = softmax of each row of S (or hard: one-hot) [n_q, n_k]
//   context C = A V                                        [n_q, d_v]
// A rank-3 operand is a batch [B, rows, cols] and the computation maps over it; a rank-2
// operand is shared by every batch item. Rank-3 operands must agree on B.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/attention/score.h"
#include "attnkit/attention/softmax.h"
#include "attnkit/core/tensor.h"

namespace attnkit::attention {

enum class Output { Scores, Weights, Context };
enum class Hard { None, Argmax, Sample };

// "scores", "weights", "context" / "argmax", "sample"; anything else is a UsageError naming
// the option (--output, --hard) and the choices.
Output parse_output(const std::string& name);
Hard parse_hard(const std::string& name);

struct Options {
  Output output = Output::Context;
  Hard hard = Hard::None;          // replaces the soft weights (weights and context only)
  bool causal = false;             // query i sees keys j <= i (see mask_causal)
  const Tensor* mask = nullptr;    // 0/1 [n_q, n_k] or [B, n_q, n_k]; 0 = masked
  uint64_t seed = 0;               // Hard::Sample: one Rng for the run, rows in batch order
};

// Attention of q [n_q, d_q] against k [n_k, d_k] (and v [n_k, d_v] for the context), or a
// batch of them. The result is [n_q, n_k] (scores, weights) or [n_q, d_v] (context), with a
// leading batch dimension when any operand is rank 3. A row whose keys are all masked has
// all-zero weights and a zero context. Hard::Argmax takes the argmax of the masked scores
// (first index on ties). Throws InputShapeError naming both shapes when operands do not fit,
// DataError for a mask value other than 0/1, UsageError for a context without v or a hard
// mode with Output::Scores.
Tensor attend(const Scorer& scorer, const Tensor& q, const Tensor& k, const Tensor* v,
              const Options& opt);

}  // namespace attnkit::attention
