#include "attnkit/models/bert/model.h"

#include <algorithm>
#include <cmath>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/load.h"

namespace attnkit::models {

using ad::Var;

void BertConfig::validate() const {
  if (vocab < data::Vocab::kReserved + 1)
    throw UsageError("the vocabulary has no ordinary token (lower --min-freq or give more text)");
  if (layers < 1) throw UsageError("layers must be >= 1");
  if (hidden < 1) throw UsageError("hidden must be >= 1");
  if (heads < 1 || hidden % heads != 0)
    throw UsageError("heads (" + std::to_string(heads) + ") must divide hidden (" +
                     std::to_string(hidden) + ")");
  if (ff < 1) throw UsageError("ff must be >= 1");
  if (max_len < 5) throw UsageError("len-max must be >= 5 ([CLS] A [SEP] B [SEP])");
  if (!(dropout >= 0.0f && dropout < 1.0f)) throw UsageError("dropout must be in [0, 1)");
}

namespace {
void scale(ad::Parameter* p, float s) {
  for (int64_t i = 0; i < p->value.size(); ++i) p->value[i] *= s;
}
nn::TransformerOptions layer_options(const BertConfig& c) {
  nn::TransformerOptions o;
  o.dim = c.hidden, o.heads = c.heads, o.ff = c.ff, o.dropout = c.dropout, o.gelu = true;
  return o;
}
// Rows r of x [R, ...] (argmax of a row of logits).
int32_t argmax_row(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = j;
  return static_cast<int32_t>(best);
}
ad::Tape& eval_tape() {
  thread_local ad::Tape t(0);
  t.clear();
  t.set_training(false);
  t.set_recording(false);
  return t;
}
}  // namespace

Bert::Bert(nn::ParamStore& ps, const BertConfig& c, Rng& rng)
    : c_((c.validate(), c)),
      token_(ps, "embed.token", c.vocab + 1, c.hidden, rng),
      segment_(ps, "embed.segment", 2, c.hidden, rng),
      position_(ps, "embed.position", c.max_len, c.hidden, rng),
      embed_norm_(ps, "embed.norm", c.hidden),
      mlm_dense_(ps, "mlm.dense", c.hidden, c.hidden, rng),
      mlm_norm_(ps, "mlm.norm", c.hidden),
      mlm_bias_(&ps.add("mlm.bias", Tensor({c.vocab + 1}, 0.0f))),
      pooler_(ps, "nsp.pooler", c.hidden, c.hidden, rng),
      nsp_out_(ps, "nsp.out", c.hidden, 2, rng) {
  // BERT's initialiser range 0.02 for the embeddings (N(0, 1) rows would make the tied
  // output's first logits ~ √hidden large). Measured on bAbI (pipelines/bert-tiny.sh): at
  // d2l's Adam 0.01 the MLM loss stays at the unigram entropy with this, with N(0, 1/hidden)
  // and with N(0, 1) alike; at 1e-3 it learns.
  scale(token_.table, 0.02f), scale(segment_.table, 0.02f), scale(position_.table, 0.02f);
  layers_.reserve(static_cast<size_t>(c.layers));
  for (int64_t i = 0; i < c.layers; ++i)
    layers_.emplace_back(ps, "encoder." + std::to_string(i), layer_options(c), rng);
}

Var Bert::encode(ad::Tape& t, const std::vector<const BertExample*>& xs) const {
  const int64_t B = static_cast<int64_t>(xs.size());
  if (B == 0) throw DataError("no examples to encode");
  int64_t n = 0;
  for (const BertExample* x : xs) {
    const int64_t len = static_cast<int64_t>(x->tokens.size());
    if (len == 0) throw DataError("an empty input sequence");
    if (len > c_.max_len)
      throw DataError("an input of " + std::to_string(len) + " tokens is longer than the model's " +
                      std::to_string(c_.max_len) + " (max-len, [CLS] and [SEP] included)");
    if (x->segments.size() != x->tokens.size())
      throw DataError("an input's segments do not match its tokens");
    for (int32_t id : x->tokens)
      if (id < 0 || id > c_.vocab)
        throw DataError("token id " + std::to_string(id) + " outside the vocabulary [0, " +
                        std::to_string(c_.vocab) + "]");
    for (int32_t s : x->segments)
      if (s != 0 && s != 1) throw DataError("a segment id other than 0 or 1");
    n = std::max(n, len);
  }
  std::vector<int32_t> tok(static_cast<size_t>(B * n), data::Vocab::kPad),
      seg(static_cast<size_t>(B * n), 0), pos(static_cast<size_t>(B * n));
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < B; ++b) {
    const BertExample& x = *xs[static_cast<size_t>(b)];
    lengths.push_back(static_cast<int64_t>(x.tokens.size()));
    for (int64_t i = 0; i < n; ++i) pos[static_cast<size_t>(b * n + i)] = static_cast<int32_t>(i);
    std::copy(x.tokens.begin(), x.tokens.end(), tok.begin() + b * n);
    std::copy(x.segments.begin(), x.segments.end(), seg.begin() + b * n);
  }
  Var e = token_(t, tok, {B, n}) + segment_(t, seg, {B, n}) + position_(t, pos, {B, n});
  Var h = ad::dropout(embed_norm_(t, e), c_.dropout);
  const Tensor mask = nn::padding_mask(lengths, n, n);
  for (const auto& layer : layers_) h = layer(t, h, &mask);
  return h;
}

Var Bert::mlm_logits(ad::Tape& t, Var encoded, const std::vector<int32_t>& rows) const {
  const int64_t d = c_.hidden;
  Var flat = ad::reshape(encoded, {encoded.size() / d, d});
  Var h = ad::embedding(flat, rows);
  h = mlm_norm_(t, ad::gelu(mlm_dense_(t, h)));
  return ad::linear(h, t.param(*token_.table), t.param(*mlm_bias_));
}

Var Bert::nsp_logits(ad::Tape& t, Var encoded) const {
  const int64_t B = encoded.dim(0), n = encoded.dim(1), d = c_.hidden;
  std::vector<int32_t> cls;
  for (int64_t b = 0; b < B; ++b) cls.push_back(static_cast<int32_t>(b * n));
  Var x = ad::embedding(ad::reshape(encoded, {B * n, d}), cls);
  return nsp_out_(t, ad::tanh(pooler_(t, x)));
}

BertLosses Bert::losses(ad::Tape& t, const std::vector<const BertExample*>& xs) const {
  BertLosses r;
  Var enc = encode(t, xs);
  const int64_t n = enc.dim(1);
  std::vector<int32_t> rows, labels, nsp_targets;
  for (size_t b = 0; b < xs.size(); ++b) {
    const BertExample& x = *xs[b];
    if (x.positions.size() != x.labels.size())
      throw DataError("an example's masked positions and labels differ in number");
    for (size_t k = 0; k < x.positions.size(); ++k) {
      const int32_t p = x.positions[k];
      if (p < 0 || p >= static_cast<int32_t>(x.tokens.size()))
        throw DataError("a masked position outside its input");
      rows.push_back(static_cast<int32_t>(static_cast<int64_t>(b) * n + p));
      labels.push_back(x.labels[k]);
    }
    nsp_targets.push_back(x.is_next);
    if (x.is_next >= 0) ++r.pairs;
  }
  r.masked = static_cast<int64_t>(rows.size());
  const int64_t V1 = c_.vocab + 1;
  if (r.masked > 0) {
    Var logits = mlm_logits(t, enc, rows);
    r.mlm = ad::mul(nn::cross_entropy(logits, labels), static_cast<float>(r.masked));
    const float* lv = logits.value().data();
    for (int64_t i = 0; i < r.masked; ++i) {
      const int32_t y = argmax_row(lv + i * V1, V1);
      r.mlm_predicted.push_back(y);
      r.mlm_correct += y == labels[static_cast<size_t>(i)];
    }
  }
  if (r.pairs > 0) {
    Var logits = nsp_logits(t, enc);
    r.nsp = ad::mul(nn::cross_entropy(logits, nsp_targets), static_cast<float>(r.pairs));
    const float* lv = logits.value().data();
    for (size_t b = 0; b < xs.size(); ++b)
      if (nsp_targets[b] >= 0)
        r.nsp_correct += argmax_row(lv + static_cast<int64_t>(b) * 2, 2) == nsp_targets[b];
  }
  return r;
}

// ---- data

int64_t BertCorpus::sentences() const {
  int64_t s = 0;
  for (const auto& d : docs) s += static_cast<int64_t>(d.size());
  return s;
}

std::vector<std::vector<std::vector<std::string>>> read_bert_text(const std::string& path) {
  const std::string text = io::read_text(path);
  std::vector<std::vector<std::vector<std::string>>> docs(1);
  for (std::string_view line : data::split_lines(text, path)) {
    auto toks = data::tokenize_words(line);
    if (toks.empty()) {
      if (!docs.back().empty()) docs.emplace_back();
      continue;
    }
    docs.back().push_back(std::move(toks));
  }
  if (docs.back().empty()) docs.pop_back();
  if (docs.empty()) throw DataError("no sentence in the text", path);
  return docs;
}

data::Vocab bert_vocab(const std::vector<std::vector<std::vector<std::string>>>& docs,
                       int64_t min_freq, int64_t max_size) {
  if (min_freq < 1) throw UsageError("min-freq must be >= 1");
  if (max_size != 0 && max_size <= data::Vocab::kReserved)
    throw UsageError("--max-size must be 0 or at least 5 (the reserved four and a word)");
  data::TokenCounts counts;
  for (const auto& d : docs)
    for (const auto& s : d) data::count_tokens(counts, s);
  return data::Vocab::build(counts, min_freq, max_size);
}

BertCorpus encode_bert_text(const std::vector<std::vector<std::vector<std::string>>>& docs,
                            const data::Vocab& vocab) {
  BertCorpus c;
  for (const auto& d : docs) {
    c.docs.emplace_back();
    for (const auto& s : d) c.docs.back().push_back(vocab.encode(s));
  }
  return c;
}

void MaskStats::add(const MaskStats& o) {
  candidates += o.candidates, chosen += o.chosen, as_mask += o.as_mask;
  as_random += o.as_random, as_kept += o.as_kept;
}

void bert_mask(BertExample& x, int64_t vocab, Rng& rng, MaskStats* stats) {
  std::vector<int32_t> cand;
  for (size_t i = 0; i < x.tokens.size(); ++i) {
    const int32_t id = x.tokens[i];
    if (id != kBertCls && id != kBertSep && id != data::Vocab::kPad)
      cand.push_back(static_cast<int32_t>(i));
  }
  const double want = 0.15 * static_cast<double>(cand.size());
  int64_t k = static_cast<int64_t>(std::floor(want));
  if (rng.uniform_double() < want - static_cast<double>(k)) ++k;
  // The first k of a partial Fisher–Yates shuffle.
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng.below(cand.size() - static_cast<size_t>(i)));
    std::swap(cand[static_cast<size_t>(i)], cand[static_cast<size_t>(j)]);
  }
  cand.resize(static_cast<size_t>(k));
  std::sort(cand.begin(), cand.end());
  MaskStats s;
  s.candidates = static_cast<int64_t>(x.tokens.size()) -
                 std::count_if(x.tokens.begin(), x.tokens.end(), [](int32_t id) {
                   return id == kBertCls || id == kBertSep || id == data::Vocab::kPad;
                 });
  s.chosen = k;
  x.positions.clear(), x.labels.clear();
  const int64_t ordinary = vocab - data::Vocab::kReserved;
  for (int32_t p : cand) {
    int32_t& tok = x.tokens[static_cast<size_t>(p)];
    x.positions.push_back(p);
    x.labels.push_back(tok);
    const double u = rng.uniform_double();
    if (u < 0.8) {
      tok = static_cast<int32_t>(vocab), ++s.as_mask;
    } else if (u < 0.9) {
      tok = static_cast<int32_t>(data::Vocab::kReserved +
                                 static_cast<int64_t>(rng.below(static_cast<uint64_t>(ordinary))));
      ++s.as_random;
    } else {
      ++s.as_kept;
    }
  }
  if (stats) stats->add(s);
}

BertPairs::BertPairs(const BertCorpus& c, int64_t vocab, int64_t max_len)
    : c_(&c), vocab_(vocab), max_len_(max_len) {
  if (c.docs.size() < 2)
    throw DataError(
        "next-sentence prediction needs at least two documents (blank lines "
        "between them); found " +
        std::to_string(c.docs.size()));
  for (size_t d = 0; d < c.docs.size(); ++d)
    for (size_t s = 0; s + 1 < c.docs[d].size(); ++s)
      items_.emplace_back(static_cast<int32_t>(d), static_cast<int32_t>(s));
  if (items_.empty())
    throw DataError("no document has two sentences (one a line), so there is no sentence pair");
}

namespace {
uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

BertExample BertPairs::make(int64_t i, uint64_t seed, int64_t epoch, MaskStats* stats) const {
  Rng rng(
      splitmix(splitmix(splitmix(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(i)));
  const auto [d, s] = items_[static_cast<size_t>(i)];
  const auto& docs = c_->docs;
  std::vector<int32_t> a = docs[static_cast<size_t>(d)][static_cast<size_t>(s)], b;
  BertExample x;
  x.is_next = rng.below(2) == 0 ? 1 : 0;
  if (x.is_next) {
    b = docs[static_cast<size_t>(d)][static_cast<size_t>(s) + 1];
  } else {
    size_t d2 = static_cast<size_t>(rng.below(docs.size() - 1));
    if (d2 >= static_cast<size_t>(d)) ++d2;
    b = docs[d2][static_cast<size_t>(rng.below(docs[d2].size()))];
  }
  while (static_cast<int64_t>(a.size() + b.size()) > max_len_ - 3) {
    if (a.size() >= b.size())
      a.pop_back();
    else
      b.pop_back();
  }
  x.tokens.push_back(kBertCls);
  x.tokens.insert(x.tokens.end(), a.begin(), a.end());
  x.tokens.push_back(kBertSep);
  x.segments.assign(x.tokens.size(), 0);
  x.tokens.insert(x.tokens.end(), b.begin(), b.end());
  x.tokens.push_back(kBertSep);
  x.segments.resize(x.tokens.size(), 1);
  bert_mask(x, vocab_, rng, stats);
  return x;
}

// ---- training

void BertTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  nn::check_schedule_name(schedule);
  if (warmup < 0) throw UsageError("warmup must be >= 0");
  if (min_freq < 1) throw UsageError("--min-freq must be >= 1");
  if (max_size != 0 && max_size <= data::Vocab::kReserved)
    throw UsageError("--max-size must be 0 or at least 5 (the reserved four and a word)");
}

namespace {
constexpr uint64_t kValidSeed = 1;  // validation pairs and masks: the same for every run
}

BertTraining::BertTraining(BertConfig config, BertTrainOptions o, data::Vocab vocab,
                           BertCorpus train, BertCorpus valid, int64_t steps_or_0, int64_t epochs,
                           uint64_t seed, std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      cfg_(std::move(config)),
      o_(o),
      vocab_(std::move(vocab)),
      train_(std::move(train)),
      valid_(std::move(valid)) {
  cfg_.vocab = vocab_.size();
  cfg_.validate();
  o_.validate();
  pairs_ = std::make_unique<BertPairs>(train_, cfg_.vocab, cfg_.max_len);
  if (!valid_.docs.empty()) {
    BertPairs vp(valid_, cfg_.vocab, cfg_.max_len);
    for (int64_t i = 0; i < vp.size(); ++i) valid_examples_.push_back(vp.make(i, kValidSeed, 0));
  }
  set_run(pairs_->size(), steps_or_0, epochs);
  Rng init(seed);
  model_ = std::make_unique<Bert>(ps_, cfg_, init);
  use_adam(o_.lr, o_.schedule, o_.warmup);
}

void BertTraining::describe(nn::ModelFile& f) const {
  DatasetModule::describe(f);
  f.texts["vocab"] = vocab_.format();
}

void BertTraining::check_resume(const nn::ModelFile& ck) const {
  if (!ck.texts.count("vocab") || ck.texts.at("vocab") != vocab_.format())
    throw DataError("the checkpoint was trained on other text or settings (vocabularies differ)",
                    ck.file);
}

void BertTraining::save_state(nn::ModelFile& f) const {
  f.numbers["bert/candidates"] = static_cast<double>(stats_.candidates);
  f.numbers["bert/chosen"] = static_cast<double>(stats_.chosen);
  f.numbers["bert/as_mask"] = static_cast<double>(stats_.as_mask);
  f.numbers["bert/as_random"] = static_cast<double>(stats_.as_random);
  f.numbers["bert/as_kept"] = static_cast<double>(stats_.as_kept);
}

void BertTraining::load_state(const nn::ModelFile& f) {
  stats_.candidates = f.integer("bert/candidates");
  stats_.chosen = f.integer("bert/chosen");
  stats_.as_mask = f.integer("bert/as_mask");
  stats_.as_random = f.integer("bert/as_random");
  stats_.as_kept = f.integer("bert/as_kept");
}

std::vector<std::string> BertTraining::slice_sums() const {
  return {"mlm_sum", "nsp_sum", "mlm_correct", "nsp_correct", "masked", "pairs"};
}

void BertTraining::on_batch(const nn::TrainState& s) {
  std::vector<BertExample> xs;
  batch_stats_ = MaskStats();
  for (const int64_t i : batch()) xs.push_back(pairs_->make(i, seed_, s.epoch, &batch_stats_));
  set_batch(std::move(xs));
}

void BertTraining::set_batch(std::vector<BertExample> xs) {
  examples_ = std::move(xs);
  batch_masked_ = 0, batch_pairs_ = 0;
  for (const BertExample& x : examples_) {
    batch_masked_ += static_cast<int64_t>(x.positions.size());
    batch_pairs_ += x.is_next >= 0;
  }
}

train::Slice BertTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  std::vector<const BertExample*> xs;
  for (int64_t i = begin; i < end; ++i) xs.push_back(&examples_[static_cast<size_t>(i)]);
  BertLosses l = model_->losses(t, xs);
  Var loss = t.constant(Tensor({}, 0.0f));
  train::Slice s;
  double mlm = 0, nsp = 0;
  if (l.mlm.valid()) {
    loss = loss + ad::mul(l.mlm, 1.0f / static_cast<float>(batch_masked_));
    mlm = l.mlm.value()[0];
  }
  if (l.nsp.valid()) {
    loss = loss + ad::mul(l.nsp, 1.0f / static_cast<float>(batch_pairs_));
    nsp = l.nsp.value()[0];
  }
  s.loss = loss;
  s.sums = {mlm,
            nsp,
            static_cast<double>(l.mlm_correct),
            static_cast<double>(l.nsp_correct),
            static_cast<double>(l.masked),
            static_cast<double>(l.pairs)};
  return s;
}

train::StepEnd BertTraining::end_step(const nn::TrainState&, double, const train::Metrics& sums) {
  stats_.add(batch_stats_);
  batch_stats_ = MaskStats();
  train::StepEnd e;
  auto v = [&](size_t i) { return i < sums.size() ? sums[i].second : 0.0; };
  const double masked = std::max(v(4), 1.0), pairs = std::max(v(5), 1.0);
  e.metrics = {{"mlm_loss", v(0) / masked},
               {"nsp_loss", v(1) / pairs},
               {"mlm_acc", v(2) / masked},
               {"nsp_acc", v(3) / pairs}};
  return e;
}

std::vector<std::string> BertTraining::step_metrics() const {
  return {"mlm_loss", "nsp_loss", "mlm_acc", "nsp_acc"};
}

std::vector<std::string> BertTraining::eval_metrics() const {
  std::vector<std::string> m = {"mask_share", "mask_as_mask", "mask_as_random", "mask_as_kept"};
  if (!valid_examples_.empty())
    for (const char* k :
         {"valid_mlm_loss", "valid_nsp_loss", "valid_mlm_acc", "valid_nsp_acc", "valid_majority"})
      m.push_back(k);
  return m;
}

BertScore evaluate_bert(const Bert& m, const std::vector<BertExample>& xs) {
  BertScore s;
  double mlm = 0, nsp = 0, mc = 0, nc = 0;
  constexpr size_t kGroup = 64;
  for (size_t lo = 0; lo < xs.size(); lo += kGroup) {
    ad::Tape& t = eval_tape();
    std::vector<const BertExample*> grp;
    for (size_t i = lo; i < std::min(xs.size(), lo + kGroup); ++i) grp.push_back(&xs[i]);
    BertLosses l = m.losses(t, grp);
    if (l.mlm.valid()) mlm += l.mlm.value()[0];
    if (l.nsp.valid()) nsp += l.nsp.value()[0];
    mc += static_cast<double>(l.mlm_correct), nc += static_cast<double>(l.nsp_correct);
    s.masked += l.masked, s.pairs += l.pairs;
  }
  const double M = static_cast<double>(std::max<int64_t>(s.masked, 1)),
               P = static_cast<double>(std::max<int64_t>(s.pairs, 1));
  s.mlm_loss = mlm / M, s.nsp_loss = nsp / P, s.mlm_acc = mc / M, s.nsp_acc = nc / P;
  return s;
}

train::Metrics BertTraining::evaluate() {
  const double c = static_cast<double>(std::max<int64_t>(stats_.candidates, 1)),
               k = static_cast<double>(std::max<int64_t>(stats_.chosen, 1));
  train::Metrics m = {{"mask_share", static_cast<double>(stats_.chosen) / c},
                      {"mask_as_mask", static_cast<double>(stats_.as_mask) / k},
                      {"mask_as_random", static_cast<double>(stats_.as_random) / k},
                      {"mask_as_kept", static_cast<double>(stats_.as_kept) / k}};
  if (!valid_examples_.empty()) {
    const BertScore s = evaluate_bert(*model_, valid_examples_);
    int64_t majority = 0;
    for (const BertExample& x : valid_examples_)
      for (int32_t y : x.labels) majority += y == data::Vocab::kReserved;
    m.push_back({"valid_mlm_loss", s.mlm_loss});
    m.push_back({"valid_nsp_loss", s.nsp_loss});
    m.push_back({"valid_mlm_acc", s.mlm_acc});
    m.push_back({"valid_nsp_acc", s.nsp_acc});
    m.push_back({"valid_majority", static_cast<double>(majority) /
                                       static_cast<double>(std::max<int64_t>(s.masked, 1))});
    return evaluated(std::move(m), s.mlm_loss + s.nsp_loss);
  }
  return evaluated(std::move(m), 0.0);
}

// ---- using a trained model

LoadedBert load_bert(const std::string& path) {
  LoadedBert m;
  m.file = nn::load_model_file(path, "bert");
  train::in_file(path, [&] {
    m.vocab = data::Vocab::parse(m.file.text("vocab"), path);
    m.config.vocab = m.vocab.size();
    train::read_config(m.file, m.config);
    io::check_stored([&] { m.config.validate(); }, path);
    m.model = train::build<Bert>(m.file, m.params, m.config);
  });
  return m;
}

BertExample bert_sentence(const data::Vocab& vocab, int64_t max_len,
                          const std::vector<std::string>& tokens) {
  BertExample x;
  x.tokens.push_back(kBertCls);
  for (const std::string& w : tokens)
    x.tokens.push_back(w == "[mask]" ? vocab.size() : vocab.id(w));
  x.tokens.push_back(kBertSep);
  if (static_cast<int64_t>(x.tokens.size()) > max_len)
    throw DataError(std::to_string(tokens.size()) + " tokens: longer than the model's " +
                    std::to_string(max_len - 2) + " (max-len less [CLS] and [SEP])");
  x.segments.assign(x.tokens.size(), 0);
  return x;
}

std::vector<BertFill> bert_fill(const Bert& m, const BertExample& x, int k) {
  if (k < 1) throw UsageError("top-k must be >= 1");
  const int32_t mask = static_cast<int32_t>(m.config().vocab);
  std::vector<int32_t> rows;
  for (size_t i = 0; i < x.tokens.size(); ++i)
    if (x.tokens[i] == mask) rows.push_back(static_cast<int32_t>(i));
  std::vector<BertFill> out;
  if (rows.empty()) return out;
  ad::Tape& t = eval_tape();
  Var enc = m.encode(t, {&x});
  const Tensor& lg = m.mlm_logits(t, enc, rows).value();
  const int64_t V1 = m.config().vocab + 1;
  for (size_t r = 0; r < rows.size(); ++r) {
    const float* row = lg.data() + static_cast<int64_t>(r) * V1;
    double mx = row[0];
    for (int64_t j = 1; j < V1; ++j) mx = std::max(mx, static_cast<double>(row[j]));
    double z = 0;
    for (int64_t j = 0; j < V1; ++j) z += std::exp(static_cast<double>(row[j]) - mx);
    std::vector<std::pair<int32_t, double>> all;
    for (int64_t j = data::Vocab::kReserved; j < V1 - 1; ++j)
      all.emplace_back(static_cast<int32_t>(j), std::exp(static_cast<double>(row[j]) - mx) / z);
    const size_t kk = std::min(all.size(), static_cast<size_t>(k));
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kk), all.end(),
                      [](const auto& a, const auto& b) {
                        return a.second > b.second || (a.second == b.second && a.first < b.first);
                      });
    all.resize(kk);
    out.push_back({rows[r] - 1, std::move(all)});
  }
  return out;
}

std::vector<Tensor> bert_embed(const Bert& m, const std::vector<BertExample>& xs) {
  std::vector<Tensor> out;
  const int64_t d = m.config().hidden;
  constexpr size_t kGroup = 64;
  for (size_t lo = 0; lo < xs.size(); lo += kGroup) {
    ad::Tape& t = eval_tape();
    std::vector<const BertExample*> grp;
    for (size_t i = lo; i < std::min(xs.size(), lo + kGroup); ++i) grp.push_back(&xs[i]);
    const Tensor& e = m.encode(t, grp).value();
    const int64_t n = e.dim(1);
    for (size_t b = 0; b < grp.size(); ++b) {
      const int64_t len = static_cast<int64_t>(grp[b]->tokens.size());
      Tensor y({len, d});
      std::copy(e.data() + static_cast<int64_t>(b) * n * d,
                e.data() + (static_cast<int64_t>(b) * n + len) * d, y.data());
      out.push_back(std::move(y));
    }
  }
  return out;
}

}  // namespace attnkit::models
