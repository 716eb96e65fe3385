// The Transformer of models/seq2seq/model.h.
#include <cmath>

#include "attnkit/autodiff/ops_fused.h"
#include "attnkit/core/error.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/seq2seq/detail.h"
#include "attnkit/nn/loss.h"
#include "attnkit/posenc/sinusoidal.h"

namespace attnkit::models::detail {

namespace {

using ad::Tape;
using ad::Var;

class TransformerSeq2Seq final : public Seq2Seq {
 public:
  TransformerSeq2Seq(const Seq2SeqConfig& c, uint64_t seed);

  Var loss(Tape& t, const data::Batch& batch, float label_smoothing, float teacher_forcing,
           int64_t* tokens) const override;
  void encode(Tape& t, const std::vector<int32_t>& source, Memory& mem) const override;
  void start(Tape& t, const Memory& mem, State& s) const override;
  void step(Tape& t, const Memory& mem, State& s, const std::vector<int32_t>& prev,
            Tensor& log_probs, Tensor& attention) const override;
  void reorder(State& s, const std::vector<int64_t>& rows) const override;

 private:
  Var embed(Tape& t, const nn::Embedding& table, const std::vector<int32_t>& ids, int64_t B,
            int64_t L) const;
  Var encode_batch(Tape& t, const std::vector<int32_t>& ids, int64_t B, int64_t S,
                   const std::vector<int64_t>& lengths, bool padded) const;
  // Decoder output [B, T, d]; cross (if given) receives the last layer's cross-attention
  // weights [B, heads, T, S].
  Var decode_batch(Tape& t, const std::vector<int32_t>& tin, int64_t B, int64_t T, Var memory,
                   const std::vector<int64_t>& lengths, bool padded, Tensor* cross) const;
  Var logits(Tape& t, Var h) const;
  // One step of the decoder for the rows' newest tokens only, with the per-layer key and
  // value caches in s.v (self-attention K, V per layer) and the source's cross-attention
  // keys and values in mem.v (computed by encode()). y [K, d] → the last layer's output.
  Var step_cached(Tape& t, const Memory& mem, State& s, const std::vector<int32_t>& prev,
                  Tensor* cross) const;

  int64_t D;
  std::unique_ptr<nn::Embedding> src_emb, tgt_emb;  // tgt_emb is null when shared
  std::vector<std::unique_ptr<nn::TransformerEncoderLayer>> enc;
  std::vector<std::unique_ptr<nn::TransformerDecoderLayer>> dec;
  std::unique_ptr<nn::Linear> out;  // separate output projection
  ad::Parameter* out_b = nullptr;   // shared: the output bias
};

TransformerSeq2Seq::TransformerSeq2Seq(const Seq2SeqConfig& c, uint64_t seed)
    : Seq2Seq(c), D(c.d_model) {
  Rng rng(seed);
  nn::TransformerOptions o;
  o.dim = D;
  o.heads = c.heads;
  o.ff = c.d_ff;
  o.dropout = c.dropout;
  src_emb = std::make_unique<nn::Embedding>(
      ps_, c.shared_embeddings ? "embedding" : "src_embedding", c.src_vocab, D, rng);
  // N(0, d^-1/2) entries: scaled by √d on the way in, they start at unit size.
  const float s = 1.0f / std::sqrt(static_cast<float>(D));
  for (float& v : src_emb->table->value.values()) v *= s;
  if (!c.shared_embeddings) {
    tgt_emb = std::make_unique<nn::Embedding>(ps_, "tgt_embedding", c.tgt_vocab, D, rng);
    for (float& v : tgt_emb->table->value.values()) v *= s;
  }
  for (int l = 0; l < c.layers; ++l)
    enc.push_back(std::make_unique<nn::TransformerEncoderLayer>(
        ps_, "encoder.l" + std::to_string(l), o, rng));
  for (int l = 0; l < c.layers; ++l)
    dec.push_back(std::make_unique<nn::TransformerDecoderLayer>(
        ps_, "decoder.l" + std::to_string(l), o, rng));
  if (c.shared_embeddings)
    out_b = &ps_.add("output.b", Tensor({c.tgt_vocab}));
  else
    out = std::make_unique<nn::Linear>(ps_, "output", D, c.tgt_vocab, rng);
}

Var TransformerSeq2Seq::embed(Tape& t, const nn::Embedding& table, const std::vector<int32_t>& ids,
                              int64_t B, int64_t L) const {
  Var x = ad::mul(table(t, ids, {B, L}), std::sqrt(static_cast<float>(D)));
  x = ad::add(x, t.constant(posenc::sinusoidal(L, D)));
  return ad::dropout(x, cfg_.dropout);
}

Var TransformerSeq2Seq::encode_batch(Tape& t, const std::vector<int32_t>& ids, int64_t B, int64_t S,
                                     const std::vector<int64_t>& lengths, bool padded) const {
  Var x = embed(t, *src_emb, ids, B, S);
  Tensor mask;
  if (padded) mask = nn::padding_mask(lengths, S, S);
  for (const auto& l : enc) x = (*l)(t, x, padded ? &mask : nullptr);
  return x;
}

Var TransformerSeq2Seq::decode_batch(Tape& t, const std::vector<int32_t>& tin, int64_t B, int64_t T,
                                     Var memory, const std::vector<int64_t>& lengths, bool padded,
                                     Tensor* cross) const {
  Var y = embed(t, tgt_emb ? *tgt_emb : *src_emb, tin, B, T);
  Tensor mmask;
  if (padded) mmask = nn::padding_mask(lengths, T, memory.dim(1));
  const float p = cfg_.dropout;
  for (size_t i = 0; i < dec.size(); ++i) {
    // nn::TransformerDecoderLayer's post-norm forward, here to read the cross-attention.
    const nn::TransformerDecoderLayer& L = *dec[i];
    Tensor* w = i + 1 == dec.size() ? cross : nullptr;
    y = L.norm1(t, y + ad::dropout(L.self_attn(t, y, y, nullptr, true), p));
    y = L.norm2(
        t, y + ad::dropout(L.cross_attn(t, y, memory, padded ? &mmask : nullptr, false, w), p));
    y = L.norm3(t, y + ad::dropout(L.ff(t, y), p));
  }
  return y;
}

Var TransformerSeq2Seq::logits(Tape& t, Var h) const {
  if (out) return (*out)(t, h);
  return ad::linear(h, t.param(*src_emb->table), t.param(*out_b));
}

Var TransformerSeq2Seq::loss(Tape& t, const data::Batch& batch, float label_smoothing, float,
                             int64_t* tokens) const {
  const int64_t B = batch.size(), S = batch.source.cols;
  std::vector<int64_t> lengths;
  const bool padded = source_lengths(batch, lengths);
  Var memory = encode_batch(t, batch.source.ids, B, S, lengths, padded);
  std::vector<int32_t> tin, tout;
  split_target(batch, false, tin, tout);
  const int64_t T = static_cast<int64_t>(tin.size()) / B;
  Var h = decode_batch(t, tin, B, T, memory, lengths, padded, nullptr);
  if (tokens) {
    *tokens = 0;
    for (int32_t v : tout) *tokens += v != 0;
  }
  // The output projection fused with the cross-entropy (padding rows skipped).
  if (out)
    return ad::linear_cross_entropy(h, t.param(*out->W), out->b ? t.param(*out->b) : Var(), tout,
                                    data::Vocab::kPad, label_smoothing);
  return ad::linear_cross_entropy(h, t.param(*src_emb->table), t.param(*out_b), tout,
                                  data::Vocab::kPad, label_smoothing);
}

void TransformerSeq2Seq::encode(Tape& t, const std::vector<int32_t>& source, Memory& mem) const {
  const int64_t S = static_cast<int64_t>(source.size());
  mem.length = S;
  mem.v.clear();
  Var memory = encode_batch(t, source, 1, S, {S}, false);
  mem.v.push_back(memory.value().clone());
  // Each decoder layer's cross-attention keys and values of the source, once a sentence.
  for (const auto& l : dec) {
    mem.v.push_back(l->cross_attn.wk(t, memory).value().clone());
    mem.v.push_back(l->cross_attn.wv(t, memory).value().clone());
  }
}

void TransformerSeq2Seq::start(Tape&, const Memory&, State& s) const {
  s.v.clear();
  s.prefix.clear();
  s.rows = 1;
  s.steps = 0;
}

void TransformerSeq2Seq::step(Tape& t, const Memory& mem, State& s,
                              const std::vector<int32_t>& prev, Tensor& log_probs,
                              Tensor& attention) const {
  const int64_t K = static_cast<int64_t>(prev.size()), S = mem.length, T = s.steps + 1;
  if (K != s.rows) throw ShapeError("seq2seq step: rows of the state and the tokens differ");
  std::vector<int32_t> p(static_cast<size_t>(K * T));
  for (int64_t r = 0; r < K; ++r) {
    for (int64_t k = 0; k + 1 < T; ++k)
      p[static_cast<size_t>(r * T + k)] = s.prefix[static_cast<size_t>(r * (T - 1) + k)];
    p[static_cast<size_t>(r * T + T - 1)] = prev[static_cast<size_t>(r)];
  }
  s.prefix = std::move(p);
  s.steps = T;
  const int64_t Hd = cfg_.heads;
  if (s.kv_cache) {
    Tensor cross;
    Var h = step_cached(t, mem, s, prev, &cross);
    log_probs = ad::log_softmax(logits(t, h)).value().clone();
    attention = Tensor({K, S});
    for (int64_t r = 0; r < K; ++r)
      for (int64_t hd = 0; hd < Hd; ++hd) {
        const float* row = cross.data() + (r * Hd + hd) * S;
        for (int64_t j = 0; j < S; ++j) attention.at(r, j) += row[j] / static_cast<float>(Hd);
      }
    return;
  }
  Var memory =
      t.constant(K == 1 ? mem.v[0].clone()
                        : take_rows(mem.v[0], std::vector<int64_t>(static_cast<size_t>(K), 0)));
  Tensor cross;
  Var h = decode_batch(t, s.prefix, K, T, memory, {}, false, &cross);
  h = ad::reshape(ad::slice(h, 1, T - 1, T), {K, D});
  log_probs = ad::log_softmax(logits(t, h)).value().clone();
  attention = Tensor({K, S});
  for (int64_t r = 0; r < K; ++r)
    for (int64_t hd = 0; hd < Hd; ++hd) {
      const float* row = cross.data() + ((r * Hd + hd) * T + (T - 1)) * S;
      for (int64_t j = 0; j < S; ++j) attention.at(r, j) += row[j] / static_cast<float>(Hd);
    }
}

namespace {
// [K, T-1, d] and [K, 1, d] → [K, T, d] (a = empty when T = 1).
Tensor append_time(const Tensor& a, const Tensor& b) {
  if (a.empty()) return b.clone();
  const int64_t K = b.dim(0), Ta = a.dim(1), d = b.dim(2);
  Tensor out({K, Ta + 1, d});
  for (int64_t r = 0; r < K; ++r) {
    std::copy(a.data() + r * Ta * d, a.data() + (r + 1) * Ta * d, out.data() + r * (Ta + 1) * d);
    std::copy(b.data() + r * d, b.data() + (r + 1) * d, out.data() + (r * (Ta + 1) + Ta) * d);
  }
  return out;
}
}  // namespace

Var TransformerSeq2Seq::step_cached(Tape& t, const Memory& mem, State& s,
                                    const std::vector<int32_t>& prev, Tensor* cross) const {
  const int64_t K = static_cast<int64_t>(prev.size()), T = s.steps,
                nl = static_cast<int64_t>(dec.size());
  if (static_cast<int64_t>(mem.v.size()) != 1 + 2 * nl)
    throw Error("seq2seq step: the source was encoded without the decoder's key-value cache");
  if (s.v.empty()) s.v.resize(static_cast<size_t>(2 * nl));
  // The newest token of each row, embedded at position T - 1 (as embed() does for a prefix).
  const nn::Embedding& table = tgt_emb ? *tgt_emb : *src_emb;
  Var y = ad::mul(table(t, prev, {K, 1}), std::sqrt(static_cast<float>(D)));
  const Tensor pe = posenc::sinusoidal(T, D);
  Tensor last({1, D});
  std::copy(pe.data() + (T - 1) * D, pe.data() + T * D, last.data());
  y = ad::add(y, t.constant(std::move(last)));
  const std::vector<int64_t> same(static_cast<size_t>(K), 0);
  for (int64_t i = 0; i < nl; ++i) {
    // nn::TransformerDecoderLayer's post-norm forward for one query position.
    const nn::TransformerDecoderLayer& L = *dec[static_cast<size_t>(i)];
    const nn::MultiHeadAttention& sa = L.self_attn;
    const nn::MultiHeadAttention& ca = L.cross_attn;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D / sa.heads));
    Tensor& kc = s.v[static_cast<size_t>(2 * i)];
    Tensor& vc = s.v[static_cast<size_t>(2 * i + 1)];
    kc = append_time(kc, sa.wk(t, y).value());
    vc = append_time(vc, sa.wv(t, y).value());
    // The newest query sees every cached position: the causal mask's last row.
    Var a = ad::multi_head_attention(sa.wq(t, y), t.constant(kc.clone()), t.constant(vc.clone()),
                                     sa.heads, scale);
    y = L.norm1(t, y + sa.wo(t, a));
    const Tensor& km = mem.v[static_cast<size_t>(1 + 2 * i)];
    const Tensor& vm = mem.v[static_cast<size_t>(2 + 2 * i)];
    Var c =
        ad::multi_head_attention(ca.wq(t, y), t.constant(K == 1 ? km.clone() : take_rows(km, same)),
                                 t.constant(K == 1 ? vm.clone() : take_rows(vm, same)), ca.heads,
                                 scale, nullptr, false, i + 1 == nl ? cross : nullptr);
    y = L.norm2(t, y + ca.wo(t, c));
    y = L.norm3(t, y + L.ff(t, y));
  }
  return ad::reshape(y, {K, D});
}

void TransformerSeq2Seq::reorder(State& s, const std::vector<int64_t>& rows) const {
  for (Tensor& c : s.v)
    if (!c.empty()) c = take_rows(c, rows);
  const int64_t T = s.steps;
  std::vector<int32_t> p;
  p.reserve(rows.size() * static_cast<size_t>(T));
  for (int64_t r : rows)
    p.insert(p.end(), s.prefix.begin() + r * T, s.prefix.begin() + (r + 1) * T);
  s.prefix = std::move(p);
  s.rows = static_cast<int64_t>(rows.size());
}

}  // namespace

std::unique_ptr<Seq2Seq> make_transformer(const Seq2SeqConfig& c, uint64_t seed) {
  return std::make_unique<TransformerSeq2Seq>(c, seed);
}

}  // namespace attnkit::models::detail
