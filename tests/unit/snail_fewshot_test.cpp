// Few-shot classification with SNAIL (models/snail/fewshot.h): episodes as specified, the
// nearest-class-mean baselines, gradients, errors, and a short meta-training run on
// synthetic classes that learns to read its support set.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/models/snail/fewshot.h"
#include "attnkit/nn/loss.h"
#include "attnkit/train/module.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_snail_fewshot_test {

using namespace attnkit;

namespace {

// `classes` classes of `per` pictures of side `side`: picture i of class c is c's fixed random
// prototype (blocks of `block` x `block` pixels of one value, so that convolutions and
// pooling can see it) plus noise of standard deviation `noise`; pixel 0 holds the picture's
// index (so tests can tell pictures apart) unless noise > 0.
struct Synthetic {
  Tensor images, labels;
};
Synthetic synthetic(int classes, int per, int side, double noise, uint64_t seed, int block = 1) {
  Rng rng(seed);
  const int64_t n = static_cast<int64_t>(classes) * per, hw = int64_t{side} * side;
  Synthetic s{Tensor({n, side, side}), Tensor({n})};
  std::vector<float> proto(static_cast<size_t>(classes * hw));
  for (int64_t c = 0; c < classes; ++c)
    for (int64_t y = 0; y < side; ++y)
      for (int64_t x = 0; x < side; ++x)
        proto[static_cast<size_t>(c * hw + y * side + x)] =
            (y % block == 0 && x % block == 0)
                ? rng.uniform()
                : proto[static_cast<size_t>(c * hw + (y - y % block) * side + x - x % block)];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % classes;
    s.labels[i] = static_cast<float>(c);
    for (int64_t j = 0; j < hw; ++j)
      s.images[i * hw + j] =
          proto[static_cast<size_t>(c * hw + j)] + static_cast<float>(noise * rng.normal());
    if (noise == 0) s.images[i * hw] = static_cast<float>(i);
  }
  return s;
}

}  // namespace

TEST_CASE("fewshot: episodes hold N distinct classes, K supports each, a fresh query") {
  const Synthetic s = synthetic(7, 6, 16, 0.0, 3);
  const models::LabelledImages d = models::select_classes(s.images, s.labels, {}, false, 3, "s");
  CHECK(d.classes == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6});
  Rng rng(11);
  const int64_t E = 200, N = 5, K = 2, T = N * K + 1, hw = 256;
  const models::EpisodeBatch b = models::draw_episodes(d, E, N, K, rng);
  REQUIRE(b.images.shape() == Shape{E, T, 16, 16});
  std::vector<int> query_way(N, 0);
  for (int64_t e = 0; e < E; ++e) {
    std::vector<int32_t> cls_of(N, -1);
    std::vector<int> count(N, 0);
    std::set<float> seen;
    for (int64_t t = 0; t < T; ++t) {
      const float id = b.images[(e * T + t) * hw];  // the picture's index
      CHECK(seen.insert(id).second);                // every picture once an episode
      CHECK(b.classes[static_cast<size_t>(e * T + t)] == s.labels[static_cast<int64_t>(id)]);
    }
    for (int64_t t = 0; t < T - 1; ++t) {
      const int32_t l = b.support_labels[static_cast<size_t>(e * (T - 1) + t)];
      REQUIRE(l >= 0);
      REQUIRE(l < N);
      ++count[static_cast<size_t>(l)];
      const int32_t c = b.classes[static_cast<size_t>(e * T + t)];
      if (cls_of[static_cast<size_t>(l)] < 0) cls_of[static_cast<size_t>(l)] = c;
      CHECK(cls_of[static_cast<size_t>(l)] == c);  // one class a label
    }
    CHECK(std::set<int32_t>(cls_of.begin(), cls_of.end()).size() == static_cast<size_t>(N));
    for (int k : count) CHECK(k == K);
    const int32_t q = b.query_labels[static_cast<size_t>(e)];
    CHECK(b.classes[static_cast<size_t>(e * T + T - 1)] == cls_of[static_cast<size_t>(q)]);
    ++query_way[static_cast<size_t>(q)];
  }
  for (int k : query_way) CHECK(k > E / N / 2);  // every label is asked
  // Seeded: the same episodes again.
  Rng again(11);
  const models::EpisodeBatch b2 = models::draw_episodes(d, E, N, K, again);
  CHECK(b2.images.values() == b.images.values());
  CHECK(b2.support_labels == b.support_labels);
}

TEST_CASE("fewshot: the nearest class mean on pixels is right when classes are far apart") {
  const Synthetic s = synthetic(6, 5, 16, 0.02, 4);
  const models::LabelledImages d = models::select_classes(s.images, s.labels, {}, false, 2, "s");
  Rng rng(5);
  const models::EpisodeBatch b = models::draw_episodes(d, 100, 5, 1, rng);
  const models::FewShotScores sc = models::score_episodes(nullptr, b);
  CHECK(sc.pixel_nn == doctest::Approx(1.0));
  // Pure noise: about chance.
  const Synthetic z = synthetic(6, 40, 16, 5.0, 6);
  const models::LabelledImages dz = models::select_classes(z.images, z.labels, {}, false, 2, "z");
  const models::EpisodeBatch bz = models::draw_episodes(dz, 2000, 2, 1, rng);
  CHECK(models::score_episodes(nullptr, bz).pixel_nn == doctest::Approx(0.5).epsilon(0.15));
}

TEST_CASE("fewshot: gradients of the query's loss through SNAIL and the embedding") {
  models::FewShotConfig c;
  c.ways = 2, c.shots = 1, c.height = c.width = 16, c.channels = 2, c.filters = 2, c.key = 2,
  c.value = 2;
  nn::ParamStore ps;
  Rng init(7);
  models::SnailFewShot m(ps, c, init);
  const Synthetic s = synthetic(3, 4, 16, 0.3, 8);
  const models::LabelledImages d = models::select_classes(s.images, s.labels, {}, false, 2, "s");
  Rng rng(9);
  const models::EpisodeBatch b = models::draw_episodes(d, 3, 2, 1, rng);
  std::vector<int32_t> target(b.query_labels.begin(), b.query_labels.end());
  ad::GradCheckOptions o;
  o.max_per_tensor = 6;
  const ad::GradCheckResult r = ad::check_gradients(
      [&](ad::Tape& t) { return nn::cross_entropy(m(t, b, 0, 3), target); }, ps.params(), o);
  INFO(r.where);
  CHECK(r.ok);
  CHECK(r.checked > 30);
}

TEST_CASE("fewshot: errors name what is wrong") {
  const Synthetic s = synthetic(3, 2, 16, 0.0, 1);
  CHECK_THROWS_AS(models::select_classes(s.images, Tensor({5}), {}, false, 1, "x"), DataError);
  Tensor bad = s.labels.clone();
  bad[2] = 1.5f;
  CHECK_THROWS_WITH_AS(models::select_classes(s.images, bad, {}, false, 1, "x"),
                       doctest::Contains("not a class id"), DataError);
  CHECK_THROWS_WITH_AS(models::select_classes(s.images, s.labels, {}, false, 3, "x"),
                       doctest::Contains("has 2 pictures"), DataError);
  CHECK_THROWS_WITH_AS(models::select_classes(s.images, s.labels, {0, 9}, false, 1, "x"),
                       doctest::Contains("class 9 has 0"), DataError);
  const models::LabelledImages d = models::select_classes(s.images, s.labels, {}, false, 1, "x");
  Rng rng(1);
  CHECK_THROWS_WITH_AS(models::draw_episodes(d, 1, 4, 1, rng), doctest::Contains("4 ways"),
                       DataError);
  CHECK_THROWS_AS(models::parse_class_list("1,,2", "--classes"), UsageError);
  CHECK_THROWS_WITH_AS(models::parse_class_list("1,2,1", "--classes"),
                       doctest::Contains("named twice"), UsageError);
  CHECK(models::parse_class_list("4,0,2", "--classes") == std::vector<int32_t>{0, 2, 4});
  models::FewShotConfig c;
  c.height = 8;
  CHECK_THROWS_AS(c.validate(), UsageError);
}

TEST_CASE("fewshot: a short meta-training run learns to read its support set" *
          doctest::test_suite("slow")) {
  // 2-way 1-shot over 12 random prototypes with noise; evaluation on 6 others never seen.
  models::FewShotConfig c;
  c.ways = 2, c.shots = 1, c.height = c.width = 16, c.channels = 8, c.filters = 8, c.key = 8,
  c.value = 8;
  const Synthetic s = synthetic(18, 20, 16, 0.15, 12, 8);
  std::vector<int32_t> tr, ev;
  for (int32_t k = 0; k < 18; ++k) (k < 12 ? tr : ev).push_back(k);
  models::FewShotTrainOptions o;
  o.batch = 32, o.lr = 3e-3, o.eval_episodes = 500;
  models::FewShotTraining m(c, o, models::select_classes(s.images, s.labels, tr, false, 2, "s"),
                            models::select_classes(s.images, s.labels, ev, false, 2, "s"), 600, 13);
  train::Tapes tapes;
  nn::TrainState st;
  const double before = m.evaluate()[0].second;
  for (int64_t step = 0; step < 600; ++step) {
    const int64_t rows = m.begin_batch(st);
    train::step(m, tapes, rows, 13, step, 1.0);
    ++st.step;
  }
  const train::Metrics after = m.evaluate();
  MESSAGE("2-way 1-shot on held-out synthetic classes: accuracy " << before << " before, "
                                                                  << after[0].second << " after "
                                                                  << "600 steps (chance 0.5)");
  CHECK(after[0].second > 0.7);  // seeds 13, 21, 22: 0.96, 1.00, 0.92
}

}  // namespace attnkit_unit_snail_fewshot_test
