// lib/attnkit/memory/memn2n with structured attention over the hops (`attention` unary, crf
// and crf-kim, Kim et al. 2017 section 4.3): crf-kim against brute-force enumeration, a golden file
// (PyTorch, brute-force enumeration of the hop chain, testdata/make_memn2n_crf_golden.py), gradient
// checks, the marginals' invariants, and the kind kept in model files (older files: softmax).
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
  for (HopAttention a : {HopAttention::Crf, HopAttention::Unary, HopAttention::CrfKim})
    for (int K : {1, 2, 3})
      for (bool softmax : {true, false})
        for (bool pe : {false, true}) {
          if (a == HopAttention::CrfKim && K != 2) continue;  // 2 hops only
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
  for (HopAttention a :
       {HopAttention::Softmax, HopAttention::Unary, HopAttention::Crf, HopAttention::CrfKim}) {
    memory::MemN2NConfig cfg = toy_config(a, 2);
    cfg.vocab = vocab.size();
    memory::MemN2N model(cfg, 2);
    nn::ModelFile m;
    memory::put_memn2n(m, cfg, vocab, {1});
    nn::put_params(m, model.params());
    // softmax files are written as before the choice existed
    CHECK(m.numbers.count("arch/attention") == (a == HopAttention::Softmax ? 0u : 1u));
    CHECK(memory::load_memn2n(m).model->config().attention == a);
    if (a == HopAttention::CrfKim) {  // with its linear-start potentials kept: one more key
      memory::MemN2NConfig full = cfg;
      full.kim_full = true;
      nn::ModelFile f;
      memory::put_memn2n(f, full, vocab, {1});
      nn::put_params(f, model.params());
      CHECK(m.numbers.count("arch/kim_full") == 0u);
      CHECK(f.numbers.at("arch/kim_full") == 1.0);
      CHECK(memory::load_memn2n(f).model->config().kim_full);
      CHECK_FALSE(memory::load_memn2n(m).model->config().kim_full);
      continue;  // its tables are not a softmax model's
    }
    m.numbers.erase("arch/attention");
    CHECK(memory::load_memn2n(m).model->config().attention == HopAttention::Softmax);
  }
  nn::ModelFile m;
  memory::MemN2NConfig cfg = toy_config(HopAttention::Crf, 2);
  cfg.vocab = vocab.size();
  memory::put_memn2n(m, cfg, vocab, {1});
  m.numbers["arch/attention"] = 4;
  CHECK_THROWS_AS(memory::load_memn2n(m), DataError);
}

TEST_CASE("memn2n crf: the kinds by name; crf needs adjacent tying and no Key-Value") {
  CHECK(memory::parse_hop_attention("crf") == HopAttention::Crf);
  CHECK(memory::parse_hop_attention("unary") == HopAttention::Unary);
  CHECK(memory::parse_hop_attention("softmax") == HopAttention::Softmax);
  CHECK(memory::parse_hop_attention("crf-kim") == HopAttention::CrfKim);
  CHECK_THROWS_AS(memory::parse_hop_attention("binary"), ChoiceError);
  for (int K : {1, 3}) {  // crf-kim: the authors' 2 hops only
    memory::MemN2NConfig cfg = toy_config(HopAttention::CrfKim, K);
    CHECK_THROWS_AS(memory::MemN2N(cfg, 1), UsageError);
  }
  for (HopAttention a : {HopAttention::Crf, HopAttention::Unary, HopAttention::CrfKim}) {
    memory::MemN2NConfig cfg = toy_config(a, 2);
    cfg.kv = true;
    CHECK_THROWS_AS(memory::MemN2N(cfg, 1), UsageError);
    cfg.kv = false, cfg.tying = memory::Tying::LayerWise;
    CHECK_THROWS_AS(memory::MemN2N(cfg, 1), UsageError);
  }
}

// crf-kim (model.h) in float64 from the parameters: the hops' joint over the pairs (i, j) of
// filled slots, i != j, enumerated; its marginals and the answer logits W (o + U u + U_b).
TEST_CASE("memn2n crf-kim: hop weights and logits against brute-force enumeration") {
  // after linear start; during it; after it with its potentials kept (kim_full)
  for (int mode : {0, 1, 2}) {
    const bool softmax = mode != 1, full = mode != 0;
    memory::MemN2NConfig cfg = toy_config(HopAttention::CrfKim, 2);
    cfg.pe = false, cfg.te = false;  // bag of words: m_i = sum of its words' rows
    cfg.kim_full = mode == 2;
    cfg.init_std = 0.6f;
    memory::MemN2N model(cfg, 5);
    memory::MemBatch b = test::memn2n_toy_batch(cfg);
    Tape t;
    std::vector<Var> att;
    const Tensor logits = model.forward(t, b, softmax, &att).value().clone();
    REQUIRE(att.size() == 2u);
    const int64_t d = cfg.dim, V = cfg.vocab, M = b.M, J = b.J;
    auto table = [&](const char* name) { return model.params().get(name).value.clone(); };
    const Tensor E0 = table("E0"), E1 = table("E1"), E2 = table("E2"), E3 = table("E3");
    const Tensor W = table("W"), U = table("U"), Ub = table("U_b");
    auto embed = [&](const Tensor& E, const int32_t* ids, int64_t n) {
      std::vector<double> v(static_cast<size_t>(d), 0.0);
      for (int64_t j = 0; j < n; ++j)
        if (ids[j] != 0)
          for (int64_t k = 0; k < d; ++k) v[static_cast<size_t>(k)] += E.at(ids[j], k);
      return v;
    };
    auto dot = [&](const std::vector<double>& x, const std::vector<double>& y) {
      double s = 0;
      for (int64_t k = 0; k < d; ++k) s += x[static_cast<size_t>(k)] * y[static_cast<size_t>(k)];
      return s;
    };
    for (int64_t r = 0; r < b.B; ++r) {
      INFO("question " << r << " mode " << mode);
      const std::vector<double> u = embed(E0, b.query.data() + r * b.Jq, b.Jq);
      std::vector<double> u2(static_cast<size_t>(d));
      for (int64_t a = 0; a < d; ++a) {
        double s = Ub[a];
        for (int64_t k = 0; k < d; ++k) s += U.at(a, k) * u[static_cast<size_t>(k)];
        u2[static_cast<size_t>(a)] = s;
      }
      int64_t n = 0;
      while (n < M && b.mask.at(r, n) != 0.0f) ++n;
      std::vector<std::vector<double>> m, c, c2, c3;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t* ids = b.story.data() + (r * M + i) * J;
        m.push_back(embed(E0, ids, J)), c.push_back(embed(E1, ids, J));
        c2.push_back(embed(E2, ids, J)), c3.push_back(embed(E3, ids, J));
      }
      std::vector<double> p1(static_cast<size_t>(M), 0.0), p2(static_cast<size_t>(M), 0.0);
      if (n == 1) {
        p1[0] = p2[0] = 1.0;  // one sentence: both hops read it
      } else {
        double z = 0;
        std::vector<double> w(static_cast<size_t>(n * n), 0.0);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const auto I = static_cast<size_t>(i), Jj = static_cast<size_t>(j);
            const double s = full ? 2 * dot(u, m[I]) + dot(m[I], c[Jj]) + 2 * dot(u2, c[Jj])
                                  : dot(u, m[I]) + dot(u2, c[Jj]);
            z += w[static_cast<size_t>(i * n + j)] = std::exp(s);
          }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const double p = w[static_cast<size_t>(i * n + j)] / z;
            p1[static_cast<size_t>(i)] += p, p2[static_cast<size_t>(j)] += p;
          }
      }
      for (int64_t i = 0; i < M; ++i) {
        CHECK(att[0].value().at(r, i) ==
              doctest::Approx(p1[static_cast<size_t>(i)]).epsilon(1e-4).scale(1e-5));
        CHECK(att[1].value().at(r, i) ==
              doctest::Approx(p2[static_cast<size_t>(i)]).epsilon(1e-4).scale(1e-5));
      }
      std::vector<double> h = u2;  // o + u2
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < d; ++k)
          h[static_cast<size_t>(k)] +=
              p1[static_cast<size_t>(i)] * c2[static_cast<size_t>(i)][static_cast<size_t>(k)] +
              p2[static_cast<size_t>(i)] * c3[static_cast<size_t>(i)][static_cast<size_t>(k)];
      for (int64_t v = 0; v < V; ++v) {
        double want = 0;
        for (int64_t k = 0; k < d; ++k) want += W.at(v, k) * h[static_cast<size_t>(k)];
        CHECK(logits.at(r, v) == doctest::Approx(want).epsilon(1e-4).scale(1e-4));
      }
    }
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
