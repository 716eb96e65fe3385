// REINFORCE (Williams 1992) as building blocks on the tape: hard choices (an arm, a region, a
// glimpse location) are sampled, and the loss whose gradient is the score-function estimate
//   ∇J ≈ Σ_t (G_t − b_t) ∇ log π(a_t | s_t)
// is built from the sampled actions' log-probabilities, the returns and a baseline.
//
//   Var logits = policy(t, state);                         // [N, K]
//   std::vector<int32_t> a = rl::sample_categorical(logits.value(), t.rng());
//   ... act, collect the returns G (one per row) ...
//   rl::PolicyLoss L = rl::reinforce_loss(t, rl::categorical_log_prob(logits, a), G,
//                                         value_head(t, state), opt,
//                                         rl::categorical_entropy(logits));
//   loss = L.total;                                        // backward() on it
//
// Variance reduction (each documented where it is declared):
//   - a baseline b: learned (a value head regressed on the returns, its loss added with
//     ReinforceOptions::value_weight) or a number (MovingAverageBaseline, or a batch mean);
//     it leaves the estimator's mean unchanged and lowers its variance (tests/unit/rl_test.cpp
//     measures both);
//   - several samples of each problem with the leave-one-out baseline
//     (leave_one_out_baseline below);
//   - advantage normalisation: (A − mean A) / (std A + ε) over the rows, as PPO's
//     implementations do; it rescales the step and is off by default;
//   - an entropy bonus β H(π) that keeps the policy from collapsing early.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::rl {

using ad::Tape;
using ad::Var;

// One action per row of probabilities or logits [N, K] (rank 2, or rank 1 for one row),
// drawn with `rng` by inverse transform sampling. From logits the softmax is taken first.
std::vector<int32_t> sample_categorical(const Tensor& logits, Rng& rng);
// The index of the largest logit of each row (the first on ties): greedy decoding.
std::vector<int32_t> argmax_rows(const Tensor& logits);

// log π(a_i) for each row i of logits [N, K] → [N, 1]; actions in [0, K).
Var categorical_log_prob(Var logits, const std::vector<int32_t>& actions);
// H(π) = −Σ_k π_k log π_k of each row → [N, 1].
Var categorical_entropy(Var logits);

// A Gaussian policy with a fixed standard deviation (the recurrent attention model's
// location policy): log N(a; μ, σ² I) summed over the last dimension, μ [N, d] → [N, 1].
// The sampled actions `a` [N, d] are constants: the gradient flows into μ only.
Var gaussian_log_prob(Var mean, const Tensor& actions, float stddev);
// μ + σ ε with ε ~ N(0, 1), elementwise.
Tensor sample_gaussian(const Tensor& mean, float stddev, Rng& rng);

// How reinforce_loss combines each term's rows: their mean (a loss whose size does not follow
// the number of rows) or their sum (for a model whose own loss sums over its rows, as a summed
// cross-entropy does: stackmem's hard tree, whose accesses per pair vary).
enum class RowReduction { mean, sum };

struct ReinforceOptions {
  bool normalize_advantage = false;  // (A − mean) / (std + 1e-8) over the rows
  double entropy = 0.0;              // β: the bonus β H(π) is subtracted from the loss
  double value_weight = 0.5;         // weight of the value head's squared error
  double policy_weight = 1.0;        // weight of the policy term (0: the bonus alone trains π)
  RowReduction rows = RowReduction::mean;  // each term's mean over the rows, or its sum
};

struct PolicyLoss {
  Var total;   // policy_weight · policy + value_weight · value − entropy · H: backward() on it
  Var policy;  // −mean_i A_i log π(a_i) (−Σ_i with RowReduction::sum), A constant
  Var value;   // mean_i (b_i − G_i)² (or Σ_i; a learned baseline), else absent
  double mean_advantage = 0.0;
  double mean_return = 0.0;
};

// The REINFORCE loss over N rows: log_probs [N, 1] (or [N]), returns G (N numbers).
// The baseline is either `value` [N, 1], a learned prediction of G whose squared error is
// added (its value is used as a constant in the advantage, so the policy term does not
// train it), or, when `value` is empty, the numbers `fixed_baseline` (size N, or empty for
// none). `entropy` [N, 1] (H of each row, reduced as the other terms) may be empty when
// options.entropy is 0.
PolicyLoss reinforce_loss(Tape& t, Var log_probs, const std::vector<float>& returns, Var value,
                          const ReinforceOptions& options = {}, Var entropy = Var(),
                          const std::vector<float>& fixed_baseline = {});

// The leave-one-out baseline of several samples of the same problem (Kool et al. 2019's
// "buy 4 REINFORCE samples, get a baseline for free"; RAM's M location samples per image):
// the returns come in consecutive groups of `group` rows (the samples of one problem), and
// row i's baseline is the mean of the other group − 1 returns of its group. It does not
// depend on row i's own sample, so the estimator stays unbiased. group must be >= 2 and
// divide the number of returns (UsageError / ShapeError otherwise).
std::vector<float> leave_one_out_baseline(const std::vector<float>& returns, int64_t group);

// b ← decay · b + (1 − decay) · mean return, per step; starts at the first mean it sees.
// Its state (value, started) is what a checkpoint keeps.
class MovingAverageBaseline {
 public:
  explicit MovingAverageBaseline(double decay = 0.9) : decay_(decay) {}
  double value() const { return value_; }
  bool started() const { return started_; }
  void update(double mean_return);
  void restore(double value, bool started) {
    value_ = value;
    started_ = started;
  }

 private:
  double decay_;
  double value_ = 0.0;
  bool started_ = false;
};

}  // namespace attnkit::rl
