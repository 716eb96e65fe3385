#include "attnkit/models/han/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::models::han {

using ad::Var;

namespace {

constexpr std::initializer_list<Choice<Arch>> kArchs = {
    {"han", Arch::Han}, {"flat", Arch::Flat}, {"mean", Arch::Mean}, {"ngram-lr", Arch::NgramLr}};
constexpr int64_t kGroup = 64;  // sentences a word-encoder group

// FNV-1a over the ids of an n-gram.
uint64_t hash_ids(const int32_t* ids, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = static_cast<uint32_t>(ids[i]);
    for (int k = 0; k < 4; ++k) h = (h ^ ((v >> (8 * k)) & 0xff)) * 1099511628211ull;
  }
  return h ^ static_cast<uint64_t>(n);
}

}  // namespace

Arch parse_arch(const std::string& s) { return parse_choice("architecture", s, kArchs); }

const char* arch_name(Arch a) {
  for (const auto& c : kArchs)
    if (c.value == a) return c.name;
  return "?";
}

void HanConfig::validate() const {
  option_value("--arch", [&] { return parse_arch(arch); });
  auto positive = [](const char* name, int64_t v) {
    if (v < 1) throw UsageError(std::string("--") + name + " must be >= 1");
  };
  positive("embed", embed), positive("hidden", hidden), positive("context", context);
  positive("min-freq", min_freq), positive("ngrams", ngrams), positive("buckets", buckets);
  if (ngrams > 5) throw UsageError("--ngrams must be <= 5");
  if (buckets > (int64_t{1} << 24)) throw UsageError("--buckets must be <= 16777216");
  if (!(dropout >= 0.0f && dropout < 1.0f)) throw UsageError("--dropout must be in [0, 1)");
  if (!(embed_init > 0.0f && embed_init <= 10.0f))
    throw UsageError("--embed-init must be in (0, 10]");
}

int64_t Doc::words() const {
  int64_t n = 0;
  for (const auto& s : sentences) n += static_cast<int64_t>(s.size());
  return n;
}

Doc encode_doc(const data::TextDoc& d, const data::Vocab& v, int32_t label) {
  Doc out;
  out.label = label;
  for (const auto& s : d.sentences) out.sentences.push_back(v.encode(s));
  return out;
}

std::vector<int32_t> ngram_features(const Doc& d, int64_t vocab, int64_t ngrams, int64_t buckets) {
  std::vector<int32_t> f;
  for (const auto& s : d.sentences) f.insert(f.end(), s.begin(), s.end());
  for (int64_t n = 2; n <= ngrams; ++n)
    for (const auto& s : d.sentences)
      for (int64_t i = 0; i + n <= static_cast<int64_t>(s.size()); ++i)
        f.push_back(static_cast<int32_t>(
            vocab +
            static_cast<int64_t>(hash_ids(s.data() + i, n) % static_cast<uint64_t>(buckets))));
  return f;
}

HanNet::HanNet(nn::ParamStore& ps, const HanConfig& c, int64_t vocab, int64_t classes, Rng& rng)
    : c_(c), arch_(c.kind()), vocab_(vocab), classes_(classes) {
  c_.validate();
  if (vocab < data::Vocab::kReserved || classes < 2)
    throw DataError("a document classifier needs a vocabulary and at least 2 classes");
  const int64_t H = c_.hidden, D = 2 * c_.hidden, A = c_.context;
  auto context_vector = [&](const std::string& name) {
    // U(-1/√A, 1/√A), as a Linear's weights.
    Tensor u({A});
    const float r = 1.0f / std::sqrt(static_cast<float>(A));
    for (int64_t i = 0; i < A; ++i) u[i] = (2.0f * rng.uniform() - 1.0f) * r;
    return &ps.add(name, std::move(u));
  };
  if (arch_ == Arch::NgramLr) {
    ngram_w_ = &ps.add("ngram.W", Tensor({vocab + c_.buckets, classes}, 0.0f));
    ngram_b_ = &ps.add("ngram.b", Tensor({classes}, 0.0f));
    return;
  }
  embed_ = std::make_unique<nn::Embedding>(ps, "embed", vocab, c_.embed, rng);
  {
    Tensor& e = embed_->table->value;  // N(0, 1) → N(0, embed_init²)
    for (int64_t i = 0; i < e.size(); ++i) e[i] *= c_.embed_init;
  }
  if (arch_ == Arch::Mean) {
    out_ = std::make_unique<nn::Linear>(ps, "out", c_.embed, classes, rng);
    return;
  }
  nn::EncoderOptions w;
  w.kind = nn::CellKind::GRU, w.input = c_.embed, w.hidden = H, w.bidirectional = true;
  word_rnn_ = std::make_unique<nn::RecurrentEncoder>(ps, "word_gru", w, rng);
  word_proj_ = std::make_unique<nn::Linear>(ps, "word_att", D, A, rng);
  word_ctx_ = context_vector("word_context");
  if (arch_ == Arch::Han) {
    nn::EncoderOptions s = w;
    s.input = D;
    sent_rnn_ = std::make_unique<nn::RecurrentEncoder>(ps, "sent_gru", s, rng);
    sent_proj_ = std::make_unique<nn::Linear>(ps, "sent_att", D, A, rng);
    sent_ctx_ = context_vector("sent_context");
  }
  out_ = std::make_unique<nn::Linear>(ps, "out", D, classes, rng);
}

Var HanNet::attend(ad::Tape& t, Var h, const Tensor& mask, const nn::Linear& proj,
                   ad::Parameter* ctx, Var* weights) const {
  const int64_t N = h.dim(0), T = h.dim(1), D = h.dim(2), A = c_.context;
  Var u = ad::tanh(proj(t, ad::reshape(h, {N * T, D})));      // [N T, A]
  Var s = ad::matmul(u, ad::reshape(t.param(*ctx), {A, 1}));  // [N T, 1]
  Var a = ad::masked_softmax(ad::reshape(s, {N, T}), mask);   // [N, T]
  if (weights) *weights = a;
  return ad::reshape(ad::matmul(ad::reshape(a, {N, 1, T}), h), {N, D});  // [N, D]
}

Var HanNet::doc_means(ad::Tape& t, Var rows, const std::vector<int64_t>& counts) const {
  const int64_t B = static_cast<int64_t>(counts.size()), F = rows.dim(0);
  Tensor m({B, F}, 0.0f);
  int64_t at = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = counts[static_cast<size_t>(b)];
    for (int64_t i = 0; i < n; ++i) m.at(b, at + i) = 1.0f / static_cast<float>(n);
    at += n;
  }
  return ad::matmul(t.constant(std::move(m)), rows);
}

HanOutput HanNet::forward(ad::Tape& t, const std::vector<const Doc*>& docs, bool att) const {
  return run(t, docs, att, nullptr);
}

Tensor HanNet::word_projections() const {
  if (!word_rnn_)
    throw Error("word_projections: a " + std::string(arch_name(arch_)) + " model has no word GRU");
  return word_rnn_->input_projections(embed_->table->value);
}

Var HanNet::encode_words(ad::Tape& t, const std::vector<int32_t>& ids, int64_t N, int64_t T,
                         const std::vector<int64_t>& lengths, const Tensor* table) const {
  if (table)
    return word_rnn_->projected(t, ad::embedding(t.constant_view(*table), ids, {N, T}), lengths)
        .outputs;
  Var x = ad::dropout((*embed_)(t, ids, {N, T}), c_.dropout);
  return (*word_rnn_)(t, x, lengths).outputs;
}

HanOutput HanNet::run(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                      const Tensor* table) const {
  if (table && (!word_rnn_ || t.recording() || t.training() ||
                table->shape() != Shape{vocab_, 6 * c_.hidden}))
    throw Error("a table of word projections is for han and flat models in evaluation");
  if (docs.empty()) throw DataError("no documents");
  for (const Doc* d : docs) {
    if (d->sentences.empty()) throw DataError("empty document");
    for (const auto& s : d->sentences) {
      if (s.empty()) throw DataError("empty sentence");
      for (int32_t id : s)
        if (id < 0 || id >= vocab_)
          throw DataError("word id " + std::to_string(id) + " outside the vocabulary");
    }
  }
  switch (arch_) {
    case Arch::Han:
      return forward_han(t, docs, att, table);
    case Arch::Flat:
      return forward_flat(t, docs, att, table);
    case Arch::Mean:
      return forward_mean(t, docs);
    case Arch::NgramLr:
      return forward_ngram(t, docs);
  }
  throw Error("unknown architecture");
}

HanOutput HanNet::forward_han(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                              const Tensor* table) const {
  const int64_t B = static_cast<int64_t>(docs.size()), D = 2 * c_.hidden;
  // Every sentence of the batch (document, sentence), longest first.
  struct Ref {
    int64_t doc, sent, len;
  };
  std::vector<Ref> refs;
  int64_t S = 0;
  for (int64_t b = 0; b < B; ++b) {
    const auto& ss = docs[static_cast<size_t>(b)]->sentences;
    S = std::max<int64_t>(S, static_cast<int64_t>(ss.size()));
    for (size_t s = 0; s < ss.size(); ++s)
      refs.push_back({b, static_cast<int64_t>(s), static_cast<int64_t>(ss[s].size())});
  }
  std::vector<size_t> order(refs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return refs[a].len > refs[b].len; });
  const int64_t N = static_cast<int64_t>(refs.size());
  std::vector<Var> parts;
  std::vector<int64_t> row_of(refs.size());  // sentence ref → row of the sentence table
  HanOutput out;
  if (att) {
    out.word_weights.resize(static_cast<size_t>(B));
    out.sentence_weights.resize(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const auto& ss = docs[static_cast<size_t>(b)]->sentences;
      int64_t W = 0;
      for (const auto& s : ss) W = std::max<int64_t>(W, static_cast<int64_t>(s.size()));
      out.word_weights[static_cast<size_t>(b)] = Tensor({static_cast<int64_t>(ss.size()), W}, 0.0f);
    }
  }
  for (int64_t g0 = 0; g0 < N; g0 += kGroup) {
    const int64_t G = std::min(kGroup, N - g0);
    const int64_t W = refs[order[static_cast<size_t>(g0)]].len;  // the group's longest
    std::vector<int32_t> ids(static_cast<size_t>(G * W), data::Vocab::kPad);
    std::vector<int64_t> lengths(static_cast<size_t>(G));
    Tensor mask({G, W}, 0.0f);
    for (int64_t g = 0; g < G; ++g) {
      const Ref& r = refs[order[static_cast<size_t>(g0 + g)]];
      const auto& s = docs[static_cast<size_t>(r.doc)]->sentences[static_cast<size_t>(r.sent)];
      std::copy(s.begin(), s.end(), ids.begin() + g * W);
      lengths[static_cast<size_t>(g)] = r.len;
      for (int64_t w = 0; w < r.len; ++w) mask.at(g, w) = 1.0f;
      row_of[order[static_cast<size_t>(g0 + g)]] = g0 + g;
    }
    Var h = encode_words(t, ids, G, W, lengths, table);  // [G, W, D]
    Var a;
    parts.push_back(attend(t, h, mask, *word_proj_, word_ctx_, att ? &a : nullptr));
    if (att)
      for (int64_t g = 0; g < G; ++g) {
        const Ref& r = refs[order[static_cast<size_t>(g0 + g)]];
        Tensor& dst = out.word_weights[static_cast<size_t>(r.doc)];
        for (int64_t w = 0; w < r.len; ++w) dst.at(r.sent, w) = a.value().at(g, w);
      }
  }
  // The sentence table with a zero row for padding, gathered as [B, S, D].
  parts.push_back(t.constant(Tensor({1, D}, 0.0f)));
  Var sentence_rows = ad::concat(parts, 0);
  std::vector<int32_t> gather(static_cast<size_t>(B * S), static_cast<int32_t>(N));
  std::vector<int64_t> counts(static_cast<size_t>(B));
  Tensor smask({B, S}, 0.0f);
  for (size_t i = 0; i < refs.size(); ++i) {
    gather[static_cast<size_t>(refs[i].doc * S + refs[i].sent)] = static_cast<int32_t>(row_of[i]);
    smask.at(refs[i].doc, refs[i].sent) = 1.0f;
  }
  for (int64_t b = 0; b < B; ++b)
    counts[static_cast<size_t>(b)] =
        static_cast<int64_t>(docs[static_cast<size_t>(b)]->sentences.size());
  Var sv = ad::dropout(ad::embedding(sentence_rows, gather, {B, S}), c_.dropout);  // [B, S, D]
  Var hs = (*sent_rnn_)(t, sv, counts).outputs;                                    // [B, S, D]
  Var sa;
  Var v = attend(t, hs, smask, *sent_proj_, sent_ctx_, att ? &sa : nullptr);
  out.logits = (*out_)(t, ad::dropout(v, c_.dropout));
  if (att)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = counts[static_cast<size_t>(b)];
      Tensor w({n});
      for (int64_t s = 0; s < n; ++s) w[s] = sa.value().at(b, s);
      out.sentence_weights[static_cast<size_t>(b)] = std::move(w);
    }
  return out;
}

HanOutput HanNet::forward_flat(ad::Tape& t, const std::vector<const Doc*>& docs, bool att,
                               const Tensor* table) const {
  const int64_t B = static_cast<int64_t>(docs.size());
  int64_t T = 0;
  for (const Doc* d : docs) T = std::max(T, d->words());
  std::vector<int32_t> ids(static_cast<size_t>(B * T), data::Vocab::kPad);
  std::vector<int64_t> lengths(static_cast<size_t>(B));
  Tensor mask({B, T}, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    int64_t at = 0;
    for (const auto& s : docs[static_cast<size_t>(b)]->sentences)
      for (int32_t id : s) ids[static_cast<size_t>(b * T + at)] = id, mask.at(b, at) = 1.0f, ++at;
    lengths[static_cast<size_t>(b)] = at;
  }
  Var h = encode_words(t, ids, B, T, lengths, table);
  Var a;
  HanOutput out;
  Var v = attend(t, h, mask, *word_proj_, word_ctx_, att ? &a : nullptr);
  out.logits = (*out_)(t, ad::dropout(v, c_.dropout));
  if (att)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = lengths[static_cast<size_t>(b)];
      Tensor w({1, n});
      for (int64_t i = 0; i < n; ++i) w[i] = a.value().at(b, i);
      out.word_weights.push_back(std::move(w));
      out.sentence_weights.emplace_back(Shape{0});
    }
  return out;
}

HanOutput HanNet::forward_mean(ad::Tape& t, const std::vector<const Doc*>& docs) const {
  std::vector<int32_t> ids;
  std::vector<int64_t> counts;
  for (const Doc* d : docs) {
    for (const auto& s : d->sentences) ids.insert(ids.end(), s.begin(), s.end());
    counts.push_back(d->words());
  }
  HanOutput out;
  out.logits = (*out_)(t, ad::dropout(doc_means(t, (*embed_)(t, ids), counts), c_.dropout));
  return out;
}

HanOutput HanNet::forward_ngram(ad::Tape& t, const std::vector<const Doc*>& docs) const {
  std::vector<int32_t> ids;
  std::vector<int64_t> counts;
  for (const Doc* d : docs) {
    auto f = ngram_features(*d, vocab_, c_.ngrams, c_.buckets);
    counts.push_back(static_cast<int64_t>(f.size()));
    ids.insert(ids.end(), f.begin(), f.end());
  }
  HanOutput out;
  out.logits =
      ad::add(doc_means(t, ad::embedding(t.param(*ngram_w_), ids), counts), t.param(*ngram_b_));
  return out;
}

Tensor HanNet::probabilities(ad::Tape& t, const std::vector<const Doc*>& docs,
                             std::vector<Tensor>* words, std::vector<Tensor>* sentences,
                             const Tensor* word_table) const {
  t.set_training(false);
  t.set_recording(false);
  HanOutput o = run(t, docs, words != nullptr || sentences != nullptr, word_table);
  if (words) *words = std::move(o.word_weights);
  if (sentences) *sentences = std::move(o.sentence_weights);
  Tensor p = ad::softmax(o.logits).value().clone();
  t.clear();
  return p;
}

int64_t HanNet::load_embeddings(const std::string& path, const data::Vocab& v) {
  if (!embed_) throw UsageError("--embeddings: the ngram-lr model has no word embeddings");
  const std::string text = io::read_text(path);
  Tensor& table = embed_->table->value;
  const int64_t E = c_.embed;
  std::vector<uint8_t> seen(static_cast<size_t>(v.size()), 0);
  int64_t found = 0, ln = 0;
  for (std::string_view line : data::split_lines(text, path)) {
    ++ln;
    auto f = data::split_whitespace(line);
    if (f.empty()) continue;
    if (ln == 1 && f.size() == 2) continue;  // "COUNT DIM"
    if (static_cast<int64_t>(f.size()) != E + 1)
      throw DataError(std::to_string(f.size() - 1) + " numbers after the word, expected " +
                          std::to_string(E) + " (--embed)",
                      path, static_cast<long>(ln));
    std::vector<float> x(static_cast<size_t>(E));
    for (int64_t i = 0; i < E; ++i) {
      const std::string s(f[static_cast<size_t>(i + 1)]);
      char* end = nullptr;
      x[static_cast<size_t>(i)] = std::strtof(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(x[static_cast<size_t>(i)]))
        throw DataError("'" + s + "' is not a finite number", path, static_cast<long>(ln));
    }
    const std::string word = data::lower_utf8(f[0]);
    if (!v.contains(word)) continue;
    const int32_t id = v.id(word);
    if (seen[static_cast<size_t>(id)]) continue;  // the first vector of a word wins
    seen[static_cast<size_t>(id)] = 1, ++found;
    std::copy(x.begin(), x.end(), table.data() + static_cast<int64_t>(id) * E);
  }
  return found;
}

}  // namespace attnkit::models::han
