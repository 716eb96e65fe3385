// BERT (models/bert/model.h): one training step against PyTorch (testdata/make_bert_golden.py),
// finite-difference gradients of the heads, the masking and pairing rules, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/bert/model.h"
#include "attnkit/train/module.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_bert_test {

using namespace attnkit;
using models::BertExample;

namespace {

// Two documents of words a..h, 4 + 4 = 8 ordinary tokens: a vocabulary of 12 (the golden's).
std::vector<std::vector<std::vector<std::string>>> tiny_docs() {
  return {{{"a", "b", "c"}, {"d", "e"}, {"f", "g", "h"}}, {{"a", "a", "b"}, {"c", "d", "e", "f"}}};
}

std::map<std::string, Tensor>& golden() {
  static std::map<std::string, Tensor> g = io::read_npz(test::testdata("bert/step.npz"));
  return g;
}

std::vector<BertExample> golden_batch() {
  auto& g = golden();
  const Tensor &tok = g.at("tokens"), &seg = g.at("segments"), &len = g.at("lengths"),
               &masked = g.at("masked"), &next = g.at("is_next");
  std::vector<BertExample> xs(static_cast<size_t>(tok.dim(0)));
  for (size_t b = 0; b < xs.size(); ++b) {
    const int64_t n = static_cast<int64_t>(len[static_cast<int64_t>(b)]);
    for (int64_t i = 0; i < n; ++i) {
      xs[b].tokens.push_back(static_cast<int32_t>(tok.at(static_cast<int64_t>(b), i)));
      xs[b].segments.push_back(static_cast<int32_t>(seg.at(static_cast<int64_t>(b), i)));
    }
    xs[b].is_next = static_cast<int32_t>(next[static_cast<int64_t>(b)]);
  }
  for (int64_t k = 0; k < masked.dim(0); ++k) {
    BertExample& x = xs[static_cast<size_t>(masked.at(k, 0))];
    x.positions.push_back(static_cast<int32_t>(masked.at(k, 1)));
    x.labels.push_back(static_cast<int32_t>(masked.at(k, 2)));
  }
  return xs;
}

models::BertConfig golden_config() {
  models::BertConfig c;
  c.vocab = 12, c.layers = 2, c.hidden = 8, c.heads = 2, c.ff = 16, c.max_len = 10;
  c.dropout = 0.0f;
  return c;
}

std::unique_ptr<models::BertTraining> golden_module() {
  const auto docs = tiny_docs();
  data::Vocab v = models::bert_vocab(docs, 1);
  REQUIRE(v.size() == 12);
  models::BertCorpus c = models::encode_bert_text(docs, v);
  models::BertTrainOptions o;
  o.batch = 3, o.lr = 0.01;
  auto m = std::make_unique<models::BertTraining>(golden_config(), o, v, c, models::BertCorpus{}, 1,
                                                  1, 5, "");
  for (ad::Parameter* p : m->params().params()) {
    const std::string key = "param/" + p->name;
    REQUIRE_MESSAGE(golden().count(key), key);
    REQUIRE(golden().at(key).shape() == p->value.shape());
    p->value = golden().at(key).clone();
  }
  // Every golden parameter is one of the model's.
  int64_t n = 0;
  for (const auto& [k, t] : golden()) n += k.rfind("param/", 0) == 0;
  CHECK(n == static_cast<int64_t>(m->params().params().size()));
  return m;
}

}  // namespace

TEST_CASE("bert: one Adam step equals PyTorch's (loss, gradients, updated parameters)") {
  // PyTorch computes in float64 and attnkit in float32 (sums of products in sgemm, softmax
  // and layer-norm sums in double); the golden file holds float32 roundings of PyTorch's
  // values. Measured here: loss 2.4e-7 apart (one float32 ulp at 3.0), gradients at most
  // 1.8e-7 apart (largest 0.67), updated parameters 1.2e-7. The bounds allow 25-40 times that,
  // for other BLAS kernels' summation orders: loss 1e-5, gradients 5e-6 + 1e-4 relative. The
  // first Adam step moves each parameter by lr·g/(|g| + 1e-8) = ±lr (1 - 1e-8/|g|): it does not
  // depend on g's rounding when |g| >> 1e-8 (every golden gradient is >= 2e-5 but the key
  // biases'), so updated values agree to float32 rounding of θ ± lr: 1e-6. The attention's key
  // biases have gradient 0 in exact arithmetic (softmax ignores a shift common to all keys):
  // theirs must be below 1e-6 here, and Adam may move them by at most lr either way.
  for (int64_t slices : {1, 3}) {
    CAPTURE(slices);
    auto module = golden_module();
    models::BertTraining& m = *module;
    m.set_batch(golden_batch());
    train::Tapes tapes;
    const train::StepOut s = train::step(m, tapes, 3, 1, 0, 0.0, false, slices);
    CHECK(std::fabs(s.loss - golden().at("loss")[0]) < 1e-5);
    REQUIRE(s.sums.size() == 6);
    CHECK(std::fabs(s.sums[0].second / 5 - golden().at("mlm")[0]) < 1e-5);
    CHECK(std::fabs(s.sums[1].second / 3 - golden().at("nsp")[0]) < 1e-5);
    CHECK(s.sums[4].second == 5);
    CHECK(s.sums[5].second == 3);
    for (ad::Parameter* p : m.params().params()) {
      CAPTURE(p->name);
      const bool key_bias = p->name.find("self_attn.k.b") != std::string::npos;
      if (key_bias) {
        for (int64_t i = 0; i < p->grad.size(); ++i) CHECK(std::fabs(p->grad[i]) < 1e-6f);
        const Tensor& before = golden().at("param/" + p->name);
        for (int64_t i = 0; i < p->value.size(); ++i)
          CHECK(std::fabs(p->value[i] - before[i]) <= 0.01f + 1e-6f);
        continue;
      }
      test::check_close(p->grad, golden().at("grad/" + p->name), 5e-6, 1e-4);
      test::check_close(p->value, golden().at("after/" + p->name), 1e-6, 0.0);
    }
  }
}

TEST_CASE("bert: finite-difference gradients of the MLM and NSP heads and the encoder") {
  nn::ParamStore ps;
  Rng rng(3);
  models::Bert net(ps, golden_config(), rng);
  // Larger embeddings than BERT's 0.02, so that the differences stand well above rounding.
  for (const char* name : {"embed.token.table", "embed.segment.table", "embed.position.table"}) {
    Tensor& v = ps.get(name).value;
    for (int64_t i = 0; i < v.size(); ++i) v[i] *= 25.0f;
  }
  const std::vector<BertExample> xs = golden_batch();
  std::vector<const BertExample*> ptrs;
  for (const auto& x : xs) ptrs.push_back(&x);
  ad::GradCheckOptions opt;
  opt.eps = 1e-2, opt.max_per_tensor = 12;
  std::vector<ad::Parameter*> mlm = ps.params("mlm"), nsp = ps.params("nsp"),
                              enc = ps.params("encoder.1");
  mlm.push_back(&ps.get("embed.token.table"));  // tied: input and output
  nsp.push_back(&ps.get("embed.segment.table"));
  enc.push_back(&ps.get("embed.position.table"));
  enc.push_back(&ps.get("embed.norm.gain"));
  const auto r1 =
      ad::check_gradients([&](ad::Tape& t) { return net.losses(t, ptrs).mlm; }, mlm, opt);
  CHECK_MESSAGE(r1.ok, "mlm: " << r1.where);
  CHECK(r1.checked > 40);
  const auto r2 =
      ad::check_gradients([&](ad::Tape& t) { return net.losses(t, ptrs).nsp; }, nsp, opt);
  CHECK_MESSAGE(r2.ok, "nsp: " << r2.where);
  CHECK(r2.checked > 30);
  const auto r3 = ad::check_gradients(
      [&](ad::Tape& t) {
        models::BertLosses l = net.losses(t, ptrs);
        return l.mlm + l.nsp;
      },
      enc, opt);
  CHECK_MESSAGE(r3.ok, "encoder: " << r3.where);
  CHECK(r3.checked > 60);
}

TEST_CASE("bert: masking takes 15% of the words, 80/10/10, never [CLS] or [SEP]") {
  // 4,000 pairs of 19 words each: 76,000 candidates, 2.85 to choose a pair (2 or 3 by random
  // rounding). The share chosen has expectation 0.15 exactly and a standard deviation of
  // 0.0003 here; the split's below 0.004. Bounds of 4-5 standard deviations.
  const int64_t V = 50;
  models::MaskStats st;
  Rng rng(11);
  int64_t random_reserved = 0, cls_sep_touched = 0;
  for (int i = 0; i < 4000; ++i) {
    BertExample x;
    x.tokens.push_back(models::kBertCls);
    for (int k = 0; k < 10; ++k) x.tokens.push_back(4 + (i + k) % 46);
    x.tokens.push_back(models::kBertSep);
    for (int k = 0; k < 9; ++k) x.tokens.push_back(4 + (i * 7 + k) % 46);
    x.tokens.push_back(models::kBertSep);
    const BertExample before = x;
    models::bert_mask(x, V, rng, &st);
    REQUIRE(x.positions.size() == x.labels.size());
    for (size_t k = 0; k < x.positions.size(); ++k) {
      const int32_t p = x.positions[k];
      CHECK(x.labels[k] == before.tokens[static_cast<size_t>(p)]);
      if (k) CHECK(p > x.positions[k - 1]);
      if (before.tokens[static_cast<size_t>(p)] < 4) ++cls_sep_touched;
      const int32_t now = x.tokens[static_cast<size_t>(p)];
      if (now < 4) ++random_reserved;
    }
    // Positions not chosen are untouched.
    for (size_t j = 0; j < x.tokens.size(); ++j)
      if (std::find(x.positions.begin(), x.positions.end(), static_cast<int32_t>(j)) ==
          x.positions.end())
        CHECK(x.tokens[j] == before.tokens[j]);
  }
  CHECK(st.candidates == 76000);
  CHECK(cls_sep_touched == 0);
  CHECK(random_reserved == 0);
  const double share = static_cast<double>(st.chosen) / static_cast<double>(st.candidates);
  CHECK(std::fabs(share - 0.15) < 0.0015);
  const double k = static_cast<double>(st.chosen);
  CHECK(st.as_mask + st.as_random + st.as_kept == st.chosen);
  CHECK(std::fabs(st.as_mask / k - 0.8) < 0.016);
  CHECK(std::fabs(st.as_random / k - 0.1) < 0.012);
  CHECK(std::fabs(st.as_kept / k - 0.1) < 0.012);
}

TEST_CASE("bert: pairs are half next sentences, half from another document; seeded") {
  std::vector<std::vector<std::vector<std::string>>> docs;
  // 30 documents of 5 sentences; sentence s of document d is the words "d<d>" "s<s>".
  for (int d = 0; d < 30; ++d) {
    docs.emplace_back();
    for (int s = 0; s < 5; ++s)
      docs.back().push_back({"d" + std::to_string(d), "s" + std::to_string(s), "w"});
  }
  const data::Vocab v = models::bert_vocab(docs, 1);
  const models::BertCorpus c = models::encode_bert_text(docs, v);
  models::BertPairs pairs(c, v.size(), 64);
  REQUIRE(pairs.size() == 30 * 4);
  int64_t next = 0;
  for (int64_t epoch = 0; epoch < 20; ++epoch)
    for (int64_t i = 0; i < pairs.size(); ++i) {
      BertExample x = pairs.make(i, 9, epoch);
      // Undo the masking to read the sentences.
      for (size_t k = 0; k < x.positions.size(); ++k)
        x.tokens[static_cast<size_t>(x.positions[k])] = x.labels[k];
      REQUIRE(x.tokens.size() == 9);
      CHECK(x.tokens[0] == models::kBertCls);
      CHECK(x.tokens[4] == models::kBertSep);
      CHECK(x.tokens[8] == models::kBertSep);
      CHECK(x.segments == std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1, 1});
      const std::string da = v.token(x.tokens[1]), sa = v.token(x.tokens[2]),
                        db = v.token(x.tokens[5]), sb = v.token(x.tokens[6]);
      if (x.is_next == 1) {
        CHECK(da == db);
        CHECK(std::stoi(sb.substr(1)) == std::stoi(sa.substr(1)) + 1);
        ++next;
      } else {
        CHECK(x.is_next == 0);
        CHECK(da != db);
      }
      // The same draws for the same (seed, epoch, index).
      if (i == 7) {
        const BertExample a = pairs.make(i, 9, epoch), b = pairs.make(i, 9, epoch);
        CHECK(a.tokens == b.tokens);
        CHECK(a.positions == b.positions);
      }
    }
  // 2,400 pairs: the share of next ones within 4 standard deviations (0.0102) of 1/2.
  CHECK(std::fabs(static_cast<double>(next) / 2400.0 - 0.5) < 0.041);
  // Truncation: the longer sentence loses its last tokens first.
  models::BertPairs cut(c, v.size(), 7);
  const BertExample x = cut.make(0, 9, 0);
  CHECK(x.tokens.size() == 7);
}

TEST_CASE("bert: errors") {
  SUBCASE("configuration") {
    models::BertConfig c = golden_config();
    c.heads = 3;
    CHECK_THROWS_AS(c.validate(), UsageError);
    c = golden_config(), c.max_len = 4;
    CHECK_THROWS_AS(c.validate(), UsageError);
    c = golden_config(), c.vocab = 4;
    CHECK_THROWS_AS(c.validate(), UsageError);
    c = golden_config(), c.dropout = 1.0f;
    CHECK_THROWS_AS(c.validate(), UsageError);
    c = golden_config(), c.layers = 0;
    CHECK_THROWS_AS(c.validate(), UsageError);
    CHECK_THROWS_AS(models::bert_vocab(tiny_docs(), 0), UsageError);
  }
  SUBCASE("pairs need two documents and a document of two sentences") {
    const data::Vocab v = models::bert_vocab(tiny_docs(), 1);
    models::BertCorpus one = models::encode_bert_text({tiny_docs()[0]}, v);
    CHECK_THROWS_WITH_AS(models::BertPairs(one, v.size(), 64),
                         doctest::Contains("at least two documents"), DataError);
    models::BertCorpus singles = models::encode_bert_text({{{"a"}}, {{"b"}}}, v);
    CHECK_THROWS_WITH_AS(models::BertPairs(singles, v.size(), 64),
                         doctest::Contains("no document has two sentences"), DataError);
  }
  SUBCASE("inputs the model cannot read") {
    nn::ParamStore ps;
    Rng rng(1);
    models::Bert net(ps, golden_config(), rng);
    ad::Tape t;
    BertExample x;
    x.tokens = {1, 5, 2}, x.segments = {0, 0, 0};
    BertExample y = x;
    y.tokens = std::vector<int32_t>(11, 5), y.segments = std::vector<int32_t>(11, 0);
    CHECK_THROWS_WITH_AS(net.encode(t, {&y}), doctest::Contains("longer than the model's"),
                         DataError);
    y = x, y.tokens[1] = 13;
    CHECK_THROWS_WITH_AS(net.encode(t, {&y}), doctest::Contains("outside the vocabulary"),
                         DataError);
    y = x, y.segments[1] = 2;
    CHECK_THROWS_AS(net.encode(t, {&y}), DataError);
    y = x, y.positions = {5}, y.labels = {4};
    CHECK_THROWS_WITH_AS(net.losses(t, {&y}), doctest::Contains("masked position outside"),
                         DataError);
    const data::Vocab v = models::bert_vocab(tiny_docs(), 1);
    CHECK_THROWS_AS(models::bert_sentence(v, 10, std::vector<std::string>(9, "a")), DataError);
    CHECK_THROWS_AS(models::bert_fill(net, x, 0), UsageError);
  }
  SUBCASE("training options") {
    models::BertTrainOptions o;
    o.lr = 0;
    CHECK_THROWS_AS(o.validate(), UsageError);
    o = {}, o.batch = 0;
    CHECK_THROWS_AS(o.validate(), UsageError);
    o = {}, o.schedule = "linear";
    CHECK_THROWS_AS(o.validate(), UsageError);
    o = {}, o.max_size = 4;
    CHECK_THROWS_AS(o.validate(), UsageError);
    o.max_size = 5;
    CHECK_NOTHROW(o.validate());
  }
}

TEST_CASE("bert: --max-size keeps the most frequent words, the rest <unk>") {
  // a 3, then b c d e f 2 each (ties in byte order), g h 1.
  const data::Vocab all = models::bert_vocab(tiny_docs(), 1);
  CHECK(all.size() == data::Vocab::kReserved + 8);
  const data::Vocab v = models::bert_vocab(tiny_docs(), 1, 6);
  REQUIRE(v.size() == 6);
  CHECK(v.contains("a"));
  CHECK(v.contains("b"));
  CHECK_FALSE(v.contains("c"));
  const models::BertCorpus c = models::encode_bert_text(tiny_docs(), v);
  CHECK(c.docs[0][0] == std::vector<int32_t>{v.id("a"), v.id("b"), data::Vocab::kUnk});
  CHECK(models::bert_vocab(tiny_docs(), 3, 6).size() == 5);  // min-freq still applies
  CHECK_THROWS_AS(models::bert_vocab(tiny_docs(), 1, 4), UsageError);
}

TEST_CASE("bert: fill probabilities and embeddings") {
  nn::ParamStore ps;
  Rng rng(2);
  models::Bert net(ps, golden_config(), rng);
  const data::Vocab v = models::bert_vocab(tiny_docs(), 1);
  const BertExample x = models::bert_sentence(v, 10, {"a", "[mask]", "c", "[mask]", "zzz"});
  CHECK(x.tokens == std::vector<int32_t>{1, v.id("a"), 12, v.id("c"), 12, 3, 2});
  const auto fills = models::bert_fill(net, x, 3);
  REQUIRE(fills.size() == 2);
  CHECK(fills[0].position == 1);
  CHECK(fills[1].position == 3);
  const auto all = models::bert_fill(net, x, 100);
  for (const auto& f : all) {
    CHECK(f.top.size() == 8);  // the ordinary tokens only
    double sum = 0;
    for (size_t k = 0; k < f.top.size(); ++k) {
      sum += f.top[k].second;
      if (k) CHECK(f.top[k].second <= f.top[k - 1].second);
      CHECK(f.top[k].first >= 4);
      CHECK(f.top[k].first < 12);
    }
    CHECK(sum <= 1.0 + 1e-12);
    CHECK(sum > 0.0);
  }
  // Embeddings: one [n, hidden] a sentence, equal alone and in a padded batch.
  const BertExample y = models::bert_sentence(v, 10, {"b"});
  const auto e = models::bert_embed(net, {x, y});
  REQUIRE(e.size() == 2);
  CHECK(e[0].shape() == Shape{7, 8});
  CHECK(e[1].shape() == Shape{3, 8});
  const auto e1 = models::bert_embed(net, {y});
  test::check_close(e1[0], e[1], 1e-5, 1e-5);
}

}  // namespace attnkit_unit_bert_test
