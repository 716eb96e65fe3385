// Basic layers over the tape. A layer registers its parameters in a ParamStore under
// `name` when constructed (initialised from rng as PyTorch does by default) and keeps
// pointers to them; forward(t, ...) enters them on the tape with t.param(). Layers hold no
// per-step state, so one layer object serves every step, tape and thread that owns its tape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/autodiff/ops.h"
#include "attnkit/nn/params.h"

namespace attnkit::nn {

using ad::Tape;
using ad::Var;

// y = x Wᵀ + b; W [out, in], b [out]; both U(-1/√in, 1/√in).
class Linear {
 public:
  Linear(ParamStore& ps, const std::string& name, int64_t in, int64_t out, Rng& rng,
         bool bias = true);
  Var operator()(Tape& t, Var x) const;
  ad::Parameter* W;
  ad::Parameter* b = nullptr;
  // On a recording tape, multiply by Wᵀ made once per tape (Tape::param_t; ad::linear's wt):
  // faster for a layer applied at every step of a loop to a few rows. Same values up to
  // rounding.
  bool transposed = false;
};

// Rows of a table [V, d] (N(0, 1) initialised) by id.
class Embedding {
 public:
  Embedding(ParamStore& ps, const std::string& name, int64_t vocab, int64_t dim, Rng& rng);
  // ids → lead + [d] (lead defaults to [ids.size()]).
  Var operator()(Tape& t, const std::vector<int32_t>& ids, Shape lead = {}) const;
  ad::Parameter* table;
};

// Layer normalisation over the last dimension with gain (ones) and bias (zeros).
class LayerNorm {
 public:
  LayerNorm(ParamStore& ps, const std::string& name, int64_t dim, float eps = 1e-5f);
  Var operator()(Tape& t, Var x) const;
  ad::Parameter* gain;
  ad::Parameter* bias;
  float eps;
};

// The Transformer's position-wise feed-forward: W2 dropout(act(W1 x + b1)) + b2, act = relu
// (the Transformer's) or gelu (BERT's).
class FeedForward {
 public:
  FeedForward(ParamStore& ps, const std::string& name, int64_t dim, int64_t hidden, Rng& rng,
              float dropout = 0.0f, bool gelu = false);
  Var operator()(Tape& t, Var x) const;
  Linear l1, l2;
  float dropout;
  bool gelu;
};

}  // namespace attnkit::nn
