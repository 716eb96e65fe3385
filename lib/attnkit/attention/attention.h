// Soft and hard attention over one (Q, K, V) or a batch of them:
//   scores  S = score(Q, K), masked entries -inf          [n_q, n_k]
//   weights A = softmax of each row of S (or hard: one-hot) [n_q, n_k]
//   context C = A V                                        [n_q, d_v]
// A rank-3 operand is a batch [B, rows, cols] and the computation maps over it; a rank-2
// operand is shared by every batch item. Rank-3 operands must agree on B.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/attention/score.h"
#include "attnkit/attention/softmax.h"
#include "attnkit/core/tensor.h"

namespace attnkit::attention {

enum class Output { Scores, Weights, Context };
enum class Hard { None, Argmax, Sample };
// Local attention (Luong et al. 2015), with window half-width D:
//   Monotonic   query i attends to keys j with |j - i| <= D (aligned position p_i = i);
//   Predictive  p_i = n_k · sigmoid(vpᵀ tanh(Wp q_i)), keys with |j - p_i| <= D, and the
//               softmax weights (over the window) multiplied by exp(-(j - p_i)² / (2σ²)),
//               σ = D / 2; weights outside the window are 0 (rows no longer sum to 1).
enum class Local { None, Monotonic, Predictive };
// "m" / "monotonic", "p" / "predictive"; anything else is a ChoiceError.
Local parse_local(const std::string& name);
struct LocalSpec {
  Local kind = Local::None;
  int64_t window = 0;  // D >= 0
  Tensor Wp;           // predictive: [d_p, d_q]
  Tensor vp;           // predictive: [d_p] (also [1, d_p] or [d_p, 1])
};

// "scores", "weights", "context" / "argmax", "sample"; anything else is a ChoiceError naming
// the field (output kind, hard attention) and the choices.
Output parse_output(const std::string& name);
Hard parse_hard(const std::string& name);

struct Options {
  Output output = Output::Context;
  Hard hard = Hard::None;        // replaces the soft weights (weights and context only)
  bool causal = false;           // query i sees keys j <= i (see mask_causal)
  const Tensor* mask = nullptr;  // 0/1 [n_q, n_k] or [B, n_q, n_k]; 0 = masked
  uint64_t seed = 0;             // Hard::Sample: one Rng for the run, rows in batch order
  const std::vector<int64_t>* key_lengths = nullptr;  // valid keys per batch item (padding)
  const LocalSpec* local = nullptr;  // local attention; nullptr or Local::None: global
  int threads = 0;                   // parallel_for budget (0: max_threads())
  // A part of the result only (cli --shard): items [part_begin, part_end) of the batch when
  // any operand is rank 3, otherwise query rows [part_begin, part_end); part_end < 0: all.
  // The result then holds just that part, with the same numbers, bit for bit, as the same
  // rows of the whole result (the work is blocked as for the whole problem). Not with
  // Hard::Sample (one generator draws for every row in order): UsageError.
  int64_t part_begin = 0, part_end = -1;
};

// The aligned positions p_i of predictive local attention for queries q [n_q, d_q] over n_k
// keys: [n_q]. Throws InputShapeError (operand Params) when Wp, vp do not fit q.
std::vector<float> local_positions(const LocalSpec& local, ConstMat q, int64_t n_k);

// Attention of q [n_q, d_q] against k [n_k, d_k] (and v [n_k, d_v] for the context), or a
// batch of them. Contexts of dot and scaled-dot scores (soft, not predictive-local) go
// through the streaming kernel (fused.h); everything else through the score matrix a block
// of rows at a time. Both run over (batch item, row block) tasks on all threads (sampling
// runs in row order on one). The result is [n_q, n_k] (scores, weights) or [n_q, d_v] (context),
// with a leading batch dimension when any operand is rank 3. A row whose keys are all masked has
// all-zero weights and a zero context. Hard::Argmax takes the argmax of the masked scores
// (first index on ties). Throws InputShapeError naming both shapes when operands do not fit,
// DataError for a mask value other than 0/1, UsageError for a context without v or a hard
// mode with Output::Scores.
Tensor attend(const Scorer& scorer, const Tensor& q, const Tensor& k, const Tensor* v,
              const Options& opt);

}  // namespace attnkit::attention
