// Running a 2-D self-attention block on feature maps, the logic behind attn-2d: the block's
// output or its attention (whole, or one map per query pixel), and a picture of the first
// item's attention at the query pixels.
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/hooks.h"
#include "attnkit/core/tensor.h"

namespace attnkit::nn {

// What attn-2d was asked (its options, by their long names).
struct Attn2dRunOptions {
  std::string input, params, block = "sagan", emit = "output", draw;
  std::vector<std::string> queries;  // "ROW,COL" each
};

// The maps of o.input through the block (checked as the tool's options: UsageError naming
// them): its output in the input's shape, or (emit attention) the attention [N, HW, K] or the
// query pixels' maps [N, Q, H', W'] (without N for one C x H x W map); o.draw written when
// given.
Tensor run_attn2d(const Attn2dRunOptions& o, const GivenOption& given);

}  // namespace attnkit::nn
