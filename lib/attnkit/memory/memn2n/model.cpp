#include "attnkit/memory/memn2n/model.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "attnkit/autodiff/ops_structured.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::memory {

using ad::Tape;
using ad::Var;

Tying parse_tying(const std::string& text) {
  return parse_choice<Tying>("weight tying", text,
                             {
                                 {"adjacent", Tying::Adjacent},
                                 {"layerwise", Tying::LayerWise},
                                 {"layer-wise", Tying::LayerWise, true},
                             });
}

const char* tying_name(Tying t) { return t == Tying::Adjacent ? "adjacent" : "layerwise"; }

PeForm parse_pe_form(const std::string& text) {
  return parse_choice<PeForm>("position-encoding form", text,
                              {
                                  {"paper", PeForm::Paper},
                                  {"code", PeForm::Code},
                              });
}

const char* pe_form_name(PeForm f) { return f == PeForm::Paper ? "paper" : "code"; }

HopAttention parse_hop_attention(const std::string& text) {
  return parse_choice<HopAttention>("attention", text,
                                    {
                                        {"softmax", HopAttention::Softmax},
                                        {"unary", HopAttention::Unary},
                                        {"crf", HopAttention::Crf},
                                        {"crf-kim", HopAttention::CrfKim},
                                    });
}

const char* hop_attention_name(HopAttention a) {
  switch (a) {
    case HopAttention::Softmax:
      return "softmax";
    case HopAttention::Unary:
      return "unary";
    case HopAttention::Crf:
      return "crf";
    case HopAttention::CrfKim:
      return "crf-kim";
  }
  return "?";
}

Tensor position_encoding(int64_t J, int64_t d, PeForm form) {
  if (J < 1 || d < 1) throw ShapeError("position_encoding: J and d must be positive");
  Tensor l({J, d});
  for (int64_t j = 1; j <= J; ++j)
    for (int64_t k = 1; k <= d; ++k) {
      const double jj = static_cast<double>(j), JJ = static_cast<double>(J);
      const double kk = static_cast<double>(k), dd = static_cast<double>(d);
      l.at(j - 1, k - 1) = static_cast<float>(
          form == PeForm::Paper
              ? (1.0 - jj / JJ) - (kk / dd) * (1.0 - 2.0 * jj / JJ)
              : 1.0 + 4.0 * (kk - (dd + 1) / 2) * (jj - (JJ + 1) / 2) / (dd * JJ));
    }
  return l;
}

namespace {

// The weights of word j (1-based) of a sentence of n words in d dimensions: l_k = a - (k/d) b.
struct PeRow {
  float a, b;
};
inline PeRow pe_row(int64_t j, int64_t n, int64_t d, PeForm form) {
  const double jj = static_cast<double>(j) / static_cast<double>(n);
  if (form == PeForm::Paper)
    return {static_cast<float>(1.0 - jj), static_cast<float>(1.0 - 2.0 * jj)};
  // 1 + c (k - (d+1)/2) / d with c = 4 (j - (n+1)/2) / n
  const double c =
      4.0 * (static_cast<double>(j) - (static_cast<double>(n) + 1) / 2) / static_cast<double>(n);
  return {
      static_cast<float>(1.0 - c * (static_cast<double>(d) + 1) / (2.0 * static_cast<double>(d))),
      static_cast<float>(-c)};
}

}  // namespace

Var encode_sentences(Var table, const std::vector<int32_t>& ids, int64_t J, Shape lead, bool pe,
                     PeForm form, int64_t fixed_J) {
  Tape& t = table.tape();
  const Tensor& T = table.value();
  if (T.rank() != 2)
    throw ShapeError("encode_sentences: table must be [V, d], got " + shape_str(T.shape()));
  const int64_t V = T.dim(0), d = T.dim(1);
  const int64_t rows = shape_numel(lead);
  if (fixed_J < 0) throw ShapeError("encode_sentences: negative fixed J");
  if (J < 1 || rows * J != static_cast<int64_t>(ids.size()))
    throw ShapeError("encode_sentences: " + std::to_string(ids.size()) + " ids are not " +
                     shape_str(lead) + " rows of " + std::to_string(J));
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= V)
      throw DataError("encode_sentences: id " + std::to_string(ids[i]) + " outside [0, " +
                      std::to_string(V) + ")");
  // k/d for k = 1..d
  auto kd = std::make_shared<std::vector<float>>(static_cast<size_t>(d));
  for (int64_t k = 0; k < d; ++k)
    (*kd)[static_cast<size_t>(k)] = static_cast<float>(k + 1) / static_cast<float>(d);
  Shape os = lead;
  os.push_back(d);
  Tensor y = t.zeros(os);
  const float* tab = T.data();
  const int32_t* id = ids.data();
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* w = id + r * J;
    float* out = y.data() + r * d;
    int64_t n = 0;
    for (int64_t j = 0; j < J; ++j) n += w[j] != 0;
    int64_t pos = 0;
    for (int64_t j = 0; j < J; ++j) {
      if (w[j] == 0) continue;
      const float* e = tab + static_cast<int64_t>(w[j]) * d;
      ++pos;
      if (pe) {
        const PeRow p = pe_row(pos, fixed_J > 0 ? fixed_J : n, d, form);
        const float* q = kd->data();
        for (int64_t k = 0; k < d; ++k) out[k] += (p.a - q[k] * p.b) * e[k];
      } else {
        for (int64_t k = 0; k < d; ++k) out[k] += e[k];
      }
    }
  }
  auto idp = std::make_shared<std::vector<int32_t>>(ids);
  return t.push(std::move(y), {table},
                [table, idp, kd, J, d, rows, pe, form, fixed_J](Tape& t, Var out) {
                  const Tensor& g = t.grad(out);
                  float* gt = t.grad(table).data();
                  const int32_t* id = idp->data();
                  for (int64_t r = 0; r < rows; ++r) {
                    const int32_t* w = id + r * J;
                    const float* pg = g.data() + r * d;
                    int64_t n = 0;
                    for (int64_t j = 0; j < J; ++j) n += w[j] != 0;
                    int64_t pos = 0;
                    for (int64_t j = 0; j < J; ++j) {
                      if (w[j] == 0) continue;
                      float* e = gt + static_cast<int64_t>(w[j]) * d;
                      ++pos;
                      if (pe) {
                        const PeRow p = pe_row(pos, fixed_J > 0 ? fixed_J : n, d, form);
                        const float* q = kd->data();
                        for (int64_t k = 0; k < d; ++k) e[k] += (p.a - q[k] * p.b) * pg[k];
                      } else {
                        for (int64_t k = 0; k < d; ++k) e[k] += pg[k];
                      }
                    }
                  }
                });
}

MemN2N::MemN2N(const MemN2NConfig& cfg, uint64_t seed) : cfg_(cfg) {
  if (cfg.vocab < 2) throw UsageError("memn2n: the vocabulary needs at least 2 words");
  if (cfg.dim < 1) throw UsageError("memn2n: the embedding size must be at least 1");
  if (cfg.hops < 1 || cfg.hops > 10) throw UsageError("memn2n: hops must be 1 to 10");
  if (cfg.memory < 1) throw UsageError("memn2n: the memory must hold at least 1 sentence");
  if (cfg.attention != HopAttention::Softmax && (cfg.kv || cfg.tying != Tying::Adjacent))
    throw UsageError(std::string("memn2n: attention ") + hop_attention_name(cfg.attention) +
                     " needs adjacent tying and no Key-Value");
  if (cfg.attention == HopAttention::CrfKim && cfg.hops != 2)
    throw UsageError("memn2n: attention crf-kim has 2 hops (the authors' T = 2), not " +
                     std::to_string(cfg.hops));
  Rng rng(seed);
  const int64_t V = cfg.vocab, d = cfg.dim, Tr = cfg.time_rows();
  auto add = [&](const std::string& name, Shape s) {
    Tensor v(std::move(s));
    nn::init_normal(v, rng, cfg.init_std);
    return &ps_.add(name, std::move(v));
  };
  if (cfg.kv) {
    for (const char* n : {"Q", "K", "V", "W"}) tables_.push_back(add(n, {V, d}));
    if (cfg.te) {
      times_.push_back(add("T_K", {Tr, d}));
      times_.push_back(add("T_V", {Tr, d}));
    }
    for (int k = 1; k <= cfg.hops; ++k) mats_.push_back(add("R" + std::to_string(k), {d, d}));
  } else if (cfg.attention == HopAttention::CrfKim) {  // A, C, C2, C3 (see model.h)
    for (int k = 0; k < 4; ++k) tables_.push_back(add("E" + std::to_string(k), {V, d}));
    if (cfg.te)
      for (int k = 0; k < 4; ++k) times_.push_back(add("T" + std::to_string(k), {Tr, d}));
    mats_.push_back(add("W", {V, d}));
    mats_.push_back(add("U", {d, d}));
    mats_.push_back(add("U_b", {d}));
  } else if (cfg.tying == Tying::Adjacent) {
    for (int k = 0; k <= cfg.hops; ++k) tables_.push_back(add("E" + std::to_string(k), {V, d}));
    if (cfg.te)
      for (int k = 0; k <= cfg.hops; ++k) times_.push_back(add("T" + std::to_string(k), {Tr, d}));
  } else {
    for (const char* n : {"A", "C", "B", "W"}) tables_.push_back(add(n, {V, d}));
    if (cfg.te) {
      times_.push_back(add("T_A", {Tr, d}));
      times_.push_back(add("T_C", {Tr, d}));
    }
    mats_.push_back(add("H", {d, d}));
  }
}

std::vector<std::vector<ad::Parameter*>> MemN2N::weight_groups() const {
  // the temporal tables pair with: adjacent T_k -> E_k; layer-wise T_A, T_C -> A, C;
  // Key-Value T_K, T_V -> K, V
  const size_t first = cfg_.kv ? 1 : 0;
  std::vector<std::vector<ad::Parameter*>> g;
  for (size_t i = 0; i < tables_.size(); ++i) {
    g.push_back({tables_[i]});
    if (i >= first && i - first < times_.size()) g.back().push_back(times_[i - first]);
  }
  for (ad::Parameter* m : mats_) g.push_back({m});
  return g;
}

Var MemN2N::memory_embedding(Tape& t, const MemBatch& b, ad::Parameter* table,
                             ad::Parameter* time) const {
  Var m = encode_sentences(t.param(*table), b.story, b.J, {b.B, b.M}, cfg_.pe, cfg_.pe_form,
                           cfg_.pe_words);
  if (!time) return m;
  Var rows = ad::embedding(t.param(*time), b.time, {b.B, b.M});
  if (cfg_.pe && cfg_.pe_words > 0) {  // the time word, last of J
    const Tensor l = position_encoding(cfg_.pe_words, cfg_.dim, cfg_.pe_form);
    Tensor w({cfg_.dim});
    for (int64_t k = 0; k < cfg_.dim; ++k) w[k] = l.at(cfg_.pe_words - 1, k);
    rows = ad::mul(rows, t.constant(std::move(w)));
  }
  return ad::add(m, rows);
}

Var MemN2N::hop(Tape& t, const MemBatch& b, Var u, Var m, Var c, bool softmax,
                std::vector<Var>* attention) const {
  const int64_t B = b.B, M = b.M, d = cfg_.dim;
  Var scores = ad::reshape(ad::matmul(m, ad::reshape(u, {B, d, 1})), {B, M});
  Var p;
  if (!softmax) {
    p = ad::mul(scores, t.constant(b.mask.clone()));
  } else if (cfg_.mask_empty) {
    p = ad::masked_softmax(scores, b.mask);
  } else {  // one more column per question: the M - n empty slots, score log(M - n)
    Tensor extra({B, 1}), mask({B, M + 1});
    for (int64_t r = 0; r < B; ++r) {
      double n = 0;
      for (int64_t i = 0; i < M; ++i) n += mask.at(r, i) = b.mask.at(r, i);
      const double empty = static_cast<double>(cfg_.memory) - n;
      if (empty > 0) {
        extra.at(r, 0) = static_cast<float>(std::log(empty));
        mask.at(r, M) = 1.0f;
      }
    }
    std::vector<Var> cols{scores, t.constant(std::move(extra))};
    p = ad::slice(ad::masked_softmax(ad::concat(cols, 1), mask), 1, 0, M);
  }
  if (attention) attention->push_back(p);
  return ad::reshape(ad::matmul(ad::reshape(p, {B, 1, M}), c), {B, d});
}

Var MemN2N::forward(Tape& t, const MemBatch& b, bool softmax, std::vector<Var>* attention) const {
  if (b.B < 1 || b.M < 1 || b.J < 1 || b.Jq < 1 ||
      static_cast<int64_t>(b.story.size()) != b.B * b.M * b.J ||
      static_cast<int64_t>(b.time.size()) != b.B * b.M ||
      static_cast<int64_t>(b.query.size()) != b.B * b.Jq || b.mask.size() != b.B * b.M)
    throw ShapeError("memn2n: inconsistent batch sizes");
  if (cfg_.attention != HopAttention::Softmax) return structured_forward(t, b, softmax, attention);
  const int K = cfg_.hops;
  auto time = [&](size_t i) { return times_.empty() ? nullptr : times_[i]; };
  if (cfg_.kv) {
    Var q = encode_sentences(t.param(*tables_[0]), b.query, b.Jq, {b.B}, cfg_.pe, cfg_.pe_form,
                             cfg_.pe_words);
    Var keys = memory_embedding(t, b, tables_[1], time(0));
    Var vals = memory_embedding(t, b, tables_[2], time(1));
    for (int k = 0; k < K; ++k) {
      Var o = hop(t, b, q, keys, vals, softmax, attention);
      q = ad::linear(ad::add(q, o), t.param(*mats_[static_cast<size_t>(k)]));
    }
    return ad::linear(q, t.param(*tables_[3]));
  }
  if (cfg_.tying == Tying::Adjacent) {
    Var u = encode_sentences(t.param(*tables_[0]), b.query, b.Jq, {b.B}, cfg_.pe, cfg_.pe_form,
                             cfg_.pe_words);
    Var m = memory_embedding(t, b, tables_[0], time(0));
    for (int k = 0; k < K; ++k) {
      Var c = memory_embedding(t, b, tables_[static_cast<size_t>(k + 1)], time(k + 1));
      u = ad::add(u, hop(t, b, u, m, c, softmax, attention));
      m = c;  // A^{k+1} = C^k
    }
    return ad::linear(u, t.param(*tables_[static_cast<size_t>(K)]));
  }
  Var u = encode_sentences(t.param(*tables_[2]), b.query, b.Jq, {b.B}, cfg_.pe, cfg_.pe_form,
                           cfg_.pe_words);
  Var m = memory_embedding(t, b, tables_[0], time(0));
  Var c = memory_embedding(t, b, tables_[1], time(1));
  for (int k = 0; k < K; ++k) {
    Var o = hop(t, b, u, m, c, softmax, attention);
    u = ad::add(ad::linear(u, t.param(*mats_[0])), o);
  }
  return ad::linear(u, t.param(*tables_[3]));
}

Var MemN2N::structured_forward(Tape& t, const MemBatch& b, bool softmax,
                               std::vector<Var>* attention) const {
  if (cfg_.attention == HopAttention::CrfKim) return kim_forward(t, b, softmax, attention);
  const int K = cfg_.hops;
  const int64_t B = b.B, M = b.M, d = cfg_.dim;
  auto time = [&](size_t i) { return times_.empty() ? nullptr : times_[i]; };
  const Var u1 = encode_sentences(t.param(*tables_[0]), b.query, b.Jq, {B}, cfg_.pe, cfg_.pe_form,
                                  cfg_.pe_words);
  std::vector<Var> ms, cs, scores;  // hop k reads m^k, c^k (A^{k+1} = C^k)
  ms.push_back(memory_embedding(t, b, tables_[0], time(0)));
  for (int k = 0; k < K; ++k) {
    cs.push_back(memory_embedding(t, b, tables_[static_cast<size_t>(k + 1)], time(k + 1)));
    if (k + 1 < K) ms.push_back(cs.back());
  }
  for (int k = 0; k < K; ++k)
    scores.push_back(
        ad::reshape(ad::matmul(ms[static_cast<size_t>(k)], ad::reshape(u1, {B, d, 1})), {B, M}));
  std::vector<Var> p(static_cast<size_t>(K));
  if (!softmax) {  // linear start: the unary scores as weights
    for (int k = 0; k < K; ++k)
      p[static_cast<size_t>(k)] =
          ad::mul(scores[static_cast<size_t>(k)], t.constant(b.mask.clone()));
  } else {
    std::vector<int64_t> states(static_cast<size_t>(B), 0);
    for (int64_t r = 0; r < B; ++r)  // the filled slots lead (slot 0: the latest sentence)
      for (int64_t i = 0; i < M; ++i) states[static_cast<size_t>(r)] += b.mask.at(r, i) != 0.0f;
    Var pair;  // [B, K-1, M, M]: c^k_i · m^{k+1}_j
    if (cfg_.attention == HopAttention::Crf && K > 1) {
      std::vector<Var> links;
      for (int k = 0; k + 1 < K; ++k)
        links.push_back(
            ad::matmul(cs[static_cast<size_t>(k)], ms[static_cast<size_t>(k + 1)], false, true));
      pair = ad::stack(links, 1);
    }
    const Var marg = ad::hop_chain_marginals(ad::stack(scores, 1), pair, states);  // [B, K, M]
    for (int k = 0; k < K; ++k)
      p[static_cast<size_t>(k)] = ad::reshape(ad::slice(marg, 1, k, k + 1), {B, M});
  }
  Var u = u1;
  for (int k = 0; k < K; ++k) {
    const Var& pk = p[static_cast<size_t>(k)];
    if (attention) attention->push_back(pk);
    u = ad::add(
        u, ad::reshape(ad::matmul(ad::reshape(pk, {B, 1, M}), cs[static_cast<size_t>(k)]), {B, d}));
  }
  return ad::linear(u, t.param(*tables_[static_cast<size_t>(K)]));
}

Var MemN2N::kim_forward(Tape& t, const MemBatch& b, bool softmax,
                        std::vector<Var>* attention) const {
  const int64_t B = b.B, M = b.M, d = cfg_.dim;
  auto time = [&](size_t i) { return times_.empty() ? nullptr : times_[i]; };
  const Var u = encode_sentences(t.param(*tables_[0]), b.query, b.Jq, {B}, cfg_.pe, cfg_.pe_form,
                                 cfg_.pe_words);
  const Var m = memory_embedding(t, b, tables_[0], time(0));                // A
  const Var c = memory_embedding(t, b, tables_[1], time(1));                // C
  const Var c2 = memory_embedding(t, b, tables_[2], time(2));               // C2
  const Var c3 = memory_embedding(t, b, tables_[3], time(3));               // C3
  const Var u2 = ad::linear(u, t.param(*mats_[1]), t.param(*mats_[2]));     // U u + U_b
  Var s1 = ad::reshape(ad::matmul(m, ad::reshape(u, {B, d, 1})), {B, M});   // u·m_i
  Var s2 = ad::reshape(ad::matmul(c, ad::reshape(u2, {B, d, 1})), {B, M});  // u2·c_j
  // i = j is excluded (the code's -inf diagonal of θ12); a large finite penalty keeps a memory
  // of one sentence defined (both hops on it) where the code's would be NaN
  Tensor diag({B, M, M});
  for (int64_t r = 0; r < B; ++r)
    for (int64_t i = 0; i < M; ++i) diag.at(r, i, i) = -1e9f;
  Var pair = t.constant(std::move(diag));
  if (!softmax || cfg_.kim_full) {  // linear start: θ01 + θ12 + θ20 unnormalised
    s1 = ad::mul(s1, 2.0f), s2 = ad::mul(s2, 2.0f);
    pair = ad::add(ad::matmul(m, c, false, true), pair);  // m_i·c_j
  }
  std::vector<int64_t> states(static_cast<size_t>(B), 0);
  for (int64_t r = 0; r < B; ++r)  // the filled slots lead (slot 0: the latest sentence)
    for (int64_t i = 0; i < M; ++i) states[static_cast<size_t>(r)] += b.mask.at(r, i) != 0.0f;
  const Var marg = ad::hop_chain_marginals(ad::stack({s1, s2}, 1), ad::reshape(pair, {B, 1, M, M}),
                                           states);  // [B, 2, M]
  const Var p1 = ad::reshape(ad::slice(marg, 1, 0, 1), {B, M});
  const Var p2 = ad::reshape(ad::slice(marg, 1, 1, 2), {B, M});
  if (attention) attention->push_back(p1), attention->push_back(p2);
  const Var o = ad::add(ad::reshape(ad::matmul(ad::reshape(p1, {B, 1, M}), c2), {B, d}),
                        ad::reshape(ad::matmul(ad::reshape(p2, {B, 1, M}), c3), {B, d}));
  return ad::linear(ad::add(o, u2), t.param(*mats_[0]));
}

}  // namespace attnkit::memory
