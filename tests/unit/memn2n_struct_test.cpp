// lib/attnkit/memory/memn2n with structured attention over the hops (`attention` unary and
// crf, Kim et al. 2017 section 4.3): a golden file (PyTorch, brute-force enumeration of the
// hop chain, testdata/make_memn2n_crf_golden.py), gradient checks, the marginals' invariants,
// and the kind kept in model files (older files: softmax).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/memory/memn2n/train.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/model_file.h"
#include "memn2n_toy.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_memn2n_struct_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;
using memory::HopAttention;

namespace {

memory::MemN2NConfig toy_config(HopAttention a, int hops) {
  memory::MemN2NConfig cfg;
  cfg.vocab = 9, cfg.dim = 4, cfg.hops = hops, cfg.memory = 5;
  cfg.pe = true, cfg.te = true, cfg.pe_form = memory::PeForm::Code;
  cfg.attention = a;
  return cfg;
}

}  // namespace

// The golden file's lines by their label ("crf K2 hop0 q1"): the numbers after it.
std::map<std::string, std::vector<double>> golden() {
  std::ifstream f(test::testdata("memn2n/crf.txt"));
  REQUIRE(f);
  std::map<std::string, std::vector<double>> g;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string label, w;
    for (int i = 0; i < 3 && is >> w; ++i) label += (i ? " " : "") + w;
    if (label.find("loss") == std::string::npos) {
      is >> w;
      label += " " + w;
    }
    double x;
    while (is >> x) g[label].push_back(x);
  }
  return g;
}

// Element i of the p-th table (E0..EK, then T0..TK) set to 0.25 sin(1.3 i + 0.7 p + 0.1).
void set_golden_weights(memory::MemN2N& model, int K) {
  std::vector<std::string> names;
  for (int k = 0; k <= K; ++k) names.push_back("E" + std::to_string(k));
  for (int k = 0; k <= K; ++k) names.push_back("T" + std::to_string(k));
  REQUIRE(names.size() == model.params().params().size());
  for (size_t p = 0; p < names.size(); ++p) {
    Tensor& w = model.params().get(names[p]).value;
    for (int64_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<float>(
          0.25 * std::sin(1.3 * static_cast<double>(i) + 0.7 * static_cast<double>(p) + 0.1));
  }
}

TEST_CASE("memn2n crf: loss and hop weights against PyTorch's brute force (golden)") {
  const auto g = golden();
  CHECK(g.size() == 2 * (1 + 2 * 2) + 2 * (1 + 2 * 3));
  for (HopAttention a : {HopAttention::Crf, HopAttention::Unary})
    for (int K : {2, 3}) {
      const memory::MemN2NConfig cfg = toy_config(a, K);
      memory::MemN2N model(cfg, 1);
      set_golden_weights(model, K);
      const memory::MemBatch b = test::memn2n_toy_batch(cfg);
      Tape t;
      std::vector<Var> att;
      const Var loss = nn::cross_entropy(model.forward(t, b, true, &att), b.answer);
      const std::string head =
          std::string(memory::hop_attention_name(a)) + " K" + std::to_string(K);
      INFO(head);
      REQUIRE(g.count(head + " loss"));
      CHECK(loss.value()[0] == doctest::Approx(g.at(head + " loss").at(0)).epsilon(1e-5));
      REQUIRE(att.size() == static_cast<size_t>(K));
      for (int k = 0; k < K; ++k)
        for (int64_t q = 0; q < 2; ++q) {
          const std::string label = head + " hop" + std::to_string(k) + " q" + std::to_string(q);
          REQUIRE(g.count(label));
          const std::vector<double>& want = g.at(label);
          REQUIRE(static_cast<int64_t>(want.size()) == b.M);
          for (int64_t i = 0; i < b.M; ++i) {
            INFO(label << " slot " << i);
            CHECK(att[static_cast<size_t>(k)].value().at(q, i) ==
                  doctest::Approx(want[static_cast<size_t>(i)]).epsilon(1e-5).scale(1e-6));
          }
        }
    }
}

TEST_CASE("memn2n crf: gradients through the hop chain (every kind, linear start)") {
  for (HopAttention a : {HopAttention::Crf, HopAttention::Unary})
    for (int K : {1, 2, 3})
      for (bool softmax : {true, false})
        for (bool pe : {false, true}) {
          memory::MemN2NConfig cfg = toy_config(a, K);
          cfg.pe = pe, cfg.te = pe;
          cfg.init_std = 0.5f;
          memory::MemN2N model(cfg, 3);
          const memory::MemBatch b = test::memn2n_toy_batch(cfg);
          ad::GradCheckOptions opt;
          opt.eps = 1e-2;
          const auto r = ad::check_gradients(
              [&](Tape& t) { return nn::cross_entropy(model.forward(t, b, softmax), b.answer); },
              model.params().params(), opt);
          INFO(memory::hop_attention_name(a) << " K " << K << " softmax " << softmax << " pe " << pe
                                             << ": worst " << r.worst << " at " << r.where);
          CHECK(r.checked > 0);
          CHECK(r.ok);
        }
}

TEST_CASE("memn2n crf: hop weights are distributions over the filled slots; K = 1 is unary") {
  for (int K : {1, 2, 4}) {
    std::vector<std::vector<Tensor>> by_kind;
    for (HopAttention a : {HopAttention::Crf, HopAttention::Unary}) {
      memory::MemN2NConfig cfg = toy_config(a, K);
      cfg.init_std = 0.7f;
      memory::MemN2N model(cfg, 11);
      const memory::MemBatch b = test::memn2n_toy_batch(cfg);
      Tape t;
      std::vector<Var> att;
      model.forward(t, b, true, &att);
      REQUIRE(att.size() == static_cast<size_t>(K));
      by_kind.emplace_back();
      for (const Var& p : att) {
        const Tensor& w = p.value();
        for (int64_t q = 0; q < b.B; ++q) {
          double sum = 0;
          for (int64_t i = 0; i < b.M; ++i) {
            if (b.mask.at(q, i) == 0.0f) CHECK(w.at(q, i) == 0.0f);  // an empty slot
            CHECK(w.at(q, i) >= 0.0f);
            sum += w.at(q, i);
          }
          CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }
        by_kind.back().push_back(w.clone());
      }
    }
    // the same weights (seed) in both: only the pairwise potentials differ
    for (int k = 0; k < K; ++k) {
      const Tensor& c = by_kind[0][static_cast<size_t>(k)];
      const Tensor& u = by_kind[1][static_cast<size_t>(k)];
      double diff = 0;
      for (int64_t i = 0; i < c.size(); ++i) diff = std::max(diff, double(std::abs(c[i] - u[i])));
      if (K == 1)
        CHECK(diff < 1e-6);
      else
        CHECK(diff > 1e-3);
    }
  }
}

TEST_CASE("memn2n crf: the kind is kept in the model file; older files are softmax") {
  const data::Vocab vocab = memory::babi_vocab(
      data::parse_babi("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n", "s.txt", 1));
  for (HopAttention a : {HopAttention::Softmax, HopAttention::Unary, HopAttention::Crf}) {
    memory::MemN2NConfig cfg = toy_config(a, 2);
    cfg.vocab = vocab.size();
    memory::MemN2N model(cfg, 2);
    nn::ModelFile m;
    memory::put_memn2n(m, cfg, vocab, {1});
    nn::put_params(m, model.params());
    // softmax files are written as before the choice existed
    CHECK(m.numbers.count("arch/attention") == (a == HopAttention::Softmax ? 0u : 1u));
    CHECK(memory::load_memn2n(m).model->config().attention == a);
    m.numbers.erase("arch/attention");
    CHECK(memory::load_memn2n(m).model->config().attention == HopAttention::Softmax);
  }
  nn::ModelFile m;
  memory::MemN2NConfig cfg = toy_config(HopAttention::Crf, 2);
  cfg.vocab = vocab.size();
  memory::put_memn2n(m, cfg, vocab, {1});
  m.numbers["arch/attention"] = 3;
  CHECK_THROWS_AS(memory::load_memn2n(m), DataError);
}

TEST_CASE("memn2n crf: the kinds by name; crf needs adjacent tying and no Key-Value") {
  CHECK(memory::parse_hop_attention("crf") == HopAttention::Crf);
  CHECK(memory::parse_hop_attention("unary") == HopAttention::Unary);
  CHECK(memory::parse_hop_attention("softmax") == HopAttention::Softmax);
  CHECK_THROWS_AS(memory::parse_hop_attention("binary"), ChoiceError);
  for (HopAttention a : {HopAttention::Crf, HopAttention::Unary}) {
    memory::MemN2NConfig cfg = toy_config(a, 2);
    cfg.kv = true;
    CHECK_THROWS_AS(memory::MemN2N(cfg, 1), UsageError);
    cfg.kv = false, cfg.tying = memory::Tying::LayerWise;
    CHECK_THROWS_AS(memory::MemN2N(cfg, 1), UsageError);
  }
}

TEST_CASE("memn2n: supporting-fact selection on a hand-made story") {
  const std::string text =
      "1 Mary went to the kitchen.\n"
      "2 John picked up the apple.\n"
      "3 John went to the garden.\n"
      "4 Where is the apple?\tgarden\t2 3\n"
      "5 Sandra went to the hallway.\n"
      "6 Where is Mary?\tkitchen\t1\n";
  const auto ex = data::parse_babi(text, "story.txt", 2);
  REQUIRE(ex.size() == 2);
  const data::Vocab vocab = memory::babi_vocab(ex);
  auto enc = memory::encode_babi(ex, vocab, 50);
  REQUIRE(enc[0].support == std::vector<int64_t>{1, 2});
  REQUIRE(enc[1].support == std::vector<int64_t>{0});
  // [sentences (oldest first), hops]; K = 2 hops
  auto att = [](int64_t n, std::vector<int64_t> pick) {
    Tensor a({n, static_cast<int64_t>(pick.size())});
    for (size_t k = 0; k < pick.size(); ++k) {
      for (int64_t i = 0; i < n; ++i) a.at(i, static_cast<int64_t>(k)) = 0.1f;
      a.at(pick[k], static_cast<int64_t>(k)) = 0.6f;
    }
    return a;
  };
  auto maps = [](Tensor a, Tensor b) {  // one map per question
    std::vector<Tensor> v;
    v.push_back(std::move(a));
    v.push_back(std::move(b));
    return v;
  };
  // hop 1 on fact 2, hop 2 on fact 3; question 2 has one fact: its second hop is not scored
  auto r = memory::fact_selection(enc, maps(att(3, {1, 2}), att(4, {0, 3})));
  CHECK(r.correct == 3);
  CHECK(r.scored == 3);
  // the hops in the other order: both wrong (hops are aligned to the facts by index)
  r = memory::fact_selection(enc, maps(att(3, {2, 1}), att(4, {1, 0})));
  CHECK(r.correct == 0);
  CHECK(r.scored == 3);
  CHECK(r.rate() == 0.0);
  // equal maxima: the first (oldest) sentence
  r = memory::fact_selection(enc, maps(Tensor({3, 2}, 0.25f), att(4, {0, 0})));
  CHECK(r.correct == 1);  // question 2's one fact is sentence 0
  // one hop against two facts: only the first fact is scored
  r = memory::fact_selection(enc, maps(att(3, {1}), att(4, {0})));
  CHECK(r.correct == 2);
  CHECK(r.scored == 2);
  CHECK(r.rate() == 1.0);
  // a memory of 2: question 1 holds sentences 2 and 3 (facts at 0, 1); question 2 holds 3 and
  // 5, so its fact (sentence 1) is gone: a miss whatever the hop chose
  enc = memory::encode_babi(ex, vocab, 2);
  CHECK(enc[0].support == std::vector<int64_t>{0, 1});
  CHECK(enc[1].support == std::vector<int64_t>{-1});
  r = memory::fact_selection(enc, maps(att(2, {0, 1}), att(2, {0, 1})));
  CHECK(r.correct == 2);
  CHECK(r.scored == 3);
  // shapes that do not fit the questions
  std::vector<Tensor> one;
  one.push_back(att(2, {0, 1}));
  CHECK_THROWS_AS(memory::fact_selection(enc, one), ShapeError);
  CHECK_THROWS_AS(memory::fact_selection(enc, maps(att(3, {0, 1}), att(2, {0, 1}))), ShapeError);
  // no facts marked: nothing scored
  for (auto& q : enc) q.support.clear();
  r = memory::fact_selection(enc, maps(att(2, {0, 1}), att(2, {0, 1})));
  CHECK(r.scored == 0);
  CHECK(r.rate() == 0.0);
}

}  // namespace attnkit_unit_memn2n_struct_test
