// lib/attnkit/memory/memn2n*: the position encoding against hand-worked values, the sentence
// encoder against a direct sum, gradient checks through two hops (every tying and option),
// batches (slot order, masks, noisy ages), a tiny task learned perfectly, and determinism.
#include <cmath>
#include <string>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/memn2n.h"
#include "attnkit/memory/memn2n_babi.h"
#include "attnkit/nn/loss.h"
#include "test_util.h"

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
  for (bool p : {false, true}) {
    const auto r = ad::check_gradients(
        [&](Tape& t) { return memory::encode_sentences(t.param(table), ids, 4, {2}, p); },
        {&table});
    INFO("pe " << p << ": " << r.where);
    CHECK(r.ok);
  }
}

namespace {

// A batch of 2 questions by hand: memories of 3 and 1 sentences, V = 9.
memory::MemBatch toy_batch(const memory::MemN2NConfig& cfg) {
  std::vector<memory::EncodedQA> qs(2);
  qs[0].memory = {{4, 5, 6}, {7, 5}, {4, 8, 6}};
  qs[0].query = {5, 4};
  qs[0].answer = 6;
  qs[1].memory = {{7, 8}};
  qs[1].query = {7};
  qs[1].answer = 8;
  return memory::make_batch(qs, {0, 1}, cfg, nullptr);
}

}  // namespace

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
    cfg.init_std = 0.5f;
    memory::MemN2N model(cfg, 3);
    const memory::MemBatch b = toy_batch(cfg);
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
  const memory::MemBatch b = toy_batch(cfg);
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

TEST_CASE("memn2n: learns the tiny task-1 fixture perfectly; same seed, same weights") {
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
  memory::TrainHooks hooks;
  hooks.on_epoch = [&](const memory::EpochStats& s, int, const memory::Phase&) {
    log.push_back(s);
    return true;
  };
  memory::MemN2N model(cfg, 7);
  memory::train_memn2n(model, train, val, opt, hooks);
  REQUIRE(log.size() == 30);
  CHECK(log.back().train_loss < log.front().train_loss);
  CHECK(log[9].lr == doctest::Approx(0.01));
  CHECK(log[10].lr == doctest::Approx(0.005));
  const auto ev = memory::evaluate(model, test);
  CHECK(memory::error_rate(test, ev.predicted) == 0.0);

  // same seed → identical weights; a different seed → different ones
  memory::MemN2N again(cfg, 7), other(cfg, 8);
  memory::train_memn2n(again, train, val, opt);
  opt.seed = 8;
  memory::train_memn2n(other, train, val, opt);
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
  std::vector<memory::EpochStats> log;
  memory::TrainHooks hooks;
  hooks.on_epoch = [&](const memory::EpochStats& s, int, const memory::Phase&) {
    log.push_back(s);
    return true;
  };
  memory::MemN2N model(cfg, 1);
  const memory::Phase end = memory::train_memn2n(model, train, val, opt, hooks);
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
  memory::TrainHooks stop;
  stop.on_epoch = [&](const memory::EpochStats& s, int epoch, const memory::Phase& ph) {
    mid = ph;
    mid_epoch = epoch;
    return s.epoch < 2;
  };
  memory::train_memn2n(a, train, val, opt, stop);
  CHECK(mid_epoch == 2);
  CHECK(mid.linear);
  memory::train_memn2n(a, train, val, opt, {}, mid_epoch, mid);
  for (size_t i = 0; i < a.params().params().size(); ++i)
    CHECK(a.params().params()[i]->value.values() == model.params().params()[i]->value.values());
}
