// The memory-network unit tests' toy batch (memn2n_test.cpp, memn2n_struct_test.cpp).
#pragma once

#include <vector>

#include "attnkit/memory/memn2n/model.h"
#include "attnkit/memory/memn2n/train.h"

namespace attnkit::test {

// A batch of 2 questions by hand: memories of 3 and 1 sentences, V = 9.
inline memory::MemBatch memn2n_toy_batch(const memory::MemN2NConfig& cfg) {
  std::vector<memory::EncodedQA> qs(2);
  qs[0].memory = {{4, 5, 6}, {7, 5}, {4, 8, 6}};
  qs[0].query = {5, 4};
  qs[0].answer = 6;
  qs[1].memory = {{7, 8}};
  qs[1].query = {7};
  qs[1].answer = 8;
  return memory::make_batch(qs, {0, 1}, cfg, nullptr);
}

}  // namespace attnkit::test
