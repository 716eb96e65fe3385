// Bandits for meta-RL (models/snail/bandit.h): the strategies' expected returns from theory, the
// policy's inputs, and that a short meta-training run improves on random play.
#include "attnkit/models/snail/bandit.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/train/module.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_bandit_test {

using namespace attnkit;

TEST_CASE("bandit: random and oracle returns agree with theory; Thompson learns") {
  // K arms with p ~ U[0, 1]: a random pull pays 1/2 on average, the best arm K / (K + 1).
  const int64_t k = 5, n = 10;
  const auto scores = rl::compare_agents(nullptr, k, n, 4000, 17);
  REQUIRE(scores.size() == rl::baseline_names().size());
  for (const auto& s : scores) {
    if (s.agent == "random") CHECK(std::fabs(s.mean - n * 0.5) < 4 * s.se);
    if (s.agent == "oracle") CHECK(std::fabs(s.mean - n * double(k) / (k + 1)) < 4 * s.se);
  }
  auto mean = [&](const char* a) {
    for (const auto& s : scores)
      if (s.agent == a) return s.mean;
    return -1.0;
  };
  CHECK(mean("thompson") > mean("random") + 0.5);
  CHECK(mean("ucb1") > mean("random") + 0.3);
  CHECK(mean("oracle") > mean("thompson"));
  CHECK_THROWS_AS(rl::play_baseline("gittins", rl::BanditBatch{}, 3, *std::make_unique<Rng>(1)),
                  UsageError);
}

TEST_CASE("bandit: the policy reads the previous arm, the previous reward and t / N") {
  rl::Rollout r;
  r.episodes = 1, r.pulls = 4;
  r.actions = {2, 0, 1, 1};
  r.rewards = {1, 0, 1, 0};
  const Tensor x = rl::policy_inputs(r, 3, 3);  // [1, 3, 5]
  REQUIRE(x.shape() == Shape{1, 3, 5});
  const float want[15] = {0, 0, 0, 0, 0.0f,   // t = 0: nothing yet
                          0, 0, 1, 1, 0.25f,  // t = 1: arm 2 paid 1
                          1, 0, 0, 0, 0.5f};  // t = 2: arm 0 paid 0
  for (int i = 0; i < 15; ++i) CHECK(x[i] == want[i]);
}

TEST_CASE("bandit: a short meta-training run beats random play, the same for any slices" *
          doctest::test_suite("slow")) {
  rl::BanditConfig c;
  c.arms = 2, c.pulls = 6, c.width = 16, c.filters = 8, c.key = 8, c.value = 8;
  rl::BanditTrainOptions o;
  o.batch = 32, o.lr = 3e-3, o.eval_episodes = 2000;
  rl::BanditTraining m(c, o, 1000, 5);
  train::Tapes tapes;
  nn::TrainState s;
  const double before = m.evaluate()[0].second;
  for (int64_t step = 0; step < 1000; ++step) {
    const int64_t rows = m.begin_batch(s);
    train::step(m, tapes, rows, 5, step, 1.0);
    ++s.step;
  }
  const double after = m.evaluate()[0].second;
  MESSAGE("2-armed bandits of 6 pulls: mean return "
          << before << " before, " << after << " after 1000 steps (random 3.0, oracle 4.0)");
  CHECK(after > before + 0.3);
  CHECK(after > 3.3);
}

TEST_CASE("bandit: training keeps its best evaluation's model, in checkpoints too") {
  rl::BanditConfig c;
  c.arms = 2, c.pulls = 4, c.width = 8, c.filters = 4, c.key = 4, c.value = 4;
  rl::BanditTrainOptions o;
  o.batch = 8, o.eval_episodes = 300;
  rl::BanditTraining m(c, o, 10, 3);
  auto snapshot = [&] {
    std::map<std::string, Tensor> v;
    for (const ad::Parameter* p : m.params().params()) v[p->name] = p->value.clone();
    return v;
  };
  auto same = [](const Tensor& a, const Tensor& b) {
    if (a.shape() != b.shape()) return false;
    for (int64_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  };
  const auto p0 = snapshot();
  const double e0 = m.evaluate()[0].second;
  // Other parameters (every weight moved by up to +-1.5: another policy).
  for (ad::Parameter* p : m.params().params())
    for (int64_t i = 0; i < p->value.size(); ++i)
      p->value[i] += 0.5f * static_cast<float>((i * 3 + 1) % 7 - 3);
  const auto p1 = snapshot();
  const double e1 = m.evaluate()[0].second;
  REQUIRE(e0 != e1);
  const auto& best = e0 > e1 ? p0 : p1;
  nn::ModelFile ck;
  m.save_state(ck);
  CHECK(ck.number("best/eval_return") == std::max(e0, e1));
  nn::ModelFile f;
  nn::put_params(f, m.params());  // what the trainer writes: the last ("param/<name>")
  const size_t written = f.tensors.size();
  m.finish(f);
  CHECK(f.tensors.size() == written);  // replaced, none added under other names
  CHECK(f.number("result/eval_return") == std::max(e0, e1));
  CHECK(f.number("result/last_eval_return") == e1);
  CHECK(m.score() == -std::max(e0, e1));
  for (const auto& [k, t] : best) CHECK(same(f.tensor("param/" + k), t));
  // ... and what snail-run loads (nn::get_params) is the best.
  rl::BanditTraining loaded(c, o, 10, 3);
  nn::get_params(f, loaded.params());
  for (const ad::Parameter* p : loaded.params().params()) CHECK(same(p->value, best.at(p->name)));
  // A resumed module takes the best from the checkpoint: a worse evaluation keeps it.
  rl::BanditTraining r(c, o, 10, 3);
  r.load_state(ck);
  nn::ModelFile g;
  nn::put_params(g, r.params());
  r.finish(g);  // evaluates its own (initial) parameters first: p0, e0
  CHECK(g.number("result/eval_return") == std::max(e0, e1));
  for (const auto& [k, t] : best) CHECK(same(g.tensor("param/" + k), t));
}

}  // namespace attnkit_unit_bandit_test
