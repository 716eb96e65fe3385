// Document classifiers (models/han): the documents reader and its refusals, the Hierarchical
// Attention Network against a PyTorch golden file (testdata/make_han_golden.py:
// probabilities and both attention weight sets), finite-difference gradients of a tiny HAN,
// padding invariance (a document's output does not depend on its batch) for every
// architecture, n-gram features, a small learned task through the training layer, and the
// Figure 5 renderings.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/data/docs.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/han/draw.h"
#include "attnkit/models/han/model.h"
#include "attnkit/models/han/train.h"
#include "attnkit/nn/loss.h"
#include "test_util.h"
#include "train_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_han_test {

using namespace attnkit;
using namespace attnkit::models::han;

namespace {

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.file() + ":" + std::to_string(e.line()) + ": " + e.what();
  }
  return "no error";
}

HanConfig tiny(const std::string& arch) {
  HanConfig c;
  c.arch = arch, c.embed = 5, c.hidden = 4, c.context = 6, c.buckets = 97;
  return c;
}

std::vector<Doc> golden_docs() {
  std::vector<Doc> d(3);
  d[0].sentences = {{4, 5, 6}, {7, 8}};
  d[1].sentences = {{9}};
  d[2].sentences = {{4, 10, 11, 5, 3}, {6}, {7, 7, 8}, {11, 4}};
  return d;
}

std::vector<FigureDoc> one(FigureDoc d) {
  std::vector<FigureDoc> v;
  v.push_back(std::move(d));
  return v;
}

}  // namespace

TEST_CASE("han: documents are split into sentences and words") {
  const auto s = data::split_sentences("Great coffee. I'd buy it again!! Would I? yes");
  REQUIRE(s.size() == 4);
  CHECK(s[0] == std::vector<std::string>{"great", "coffee", "."});
  CHECK(s[1] == std::vector<std::string>{"i'd", "buy", "it", "again", "!", "!"});
  CHECK(s[3] == std::vector<std::string>{"yes"});
  const auto d = data::parse_docs("a\tOne. Two.\nb\tfirst part\tsecond part\n", "x.tsv");
  REQUIRE(d.size() == 2);
  CHECK(d[0].label == "a");
  CHECK(d[0].sentences.size() == 2);
  CHECK(d[1].sentences.size() == 2);  // given by TABs
  CHECK(d[1].sentences[1] == std::vector<std::string>{"second", "part"});
  CHECK(d[1].line == 2);
  data::DocReadOptions unl;
  unl.need_labels = false;
  const auto u = data::parse_docs("no label here.\n", "y", unl);
  CHECK(u[0].label.empty());
}

TEST_CASE("han: bad documents are refused with the file and the line") {
  auto parse = [](const std::string& text, data::DocReadOptions o = {}) {
    return error_of([&] { data::parse_docs(text, "d.tsv", o); });
  };
  CHECK(parse("a\tok.\nno label\n") == "d.tsv:2: no label: a document is LABEL<TAB>TEXT");
  CHECK(parse("a\tok.\n\tno label\n") == "d.tsv:2: empty label");
  CHECK(parse("a\tok.\nb\t\n") == "d.tsv:2: empty document (no word after the label)");
  CHECK(parse("a\tok.\n\n") == "d.tsv:2: no label: a document is LABEL<TAB>TEXT");
  CHECK(parse("a\tok.\nb\tbad \xff byte\n").rfind("d.tsv:2: ", 0) == 0);
  std::string longs = "a\t";
  for (int i = 0; i < 10000; ++i) longs += "word ";
  CHECK(parse(longs) ==
        "d.tsv:1: sentence 1 has 10000 words, more than 1000 (split it with . ! ? or TABs)");
  CHECK(parse("") == "d.tsv:0: no documents");
  // Labels unknown to a model.
  data::Vocab v;
  const auto docs = data::parse_docs("great\tgood.\nawful\tbad.\n", "t.tsv");
  CHECK(error_of([&] {
          encode_docs(docs, v, {"great", "other"}, "t.tsv", true);
        }) == "t.tsv:2: unknown label 'awful' (the model's labels: great, other)");
  CHECK(error_of([&] { collect_labels({docs[0]}, "t.tsv"); }) ==
        "t.tsv:0: the documents have 1 label(s): a classifier needs at least 2");
}

TEST_CASE("han: forward pass matches PyTorch (probabilities, word and sentence weights)") {
  nn::ParamStore ps;
  Rng rng(1);
  HanNet m(ps, tiny("han"), 12, 3, rng);
  ps.load(test::testdata("han/params.npz"));
  const auto g = io::read_npz(test::testdata("han/golden.npz"));
  const auto docs = golden_docs();
  std::vector<const Doc*> ptrs;
  for (const auto& d : docs) ptrs.push_back(&d);
  std::vector<Tensor> w, s;
  ad::Tape t;
  const Tensor p = m.probabilities(t, ptrs, &w, &s);
  test::check_close(p, g.at("probs"), 1e-5, 1e-4);
  for (int d = 0; d < 3; ++d) {
    test::check_close(w[static_cast<size_t>(d)], g.at("w" + std::to_string(d)), 1e-5, 1e-4);
    test::check_close(s[static_cast<size_t>(d)], g.at("s" + std::to_string(d)), 1e-5, 1e-4);
  }
}

TEST_CASE("han: gradients of a tiny HAN match finite differences") {
  for (const char* arch : {"han", "flat", "mean", "ngram-lr"}) {
    CAPTURE(arch);
    nn::ParamStore ps;
    Rng rng(5);
    HanConfig c = tiny(arch);
    HanNet m(ps, c, 12, 3, rng);
    if (std::string(arch) == "ngram-lr")  // away from the all-zero start
      for (auto* p : ps.params()) p->value[0] = 0.3f, p->value[p->size() - 1] = -0.2f;
    const auto docs = golden_docs();
    std::vector<const Doc*> ptrs;
    for (const auto& d : docs) ptrs.push_back(&d);
    ad::GradCheckOptions o;
    o.max_per_tensor = 24;
    o.eps = 1e-2, o.rtol = 5e-2, o.atol = 2e-3;
    const auto r = ad::check_gradients(
        [&](ad::Tape& t) {
          return nn::cross_entropy(m.forward(t, ptrs).logits, {0, 2, 1});
        },
        ps.params(), o);
    CHECK_MESSAGE(r.ok, r.where);
    CHECK(r.checked > 0);
  }
}

TEST_CASE("han: padding changes nothing (a document alone or in any batch)") {
  for (const char* arch : {"han", "flat", "mean", "ngram-lr"}) {
    CAPTURE(arch);
    nn::ParamStore ps;
    Rng rng(9);
    HanNet m(ps, tiny(arch), 12, 3, rng);
    if (std::string(arch) == "ngram-lr")
      for (auto* p : ps.params())
        for (int64_t i = 0; i < p->size(); ++i) p->value[i] = std::sin(0.37f * i);
    auto docs = golden_docs();
    Doc longest;  // more and longer sentences than any other
    longest.sentences = {{4, 4, 4, 4, 4, 4, 4, 4, 4}, {5, 6}, {7}, {8}, {9}, {10}};
    docs.push_back(longest);
    ad::Tape t;  // one tape for every call: buffers from its pool, as predict_docs's
    for (size_t i = 0; i < 3; ++i) {
      const Tensor alone = m.probabilities(t, {&docs[i]});
      std::vector<Tensor> w1, w2, s1, s2;
      m.probabilities(t, {&docs[i]}, &w1, &s1);
      const Tensor batch = m.probabilities(t, {&docs[3], &docs[(i + 1) % 3], &docs[i]}, &w2, &s2);
      Tensor row({1, 3});
      for (int k = 0; k < 3; ++k) row[k] = batch.at(2, k);
      test::check_close(row, alone, 1e-6, 1e-5);
      if (!w1.empty()) {
        test::check_close(w2[2], w1[0], 1e-6, 1e-5);
        test::check_close(s2[2], s1[0], 1e-6, 1e-5);
      }
    }
  }
}

TEST_CASE("han: probabilities without recording are the recorded forward pass's") {
  // probabilities() runs the GRUs forward only (ad::gru_layer_forward); the recorded forward
  // pass in evaluation mode must give the same values (within rounding: some BLAS kernels sum
  // a row by its place in the product, nn_test's GRU case says why): probabilities and
  // attention weights, over more than one word-encoder group of 64 sentences.
  for (const char* arch : {"han", "flat"}) {
    CAPTURE(arch);
    nn::ParamStore ps;
    Rng rng(4);
    HanNet m(ps, tiny(arch), 12, 3, rng);
    std::vector<Doc> docs(20);
    for (auto& d : docs) {
      d.sentences.resize(1 + rng.below(6));
      for (auto& s : d.sentences) {
        s.resize(1 + rng.below(9));
        for (auto& w : s) w = static_cast<int32_t>(3 + rng.below(9));
      }
    }
    std::vector<const Doc*> ptrs;
    for (const auto& d : docs) ptrs.push_back(&d);
    ad::Tape inf, rec;
    std::vector<Tensor> w, s;
    const Tensor p = m.probabilities(inf, ptrs, &w, &s);
    rec.set_training(false);
    HanOutput o = m.forward(rec, ptrs, true);
    const Tensor q = ad::softmax(o.logits).value().clone();
    test::check_close(p, q, 1e-6, 1e-5);
    for (size_t d = 0; d < docs.size(); ++d) {
      test::check_close(w[d], o.word_weights[d], 1e-6, 1e-5);
      test::check_close(s[d], o.sentence_weights[d], 1e-6, 1e-5);
    }
    // From the vocabulary's table of word projections (predict_docs on many words): the
    // same values up to rounding.
    const Tensor table = m.word_projections();
    CHECK(table.shape() == Shape{12, 6 * 4});
    std::vector<Tensor> w2, s2;
    test::check_close(m.probabilities(inf, ptrs, &w2, &s2, &table), p, 1e-6, 1e-5);
    for (size_t d = 0; d < docs.size(); ++d) {
      test::check_close(w2[d], w[d], 1e-6, 1e-5);
      test::check_close(s2[d], s[d], 1e-6, 1e-5);
    }
    test::check_close(predict_docs(m, docs, 1), p, 1e-6, 1e-5);  // more words than 12: the table
  }
  nn::ParamStore ps;
  Rng rng(4);
  HanNet mean(ps, tiny("mean"), 12, 3, rng);
  CHECK_THROWS_AS(mean.word_projections(), Error);
}

TEST_CASE("han: attention weights are distributions over the real words and sentences") {
  nn::ParamStore ps;
  Rng rng(2);
  HanNet m(ps, tiny("han"), 12, 3, rng);
  const auto docs = golden_docs();
  std::vector<Tensor> w, s;
  ad::Tape t;
  m.probabilities(t, {&docs[0], &docs[1], &docs[2]}, &w, &s);
  for (size_t d = 0; d < 3; ++d) {
    double st = 0;
    for (int64_t i = 0; i < s[d].size(); ++i) st += s[d][i];
    CHECK(st == doctest::Approx(1.0).epsilon(1e-5));
    for (size_t i = 0; i < docs[d].sentences.size(); ++i) {
      double rt = 0;
      const int64_t L = static_cast<int64_t>(docs[d].sentences[i].size());
      for (int64_t k = 0; k < w[d].dim(1); ++k) {
        if (k >= L) CHECK(w[d].at(static_cast<int64_t>(i), k) == 0.0f);
        rt += w[d].at(static_cast<int64_t>(i), k);
      }
      CHECK(rt == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("han: n-gram features are the words and the hashed n-grams inside sentences") {
  Doc d;
  d.sentences = {{4, 5, 6}, {7}};
  const auto f = ngram_features(d, 12, 2, 97);
  REQUIRE(f.size() == 4 + 2);  // 4 words, bigrams (4 5) and (5 6); none across sentences
  CHECK(std::vector<int32_t>(f.begin(), f.begin() + 4) == std::vector<int32_t>{4, 5, 6, 7});
  for (size_t i = 4; i < f.size(); ++i) CHECK((f[i] >= 12 && f[i] < 12 + 97));
  CHECK(ngram_features(d, 12, 1, 97).size() == 4);
  CHECK(ngram_features(d, 12, 3, 97).size() == 7);
}

TEST_CASE("han: batches of documents of similar length, each document once, from the seed") {
  std::vector<Doc> docs(203);
  Rng r(5);
  for (auto& d : docs) {
    const int n = 1 + static_cast<int>(r.below(9));
    for (int k = 0; k < n; ++k) d.sentences.push_back(std::vector<int32_t>(1 + r.below(7), 4));
  }
  for (bool by_sentences : {true, false}) {
    CAPTURE(by_sentences);
    auto key = [&](int64_t i) {
      const Doc& d = docs[static_cast<size_t>(i)];
      return by_sentences ? static_cast<int64_t>(d.sentences.size()) : d.words();
    };
    const auto b = length_batches(docs, by_sentences, 8, 11, 2);
    CHECK(b == length_batches(docs, by_sentences, 8, 11, 2));
    CHECK(b != length_batches(docs, by_sentences, 8, 11, 3));
    CHECK(b.size() == 26);  // ceil(203 / 8)
    std::vector<int> seen(docs.size(), 0);
    int64_t spread = 0, partial = 0;
    for (const auto& batch : b) {
      CHECK((batch.size() >= 1 && batch.size() <= 8));
      partial += batch.size() < 8;
      for (size_t k = 0; k < batch.size(); ++k) {
        ++seen[static_cast<size_t>(batch[k])];
        if (k) CHECK(key(batch[k - 1]) <= key(batch[k]));  // sorted inside a batch
      }
      spread += key(batch.back()) - key(batch.front());
    }
    CHECK(partial == 1);
    for (int c : seen) CHECK(c == 1);
    // Sorted pools: a batch's lengths are close (random batches of 8 spread far more).
    CHECK(static_cast<double>(spread) / static_cast<double>(b.size()) < (by_sentences ? 2.0 : 8.0));
  }
}

TEST_CASE("han: every architecture learns which key word decides the class") {
  // Label a if a sentence has "alpha", b if "beta"; filler sentences around it.
  const char* fill[] = {"the cat sat on the mat .", "it rained all day long .",
                        "we went to the market .", "nothing much happened here ."};
  std::string text;
  Rng r(3);
  for (int i = 0; i < 160; ++i) {
    const bool a = r.below(2) == 0;
    std::string doc;
    const int n = 1 + static_cast<int>(r.below(3)), at = static_cast<int>(r.below(n + 1));
    for (int k = 0; k <= n; ++k)
      doc += k == at ? (a ? "then alpha came . " : "then beta came . ")
                     : std::string(fill[r.below(4)]) + " ";
    text += std::string(a ? "a" : "b") + "\t" + doc + "\n";
  }
  const auto all = data::parse_docs(text, "synthetic");
  std::vector<data::TextDoc> train(all.begin(), all.begin() + 120),
      valid(all.begin() + 120, all.end());
  for (const char* arch : {"han", "flat", "mean", "ngram-lr"}) {
    CAPTURE(arch);
    HanConfig c = tiny(arch);
    c.min_freq = 1;
    HanTrainOptions o;
    o.batch = 16, o.lr = std::string(arch) == "ngram-lr" ? 0.1 : 0.03;
    HanTraining t(c, o, train, valid, "train", "valid", 0, 8, 7, "");
    nn::TrainState s;
    train::Tapes tapes;
    test::train_steps(t, t.total_steps(), s, tapes);
    const auto m = t.evaluate();
    CHECK(m[0].first == "valid_accuracy");
    CHECK(m[0].second >= 0.95);
  }
}

TEST_CASE("han: Figure 5 as HTML and PNG") {
  FigureDoc d;
  d.title = "review <1>";
  d.sentences = {{"good", "food", "."}, {"bad", "&", "service"}};
  d.words = Tensor({2, 3}, std::vector<float>{0.2f, 0.7f, 0.1f, 0.5f, 0.25f, 0.25f});
  d.sentences_w = Tensor({2}, std::vector<float>{0.8f, 0.2f});
  const std::string h = figure_html(one(std::move(d)));
  CHECK(h.find("review &lt;1&gt;") != std::string::npos);
  CHECK(h.find(">&amp;</span>") != std::string::npos);
  size_t words = 0, bars = 0;
  for (size_t at = 0; (at = h.find("class=\"w\"", at)) != std::string::npos; ++at) ++words;
  for (size_t at = 0; (at = h.find("class=\"bar\"", at)) != std::string::npos; ++at) ++bars;
  CHECK(words == 6);
  CHECK(bars == 2);
  // The deepest word (food: 0.7 x 0.8) is fully blue; the first bar is 80% long.
  CHECK(h.find("title=\"0.5600\" style=\"background:rgba(40,90,230,1.000)\"") != std::string::npos);
  CHECK(h.find("style=\"width:80.0%;background:rgba(220,40,40,1.000)\"") != std::string::npos);
  FigureDoc e;
  e.sentences = {{"x"}};
  e.words = Tensor({1, 1}, 1.0f);
  e.sentences_w = Tensor({1}, 1.0f);
  const plot::Image img = figure_png(one(std::move(e)));
  CHECK(img.width == 1100);
  CHECK(img.height > 100);
  FigureDoc bad;
  bad.sentences = {{"x", "y"}};
  bad.words = Tensor({1, 1}, 1.0f);
  bad.sentences_w = Tensor({1}, 1.0f);
  CHECK_THROWS_AS(figure_html(one(std::move(bad))), ShapeError);
}

TEST_CASE("han: word2vec vectors start the embeddings of the words they have") {
  test::TempDir dir;
  const std::string path = dir.path + "/vec.txt";
  {
    std::ofstream f(path);
    f << "3 2\nGood 1 2\nbad 3 4\nmissing 5 6\ngood 7 8\n";
  }
  data::TokenCounts counts{{"good", 3}, {"bad", 2}, {"other", 2}};
  const data::Vocab v = data::Vocab::build(counts);
  nn::ParamStore ps;
  Rng rng(1);
  HanConfig c = tiny("mean");
  c.embed = 2;
  HanNet m(ps, c, v.size(), 2, rng);
  CHECK(m.load_embeddings(path, v) == 2);  // good (first vector wins) and bad
  const Tensor& t = ps.get("embed.table").value;
  CHECK(t.at(v.id("good"), 0) == 1.0f);
  CHECK(t.at(v.id("good"), 1) == 2.0f);
  CHECK(t.at(v.id("bad"), 1) == 4.0f);
  {
    std::ofstream f(path);
    f << "good 1 x\n";
  }
  CHECK(error_of([&] { m.load_embeddings(path, v); }) == path + ":1: 'x' is not a finite number");
  HanNet lr(ps, tiny("ngram-lr"), v.size(), 2, rng);
  CHECK_THROWS_AS(lr.load_embeddings(path, v), UsageError);
}

}  // namespace attnkit_unit_han_test
