// Multi-head attention as PyTorch's nn.MultiheadAttention computes it (batch_first=True):
//
//   Q' = X_q W_qᵀ + b_q,  K' = X_k W_kᵀ + b_k,  V' = X_v W_vᵀ + b_v       [N, E]
//   head h: columns h·E/H .. (h+1)·E/H of Q', K', V';
//   C_h = softmax(Q'_h K'_hᵀ / √(E/H), masked) V'_h                       [N_q, E/H]
//   Y = [C_1 ... C_H] W_oᵀ + b_o                                          [N_q, E]
//
// The parameters carry the names of nn.MultiheadAttention.state_dict(): in_proj_weight
// [3E, E] (W_q, W_k, W_v stacked) or, when the key/value widths differ from E,
// q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]; in_proj_bias [3E];
// out_proj.weight [E, E]; out_proj.bias [E]. A module made with bias=False has neither bias
// (both are then zero). Contexts go through the streaming kernel (fused.h); weights through
// the whole score matrix.
//
// The work: one projection gemm over all B·N rows ([B·N, E] x [E, 3E] for self-attention,
// where x_q, x_k and x_v are one tensor; one per input otherwise), the heads as strided views
// of the projections (no copies), the B·H (item, head) problems through fused_context on all
// threads, and one output gemm [B·N_q, E] x [E, E].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::attention {

struct MhaParams {
  int64_t embed = 0, kdim = 0, vdim = 0;  // E and the key / value input widths
  Tensor wq, wk, wv;                      // [E, E], [E, kdim], [E, vdim]
  Tensor bq, bk, bv;                      // [E] each (zeros without bias)
  Tensor wo, bo;                          // [E, E], [E]
  // W_q, W_k, W_v stacked [3E, E] and b_q, b_k, b_v [3E] (as in_proj_weight/in_proj_bias),
  // when kdim = vdim = E: self-attention projects Q, K and V with one gemm. mha_params fills
  // them; when they are left empty, multi_head_attention stacks them itself.
  Tensor w_in, b_in;
};

// The parameters from the arrays of a state_dict (moved out of `arrays`). Throws DataError
// naming a missing array, or a mis-shaped one with its shape and the shape it needs; arrays
// this implementation does not support (bias_k, bias_v: add_bias_kv=True) are errors too.
MhaParams mha_params(std::map<std::string, Tensor>& arrays);

enum class MhaOutput { Context, Weights, HeadWeights };
// "context", "weights", "head-weights"; anything else is a ChoiceError.
MhaOutput parse_mha_output(const std::string& name);

struct MhaOptions {
  int64_t heads = 1;
  MhaOutput output = MhaOutput::Context;
  bool causal = false;
  const Tensor* mask = nullptr;                       // 0/1 [N_q, N_k] or [B, N_q, N_k]; 0 = masked
  const std::vector<int64_t>* key_lengths = nullptr;  // valid keys per batch item
  // A part of the result only (cli --shard): items [part_begin, part_end) of a batch, or query
  // rows [part_begin, part_end) of rank-2 inputs; part_end < 0: all. The result holds just that
  // part, bit for bit the same rows as the whole result. Not with HeadWeights (UsageError).
  int64_t part_begin = 0, part_end = -1;
};

// Valid key lengths from a tensor of B values (any shape with B elements); throws DataError
// unless each is an integer in [0, n_k], ShapeError when the count is not B.
std::vector<int64_t> key_lengths_from(const Tensor& t, int64_t batch, int64_t n_k);

// Multi-head attention of x_q [N_q, E] against x_k [N_k, kdim] and x_v [N_k, vdim], or batches
// [B, ., .] of them (all three of one rank and one B). Result: the context [B, N_q, E], the
// head-averaged weights [B, N_q, N_k] or each head's weights [B, H, N_q, N_k] (without the
// leading B for rank-2 inputs). A query whose keys are all masked gets zero weights and the
// context b_o (PyTorch gives NaN). Throws InputShapeError (operand: Query, Key, Value, Mask,
// Params) on inputs that do not fit, UsageError when H does not divide E.
Tensor multi_head_attention(const MhaParams& p, const Tensor& x_q, const Tensor& x_k,
                            const Tensor& x_v, const MhaOptions& opt);

}  // namespace attnkit::attention
