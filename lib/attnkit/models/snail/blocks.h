// SNAIL's building blocks (Mishra et al. 2018, "A Simple Neural Attentive Meta-Learner",
// Section 3 and Appendix B): temporal convolutions that aggregate the past at many
// dilations, and causal soft attention that picks out single moments of it. Every block
// reads a batch of sequences x [B, T, C] and returns [B, T, C + new channels]: its input with
// its output concatenated (the paper's "dense" connections). All are causal: the output at
// time t depends on inputs at times <= t only (tests/unit/snail_test.cpp checks it exactly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/nn/layers.h"

namespace attnkit::nn {

// The input delayed by d steps along time, zeros first: y[:, t] = x[:, t − d] (0 for t < d).
Var causal_shift(Var x, int64_t d);

// DenseBlock(R, D): a causal 1-D convolution of kernel 2 and dilation R (the taps x_{t−R}
// and x_t), D filters, the gated activation tanh(f) ⊙ σ(g) of WaveNet, concatenated.
class DenseBlock {
 public:
  DenseBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t filters, int64_t dilation,
             Rng& rng);
  Var operator()(Tape& t, Var x) const;  // [B, T, in] → [B, T, in + filters]
  int64_t out_channels() const { return in_ + filters_; }

 private:
  Linear f_, g_;
  int64_t in_, filters_, dilation_;
};

// TCBlock(T, D): DenseBlocks of dilations 1, 2, 4, ..., 2^(⌈log2 T⌉ − 1): the receptive
// field, 2^⌈log2 T⌉ steps, covers the whole sequence.
class TCBlock {
 public:
  TCBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t seq_len, int64_t filters,
          Rng& rng);
  Var operator()(Tape& t, Var x) const;
  int64_t out_channels() const { return out_; }
  int64_t receptive_field() const;  // in steps, including the current one

 private:
  std::vector<DenseBlock> blocks_;
  int64_t out_;
};

// AttentionBlock(K, V): causal scaled dot-product attention with keys and queries of size K
// and values of size V, the read concatenated.
class AttentionBlock {
 public:
  AttentionBlock(ParamStore& ps, const std::string& name, int64_t in, int64_t key, int64_t value,
                 Rng& rng);
  Var operator()(Tape& t, Var x) const;  // [B, T, in] → [B, T, in + value]
  int64_t out_channels() const { return in_ + value_; }

 private:
  Linear q_, k_, v_;
  int64_t in_, key_, value_;
};

}  // namespace attnkit::nn
