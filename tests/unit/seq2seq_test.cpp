// lib/attnkit/models/seq2seq: gradient checks of tiny models of every kind, incremental
// decoding against the teacher-forced loss, beam search, settings round trip, parameter
// counts, and small models that learn to reverse sequences.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/data/batch.h"
#include "attnkit/data/vocab.h"
#include "attnkit/io/config.h"
#include "attnkit/models/seq2seq/file.h"
#include "attnkit/models/seq2seq/model.h"
#include "attnkit/models/seq2seq/train.h"
#include "attnkit/nn/optim.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_seq2seq_test {

using namespace attnkit;
using models::AttentionKind;
using models::ModelType;
using models::Seq2Seq;
using models::Seq2SeqConfig;

namespace {

// Random pairs over symbols 4..V-1 (ids 0-3 are reserved): source then <eos>; target
// <bos> ... <eos>.
std::vector<data::EncodedPair> random_pairs(int n, int32_t V, uint64_t seed, bool reverse) {
  Rng rng(seed);
  std::vector<data::EncodedPair> out;
  for (int i = 0; i < n; ++i) {
    const int len = 2 + static_cast<int>(rng.below(4));
    data::EncodedPair p;
    std::vector<int32_t> x;
    for (int j = 0; j < len; ++j)
      x.push_back(4 + static_cast<int32_t>(rng.below(static_cast<uint64_t>(V - 4))));
    p.source = x;
    p.source.push_back(data::Vocab::kEos);
    p.target.push_back(data::Vocab::kBos);
    if (reverse)
      std::reverse(x.begin(), x.end());
    else
      x.resize(
          static_cast<size_t>(1 + rng.below(static_cast<uint64_t>(len + 1))));  // unrelated lengths
    p.target.insert(p.target.end(), x.begin(), x.end());
    p.target.push_back(data::Vocab::kEos);
    out.push_back(p);
  }
  return out;
}

Seq2SeqConfig tiny(ModelType type) {
  Seq2SeqConfig c;
  c.type = type;
  c.src_vocab = c.tgt_vocab = 9;
  c.embed = 4;
  c.hidden = 5;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 6;
  return c;
}

// A net's architecture as put_seq2seq stores it (in an empty configuration).
std::string net_yaml(const Seq2SeqConfig& c) {
  return models::seq2seq_config_yaml("", c, data::Tokenization::Words);
}

void grads_ok(const std::string& what, Seq2Seq& m, const data::Batch& b, float tf = 1.0f) {
  ad::GradCheckOptions o;
  o.max_per_tensor = 12;
  const ad::GradCheckResult r = ad::check_gradients(
      [&](ad::Tape& t) { return m.loss(t, b, 0.1f, tf); }, m.params().params(), o);
  INFO(what << ": worst " << r.worst << " at " << r.where << " (" << r.checked << " checked)");
  CHECK(r.checked > 0);
  CHECK(r.ok);
}

// -log P(y | x) from the teacher-forced loss: mean cross-entropy times the target tokens.
double forced_nll(const Seq2Seq& m, const std::vector<int32_t>& src,
                  const std::vector<int32_t>& out) {
  std::vector<data::EncodedPair> d(1);
  d[0].source = src;
  d[0].target.push_back(data::Vocab::kBos);
  d[0].target.insert(d[0].target.end(), out.begin(), out.end());
  data::Batch b = data::make_batch(d, {0});
  ad::Tape t(0);
  t.set_training(false);
  int64_t n = 0;
  ad::Var l = m.loss(t, b, 0.0f, 1.0f, &n);
  return static_cast<double>(l.value()[0]) * static_cast<double>(n);
}

// Padding never reaches an item: the padded batch b's loss, summed over its tokens, is the
// sum of its items' losses alone.
void padding_unread(const Seq2Seq& m, const data::Batch& b,
                    const std::vector<data::EncodedPair>& pairs) {
  ad::Tape t(0);
  t.set_training(false);
  int64_t tokens = 0;
  const double batch_nll = static_cast<double>(m.loss(t, b, 0.0f, 1.0f, &tokens).value()[0]) *
                           static_cast<double>(tokens);
  double alone = 0.0;
  for (const auto& p : pairs)
    alone += forced_nll(m, p.source, std::vector<int32_t>(p.target.begin() + 1, p.target.end()));
  CHECK(batch_nll == doctest::Approx(alone).epsilon(1e-5));
}

// Greedy decoding of source (at most 6 tokens), checked to agree with the teacher-forced loss
// and to give one alignment row a token over the source.
models::Translation decoded(const Seq2Seq& m, const std::vector<int32_t>& source) {
  models::DecodeOptions o;
  o.max_length = 6;
  models::Translation g = m.translate(source, o);
  CHECK(-g.log_prob == doctest::Approx(forced_nll(m, source, g.tokens)).epsilon(1e-4));
  REQUIRE(g.attention.shape() ==
          Shape{static_cast<int64_t>(g.tokens.size()), static_cast<int64_t>(source.size())});
  return g;
}

}  // namespace

TEST_CASE(
    "seq2seq: gradient checks of tiny RNN models (every attention, GRU/LSTM, bi-directional, 2 "
    "layers)") {
  const auto pairs = random_pairs(3, 9, 1, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2});  // padded sources and targets
  REQUIRE(*std::min_element(b.source_len.begin(), b.source_len.end()) < b.source.cols);
  for (AttentionKind a : {AttentionKind::None, AttentionKind::Bahdanau, AttentionKind::LuongDot,
                          AttentionKind::LuongGeneral, AttentionKind::LuongConcat}) {
    for (nn::CellKind cell : {nn::CellKind::GRU, nn::CellKind::LSTM}) {
      Seq2SeqConfig c = tiny(ModelType::RNN);
      c.attention = a;
      c.cell = cell;
      c.bidirectional = cell == nn::CellKind::LSTM;
      c.layers = a == AttentionKind::Bahdanau ? 2 : 1;
      auto m = Seq2Seq::create(c, 3);
      grads_ok(std::string(models::attention_name(a)) + " " + models::cell_name(cell), *m, b);
    }
  }
  // Scheduled sampling (teacher forcing 0.5) and no input feeding.
  Seq2SeqConfig c = tiny(ModelType::RNN);
  c.attention = AttentionKind::LuongGeneral;
  c.input_feeding = false;
  auto m = Seq2Seq::create(c, 4);
  grads_ok("luong-general, no feeding, teacher forcing 0.5", *m, b, 0.5f);
}

TEST_CASE(
    "seq2seq: gradient checks of tiny Transformers (separate and shared embeddings, 2 layers)") {
  const auto pairs = random_pairs(3, 9, 2, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2});
  for (bool shared : {false, true}) {
    Seq2SeqConfig c = tiny(ModelType::Transformer);
    c.shared_embeddings = shared;
    c.layers = 2;
    auto m = Seq2Seq::create(c, 5);
    CHECK(m->params().contains(shared ? "embedding.table" : "tgt_embedding.table"));
    grads_ok(shared ? "transformer, shared" : "transformer, separate", *m, b);
  }
}

TEST_CASE("seq2seq: decoding step by step agrees with the teacher-forced loss; beams; alignments") {
  const auto pairs = random_pairs(4, 9, 6, false);
  for (ModelType type : {ModelType::RNN, ModelType::Transformer}) {
    for (AttentionKind a :
         {AttentionKind::Bahdanau, AttentionKind::LuongConcat, AttentionKind::None}) {
      if (type == ModelType::Transformer && a != AttentionKind::Bahdanau) continue;
      Seq2SeqConfig c = tiny(type);
      c.attention = a;
      c.layers = 2;
      c.bidirectional = true;
      auto m = Seq2Seq::create(c, 7);
      for (const auto& p : pairs) {
        models::DecodeOptions o;
        o.max_length = 8;
        const models::Translation g = m->translate(p.source, o);
        REQUIRE(!g.tokens.empty());
        CHECK(g.tokens.size() <= 8);
        CHECK(g.log_prob < 0.0);
        // The incremental decoder's probability of its output equals the batch forward's.
        CHECK(-g.log_prob == doctest::Approx(forced_nll(*m, p.source, g.tokens)).epsilon(1e-4));
        // One attention row per emitted token over the source, each a distribution.
        REQUIRE(g.attention.shape() == Shape{static_cast<int64_t>(g.tokens.size()),
                                             static_cast<int64_t>(p.source.size())});
        for (int64_t i = 0; i < g.attention.dim(0); ++i) {
          double s = 0;
          for (int64_t j = 0; j < g.attention.dim(1); ++j) s += g.attention.at(i, j);
          CHECK(s == doctest::Approx(a == AttentionKind::None ? 0.0 : 1.0).epsilon(1e-5));
        }
        // A beam of 1 is greedy; a beam of 4 scores its pick consistently too.
        o.beam = 1;
        CHECK(m->translate(p.source, o).tokens == g.tokens);
        o.beam = 4;
        const models::Translation bm = m->translate(p.source, o);
        CHECK(-bm.log_prob == doctest::Approx(forced_nll(*m, p.source, bm.tokens)).epsilon(1e-4));
        // A long-sentence preference: α = 2 never picks a shorter output than α = 0.
        o.length_penalty = 2.0;
        const models::Translation lp = m->translate(p.source, o);
        if (bm.tokens.back() == data::Vocab::kEos && lp.tokens.back() == data::Vocab::kEos)
          CHECK(lp.tokens.size() >= bm.tokens.size());
        CHECK(lp.score ==
              doctest::Approx(lp.log_prob / std::pow((5.0 + lp.tokens.size()) / 6.0, 2.0)));
      }
    }
  }
}

TEST_CASE("seq2seq model file: the architecture under seq2seq-train's option names") {
  data::TokenCounts counts;
  data::count_tokens(counts, {"a", "b", "c", "d", "e"});
  const data::Vocab v = data::Vocab::build(counts);  // 9 tokens: the tiny models' size
  for (ModelType type : {ModelType::RNN, ModelType::Transformer}) {
    Seq2SeqConfig c = tiny(type);
    c.src_vocab = c.tgt_vocab = v.size();
    c.layers = 2;
    c.input_feeding = false;
    c.dropout = 0.25f;
    auto model = Seq2Seq::create(c, 3);
    nn::ModelFile m;
    m.kind = "seq2seq";
    m.config_yaml = "lr: 0.001\nhidden: 5\n";  // what seq2seq-train's options put there
    models::put_seq2seq(m, c, v, v, data::Tokenization::Chars);
    nn::put_params(m, model->params());
    CHECK(m.strings.count("seq2seq.model") == 0);
    const io::StoredConfig y(m.config_yaml, "model");
    CHECK(y.get<double>("lr") == 0.001);  // the other options stay
    CHECK(y.get<std::string>("tokens") == "chars");
    CHECK(y.get<int>("layers") == 2);
    CHECK(y.get<std::string>("type") == (type == ModelType::RNN ? "rnn" : "transformer"));
    if (type == ModelType::RNN) CHECK(y.get<bool>("no-input-feeding"));
    if (type == ModelType::Transformer) CHECK(y.get<int>("d-model") == 8);
    const models::LoadedSeq2Seq b = models::get_seq2seq(m);
    CHECK(net_yaml(b.model->config()) == net_yaml(c));
    CHECK(b.model->config().src_vocab == c.src_vocab);
    CHECK(b.source_tok == data::Tokenization::Chars);
    CHECK(b.target_tok == data::Tokenization::Chars);
    // A stored value that is not valid is the file's fault.
    const std::string key = type == ModelType::RNN ? "attention: bahdanau" : "heads: 2";
    REQUIRE(m.config_yaml.find(key) != std::string::npos);
    m.config_yaml.replace(m.config_yaml.find(key), key.size(),
                          type == ModelType::RNN ? "attention: cosine" : "heads: 3");
    CHECK_THROWS_AS(models::get_seq2seq(m), DataError);
  }
  // Files written before: the architecture as "key=value" lines with '_' keys.
  Seq2SeqConfig c = tiny(ModelType::RNN);
  c.input_feeding = false;
  auto model = Seq2Seq::create(c, 3);
  nn::ModelFile old;
  old.kind = "seq2seq";
  old.config_yaml = "lr: 0.001\n";
  old.strings["seq2seq.model"] = {"type=rnn",
                                  "src_vocab=9",
                                  "tgt_vocab=9",
                                  "dropout=0",
                                  "layers=1",
                                  "cell=lstm",
                                  "embed=4",
                                  "hidden=5",
                                  "bidirectional=false",
                                  "attention=bahdanau",
                                  "input_feeding=false"};
  old.strings["seq2seq.tokens"] = {"words", "words"};
  old.texts["vocab.source"] = old.texts["vocab.target"] = v.format();
  nn::put_params(old, model->params());
  const models::LoadedSeq2Seq b = models::get_seq2seq(old);
  Seq2SeqConfig want = c;  // an RNN's old file holds no Transformer sizes: the defaults
  want.heads = Seq2SeqConfig().heads, want.d_ff = Seq2SeqConfig().d_ff;
  CHECK(net_yaml(b.model->config()) == net_yaml(want));
  CHECK(b.model->config().src_vocab == 9);
  CHECK_FALSE(b.model->config().input_feeding);
  old.strings["seq2seq.model"][1] = "src_vocab=10";
  CHECK_THROWS_WITH_AS(models::get_seq2seq(old), doctest::Contains("vocabularies do not match"),
                       DataError);
}

TEST_CASE("seq2seq: the stored configuration keeps the run's keys and text, the net's values") {
  // What seq2seq-train's options put there (a Transformer's width under --hidden, the dropout
  // as given): the keys keep their places and texts, the dropout becomes the net's float
  // (9 digits, as files have always held it), the keys the run lacks follow, then d-model.
  Seq2SeqConfig c = tiny(ModelType::Transformer);
  c.dropout = 0.1f;
  const std::string run =
      "batch-size: 80\ntokens: chars\nvalid-fraction: 0.1234567891\ntype: transformer\n"
      "hidden: 8\nheads: 2\nd-ff: 6\ndropout: 0.1\n";
  const std::string y = models::seq2seq_config_yaml(run, c, data::Tokenization::Chars);
  CHECK(y.rfind("batch-size: 80\ntokens: chars\nvalid-fraction: 0.1234567891\ntype: transformer\n"
                "hidden: 8\nheads: 2\nd-ff: 6\ndropout: 0.100000001\n",
                0) == 0);
  CHECK(y.size() > 11);
  CHECK(y.substr(y.size() - 11) == "d-model: 8\n");
  CHECK(y.find("layers: 1\n") != std::string::npos);
  // Written twice, the same text.
  CHECK(models::seq2seq_config_yaml(y, c, data::Tokenization::Chars) == y);
}

TEST_CASE("seq2seq: settings round trip, validation, parameter counts") {
  Seq2SeqConfig c = tiny(ModelType::RNN);
  c.cell = nn::CellKind::GRU;
  c.attention = AttentionKind::LuongGeneral;
  c.bidirectional = true;
  c.layers = 3;
  c.dropout = 0.25f;
  c.input_feeding = false;
  // Through a model file: stored by put_seq2seq, read back through seq2seq-train's field list.
  data::TokenCounts counts;
  data::count_tokens(counts, {"a", "b", "c", "d", "e"});
  const data::Vocab v = data::Vocab::build(counts);  // 9 tokens: the tiny models' size
  const auto model = Seq2Seq::create(c, 3);
  nn::ModelFile m;
  m.kind = "seq2seq";
  m.file = "m.akm";
  models::put_seq2seq(m, c, v, v, data::Tokenization::Words);
  nn::put_params(m, model->params());
  const Seq2SeqConfig r = models::get_seq2seq(m).model->config();
  CHECK(net_yaml(r) == net_yaml(c));
  CHECK(r.cell == nn::CellKind::GRU);
  CHECK(r.attention == AttentionKind::LuongGeneral);
  CHECK(r.dropout == 0.25f);
  const std::string yaml = m.config_yaml;
  auto edited = [&](const std::string& from, const std::string& to) -> const nn::ModelFile& {
    m.config_yaml = yaml;
    REQUIRE(m.config_yaml.find(from) != std::string::npos);
    m.config_yaml.replace(m.config_yaml.find(from), from.size(), to);
    return m;
  };
  CHECK_THROWS_WITH_AS(models::get_seq2seq(edited("hidden: 5", "hidden: 12x")),
                       doctest::Contains("'hidden'"), DataError);
  CHECK_THROWS_WITH_AS(models::get_seq2seq(edited("attention: luong-general", "attention: cosine")),
                       doctest::Contains("cosine"), DataError);
  CHECK_THROWS_WITH_AS(models::get_seq2seq(edited("type: rnn", "kind: rnn")),
                       doctest::Contains("'type'"), DataError);
  Seq2SeqConfig t = tiny(ModelType::Transformer);
  t.heads = 3;
  CHECK_THROWS_WITH_AS(Seq2Seq::create(t, 1),
                       doctest::Contains("heads (3) must divide the width (hidden"), UsageError);
  t.heads = 2;
  t.shared_embeddings = true;
  t.tgt_vocab = 10;
  CHECK_THROWS_AS(Seq2Seq::create(t, 1), UsageError);

  // An LSTM layer with n inputs and m units: 4m(n + m + 1) (one summed bias).
  for (int64_t n : {3, 16}) {
    for (int64_t m : {5, 32}) {
      Seq2SeqConfig l = tiny(ModelType::RNN);
      l.embed = n;
      l.hidden = m;
      l.layers = 2;
      l.attention = AttentionKind::None;
      auto model = Seq2Seq::create(l, 1);
      const auto& p = model->params();
      CHECK(p.count("encoder.l0") == 4 * m * (n + m + 1));
      CHECK(p.count("encoder.l1") == 4 * m * (m + m + 1));
      CHECK(p.count("decoder.l0") == 4 * m * (n + m + 1));
      CHECK(p.count("src_embedding") == 9 * n);
      CHECK(p.count("output") == 9 * (m + 1));
    }
  }
}

namespace {
// Trains a small model to reverse sequences of 2-5 symbols and returns the exact-match rate
// of greedy translations of 100 held-out sequences.
double reverse_accuracy(Seq2SeqConfig c, int steps, double lr, int64_t warmup) {
  const int32_t V = 12;
  c.src_vocab = c.tgt_vocab = V;
  auto m = Seq2Seq::create(c, 11);
  nn::Schedule sch;
  sch.warmup = warmup;
  nn::Adam adam(m->params().params(), lr, 0.9, 0.98, 1e-9, 0.0, sch);
  const auto train = random_pairs(4000, V, 12, true);
  data::BatchOptions bo;
  bo.batch_size = 32;
  bo.seed = 13;
  ad::Tape t(14);
  int step = 0;
  for (uint64_t epoch = 0; step < steps; ++epoch)
    for (const data::Batch& b : data::make_batches(train, bo, epoch)) {
      if (step++ == steps) break;
      adam.zero_grad();
      ad::Var l = m->loss(t, b);
      t.backward(l);
      nn::clip_grad_norm(m->params().params(), 1.0);
      adam.step();
      t.clear();
    }
  const auto test = random_pairs(100, V, 99, true);
  int right = 0;
  for (const auto& p : test) {
    const auto tr = m->translate(p.source, {});
    right += std::vector<int32_t>(p.target.begin() + 1, p.target.end()) == tr.tokens;
  }
  return right / 100.0;
}
}  // namespace

TEST_CASE("seq2seq: an LSTM with Bahdanau attention learns to reverse sequences" *
          doctest::test_suite("slow")) {
  Seq2SeqConfig c;
  c.embed = 16;
  c.hidden = 32;
  const auto t0 = std::chrono::steady_clock::now();
  const double acc = reverse_accuracy(c, 1000, 0.01, 0);
  MESSAGE("rnn reverse exact match "
          << acc << " in "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
  CHECK(acc >= 0.9);
}

TEST_CASE("seq2seq: a Transformer learns to reverse sequences" * doctest::test_suite("slow")) {
  Seq2SeqConfig c;
  c.type = ModelType::Transformer;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 64;
  c.layers = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const double acc = reverse_accuracy(c, 1000, 0.003, 50);
  MESSAGE("transformer reverse exact match "
          << acc << " in "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
  CHECK(acc >= 0.9);
}

// A training module over given pairs, with a vocabulary of 9 ids on both sides (as tiny()).
models::Seq2SeqData data_of(const std::vector<data::EncodedPair>& pairs) {
  models::Seq2SeqData d;
  d.train = pairs;
  data::TokenCounts counts{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}};
  d.source_vocab = d.target_vocab = data::Vocab::build(counts);
  return d;
}

TEST_CASE(
    "seq2seq: the training layer's step on several slices equals one slice, deterministically") {
  const auto pairs = random_pairs(7, 9, 31, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2, 3, 4, 5, 6});  // padded, lengths differ
  Seq2SeqConfig rnn = tiny(ModelType::RNN);
  rnn.attention = AttentionKind::Bahdanau;
  Seq2SeqConfig tr = tiny(ModelType::Transformer);
  tr.layers = 2;
  for (const Seq2SeqConfig& c : {rnn, tr}) {
    models::Seq2SeqRecipe r;
    r.label_smoothing = 0.1;
    r.steps = 1;
    r.seed = 13;
    models::Seq2SeqTraining m(c, data_of(pairs), r);
    REQUIRE(m.data().source_vocab.size() == 9);
    m.set_batch(b);
    train::Tapes tapes;
    auto run = [&](int slices, double& loss, double& tokens) {
      const train::StepOut o = train::forward_backward(m, tapes, b.size(), 5, 0, false, slices);
      loss = o.loss;
      tokens = o.weight;
      std::vector<Tensor> g;
      for (ad::Parameter* p : m.params().params()) g.push_back(p->grad.clone());
      return g;
    };
    double l1 = 0, l3 = 0, l3b = 0, k1 = 0, k3 = 0, k3b = 0;
    const auto g1 = run(1, l1, k1);
    const auto g3 = run(3, l3, k3);
    const auto g3b = run(3, l3b, k3b);
    CHECK(k1 == k3);
    CHECK(l3 == doctest::Approx(l1).epsilon(1e-5));
    for (size_t i = 0; i < g1.size(); ++i) {
      test::check_close(g3[i], g1[i], 1e-5, 1e-4);
      CHECK(std::equal(g3[i].values().begin(), g3[i].values().end(),
                       g3b[i].values().begin()));  // bit for bit
    }
    CHECK(l3 == l3b);
    // more slices than rows: one row each
    double l9 = 0, k9 = 0;
    const auto g9 = run(9, l9, k9);
    CHECK(l9 == doctest::Approx(l1).epsilon(1e-5));
    for (size_t i = 0; i < g1.size(); ++i) test::check_close(g9[i], g1[i], 1e-5, 1e-4);
  }
}

TEST_CASE("seq2seq: batch_rows keeps rows and trims the padding") {
  const auto pairs = random_pairs(4, 9, 32, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2, 3});
  const data::Batch s = models::batch_rows(b, 1, 3);
  REQUIRE(s.size() == 2);
  for (int64_t r = 0; r < 2; ++r) {
    CHECK(s.source_len[static_cast<size_t>(r)] == b.source_len[static_cast<size_t>(r + 1)]);
    for (int64_t j = 0; j < s.source_len[static_cast<size_t>(r)]; ++j)
      CHECK(s.source.at(r, j) == b.source.at(r + 1, j));
    for (int64_t j = 0; j < s.target_len[static_cast<size_t>(r)]; ++j)
      CHECK(s.target.at(r, j) == b.target.at(r + 1, j));
  }
  CHECK(s.source.cols == std::max(b.source_len[1], b.source_len[2]));
  CHECK(s.target.cols == std::max(b.target_len[1], b.target_len[2]));
  CHECK_THROWS_AS(models::batch_rows(b, 2, 5), ShapeError);
}

TEST_CASE("seq2seq: structured (a chain CRF's marginals) and sigmoid attention, Kim et al. 2017") {
  const auto pairs = random_pairs(3, 9, 11, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2});  // padded sources
  REQUIRE(*std::min_element(b.source_len.begin(), b.source_len.end()) < b.source.cols);
  CHECK(models::parse_attention("structured") == AttentionKind::Structured);
  CHECK(models::parse_attention("sigmoid") == AttentionKind::Sigmoid);
  CHECK(std::string(models::attention_name(AttentionKind::Structured)) == "structured");
  CHECK(std::string(models::attention_name(AttentionKind::Sigmoid)) == "sigmoid");
  for (AttentionKind a : {AttentionKind::Structured, AttentionKind::Sigmoid}) {
    INFO(models::attention_name(a));
    Seq2SeqConfig c = tiny(ModelType::RNN);
    c.attention = a;
    c.bidirectional = true;
    auto m = Seq2Seq::create(c, 12);
    CHECK(m->params().contains("attention.pairwise") == (a == AttentionKind::Structured));
    if (a == AttentionKind::Structured) {  // a pairwise potential away from zero, so it matters
      Tensor& w = m->params().get("attention.pairwise").value;
      w[0] = 0.7f, w[1] = -0.4f, w[2] = 0.2f, w[3] = 1.1f;
    }
    // Gradients by finite differences, the CRF's pairwise potentials included.
    grads_ok(models::attention_name(a), *m, b);
    padding_unread(*m, b, pairs);
    // Decoding agrees with the teacher-forced loss; the alignment rows are the marginals
    // p(z_j = 1) (structured) or σ(s_j) (sigmoid): each in [0, 1], not a distribution.
    for (const auto& p : pairs) {
      const models::Translation g = decoded(*m, p.source);
      for (int64_t i = 0; i < g.attention.size(); ++i)
        CHECK((g.attention[i] >= 0.0f && g.attention[i] <= 1.0f));
    }
  }
}

TEST_CASE("seq2seq: syntactic attention (a dependency CRF's soft parents), Kim et al. 2017") {
  const auto pairs = random_pairs(3, 9, 13, false);
  const data::Batch b = data::make_batch(pairs, {0, 1, 2});  // padded sources
  REQUIRE(*std::min_element(b.source_len.begin(), b.source_len.end()) < b.source.cols);
  CHECK(models::parse_attention("syntactic") == AttentionKind::Syntactic);
  CHECK(std::string(models::attention_name(AttentionKind::Syntactic)) == "syntactic");
  Seq2SeqConfig c = tiny(ModelType::RNN);
  c.attention = AttentionKind::Syntactic;
  auto m = Seq2Seq::create(c, 14);
  CHECK(m->params().contains("attention.head.W"));
  CHECK(m->params().contains("attention.modifier.W"));
  CHECK(m->params().contains("attention.gate.b"));
  CHECK(m->params().get("attention.combine.W").value.dim(1) == 3 * c.hidden);
  // Gradients by finite differences through the tree CRF, on a padded batch.
  grads_ok("syntactic", *m, b);
  padding_unread(*m, b, pairs);
  // Decoding agrees with the teacher-forced loss; the alignment is the selection, a
  // distribution; the arc potentials are one S x S matrix a step, their diagonal the
  // selection's scores (the same order as the alignment), and give an Eisner tree.
  for (const auto& p : pairs) {
    const models::Translation g = decoded(*m, p.source);
    const int64_t T = static_cast<int64_t>(g.tokens.size()),
                  S = static_cast<int64_t>(p.source.size());
    const Tensor arcs = m->syntactic_arcs(p.source, g.tokens);
    REQUIRE(arcs.shape() == Shape{T, S, S});
    for (int64_t k = 0; k < T; ++k) {
      double sum = 0.0, z = 0.0, mx = -1e30;
      for (int64_t j = 0; j < S; ++j) sum += g.attention.at(k, j);
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
      for (int64_t j = 0; j < S; ++j) mx = std::max(mx, static_cast<double>(arcs.at(k, j, j)));
      for (int64_t j = 0; j < S; ++j) z += std::exp(arcs.at(k, j, j) - mx);
      for (int64_t j = 0; j < S; ++j)
        CHECK(g.attention.at(k, j) ==
              doctest::Approx(std::exp(arcs.at(k, j, j) - mx) / z).epsilon(1e-4));
    }
  }
  auto plain = Seq2Seq::create(tiny(ModelType::RNN), 14);
  CHECK_THROWS_AS(plain->syntactic_arcs(pairs[0].source, {4, 5}), UsageError);
}

}  // namespace attnkit_unit_seq2seq_test
