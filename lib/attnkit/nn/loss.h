// Losses: fused, numerically stable, averaged over the counted elements.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/autodiff/ops.h"

namespace attnkit::nn {

struct CrossEntropyOptions {
  int32_t ignore_index = -1;     // targets equal to it (padding) count for nothing
  float label_smoothing = 0.0f;  // ε: the target distribution is (1 - ε) one-hot + ε / V
};

// Mean over the non-ignored targets of -Σ_v q_v log softmax(logits)_v, with logits
// [..., V] (rows = targets.size()) and q the (smoothed) target distribution, as
// torch.nn.functional.cross_entropy(..., ignore_index, label_smoothing). No counted target:
// 0. A target outside [0, V) that is not ignore_index is a DataError.
ad::Var cross_entropy(ad::Var logits, const std::vector<int32_t>& targets,
                      const CrossEntropyOptions& opt = {});

// Mean of the binary cross-entropy of σ(logits) against targets in [0, 1] (same shape),
// computed from the logits as max(x, 0) - x·y + ln(1 + e^-|x|). With a 0/1 mask of the same
// shape only elements where mask is 1 count (and the mean is over them).
ad::Var bce_with_logits(ad::Var logits, const Tensor& targets, const Tensor* mask = nullptr);

}  // namespace attnkit::nn
