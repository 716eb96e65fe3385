#include "attnkit/nn/transformer.h"

#include <cmath>

#include "attnkit/autodiff/ops_fused.h"
#include "attnkit/core/error.h"

namespace attnkit::nn {

Tensor padding_mask(const std::vector<int64_t>& key_lengths, int64_t n_q, int64_t n_k) {
  const int64_t B = static_cast<int64_t>(key_lengths.size());
  Tensor m({B, n_q, n_k});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n_q; ++i)
      for (int64_t j = 0; j < n_k; ++j)
        m.at(b, i, j) = j < key_lengths[static_cast<size_t>(b)] ? 1.0f : 0.0f;
  return m;
}

Tensor causal_mask(int64_t n_q, int64_t n_k) {
  Tensor m({n_q, n_k});
  for (int64_t i = 0; i < n_q; ++i)
    for (int64_t j = 0; j < n_k; ++j) m.at(i, j) = j <= i ? 1.0f : 0.0f;
  return m;
}

MultiHeadAttention::MultiHeadAttention(ParamStore& ps, const std::string& name, int64_t dim_,
                                       int64_t heads_, Rng& rng, float dropout_)
    : wq(ps, name + ".q", dim_, dim_, rng),
      wk(ps, name + ".k", dim_, dim_, rng),
      wv(ps, name + ".v", dim_, dim_, rng),
      wo(ps, name + ".o", dim_, dim_, rng),
      heads(heads_),
      dim(dim_),
      dropout(dropout_) {
  if (heads < 1 || dim % heads != 0)
    throw UsageError("multi-head attention: " + std::to_string(heads) + " heads do not divide " +
                     std::to_string(dim) + " dimensions");
}

Var MultiHeadAttention::operator()(Tape& t, Var q, Var kv, const Tensor* mask, bool causal,
                                   Tensor* weights) const {
  if (q.rank() != 3 || kv.rank() != 3 || q.dim(2) != dim || kv.dim(2) != dim ||
      q.dim(0) != kv.dim(0))
    throw ShapeError("multi-head attention: queries " + shape_str(q.shape()) + " and keys " +
                     shape_str(kv.shape()) + " are not [B, n, " + std::to_string(dim) + "]");
  const int64_t dh = dim / heads;  // the mask's shape is checked by the fused op
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  // One fused node for the heads, dropout on the weights included (it is off when the tape
  // is not training).
  return wo(t, ad::multi_head_attention(wq(t, q), wk(t, kv), wv(t, kv), heads, scale, mask, causal,
                                        weights, dropout));
}

TransformerEncoderLayer::TransformerEncoderLayer(ParamStore& ps, const std::string& name,
                                                 const TransformerOptions& o, Rng& rng)
    : opt(o),
      self_attn(ps, name + ".self_attn", o.dim, o.heads, rng, o.dropout),
      ff(ps, name + ".ff", o.dim, o.ff, rng, o.dropout, o.gelu),
      norm1(ps, name + ".norm1", o.dim),
      norm2(ps, name + ".norm2", o.dim) {}

Var TransformerEncoderLayer::operator()(Tape& t, Var x, const Tensor* mask) const {
  const float p = opt.dropout;
  if (opt.pre_norm) {
    Var h = norm1(t, x);
    x = x + ad::dropout(self_attn(t, h, h, mask), p);
    return x + ad::dropout(ff(t, norm2(t, x)), p);
  }
  x = norm1(t, x + ad::dropout(self_attn(t, x, x, mask), p));
  return norm2(t, x + ad::dropout(ff(t, x), p));
}

TransformerDecoderLayer::TransformerDecoderLayer(ParamStore& ps, const std::string& name,
                                                 const TransformerOptions& o, Rng& rng)
    : opt(o),
      self_attn(ps, name + ".self_attn", o.dim, o.heads, rng, o.dropout),
      cross_attn(ps, name + ".cross_attn", o.dim, o.heads, rng, o.dropout),
      ff(ps, name + ".ff", o.dim, o.ff, rng, o.dropout),
      norm1(ps, name + ".norm1", o.dim),
      norm2(ps, name + ".norm2", o.dim),
      norm3(ps, name + ".norm3", o.dim) {}

Var TransformerDecoderLayer::operator()(Tape& t, Var y, Var memory, const Tensor* self_mask,
                                        const Tensor* memory_mask) const {
  const float p = opt.dropout;
  if (opt.pre_norm) {
    Var h = norm1(t, y);
    y = y + ad::dropout(self_attn(t, h, h, self_mask, true), p);
    y = y + ad::dropout(cross_attn(t, norm2(t, y), memory, memory_mask), p);
    return y + ad::dropout(ff(t, norm3(t, y)), p);
  }
  y = norm1(t, y + ad::dropout(self_attn(t, y, y, self_mask, true), p));
  y = norm2(t, y + ad::dropout(cross_attn(t, y, memory, memory_mask), p));
  return norm3(t, y + ad::dropout(ff(t, y), p));
}

}  // namespace attnkit::nn
