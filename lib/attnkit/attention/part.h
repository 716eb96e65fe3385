// A part of an attention problem's result (attn-score and attn-mha --shard): items [p0, p1)
// of a batch, or query rows [p0, p1) of one problem. Everything is computed blocked as for
// the whole problem, so a part's numbers are the whole result's, bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/tensor.h"

namespace attnkit::attention {

struct Part {
  int64_t p0 = 0, p1 = 0;      // the part, in items (batched) or rows
  bool part = false;           // a proper part (not the whole)
  int64_t b_lo = 0, b_hi = 0;  // batch items to compute
  int64_t r_lo = 0, r_hi = 0;  // query rows to compute in each

  // begin/end as Options::part_begin/part_end (end < 0: to the end); UsageError when the part
  // is not within the problem.
  Part(int64_t begin, int64_t end, bool batched, int64_t batch, int64_t n_q) {
    const int64_t whole = batched ? batch : n_q;
    p0 = begin;
    p1 = end < 0 ? whole : end;
    part = begin != 0 || end >= 0;
    if (p0 < 0 || p0 > p1 || p1 > whole)
      throw UsageError("part " + std::to_string(p0) + ".." + std::to_string(p1) +
                       " is not within " + std::to_string(whole) +
                       (batched ? " batch items" : " query rows"));
    b_lo = batched ? p0 : 0, b_hi = batched ? p1 : batch;
    r_lo = batched ? 0 : p0, r_hi = batched ? n_q : p1;
  }

  // The part's rows (first dimension) of a whole result.
  Tensor take(Tensor full) const {
    if (!part) return full;
    Shape sh = full.shape();
    sh[0] = p1 - p0;
    const int64_t per = full.dim(0) ? full.size() / full.dim(0) : 0;
    return Tensor(sh, std::vector<float>(full.data() + p0 * per, full.data() + p1 * per));
  }
};

}  // namespace attnkit::attention
