// Multi-head attention and Transformer layers (Vaswani et al. 2017) over the tape.
//
// Attention follows the attention library's conventions (lib/attnkit/attention): scaled-dot
// scores q·k/√d_head per head, masks are 0/1 with 0 = masked, masked keys get weight exactly
// 0, a query whose keys are all masked gets zero weights and a zero context (never NaN), and
// the causal mask lets query i see keys j <= i (rows and columns aligned at the start). The
// softmax is the library's softmax_rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/nn/layers.h"

namespace attnkit::nn {

// 0/1 masks. padding_mask: [B, n_q, n_k] where key j of item b is visible iff
// j < key_lengths[b]; causal_mask: [n_q, n_k], 1 iff j <= i.
Tensor padding_mask(const std::vector<int64_t>& key_lengths, int64_t n_q, int64_t n_k);
Tensor causal_mask(int64_t n_q, int64_t n_k);  // [n_q, n_k]

class MultiHeadAttention {
 public:
  MultiHeadAttention(ParamStore& ps, const std::string& name, int64_t dim, int64_t heads, Rng& rng,
                     float dropout = 0.0f);
  // q [B, n_q, d] attends over kv [B, n_k, d] (self-attention: kv = q). mask: optional 0/1,
  // [n_q, n_k] (shared) or [B, n_q, n_k]; causal adds the causal mask. Returns [B, n_q, d].
  // weights, when given, receives the attention weights [B, heads, n_q, n_k].
  Var operator()(Tape& t, Var q, Var kv, const Tensor* mask = nullptr, bool causal = false,
                 Tensor* weights = nullptr) const;
  Linear wq, wk, wv, wo;
  int64_t heads, dim;
  float dropout;
};

struct TransformerOptions {
  int64_t dim = 0, heads = 1, ff = 0;
  float dropout = 0.0f;
  bool pre_norm = false;  // pre-norm: x + f(LN(x)); post-norm (the paper's): LN(x + f(x))
  bool gelu = false;      // the feed-forward's activation: GELU (BERT's) instead of ReLU
};

class TransformerEncoderLayer {
 public:
  TransformerEncoderLayer(ParamStore& ps, const std::string& name, const TransformerOptions& o,
                          Rng& rng);
  // x [B, n, d]; mask as for MultiHeadAttention (e.g. padding_mask).
  Var operator()(Tape& t, Var x, const Tensor* mask = nullptr) const;
  TransformerOptions opt;
  MultiHeadAttention self_attn;
  FeedForward ff;
  LayerNorm norm1, norm2;
};

class TransformerDecoderLayer {
 public:
  TransformerDecoderLayer(ParamStore& ps, const std::string& name, const TransformerOptions& o,
                          Rng& rng);
  // y [B, n, d] (causal self-attention, plus self_mask if given) attending over memory
  // [B, m, d] with memory_mask [n, m] or [B, n, m].
  Var operator()(Tape& t, Var y, Var memory, const Tensor* self_mask = nullptr,
                 const Tensor* memory_mask = nullptr) const;
  TransformerOptions opt;
  MultiHeadAttention self_attn, cross_attn;
  FeedForward ff;
  LayerNorm norm1, norm2, norm3;
};

}  // namespace attnkit::nn
