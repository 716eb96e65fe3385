// The memory a model built from a model file may take (core/alloc_budget.h): twice the values
// of the file's tensors (the parameters, and room for their copies) and 2^24 values (64 MiB)
// for the tables and buffers a model makes beside them. Every kind's loader declares one
// before it builds the model from the stored configuration, so that a configuration that does
// not fit the tensors (a damaged or altered file) is refused at its first large tensor.
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/alloc_budget.h"
#include "attnkit/nn/model_file.h"

namespace attnkit::nn {

inline int64_t build_budget_floats(const ModelFile& f) {
  int64_t n = int64_t{1} << 24;
  for (const auto& [name, t] : f.tensors) n += 2 * t.size();
  return n;
}

class BuildBudget : public AllocBudget {
 public:
  explicit BuildBudget(const ModelFile& f)
      : AllocBudget(build_budget_floats(f),
                    "the stored configuration asks for far more memory than the file's tensors "
                    "hold (a damaged or altered model file)",
                    f.file) {}
};

}  // namespace attnkit::nn
