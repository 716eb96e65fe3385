// The RNN encoder-decoder of models/seq2seq/model.h (attention none, Bahdanau, Luong).
#include <algorithm>
#include <cmath>

#include "attnkit/autodiff/ops_fused.h"
#include "attnkit/autodiff/ops_structured.h"
#include "attnkit/core/error.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/seq2seq/detail.h"
#include "attnkit/nn/loss.h"

namespace attnkit::models::detail {

namespace {

using ad::Tape;
using ad::Var;

// structured attention: the marginals are normalised to sum to λ (Kim et al.'s -lambda 2)
constexpr float kStructuredLambda = 2.0f;

class RnnSeq2Seq final : public Seq2Seq {
 public:
  RnnSeq2Seq(const Seq2SeqConfig& c, uint64_t seed);

  Var loss(Tape& t, const data::Batch& batch, float label_smoothing, float teacher_forcing,
           int64_t* tokens) const override;
  void encode(Tape& t, const std::vector<int32_t>& source, Memory& mem) const override;
  void start(Tape& t, const Memory& mem, State& s) const override;
  void step(Tape& t, const Memory& mem, State& s, const std::vector<int32_t>& prev,
            Tensor& log_probs, Tensor& attention) const override;
  void reorder(State& s, const std::vector<int64_t>& rows) const override;
  Tensor syntactic_arcs(const std::vector<int32_t>& source,
                        const std::vector<int32_t>& tokens) const override;

 private:
  struct Encoded {
    Var M, K;                     // memory [B, S, H] and attention keys [B, S, H]
    Var Hd, Md;                   // syntactic: the head and modifier projections [B, S, H]
    std::vector<nn::State> init;  // the decoder's initial state per layer
  };
  Encoded run_encoder(Tape& t, const std::vector<int32_t>& ids, int64_t B, int64_t S,
                      const std::vector<int64_t>& lengths) const;
  Var attend(Tape& t, Var q, const Encoded& e, const Tensor* mask, Tensor* alpha,
             Tensor* arcs) const;
  Var dec_step(Tape& t, Var x, std::vector<nn::State>& s, Var& feed, const Encoded& e,
               const Tensor* mask, Tensor* alpha, Tensor* arcs = nullptr) const;
  // A decoding State's layers as constants of t (into st) and its input feed, returned; and
  // back: st's and feed's values into the State.
  Var load_state(Tape& t, const State& s, std::vector<nn::State>& st) const;
  void store_state(const std::vector<nn::State>& st, Var feed, State& s) const;
  // The initial states' tensors in a Memory (after M and K).
  size_t state_tensors() const { return dec.size() * (lstm() ? 2 : 1); }
  // A decoding Memory's encoding for `rows` rows (each the one source).
  Encoded encoded(Tape& t, const Memory& mem, int64_t rows) const;
  bool luong() const {
    return cfg_.attention == AttentionKind::LuongDot ||
           cfg_.attention == AttentionKind::LuongGeneral ||
           cfg_.attention == AttentionKind::LuongConcat || structured_kind() || syntactic();
  }
  bool syntactic() const { return cfg_.attention == AttentionKind::Syntactic; }
  bool structured_kind() const {
    return cfg_.attention == AttentionKind::Structured || cfg_.attention == AttentionKind::Sigmoid;
  }
  bool feeds() const { return luong() && cfg_.input_feeding; }
  bool lstm() const { return cfg_.cell == nn::CellKind::LSTM; }

  int64_t E, H;
  std::unique_ptr<nn::Embedding> src_emb, tgt_emb;
  std::unique_ptr<nn::RecurrentEncoder> enc;
  std::unique_ptr<nn::Linear> mem_proj;  // bi-directional: 2H → H
  std::vector<std::unique_ptr<nn::Linear>> bridge_h, bridge_c;
  std::vector<std::unique_ptr<nn::RecurrentCell>> dec;
  std::unique_ptr<nn::Linear> att_k, att_q, att_c;  // keys, query, Luong's combination
  ad::Parameter* att_v = nullptr;
  ad::Parameter* att_pair = nullptr;  // structured: the CRF's pairwise potentials [2, 2]
  std::unique_ptr<nn::Linear> att_head, att_mod, att_gate;  // syntactic: W_h, W_m, W_g
  std::unique_ptr<nn::Linear> out;
};

RnnSeq2Seq::RnnSeq2Seq(const Seq2SeqConfig& c, uint64_t seed)
    : Seq2Seq(c), E(c.embed), H(c.hidden) {
  Rng rng(seed);
  src_emb = std::make_unique<nn::Embedding>(ps_, "src_embedding", c.src_vocab, E, rng);
  tgt_emb = std::make_unique<nn::Embedding>(ps_, "tgt_embedding", c.tgt_vocab, E, rng);
  nn::EncoderOptions eo;
  eo.kind = c.cell;
  eo.input = E;
  eo.hidden = H;
  eo.layers = c.layers;
  eo.bidirectional = c.bidirectional;
  eo.dropout = c.dropout;
  enc = std::make_unique<nn::RecurrentEncoder>(ps_, "encoder", eo, rng);
  if (c.bidirectional) {
    mem_proj = std::make_unique<nn::Linear>(ps_, "memory", 2 * H, H, rng, false);
    for (int l = 0; l < c.layers; ++l) {
      bridge_h.push_back(
          std::make_unique<nn::Linear>(ps_, "bridge.l" + std::to_string(l) + ".h", 2 * H, H, rng));
      if (lstm())
        bridge_c.push_back(std::make_unique<nn::Linear>(ps_, "bridge.l" + std::to_string(l) + ".c",
                                                        2 * H, H, rng));
    }
  }
  const bool extra = c.attention == AttentionKind::Bahdanau || feeds();
  for (int l = 0; l < c.layers; ++l)
    dec.push_back(std::make_unique<nn::RecurrentCell>(ps_, "decoder.l" + std::to_string(l), c.cell,
                                                      l == 0 ? E + (extra ? H : 0) : H, H, rng));
  switch (c.attention) {
    case AttentionKind::Bahdanau:
    case AttentionKind::LuongConcat: {
      att_k = std::make_unique<nn::Linear>(ps_, "attention.key", H, H, rng, false);
      att_q = std::make_unique<nn::Linear>(ps_, "attention.query", H, H, rng);
      Tensor v({H});
      nn::init_uniform(v, rng, 1.0f / std::sqrt(static_cast<float>(H)));
      att_v = &ps_.add("attention.v", std::move(v));
      break;
    }
    case AttentionKind::LuongGeneral:
    case AttentionKind::Sigmoid:
      att_k = std::make_unique<nn::Linear>(ps_, "attention.key", H, H, rng, false);
      break;
    case AttentionKind::Structured:
      att_k = std::make_unique<nn::Linear>(ps_, "attention.key", H, H, rng, false);
      att_pair = &ps_.add("attention.pairwise", Tensor({2, 2}));
      break;
    case AttentionKind::Syntactic:
      att_k = std::make_unique<nn::Linear>(ps_, "attention.key", H, H, rng, false);
      att_head = std::make_unique<nn::Linear>(ps_, "attention.head", H, H, rng, false);
      att_mod = std::make_unique<nn::Linear>(ps_, "attention.modifier", H, H, rng, false);
      att_gate = std::make_unique<nn::Linear>(ps_, "attention.gate", H, H, rng);
      break;
    default:
      break;
  }
  if (luong())
    att_c =
        std::make_unique<nn::Linear>(ps_, "attention.combine", (syntactic() ? 3 : 2) * H, H, rng);
  const int64_t F = c.attention == AttentionKind::Bahdanau ? 2 * H : H;
  out = std::make_unique<nn::Linear>(ps_, "output", F, c.tgt_vocab, rng);
}

RnnSeq2Seq::Encoded RnnSeq2Seq::run_encoder(Tape& t, const std::vector<int32_t>& ids, int64_t B,
                                            int64_t S, const std::vector<int64_t>& lengths) const {
  Encoded e;
  Var X = ad::dropout((*src_emb)(t, ids, {B, S}), cfg_.dropout);
  auto o = (*enc)(t, X, lengths);
  e.M = o.outputs;
  if (cfg_.bidirectional) {
    e.M = (*mem_proj)(t, e.M);
    for (int l = 0; l < cfg_.layers; ++l) {
      const nn::State& f = o.final[static_cast<size_t>(2 * l)];
      const nn::State& b = o.final[static_cast<size_t>(2 * l + 1)];
      nn::State s;
      s.h = ad::tanh((*bridge_h[static_cast<size_t>(l)])(t, ad::concat({f.h, b.h}, -1)));
      if (lstm()) s.c = (*bridge_c[static_cast<size_t>(l)])(t, ad::concat({f.c, b.c}, -1));
      e.init.push_back(s);
    }
  } else {
    e.init = o.final;
  }
  if (att_k)
    e.K = (*att_k)(t, e.M);
  else
    e.K = e.M;  // luong-dot (and none: unused)
  if (syntactic()) {
    e.Hd = (*att_head)(t, e.M);
    e.Md = (*att_mod)(t, e.M);
  }
  return e;
}

Var RnnSeq2Seq::attend(Tape& t, Var q, const Encoded& e, const Tensor* mask, Tensor* alpha,
                       Tensor* arcs) const {
  const Var M = e.M, K = e.K;
  const int64_t B = M.dim(0), S = M.dim(1);
  Var scores;
  if (att_v && cfg_.attention == AttentionKind::Bahdanau)  // scores, softmax, context: one node
    return ad::additive_attention(K, (*att_q)(t, q), t.param(*att_v), M, mask, alpha);
  if (att_v) {
    scores = ad::additive_scores(K, (*att_q)(t, q), t.param(*att_v));  // [B, S]
  } else {
    scores = ad::reshape(ad::matmul(K, ad::reshape(q, {B, H, 1})), {B, S});
  }
  Var a;
  std::vector<int64_t> lengths;  // the source lengths, from the padding mask
  if (mask && (cfg_.attention == AttentionKind::Structured || syntactic()))
    for (int64_t b = 0; b < B; ++b) {
      int64_t n = 0;
      while (n < S && mask->at(b, n) != 0.0f) ++n;
      lengths.push_back(n);
    }
  if (syntactic())
    return ad::syntactic_attention((*att_gate)(t, q), scores, M, e.Hd, e.Md, lengths, alpha, arcs);
  if (cfg_.attention == AttentionKind::Structured) {
    const Var marg = ad::chain_marginals(scores, t.param(*att_pair), lengths);
    if (alpha) *alpha = marg.value().clone();
    a = ad::mul(ad::normalize_rows(marg, 1e-10f), kStructuredLambda);
  } else if (cfg_.attention == AttentionKind::Sigmoid) {
    a = ad::sigmoid(scores);
    if (mask) a = ad::mul(a, t.constant(mask->clone()));
    if (alpha) *alpha = a.value().clone();
  } else {
    a = mask ? ad::masked_softmax(scores, *mask) : ad::softmax(scores);
    if (alpha) *alpha = a.value().clone();
  }
  return ad::reshape(ad::matmul(ad::reshape(a, {B, 1, S}), M), {B, H});
}

Var RnnSeq2Seq::dec_step(Tape& t, Var x, std::vector<nn::State>& s, Var& feed, const Encoded& e,
                         const Tensor* mask, Tensor* alpha, Tensor* arcs) const {
  Var in = x, ctx;
  if (cfg_.attention == AttentionKind::Bahdanau) {
    ctx = attend(t, s.back().h, e, mask, alpha, arcs);
    in = ad::concat({in, ctx}, -1);
  } else if (feeds()) {
    in = ad::concat({in, feed}, -1);
  }
  for (size_t l = 0; l < dec.size(); ++l) {
    s[l] = (*dec[l])(t, in, s[l]);
    in = s[l].h;
    if (l + 1 < dec.size()) in = ad::dropout(in, cfg_.dropout);
  }
  Var h = s.back().h;
  if (cfg_.attention == AttentionKind::Bahdanau) return ad::concat({h, ctx}, -1);
  if (luong()) {
    ctx = attend(t, h, e, mask, alpha, arcs);
    Var feat = ad::tanh((*att_c)(t, ad::concat({ctx, h}, -1)));
    feed = feat;
    return feat;
  }
  return h;
}

Var RnnSeq2Seq::loss(Tape& t, const data::Batch& batch, float label_smoothing,
                     float teacher_forcing, int64_t* tokens) const {
  const int64_t B = batch.size(), S = batch.source.cols;
  std::vector<int64_t> lengths;
  const bool padded = source_lengths(batch, lengths);
  Encoded e = run_encoder(t, batch.source.ids, B, S, lengths);
  Tensor mask;
  if (padded) {
    mask = Tensor({B, S});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < lengths[static_cast<size_t>(b)]; ++j) mask.at(b, j) = 1.0f;
  }
  const Tensor* mp = padded ? &mask : nullptr;
  std::vector<int32_t> tin, tout;
  split_target(batch, true, tin, tout);
  const int64_t T = static_cast<int64_t>(tin.size()) / B;
  std::vector<nn::State> s = e.init;
  Var feed;
  if (feeds()) feed = t.constant(t.zeros({B, H}));
  Var logits;
  if (teacher_forcing >= 1.0f) {
    Var Y = ad::dropout((*tgt_emb)(t, tin, {T, B}), cfg_.dropout);
    std::vector<Var> feats;
    for (int64_t k = 0; k < T; ++k)
      feats.push_back(dec_step(t, ad::index(Y, k), s, feed, e, mp, nullptr));
    // All T·B output rows in one product, fused with the cross-entropy (padding rows skipped).
    if (tokens)
      *tokens = static_cast<int64_t>(
          std::count_if(tout.begin(), tout.end(), [](int32_t v) { return v != 0; }));
    return ad::linear_cross_entropy(ad::dropout(ad::stack(feats, 0), cfg_.dropout),
                                    t.param(*out->W), out->b ? t.param(*out->b) : Var(), tout,
                                    data::Vocab::kPad, label_smoothing);
  } else {
    std::vector<Var> steps;
    std::vector<int32_t> ids(static_cast<size_t>(B));
    const int64_t V = cfg_.tgt_vocab;
    for (int64_t k = 0; k < T; ++k) {
      for (int64_t r = 0; r < B; ++r) {
        const size_t i = static_cast<size_t>(k * B + r);
        if (k == 0 || t.rng().uniform() < teacher_forcing) {
          ids[static_cast<size_t>(r)] = tin[i];
        } else {
          const float* row = steps.back().value().data() + r * V;
          ids[static_cast<size_t>(r)] = static_cast<int32_t>(std::max_element(row, row + V) - row);
        }
      }
      Var x = ad::dropout((*tgt_emb)(t, ids), cfg_.dropout);
      Var f = dec_step(t, x, s, feed, e, mp, nullptr);
      steps.push_back((*out)(t, ad::dropout(f, cfg_.dropout)));
    }
    logits = ad::stack(steps, 0);
  }
  if (tokens)
    *tokens = static_cast<int64_t>(
        std::count_if(tout.begin(), tout.end(), [](int32_t v) { return v != 0; }));
  nn::CrossEntropyOptions co;
  co.ignore_index = data::Vocab::kPad;
  co.label_smoothing = label_smoothing;
  return nn::cross_entropy(logits, tout, co);
}

void RnnSeq2Seq::encode(Tape& t, const std::vector<int32_t>& source, Memory& mem) const {
  const int64_t S = static_cast<int64_t>(source.size());
  Encoded e = run_encoder(t, source, 1, S, {S});
  mem.length = S;
  mem.v.clear();
  mem.v.push_back(e.M.value().clone());
  mem.v.push_back(e.K.value().clone());
  for (const nn::State& s : e.init) {
    mem.v.push_back(s.h.value().clone());
    if (lstm()) mem.v.push_back(s.c.value().clone());
  }
  if (syntactic()) {  // after the states: W_h m and W_m m
    mem.v.push_back(e.Hd.value().clone());
    mem.v.push_back(e.Md.value().clone());
  }
}

RnnSeq2Seq::Encoded RnnSeq2Seq::encoded(Tape& t, const Memory& mem, int64_t rows) const {
  const std::vector<int64_t> same(static_cast<size_t>(rows), 0);
  auto get = [&](size_t i) {
    return t.constant(rows == 1 ? mem.v[i].clone() : take_rows(mem.v[i], same));
  };
  Encoded e;
  e.M = get(0);
  e.K = get(1);
  if (syntactic()) {
    e.Hd = get(2 + state_tensors());
    e.Md = get(3 + state_tensors());
  }
  return e;
}

void RnnSeq2Seq::start(Tape&, const Memory& mem, State& s) const {
  s.v.clear();
  for (size_t i = 2; i < 2 + state_tensors(); ++i) s.v.push_back(mem.v[i].clone());
  s.v.push_back(Tensor({1, H}));  // the input feed h̃_0 = 0
  s.rows = 1;
  s.steps = 0;
  s.prefix.clear();
}

void RnnSeq2Seq::step(Tape& t, const Memory& mem, State& s, const std::vector<int32_t>& prev,
                      Tensor& log_probs, Tensor& attention) const {
  const int64_t K = static_cast<int64_t>(prev.size()), S = mem.length;
  if (K != s.rows) throw ShapeError("seq2seq step: rows of the state and the tokens differ");
  const Encoded e = encoded(t, mem, K);
  std::vector<nn::State> st(dec.size());
  Var feed = load_state(t, s, st);
  Var f = dec_step(t, (*tgt_emb)(t, prev), st, feed, e, nullptr, &attention);
  if (cfg_.attention == AttentionKind::None) attention = Tensor({K, S});
  log_probs = ad::log_softmax((*out)(t, f)).value().clone();
  store_state(st, feed, s);
  ++s.steps;
}

Var RnnSeq2Seq::load_state(Tape& t, const State& s, std::vector<nn::State>& st) const {
  size_t j = 0;
  for (auto& x : st) {
    x.h = t.constant(s.v[j++].clone());
    if (lstm()) x.c = t.constant(s.v[j++].clone());
  }
  return t.constant(s.v[j].clone());
}

void RnnSeq2Seq::store_state(const std::vector<nn::State>& st, Var feed, State& s) const {
  size_t j = 0;
  for (const auto& x : st) {
    s.v[j++] = x.h.value().clone();
    if (lstm()) s.v[j++] = x.c.value().clone();
  }
  if (feeds()) s.v[j] = feed.value().clone();
}

void RnnSeq2Seq::reorder(State& s, const std::vector<int64_t>& rows) const {
  for (Tensor& x : s.v) x = take_rows(x, rows);
  s.rows = static_cast<int64_t>(rows.size());
}

Tensor RnnSeq2Seq::syntactic_arcs(const std::vector<int32_t>& source,
                                  const std::vector<int32_t>& tokens) const {
  if (!syntactic()) return Seq2Seq::syntactic_arcs(source, tokens);
  const int64_t S = static_cast<int64_t>(source.size()), T = static_cast<int64_t>(tokens.size());
  Tape t(0);
  t.set_training(false);
  Memory mem;
  encode(t, source, mem);
  State s;
  start(t, mem, s);
  Tensor out({T, S, S});
  int32_t prev = data::Vocab::kBos;
  for (int64_t k = 0; k < T; ++k) {
    // step() without the output layer: the decoder's states and the step's potentials
    t.clear();
    const Encoded e = encoded(t, mem, 1);
    std::vector<nn::State> st(dec.size());
    Var feed = load_state(t, s, st);
    Tensor arcs;
    dec_step(t, (*tgt_emb)(t, std::vector<int32_t>{prev}), st, feed, e, nullptr, nullptr, &arcs);
    std::copy(arcs.data(), arcs.data() + S * S, out.data() + k * S * S);
    store_state(st, feed, s);
    prev = tokens[static_cast<size_t>(k)];
  }
  return out;
}

}  // namespace

std::unique_ptr<Seq2Seq> make_rnn(const Seq2SeqConfig& c, uint64_t seed) {
  return std::make_unique<RnnSeq2Seq>(c, seed);
}

}  // namespace attnkit::models::detail
