// lib/attnkit/memory/memn2n*: the position encoding against hand-worked values, the sentence
// encoder against a direct sum, gradient checks through two hops (every tying and option),
// batches (slot order, masks, noisy ages), a tiny task learned perfectly, and determinism.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/model.h"
#include "attnkit/memory/memn2n/train.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "memn2n_toy.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_memn2n_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;

TEST_CASE("memn2n: position encoding, hand-worked") {
  // l_kj = (1 - j/J) - (k/d)(1 - 2j/J)
  // J = 4, d = 2: j=1: 0.75 - k/2 * 0.5 → 0.5, 0.25; j=2: 0.5, 0.5; j=3: 0.25 + k/2 * 0.5 →
  // 0.5, 0.75; j=4: k/2 → 0.5, 1.
  test::check_close(memory::position_encoding(4, 2),
                    Tensor({4, 2}, {0.5f, 0.25f, 0.5f, 0.5f, 0.5f, 0.75f, 0.5f, 1.0f}));
  // J = 1: l_k1 = 0 + k/d
  test::check_close(memory::position_encoding(1, 4), Tensor({1, 4}, {0.25f, 0.5f, 0.75f, 1.0f}));
  // J = 3, d = 3, word 1: (2/3) - (k/3)(1/3) = 5/9, 4/9, 3/9
  const Tensor l = memory::position_encoding(3, 3);
  CHECK(l.at(0, 0) == doctest::Approx(5.0 / 9));
  CHECK(l.at(0, 2) == doctest::Approx(3.0 / 9));
  // word 2, k = 2: (1 - 2/3) - (2/3)(1 - 4/3) = 1/3 + 2/9 = 5/9
  CHECK(l.at(1, 1) == doctest::Approx(5.0 / 9));
  CHECK_THROWS_AS(memory::position_encoding(0, 3), ShapeError);
}

TEST_CASE("memn2n: position encoding of the authors' code, hand-worked; 2x the paper's + O(1/dJ)") {
  // l_kj = 1 + 4 (k - (d+1)/2)(j - (J+1)/2) / (dJ); J = 4, d = 2: (k - 1.5) = -0.5, 0.5;
  // (j - 2.5) = -1.5, -0.5, 0.5, 1.5; 4 / 8 = 0.5 → 1 + 0.5 · (±0.5) · (j - 2.5)
  const Tensor c = memory::position_encoding(4, 2, memory::PeForm::Code);
  test::check_close(
      c, Tensor({4, 2}, {1.375f, 0.625f, 1.125f, 0.875f, 0.875f, 1.125f, 0.625f, 1.375f}));
  // J = 1: every weight 1 (a one-word sentence is its bag of words)
  test::check_close(memory::position_encoding(1, 5, memory::PeForm::Code),
                    Tensor({1, 5}, {1, 1, 1, 1, 1}));
  // code = 2 paper + (J + d + 1 - 2j - 2k) / (dJ)
  const int64_t J = 7, d = 6;
  const Tensor p = memory::position_encoding(J, d),
               q = memory::position_encoding(J, d, memory::PeForm::Code);
  for (int64_t j = 1; j <= J; ++j)
    for (int64_t k = 1; k <= d; ++k)
      CHECK(q.at(j - 1, k - 1) ==
            doctest::Approx(2 * p.at(j - 1, k - 1) +
                            double(J + d + 1 - 2 * j - 2 * k) / double(d * J)));
  CHECK(memory::parse_pe_form("code") == memory::PeForm::Code);
  CHECK(memory::parse_pe_form("paper") == memory::PeForm::Paper);
  CHECK_THROWS_AS(memory::parse_pe_form("papers"), ChoiceError);
}

TEST_CASE("memn2n: sentence encoder = weighted sum of embeddings, pads skipped") {
  ad::Parameter table("E", Tensor({5, 3}, {0, 0, 0, 1, 2, 3, -1, 0, 1, 2, 2, 2, 0.5f, -2, 1}));
  Tape t;
  // two rows of J = 4: words {1, 3, 2} with a pad between, and {4}
  const std::vector<int32_t> ids = {1, 0, 3, 2, 4, 0, 0, 0};
  Var bow = memory::encode_sentences(t.param(table), ids, 4, {2}, false);
  test::check_close(bow.value(), Tensor({2, 3}, {2, 4, 6, 0.5f, -2, 1}));
  Var pe = memory::encode_sentences(t.param(table), ids, 4, {2}, true);
  const Tensor l3 = memory::position_encoding(3, 3), l1 = memory::position_encoding(1, 3);
  Tensor want({2, 3});
  const int words[3] = {1, 3, 2};
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) want.at(0, k) += l3.at(j, k) * table.value.at(words[j], k);
  for (int k = 0; k < 3; ++k) want.at(1, k) = l1.at(0, k) * table.value.at(4, k);
  test::check_close(pe.value(), want, 1e-6);
  CHECK_THROWS_AS(memory::encode_sentences(t.param(table), {7, 0}, 2, {1}, false), DataError);
  CHECK_THROWS_AS(memory::encode_sentences(t.param(table), {1, 0, 2}, 2, {1}, false), ShapeError);
  // the code's form: the same sum with its weights
  Var pc = memory::encode_sentences(t.param(table), ids, 4, {2}, true, memory::PeForm::Code);
  const Tensor c3 = memory::position_encoding(3, 3, memory::PeForm::Code);
  Tensor want_c({2, 3});
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) want_c.at(0, k) += c3.at(j, k) * table.value.at(words[j], k);
  for (int k = 0; k < 3; ++k) want_c.at(1, k) = table.value.at(4, k);  // J = 1: weights 1
  test::check_close(pc.value(), want_c, 1e-6);
  // a fixed J = 6 (the authors' code: every sentence padded to the longest): word j of any
  // sentence takes row j of the J = 6 weights, whatever the sentence's length
  Var pf = memory::encode_sentences(t.param(table), ids, 4, {2}, true, memory::PeForm::Code, 6);
  const Tensor c6 = memory::position_encoding(6, 3, memory::PeForm::Code);
  Tensor want_f({2, 3});
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) want_f.at(0, k) += c6.at(j, k) * table.value.at(words[j], k);
  for (int k = 0; k < 3; ++k) want_f.at(1, k) = c6.at(0, k) * table.value.at(4, k);
  test::check_close(pf.value(), want_f, 1e-6);
  CHECK(std::abs(pf.value().at(1, 0) - pc.value().at(1, 0)) > 0.1f);  // not J = 1's weights
  CHECK_THROWS_AS(
      memory::encode_sentences(t.param(table), ids, 4, {2}, true, memory::PeForm::Code, -1),
      ShapeError);
  for (bool p : {false, true})
    for (memory::PeForm f : {memory::PeForm::Paper, memory::PeForm::Code})
      for (int64_t fixed : {0, 6}) {
        const auto r = ad::check_gradients(
            [&](Tape& t) {
              return memory::encode_sentences(t.param(table), ids, 4, {2}, p, f, fixed);
            },
            {&table});
        INFO("pe " << p << " form " << memory::pe_form_name(f) << " J " << fixed << ": "
                   << r.where);
        CHECK(r.ok);
      }
}

TEST_CASE("memn2n: gradients through two hops, every variant") {
  struct Case {
    const char* name;
    bool pe, te, kv, softmax;
    memory::Tying tying;
  };
  const Case cases[] = {
      {"adjacent bow", false, false, false, true, memory::Tying::Adjacent},
      {"adjacent pe te", true, true, false, true, memory::Tying::Adjacent},
      {"adjacent pe te linear start", true, true, false, false, memory::Tying::Adjacent},
      {"layerwise pe te", true, true, false, true, memory::Tying::LayerWise},
      {"key-value pe te", true, true, true, true, memory::Tying::Adjacent},
      {"adjacent pe te, empty slots masked", true, true, false, true, memory::Tying::Adjacent},
      {"adjacent pe te, fixed J", true, true, false, true, memory::Tying::Adjacent},
  };
  for (const Case& c : cases) {
    memory::MemN2NConfig cfg;
    cfg.vocab = 9;
    cfg.dim = 4;
    cfg.hops = 2;
    cfg.memory = 5;
    cfg.pe = c.pe;
    cfg.te = c.te;
    cfg.kv = c.kv;
    cfg.tying = c.tying;
    cfg.mask_empty = std::string(c.name).find("masked") != std::string::npos;
    if (std::string(c.name).find("fixed J") != std::string::npos) cfg.pe_words = 5;
    cfg.init_std = 0.5f;
    memory::MemN2N model(cfg, 3);
    const memory::MemBatch b = test::memn2n_toy_batch(cfg);
    ad::GradCheckOptions opt;
    opt.eps = 1e-2;
    const auto r = ad::check_gradients(
        [&](Tape& t) { return nn::cross_entropy(model.forward(t, b, c.softmax), b.answer); },
        model.params().params(), opt);
    INFO(c.name << ": worst " << r.worst << " at " << r.where);
    CHECK(r.checked > 0);
    CHECK(r.ok);
  }
}

TEST_CASE("memn2n: batches: most recent sentence first, masks, noisy ages") {
  memory::MemN2NConfig cfg;
  cfg.vocab = 9;
  cfg.memory = 50;
  const memory::MemBatch b = test::memn2n_toy_batch(cfg);
  CHECK(b.B == 2);
  CHECK(b.M == 3);
  CHECK(b.J == 3);
  CHECK(b.Jq == 2);
  // question 0, slot 0 = its last sentence {4, 8, 6}; slot 2 = its first {4, 5, 6}
  CHECK(std::vector<int32_t>(b.story.begin(), b.story.begin() + 9) ==
        std::vector<int32_t>{4, 8, 6, 7, 5, 0, 4, 5, 6});
  CHECK(std::vector<int32_t>(b.story.begin() + 9, b.story.begin() + 12) ==
        std::vector<int32_t>{7, 8, 0});
  test::check_close(b.mask, Tensor({2, 3}, {1, 1, 1, 1, 0, 0}));
  CHECK(b.time == std::vector<int32_t>{0, 1, 2, 0, 0, 0});
  CHECK(b.query == std::vector<int32_t>{5, 4, 7, 0});
  // random noise: ages strictly increase with the slot, within 10% blanks of the count
  std::vector<memory::EncodedQA> qs(1);
  for (int i = 0; i < 40; ++i) qs[0].memory.push_back({static_cast<int32_t>(4 + i % 5)});
  Rng rng(5);
  bool spread = false;
  for (int rep = 0; rep < 20; ++rep) {
    const memory::MemBatch nb = memory::make_batch(qs, {0}, cfg, &rng);
    for (int s = 1; s < 40; ++s) CHECK(nb.time[s] > nb.time[s - 1]);
    CHECK(nb.time[39] <= 39 + 4);
    spread = spread || nb.time[39] > 39;
  }
  CHECK(spread);
  // memory capped at the last `memory` sentences
  std::vector<data::BabiExample> ex(1);
  for (int i = 0; i < 7; ++i) ex[0].story.push_back({"s" + std::to_string(i)});
  ex[0].question = {"q"};
  ex[0].answer = "s6";
  const data::Vocab v = memory::babi_vocab(ex);
  const auto enc = memory::encode_babi(ex, v, 5);
  CHECK(enc[0].memory.size() == 5);
  CHECK(enc[0].story_offset == 2);
  CHECK(enc[0].memory[0][0] == v.id("s2"));
  CHECK(enc[0].answer == v.id("s6"));
}

namespace {

std::vector<memory::EncodedQA> fixture(const data::Vocab** vocab_out, const std::string& split) {
  static const auto train = data::read_babi(test::testdata("babi/qa1_tiny_train.txt"));
  static const data::Vocab vocab = memory::babi_vocab(train);
  *vocab_out = &vocab;
  return memory::encode_babi(
      split == "train" ? train : data::read_babi(test::testdata("babi/qa1_tiny_test.txt")), vocab,
      50);
}

}  // namespace

namespace {
// Trains `model` to the end as the training layer's steps do (MemN2NTraining::step: the
// module's step and end_step), from the start or from `start_epoch` epochs done in `phase`;
// `on_epoch` sees each epoch's statistics (epoch: epochs done) and the phase to resume from,
// and returning false stops the run. A non-finite loss fails the test. Returns the final
// phase.
using OnEpoch = std::function<bool(const memory::EpochStats&, int epoch, const memory::Phase&)>;
memory::Phase train_to_end(memory::MemN2N& model, const std::vector<memory::EncodedQA>& train,
                           const std::vector<memory::EncodedQA>& val,
                           const memory::TrainOptions& opt, const OnEpoch& on_epoch = {},
                           int start_epoch = 0, memory::Phase phase = {}) {
  if (start_epoch == 0) phase.linear = opt.ls;
  memory::MemN2NTraining run(model, train, val, opt, phase);
  for (int64_t epoch = start_epoch; epoch < run.total_epochs(); ++epoch)
    for (int64_t p = 0; p < run.batches(); ++p) {
      const memory::MemN2NTraining::StepOut o = run.step(epoch, p);
      REQUIRE(std::isfinite(o.loss));
      if (o.epoch_end && on_epoch && !on_epoch(o.stats, static_cast<int>(epoch + 1), run.phase()))
        return run.phase();
    }
  return run.phase();
}
}  // namespace

TEST_CASE("memn2n: learns the tiny task-1 fixture perfectly; same seed, same weights" *
          doctest::test_suite("slow")) {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  const auto test = fixture(&vocab, "test");
  std::vector<memory::EncodedQA> train, val;
  memory::split_validation(all, 0.1, 1, &train, &val);
  CHECK(train.size() == 900);
  CHECK(val.size() == 100);
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.dim = 20;
  cfg.hops = 3;
  cfg.pe = cfg.te = true;
  memory::TrainOptions opt;
  opt.epochs = 30;
  opt.anneal_every = 10;
  opt.rn = true;
  opt.seed = 7;
  std::vector<memory::EpochStats> log;
  const OnEpoch hooks = [&](const memory::EpochStats& s, int, const memory::Phase&) {
    log.push_back(s);
    return true;
  };
  memory::MemN2N model(cfg, 7);
  train_to_end(model, train, val, opt, hooks);
  REQUIRE(log.size() == 30);
  CHECK(log.back().train_loss < log.front().train_loss);
  CHECK(log[9].lr == doctest::Approx(0.01));
  CHECK(log[10].lr == doctest::Approx(0.005));
  const auto ev = memory::evaluate(model, test);
  CHECK(memory::error_rate(test, ev.predicted) == 0.0);

  // same seed → identical weights; a different seed → different ones
  memory::MemN2N again(cfg, 7), other(cfg, 8);
  train_to_end(again, train, val, opt);
  opt.seed = 8;
  train_to_end(other, train, val, opt);
  const auto& p1 = model.params().params();
  const auto& p2 = again.params().params();
  const auto& p3 = other.params().params();
  bool same = true, differ = false;
  for (size_t i = 0; i < p1.size(); ++i) {
    same = same && p1[i]->value.values() == p2[i]->value.values();
    differ = differ || p1[i]->value.values() != p3[i]->value.values();
  }
  CHECK(same);
  CHECK(differ);
}

TEST_CASE("memn2n: linear start ends when the validation loss stops falling; resume") {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  std::vector<memory::EncodedQA> train, val;
  memory::split_validation(all, 0.1, 1, &train, &val);
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.hops = 1;
  cfg.te = true;
  memory::TrainOptions opt;
  opt.epochs = 4;
  opt.ls = true;
  opt.ls_max_epochs = 3;
  opt.ls_patience = 1;
  std::vector<memory::EpochStats> log;
  const OnEpoch hooks = [&](const memory::EpochStats& s, int, const memory::Phase&) {
    log.push_back(s);
    return true;
  };
  memory::MemN2N model(cfg, 1);
  const memory::Phase end = train_to_end(model, train, val, opt, hooks);
  REQUIRE(log.size() >= 5);
  CHECK(log.size() <= 7);
  CHECK(log[0].linear);
  CHECK(log[0].lr == doctest::Approx(0.005));
  CHECK_FALSE(log.back().linear);
  CHECK(log.back().lr == doctest::Approx(0.01));
  CHECK(end.ls_epochs + 4 == static_cast<int>(log.size()));

  // stop after two epochs, then resume from that state: the same weights as one run
  memory::MemN2N a(cfg, 1);
  memory::Phase mid;
  int mid_epoch = 0;
  const OnEpoch stop = [&](const memory::EpochStats& s, int epoch, const memory::Phase& ph) {
    mid = ph;
    mid_epoch = epoch;
    return s.epoch < 2;
  };
  train_to_end(a, train, val, opt, stop);
  CHECK(mid_epoch == 2);
  CHECK(mid.linear);
  train_to_end(a, train, val, opt, {}, mid_epoch, mid);
  for (size_t i = 0; i < a.params().params().size(); ++i)
    CHECK(a.params().params()[i]->value.values() == model.params().params()[i]->value.values());
}

TEST_CASE("memn2n: linear start waits --ls-patience epochs without a new best") {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  std::vector<memory::EncodedQA> train, val;
  memory::split_validation(all, 0.1, 1, &train, &val);
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.hops = 1;
  cfg.te = true;
  memory::TrainOptions opt;
  opt.epochs = 1;
  opt.ls = true;
  opt.ls_lr = 0.05;        // large enough for the validation loss to stall on this tiny task
  opt.ls_max_epochs = 40;  // a cap far off: some BLAS kernels stall later than others
  opt.ls_patience = 3;
  std::vector<memory::EpochStats> log;
  const OnEpoch hooks = [&](const memory::EpochStats& s, int, const memory::Phase&) {
    log.push_back(s);
    return true;
  };
  memory::MemN2N model(cfg, 3);
  const memory::Phase end = train_to_end(model, train, val, opt, hooks);
  // the expected end of linear start, from the logged validation losses
  double best = 1e300;
  int stale = 0, expect = 0;
  for (const auto& s : log) {
    ++expect;
    if (s.val_loss < best)
      best = s.val_loss, stale = 0;
    else
      ++stale;
    if (stale >= 3 || expect >= 40) break;
  }
  CHECK(end.ls_epochs == expect);
  CHECK(expect < 40);  // ended by the patience, not the cap
  CHECK(stale == 3);
  REQUIRE(static_cast<int>(log.size()) == expect + 1);
  for (int i = 0; i < expect; ++i) CHECK(log[static_cast<size_t>(i)].linear);
  CHECK_FALSE(log.back().linear);
  // patience 0 (the default, the authors' code): exactly ls_max_epochs of linear start
  opt.ls_patience = 0;
  opt.ls_max_epochs = 12;
  log.clear();
  memory::MemN2N fixed(cfg, 3);
  CHECK(train_to_end(fixed, train, val, opt, hooks).ls_epochs == 12);
  CHECK(log.size() == 13);
}

TEST_CASE("memn2n: gradients clipped weight by weight, or all together") {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.hops = 2;
  cfg.te = true;
  memory::TrainOptions opt;
  opt.lr = 1.0;
  opt.clip = 1e-3;  // far below every weight's gradient norm
  opt.clip_spectral = false;
  for (bool global : {false, true}) {
    opt.clip_global = global;
    memory::MemN2N model(cfg, 5);
    std::vector<Tensor> before;
    for (const auto* p : model.params().params()) before.push_back(p->value.clone());
    const std::vector<memory::EncodedQA> no_validation;
    memory::MemN2NTraining run(model, all, no_validation, opt);
    const auto out = run.step(0, 0);
    CHECK(out.grad_norm > 1.0);
    double total = 0.0;
    size_t moved = 0;
    for (size_t i = 0; i < before.size(); ++i) {
      double s = 0.0;
      const auto& v = model.params().params()[i]->value.values();
      const auto& w = before[i].values();
      for (size_t j = 0; j < v.size(); ++j) s += (static_cast<double>(v[j]) - w[j]) * (v[j] - w[j]);
      total += s;
      moved += s > 0.0;
      // each weight's step is at most lr * clip; weight by weight, every moved one is at it
      CHECK(std::sqrt(s) <= 1e-3 * 1.001);
      if (!global && s > 0.0) CHECK(std::sqrt(s) == doctest::Approx(1e-3).epsilon(1e-2));
    }
    CHECK(moved == before.size());
    if (global)
      CHECK(std::sqrt(total) == doctest::Approx(1e-3).epsilon(1e-2));
    else
      CHECK(std::sqrt(total) == doctest::Approx(1e-3 * std::sqrt(double(moved))).epsilon(1e-2));
  }
}

TEST_CASE("memn2n: spectral clipping (the default): each word table with its temporal rows") {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.hops = 2;
  cfg.te = true;
  memory::TrainOptions opt;
  CHECK(opt.clip_spectral);
  opt.lr = 1.0;
  opt.clip = 1e-3;  // far below every weight's gradient norm
  memory::MemN2N model(cfg, 5);
  const auto groups = model.weight_groups();
  REQUIRE(groups.size() == 3);  // E0+T0, E1+T1, E2+T2
  for (const auto& g : groups) {
    REQUIRE(g.size() == 2);
    CHECK(g[0]->name[0] == 'E');
    CHECK(g[1]->name[0] == 'T');
    CHECK(g[0]->name.substr(1) == g[1]->name.substr(1));
  }
  std::vector<Tensor> before;
  for (const auto* p : model.params().params()) before.push_back(p->value.clone());
  const std::vector<memory::EncodedQA> no_validation;
  memory::MemN2NTraining run(model, all, no_validation, opt);
  run.step(0, 0);
  // the step of each group, stacked, has spectral norm lr * clip; its L2 norm is larger
  const auto& ps = model.params().params();
  for (const auto& g : groups) {
    std::vector<std::unique_ptr<ad::Parameter>> delta;
    std::vector<ad::Parameter*> dp;
    double l2 = 0.0;
    for (ad::Parameter* p : g) {
      const size_t i = static_cast<size_t>(std::find(ps.begin(), ps.end(), p) - ps.begin());
      REQUIRE(i < ps.size());
      delta.push_back(std::make_unique<ad::Parameter>(p->name, p->value.clone()));
      auto& d = delta.back()->grad;
      d = p->value.clone();
      for (int64_t k = 0; k < d.size(); ++k) {
        d[k] = before[i][k] - p->value[k];
        l2 += static_cast<double>(d[k]) * d[k];
      }
      dp.push_back(delta.back().get());
    }
    INFO(g[0]->name);
    CHECK(nn::clip_grad_spectral(dp, 1e9) == doctest::Approx(1e-3).epsilon(1e-3));
    CHECK(std::sqrt(l2) > 1.001e-3);  // not rank one: above the L2 clipping's 1e-3
  }
  // layer-wise and Key-Value: the temporal tables go with A, C and K, V
  cfg.tying = memory::Tying::LayerWise;
  memory::MemN2N lw(cfg, 1);
  auto names = [](const std::vector<std::vector<ad::Parameter*>>& gs) {
    std::string s;
    for (const auto& g : gs) {
      for (const auto* p : g) s += p->name + "+";
      s += " ";
    }
    return s;
  };
  CHECK(names(lw.weight_groups()) == "A+T_A+ C+T_C+ B+ W+ H+ ");
  cfg.kv = true;
  memory::MemN2N kv(cfg, 1);
  CHECK(names(kv.weight_groups()) == "Q+ K+T_K+ V+T_V+ W+ R1+ R2+ ");
}

TEST_CASE("memn2n: model files keep the position-encoding form; older files read as the paper's") {
  const data::Vocab* vocab = nullptr;
  fixture(&vocab, "train");
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.pe = true;
  for (memory::PeForm f : {memory::PeForm::Paper, memory::PeForm::Code}) {
    cfg.pe_form = f;
    memory::MemN2N model(cfg, 2);
    nn::ModelFile m;
    memory::put_memn2n(m, cfg, *vocab, {1});
    nn::put_params(m, model.params());
    CHECK(memory::load_memn2n(m).model->config().pe_form == f);
    CHECK_FALSE(memory::load_memn2n(m).model->config().mask_empty);
    CHECK(memory::load_memn2n(m).model->config().pe_words == 0);
    cfg.pe_words = 12;
    memory::put_memn2n(m, cfg, *vocab, {1});
    CHECK(memory::load_memn2n(m).model->config().pe_words == 12);
    cfg.pe_words = 0;
    m.numbers.erase("arch/pe_code");  // a file written before the choices existed
    m.numbers.erase("arch/mask_empty");
    m.numbers.erase("arch/pe_words");
    CHECK(memory::load_memn2n(m).model->config().pe_words == 0);
    CHECK(memory::load_memn2n(m).model->config().pe_form == memory::PeForm::Paper);
    CHECK(memory::load_memn2n(m).model->config().mask_empty);
  }
}

TEST_CASE("memn2n: training gives the same weights on 1 and 3 threads") {
  const data::Vocab* vocab = nullptr;
  const auto all = fixture(&vocab, "train");
  std::vector<memory::EncodedQA> train(all.begin(), all.begin() + 200), val;
  memory::MemN2NConfig cfg;
  cfg.vocab = vocab->size();
  cfg.pe = cfg.te = true;
  memory::TrainOptions opt;
  opt.epochs = 2;
  opt.rn = true;
  const int before = max_threads();
  std::vector<std::vector<float>> w[2];
  for (int k = 0; k < 2; ++k) {
    set_max_threads(k == 0 ? 1 : 3);
    memory::MemN2N model(cfg, 4);
    train_to_end(model, train, val, opt);
    for (const auto* p : model.params().params()) w[k].push_back(p->value.values());
  }
  set_max_threads(before);
  CHECK(w[0] == w[1]);
}

TEST_CASE(
    "memn2n: empty slots share the softmax with score 0 (the authors' code), whatever the "
    "padding") {
  memory::MemN2NConfig cfg;
  cfg.vocab = 9;
  cfg.dim = 4;
  cfg.hops = 1;
  cfg.memory = 5;
  cfg.init_std = 0.5f;
  memory::MemN2N model(cfg, 6);
  const Tensor& E = model.params().params()[0]->value;  // E0 = A^1 = B
  auto bow = [&](const std::vector<int32_t>& ids) {
    std::vector<double> v(4, 0.0);
    for (int32_t id : ids)
      for (int64_t k = 0; k < 4; ++k) v[static_cast<size_t>(k)] += E.at(id, k);
    return v;
  };
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
    return s;
  };
  const memory::MemBatch b = test::memn2n_toy_batch(cfg);
  Tape t;
  std::vector<Var> att;
  model.forward(t, b, true, &att);
  REQUIRE(att.size() == 1);
  // question 0: slots (most recent first) {4, 8, 6}, {7, 5}, {4, 5, 6}; query {5, 4}; 2 empty
  const std::vector<std::vector<int32_t>> slots = {{4, 8, 6}, {7, 5}, {4, 5, 6}};
  double z = 0;
  for (const auto& sl : slots) z += std::exp(dot(bow(sl), bow({5, 4})));
  for (size_t i = 0; i < 3; ++i)
    CHECK(att[0].value().at(0, static_cast<int64_t>(i)) ==
          doctest::Approx(std::exp(dot(bow(slots[i]), bow({5, 4}))) / (z + 2)));
  // question 1: one sentence {7, 8}, query {7}; 4 empty; padded to 3 slots here, 1 alone
  const double e1 = std::exp(dot(bow({7, 8}), bow({7})));
  CHECK(att[0].value().at(1, 0) == doctest::Approx(e1 / (e1 + 4)));
  CHECK(att[0].value().at(1, 1) == 0.0f);
  std::vector<memory::EncodedQA> one(1);
  one[0].memory = {{7, 8}};
  one[0].query = {7};
  one[0].answer = 8;
  const memory::MemBatch b1 = memory::make_batch(one, {0}, cfg, nullptr);
  CHECK(b1.M == 1);
  Tape t1;
  std::vector<Var> att1;
  model.forward(t1, b1, true, &att1);
  CHECK(att1[0].value().at(0, 0) == doctest::Approx(e1 / (e1 + 4)));
  // masked: the weights of the sentences alone
  cfg.mask_empty = true;
  memory::MemN2N masked(cfg, 6);
  Tape t2;
  std::vector<Var> att2;
  masked.forward(t2, b, true, &att2);
  CHECK(att2[0].value().at(1, 0) == doctest::Approx(1.0));
  CHECK(att2[0].value().at(0, 0) == doctest::Approx(std::exp(dot(bow(slots[0]), bow({5, 4}))) / z));
}

}  // namespace attnkit_unit_memn2n_test
