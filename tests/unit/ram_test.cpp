// models/ram/model.h, the recurrent attention model: gradient checks, the REINFORCE term's sign,
// evaluation independent of threads, a learned toy task where looking matters, and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ram/model.h"
#include "attnkit/models/ram/run.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/params.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/module.h"
#include "attnkit/vision/glimpse.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ram_test {

using namespace attnkit;

namespace {

models::RamConfig small_config(const std::string& core = "rnn") {
  models::RamConfig c;
  c.glimpse.size = 3, c.glimpse.scales = 2, c.glimpse.factor = 2;
  c.glimpses = 3, c.glimpse_hidden = 6, c.hidden = 8, c.core = core, c.loc_std = 0.2;
  c.height = 12, c.width = 12, c.classes = 3;
  return c;
}

Tensor random_images(int64_t n, int64_t h, int64_t w, uint64_t seed) {
  Rng r(seed);
  Tensor x({n, h, w});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = r.uniform();
  return x;
}

std::vector<Tensor> random_locations(int64_t steps, int64_t n, uint64_t seed) {
  Rng r(seed);
  std::vector<Tensor> ls;
  for (int64_t s = 0; s < steps; ++s) {
    Tensor l({n, 2});
    for (int64_t i = 0; i < l.size(); ++i) l[i] = static_cast<float>(1.6 * r.uniform() - 0.8);
    ls.push_back(std::move(l));
  }
  return ls;
}

// The toy task: 12 x 12 images of noise whose top-left 6 x 6 quarter says the class (all 1:
// class 1, all 0: class 0). One 3 x 3 patch a glimpse: only a glimpse there can tell.
models::ImageSet corner_task(int64_t n, uint64_t seed) {
  Rng r(seed);
  models::ImageSet s;
  s.images = Tensor({n, 12, 12});
  for (int64_t i = 0; i < n; ++i) {
    const int32_t y = static_cast<int32_t>(r.below(2));
    s.labels.push_back(y);
    float* p = s.images.data() + i * 144;
    for (int64_t k = 0; k < 144; ++k) p[k] = r.below(2) ? 1.0f : 0.0f;
    for (int64_t a = 0; a < 6; ++a)
      for (int64_t b = 0; b < 6; ++b) p[a * 12 + b] = static_cast<float>(y);
  }
  return s;
}

void set_all(Tensor& t, float v) { std::fill(t.data(), t.data() + t.size(), v); }

}  // namespace

TEST_CASE("ram: the glimpse network passes the gradient check") {
  nn::ParamStore ps;
  Rng init(2);
  const models::Ram m(ps, small_config(), init);
  const Tensor patches = random_images(4, 1, 18, 2);
  const Tensor locs = std::move(random_locations(1, 4, 3)[0]);
  // ReLU has kinks: the inputs are such that no pre-activation is within 0.01 of one (a
  // precondition checked here), so the differences with eps 1e-3 stay on one side.
  {
    ad::Tape t;
    auto lin = [&](const std::string& n, ad::Var v) {
      return ad::linear(v, t.param(ps.get(n + ".W")), t.param(ps.get(n + ".b")));
    };
    Tensor p = patches.clone();
    p.reshape({4, 18});
    ad::Var hg = lin("ram.glimpse", t.constant(std::move(p)));
    ad::Var hl = lin("ram.where", t.constant(locs.clone()));
    ad::Var pre = ad::add(lin("ram.what_g", ad::relu(hg)), lin("ram.where_g", ad::relu(hl)));
    for (ad::Var v : {hg, hl, pre})
      for (int64_t i = 0; i < v.size(); ++i) REQUIRE(std::fabs(v.value()[i]) > 0.01f);
  }
  std::vector<ad::Parameter*> ps_g;
  for (const char* n : {"ram.glimpse.W", "ram.glimpse.b", "ram.where.W", "ram.where.b",
                        "ram.what_g.W", "ram.what_g.b", "ram.where_g.W", "ram.where_g.b"})
    ps_g.push_back(&ps.get(n));
  const auto r = ad::check_gradients(
      [&](ad::Tape& t) {
        Tensor p = patches.clone();
        p.reshape({4, 18});
        return m.glimpse_net(t, t.constant(std::move(p)), t.constant(locs.clone()));
      },
      ps_g, {1e-3, 2e-2, 1e-3});
  CHECK_MESSAGE(r.ok, r.where);
  // And with respect to its inputs.
  Tensor p = patches.clone();
  p.reshape({4, 18});
  std::vector<Tensor> in;
  in.push_back(std::move(p));
  in.push_back(locs.clone());
  const auto ri = ad::check_gradients(
      [&](ad::Tape& t, const std::vector<ad::Var>& v) { return m.glimpse_net(t, v[0], v[1]); }, in,
      {1e-3, 2e-2, 1e-3});
  CHECK_MESSAGE(ri.ok, ri.where);
}

TEST_CASE("ram: the convolutional glimpse network: shapes, parameters, gradient check") {
  models::RamConfig c = small_config();
  c.glimpse.size = 4, c.glimpse_net = "conv", c.glimpse_channels = {2, 3};
  CHECK(c.what_features() == 2 * 3 * 1 * 1);  // k = 2 patches, 3 channels of 4 / 2^2 = 1 pixel
  CHECK(small_config().what_features() == 18);
  nn::ParamStore ps;
  Rng init(4);
  const models::Ram m(ps, c, init);
  CHECK(ps.get("ram.gconv.b0.weight").value.shape() == Shape{2, 1, 3, 3});
  CHECK(ps.get("ram.gconv.b1.bias").value.shape() == Shape{3});
  CHECK(ps.get("ram.glimpse.W").value.dim(0) * ps.get("ram.glimpse.W").value.dim(1) == 6 * 6);
  const Tensor patches = random_images(3, 1, 32, 8);
  const Tensor locs = std::move(random_locations(1, 3, 9)[0]);
  // One patch's value moves the output of its own image only (the k patches of an image are
  // read together, images apart).
  auto g_of = [&](const Tensor& p) {
    ad::Tape t;
    Tensor q = p.clone();
    q.reshape({3, 32});
    return m.glimpse_net(t, t.constant(std::move(q)), t.constant(locs.clone())).value().clone();
  };
  const Tensor g0 = g_of(patches);
  CHECK(g0.shape() == Shape{3, 8});
  Tensor moved = patches.clone();
  for (int64_t j = 32; j < 64; ++j) moved[j] = 1.0f - moved[j];  // image 2's patches
  const Tensor g1 = g_of(moved);
  double d0 = 0, d1 = 0, d2 = 0;
  for (int64_t j = 0; j < 8; ++j) {
    d0 += std::fabs(g1[j] - g0[j]);
    d1 += std::fabs(g1[8 + j] - g0[8 + j]);
    d2 += std::fabs(g1[16 + j] - g0[16 + j]);
  }
  CHECK(d0 == 0.0);
  CHECK(d1 > 0.0);
  CHECK(d2 == 0.0);
  // conv2d, ReLU and max pooling are checked ops; this checks their wiring here.
  const auto r = ad::check_gradients(
      [&](ad::Tape& t) {
        Tensor p = patches.clone();
        p.reshape({3, 32});
        return m.glimpse_net(t, t.constant(std::move(p)), t.constant(locs.clone()));
      },
      ps.params(), {1e-3, 2e-2, 1e-3});
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked > 50);
}

TEST_CASE("ram: the whole differentiable part passes the gradient check (rnn and lstm cores)") {
  for (const char* core : {"rnn", "lstm"}) {
    CAPTURE(core);
    nn::ParamStore ps;
    Rng init(5);
    const models::Ram m(ps, small_config(core), init);
    const Tensor x = random_images(3, 12, 12, 6);
    const std::vector<Tensor> fixed = random_locations(3, 3, 7);
    const std::vector<int32_t> labels = {0, 2, 1};
    // The classifier's path: the cross-entropy and the logits, every parameter.
    const auto r = ad::check_gradients(
        [&](ad::Tape& t) {
          Rng unused(0);
          models::Ram::Out o = m.run(t, x, unused, &fixed);
          return ad::concat(
              {ad::reshape(nn::cross_entropy(o.logits, labels), {1}), ad::reshape(o.logits, {9})},
              0);
        },
        ps.params(), {1e-3, 2e-2, 1e-3});
    CHECK_MESSAGE(r.ok, r.where);
    CHECK(r.checked > 100);
    // The policy's log-probabilities of the given locations and the baselines, with respect
    // to the locator and the baseline (they read the core's state as a constant).
    std::vector<ad::Parameter*> heads;
    for (const char* n : {"ram.locator.W", "ram.locator.b", "ram.baseline.W", "ram.baseline.b"})
      heads.push_back(&ps.get(n));
    const auto rh = ad::check_gradients(
        [&](ad::Tape& t) {
          Rng unused(0);
          models::Ram::Out o = m.run(t, x, unused, &fixed);
          std::vector<ad::Var> parts;
          for (auto& v : o.log_probs) parts.push_back(ad::reshape(v, {3}));
          for (auto& v : o.baselines) parts.push_back(ad::reshape(v, {3}));
          return ad::concat(parts, 0);
        },
        heads, {1e-3, 2e-2, 1e-3});
    CHECK_MESSAGE(rh.ok, rh.where);
    // And nothing of them reaches the core or the glimpse network.
    for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
    ad::Tape t;
    Rng unused(0);
    models::Ram::Out o = m.run(t, x, unused, &fixed);
    t.backward(ad::add(ad::sum(ad::concat(o.log_probs, 0)), ad::sum(ad::concat(o.baselines, 0))));
    for (ad::Parameter* p : ps.params()) {
      const bool head =
          p->name.rfind("ram.locator", 0) == 0 || p->name.rfind("ram.baseline", 0) == 0;
      double g = 0;
      for (int64_t i = 0; i < p->grad.size(); ++i) g += std::fabs(p->grad[i]);
      CAPTURE(p->name);
      if (head)
        CHECK(g > 0);
      else
        CHECK(g == 0);
    }
  }
}

TEST_CASE("ram: the Gaussian location policy's log-probability gradient w.r.t. the mean") {
  Rng r(11);
  Tensor mu({4, 2}), a({4, 2});
  for (int64_t i = 0; i < 8; ++i) mu[i] = r.uniform() - 0.5f, a[i] = r.uniform() - 0.5f;
  const float sd = 0.15f;
  std::vector<Tensor> in;
  in.push_back(mu.clone());
  const auto res = ad::check_gradients(
      [&](ad::Tape&, const std::vector<ad::Var>& v) { return rl::gaussian_log_prob(v[0], a, sd); },
      in, {1e-3, 2e-2, 1e-3});
  CHECK_MESSAGE(res.ok, res.where);
  // Analytically (a − μ) / σ².
  ad::Tape t;
  ad::Var m = t.input(mu.clone());
  t.backward(ad::sum(rl::gaussian_log_prob(m, a, sd)));
  for (int64_t i = 0; i < 8; ++i)
    CHECK(m.grad()[i] == doctest::Approx((a[i] - mu[i]) / (sd * sd)).epsilon(1e-4));
}

TEST_CASE("ram: a descent step on the REINFORCE term moves the policy toward rewarded locations") {
  // One image, fixed locations; the reward is 1 when the label is the predicted class. With
  // the baseline at 0 and a right answer (advantage +1), a descent step on the loss must
  // move the locator toward the chosen location (the direction that raises log π(l)); with
  // the baseline at 1 and a wrong answer (advantage −1), away from it. The cross-entropy and
  // the baseline's regression do not reach the locator, so the loss's gradient on it is
  // exactly −A ∇ log π(l).
  for (int rewarded = 0; rewarded < 2; ++rewarded) {
    CAPTURE(rewarded);
    models::RamConfig c = small_config();
    c.glimpses = 2;
    nn::ParamStore ps;
    Rng init(21);
    const models::Ram m(ps, c, init);
    const Tensor x = random_images(1, 12, 12, 22);
    std::vector<Tensor> fixed;
    fixed.push_back(Tensor({1, 2}, std::vector<float>{0.1f, 0.2f}));
    fixed.push_back(Tensor({1, 2}, std::vector<float>{0.6f, -0.5f}));
    Rng unused(0);
    ad::Tape t0;
    const int32_t pred = rl::argmax_rows(m.run(t0, x, unused, &fixed).logits.value())[0];
    const int32_t label = rewarded ? pred : (pred + 1) % 3;
    set_all(ps.get("ram.baseline.W").value, 0.0f);
    set_all(ps.get("ram.baseline.b").value, rewarded ? 0.0f : 1.0f);
    // ∇ log π(l) on the locator: the direction toward l.
    for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
    ad::Tape t1;
    t1.backward(ad::sum(m.run(t1, x, unused, &fixed).log_probs.at(0)));
    const Tensor up_b = ps.get("ram.locator.b").grad.clone();
    const Tensor up_w = ps.get("ram.locator.W").grad.clone();
    // The loss's gradient.
    for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
    ad::Tape t2;
    models::RamLossStats st;
    t2.backward(m.loss(t2, x, {label}, unused, {}, &st, &fixed));
    REQUIRE(st.paths == 1);
    REQUIRE(st.correct == rewarded);
    const double adv = rewarded ? 1.0 : -1.0;
    double toward = 0.0;
    for (int64_t i = 0; i < 2; ++i) {
      const double g = ps.get("ram.locator.b").grad[i];
      CHECK(g == doctest::Approx(-adv * up_b[i]).epsilon(1e-4));
      toward += -g * up_b[i];
    }
    for (int64_t i = 0; i < up_w.size(); ++i)
      CHECK(ps.get("ram.locator.W").grad[i] == doctest::Approx(-adv * up_w[i]).epsilon(1e-4));
    if (rewarded)
      CHECK(toward > 0.0);
    else
      CHECK(toward < 0.0);
  }
}

TEST_CASE("ram: M paths per image: the leave-one-out baseline and the probability reward") {
  // One image, M = 2 paths with fixed locations, reward prob. Each path's advantage is its
  // reward minus the other's: the locator's gradient must be exactly
  //   −½ [(r0 − r1) ∇ log π(path 0) + (r1 − r0) ∇ log π(path 1)],
  // r_m the probability path m's final softmax gives the label (each path computed alone).
  models::RamConfig c = small_config();
  c.glimpses = 2;
  nn::ParamStore ps;
  Rng init(41);
  const models::Ram m(ps, c, init);
  {  // sharper class probabilities, so that the two paths' rewards differ clearly
    Tensor& w = ps.get("ram.action.W").value;
    for (int64_t i = 0; i < w.size(); ++i) w[i] *= 10.0f;
  }
  const Tensor x = random_images(1, 12, 12, 42);
  const int32_t label = 0;
  std::vector<std::vector<Tensor>> path(2);
  path[0].push_back(Tensor({1, 2}, std::vector<float>{0.1f, 0.2f}));
  path[0].push_back(Tensor({1, 2}, std::vector<float>{0.6f, -0.5f}));
  path[1].push_back(Tensor({1, 2}, std::vector<float>{-0.7f, 0.4f}));
  path[1].push_back(Tensor({1, 2}, std::vector<float>{-0.2f, 0.9f}));
  Rng unused(0);
  double r[2];
  Tensor up_w[2], up_b[2];
  for (int k = 0; k < 2; ++k) {
    for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
    ad::Tape t;
    const models::Ram::Out o = m.run(t, x, unused, &path[k]);
    r[k] = ad::softmax(o.logits).value()[label];
    t.backward(ad::sum(o.log_probs.at(0)));
    up_w[k] = ps.get("ram.locator.W").grad.clone();
    up_b[k] = ps.get("ram.locator.b").grad.clone();
  }
  REQUIRE(std::fabs(r[0] - r[1]) > 1e-2);  // the paths' rewards differ
  // Both paths in one loss: rows 0 and 1 are the image's two paths.
  std::vector<Tensor> both;
  for (int s = 0; s < 2; ++s) {
    Tensor l({2, 2});
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 2; ++j) l[2 * k + j] = path[k][s][j];
    both.push_back(std::move(l));
  }
  models::RamPolicyOptions po;
  po.samples = 2, po.reward = "prob";
  models::RamLossStats st;
  for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
  ad::Tape t;
  t.backward(m.loss(t, x, {label}, unused, po, &st, &both));
  CHECK(st.paths == 2);
  CHECK(st.means == 4);
  const double a0 = r[0] - r[1], a1 = r[1] - r[0];
  for (int64_t i = 0; i < up_w[0].size(); ++i)
    CHECK(ps.get("ram.locator.W").grad[i] ==
          doctest::Approx(-0.5 * (a0 * up_w[0][i] + a1 * up_w[1][i])).epsilon(1e-4));
  for (int64_t i = 0; i < 2; ++i)
    CHECK(ps.get("ram.locator.b").grad[i] ==
          doctest::Approx(-0.5 * (a0 * up_b[0][i] + a1 * up_b[1][i])).epsilon(1e-4));
  // The learned baseline is not used with M >= 2: no gradient reaches it.
  for (int64_t i = 0; i < ps.get("ram.baseline.W").grad.size(); ++i)
    CHECK(ps.get("ram.baseline.W").grad[i] == 0.0f);
  // The 0/1 reward with M = 2 and both paths right (or both wrong): zero advantages.
  po.reward = "correct";
  for (ad::Parameter* p : ps.params()) set_all(p->grad, 0.0f);
  ad::Tape t2;
  t2.backward(m.loss(t2, x, {label}, unused, po, &st, &both));
  if (st.correct != 1)
    for (int64_t i = 0; i < 2; ++i) CHECK(ps.get("ram.locator.b").grad[i] == 0.0f);
  po.samples = 0;
  CHECK_THROWS_WITH_AS(po.validate(), doctest::Contains("loc-samples must be from 1 to 64"),
                       UsageError);
  po.samples = 1, po.reward = "accuracy";
  CHECK_THROWS_WITH_AS(po.validate(), doctest::Contains("correct or prob"), ChoiceError);
}

TEST_CASE("ram: --loc-lr steps the location network alone at its own rate") {
  models::RamConfig c = small_config();
  models::RamTrainOptions o;
  o.batch = 8, o.lr = 1e-2, o.loc_lr = 1e-5;
  models::ImageSet data;
  data.images = random_images(16, 12, 12, 51);
  for (int i = 0; i < 16; ++i) data.labels.push_back(i % 3);
  models::RamTraining tr(c, o, std::move(data), models::ImageSet{}, 1, 0, 5, "");
  const nn::Optimizer& opt = const_cast<models::RamTraining&>(tr).optimizer();
  int scaled = 0;
  for (size_t k = 0; k < opt.params().size(); ++k) {
    const std::string& n = opt.params()[k]->name;
    CAPTURE(n);
    const bool loc = n.rfind("ram.locator.", 0) == 0;
    CHECK(opt.lr_scale(k) == doctest::Approx(loc ? 1e-3 : 1.0));
    scaled += loc;
  }
  CHECK(scaled == 2);
  // One Adam step: the locator's weights move by about loc_lr, the action network's by lr.
  std::map<std::string, Tensor> before;
  for (const ad::Parameter* p : opt.params()) before[p->name] = p->value.clone();
  train::Tapes tapes;
  nn::TrainState s;
  train::step(tr, tapes, tr.begin_batch(s), 5, 0, 5.0);
  auto moved = [&](const std::string& n) {
    double mx = 0.0;
    const Tensor& v = const_cast<models::RamTraining&>(tr).params().get(n).value;
    for (int64_t i = 0; i < v.size(); ++i)
      mx = std::max(mx, static_cast<double>(std::fabs(v[i] - before[n][i])));
    return mx;
  };
  CHECK(moved("ram.locator.b") <= 1.01e-5);
  CHECK(moved("ram.locator.b") > 0.0);
  CHECK(moved("ram.action.b") > 0.5e-2);
  o.loc_lr = -1;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("loc-lr must be >= 0"), UsageError);
}

TEST_CASE("ram: predictions do not depend on the thread count; samples average") {
  nn::ParamStore ps;
  Rng init(31);
  const models::Ram m(ps, small_config("lstm"), init);
  const Tensor x = random_images(230, 12, 12, 32);
  models::RamTrace t1, t2;
  const Tensor p1 = models::ram_predict(m, x, 3, 7, 1, &t1, true);
  const Tensor p2 = models::ram_predict(m, x, 3, 7, 2, &t2, true);
  REQUIRE(p1.shape() == Shape{230, 3});
  for (int64_t i = 0; i < p1.size(); ++i) REQUIRE(p1[i] == p2[i]);
  REQUIRE(t1.locations.size() == 3);
  REQUIRE(t1.patches.size() == 3);
  for (size_t g = 0; g < 3; ++g)
    for (int64_t i = 0; i < t1.locations[g].size(); ++i) {
      REQUIRE(t1.locations[g][i] == t2.locations[g][i]);
      REQUIRE(std::fabs(t1.locations[g][i]) <= 1.0f);
    }
  // Each row is a distribution; other seeds give other locations.
  for (int64_t i = 0; i < 230; ++i)
    CHECK(p1[3 * i] + p1[3 * i + 1] + p1[3 * i + 2] == doctest::Approx(1.0).epsilon(1e-5));
  models::RamTrace t3;
  models::ram_predict(m, x, 1, 8, 1, &t3);
  CHECK(t3.locations[0][0] != t1.locations[0][0]);
  // The trace's patches are the sensor's view of the traced locations.
  Tensor one({1, 12, 12});
  std::copy(x.data() + 5 * 144, x.data() + 6 * 144, one.data());
  Tensor l({1, 2}, std::vector<float>{t1.locations[1][10], t1.locations[1][11]});
  const Tensor g = vision::glimpse(one, l, m.config().glimpse);
  for (int64_t i = 0; i < g.size(); ++i) CHECK(g[i] == t1.patches[1][5 * 18 + i]);
  const std::string tsv = models::ram_trace_tsv(m.config(), t1);
  CHECK(tsv.rfind("image\tglimpse\tx\ty\ttop1\tleft1\tside1\ttop2\tleft2\tside2\n", 0) == 0);
  CHECK(std::count(tsv.begin(), tsv.end(), '\n') == 1 + 230 * 3);
}

namespace {

// Trains on the corner task and returns the test error.
double train_corner(bool random, uint64_t seed, int64_t steps) {
  models::RamConfig c;
  c.glimpse.size = 3, c.glimpse.scales = 1;
  c.glimpses = 2, c.glimpse_hidden = 16, c.hidden = 32, c.loc_std = 0.2;
  c.random_glimpses = random;
  models::RamTrainOptions o;
  o.batch = 32, o.lr = 3e-3;
  models::RamTraining tr(c, o, corner_task(2000, seed), models::ImageSet{}, steps, 0, seed, "");
  train::Tapes tapes;
  nn::TrainState s;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t rows = tr.begin_batch(s);
    train::step(tr, tapes, rows, seed, i, 5.0);
    s.advance(tr.batches_per_epoch());
  }
  const models::ImageSet test = corner_task(500, seed + 100);
  return models::ram_error(models::ram_predict(tr.model(), test.images, 1, 3, 1), test.labels);
}

}  // namespace

TEST_CASE("ram: learns where to look on a toy task where only one corner tells the class" *
          doctest::test_suite("slow")) {
  // Two glimpses of 3 x 3, the first uniform: random locations see the quarter in about
  // half the images. Measured over seeds 1-4 (600 steps of 32): learned 0.000 every time,
  // random 0.20-0.23.
  for (uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    const double learned = train_corner(false, seed, 600);
    const double random = train_corner(true, seed, 600);
    MESSAGE("corner task seed " << seed << ": learned " << learned << ", random " << random);
    CHECK(learned < 0.05);
    CHECK(random > 0.15);
  }
}

TEST_CASE("ram: errors") {
  models::RamConfig c = small_config();
  c.glimpses = 0;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c = small_config(), c.core = "gru";
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("rnn or lstm"), UsageError);
  c = small_config(), c.loc_std = 0;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c = small_config(), c.glimpse.size = 0;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c = small_config(), c.glimpse_net = "cnn";
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("fc or conv"), UsageError);
  c = small_config(), c.glimpse_net = "conv", c.glimpse_channels = {4, 4};  // g = 3 < 2^2
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("glimpse-size 3 is too small for 2 conv"),
                       UsageError);
  c = small_config(), c.glimpse_net = "conv", c.glimpse_channels = {};
  CHECK_THROWS_AS(c.validate(), UsageError);
  nn::ParamStore ps;
  Rng init(1);
  const models::Ram m(ps, small_config(), init);
  ad::Tape t;
  Rng r(0);
  CHECK_THROWS_AS(m.run(t, random_images(2, 10, 12, 1), r), ShapeError);
  CHECK_THROWS_AS(m.loss(t, random_images(2, 12, 12, 1), {0}, r), ShapeError);
  std::vector<Tensor> two = random_locations(2, 2, 1);
  CHECK_THROWS_AS(m.run(t, random_images(2, 12, 12, 1), r, &two), ShapeError);
  CHECK_THROWS_AS(models::ram_predict(m, random_images(2, 12, 12, 1), 0, 1, 1), UsageError);
  CHECK_THROWS_AS(models::ram_predict(m, random_images(2, 11, 12, 1), 1, 1, 1), ShapeError);
  // Image files.
  auto npz = [](const std::string& name, std::vector<std::pair<std::string, Tensor>> a) {
    const std::string p = "ram_test_" + name + ".npz";
    io::write_npz(p, a);
    return p;
  };
  {
    std::vector<std::pair<std::string, Tensor>> a;
    a.emplace_back("images", Tensor({2, 4, 4}));
    const std::string p = npz("nolabels", std::move(a));
    CHECK_THROWS_WITH_AS(models::read_image_set(p), doctest::Contains("no array 'labels'"),
                         DataError);
  }
  {
    std::vector<std::pair<std::string, Tensor>> a;
    a.emplace_back("images", Tensor({2, 2, 4, 4}));
    a.emplace_back("labels", Tensor({2}));
    CHECK_THROWS_WITH_AS(models::read_image_set(npz("rank", std::move(a))),
                         doctest::Contains("[N, H, W]"), DataError);
  }
  {
    std::vector<std::pair<std::string, Tensor>> a;
    a.emplace_back("images", Tensor({2, 4, 4}));
    a.emplace_back("labels", Tensor({3}));
    CHECK_THROWS_WITH_AS(models::read_image_set(npz("count", std::move(a))),
                         doctest::Contains("labels must be [2]"), DataError);
  }
  {
    std::vector<std::pair<std::string, Tensor>> a;
    a.emplace_back("images", Tensor({2, 4, 4}));
    a.emplace_back("labels", Tensor({2}, std::vector<float>{1.0f, 2.5f}));
    CHECK_THROWS_WITH_AS(models::read_image_set(npz("frac", std::move(a))),
                         doctest::Contains("label 2 is 2.5, not a class id"), DataError);
  }
  {
    std::vector<std::pair<std::string, Tensor>> a;
    a.emplace_back("images", Tensor({2, 4, 4}, std::nanf("")));
    a.emplace_back("labels", Tensor({2}));
    CHECK_THROWS_WITH_AS(models::read_image_set(npz("nan", std::move(a))),
                         doctest::Contains("matrix 1, row 1, column 1 is NaN"), DataError);
  }
  for (const char* n : {"nolabels", "rank", "count", "frac", "nan"})
    std::remove((std::string("ram_test_") + n + ".npz").c_str());
}

TEST_CASE("ram-run --draw: captions name Fashion-MNIST's classes, other models' by number") {
  models::RamConfig c;
  c.classes = 10;
  CHECK(models::ram_class_name(c, 3) == "3 dress");
  CHECK(models::ram_class_name(c, 9) == "9 boot");
  c.classes = 4;  // a toy task: its classes have no names
  CHECK(models::ram_class_name(c, 3) == "3");
}

TEST_CASE("ram: training keeps its best epoch's model, in checkpoints too") {
  models::RamConfig c = small_config();
  models::RamTrainOptions o;
  o.batch = 8, o.eval_samples = 1;
  auto set = [](uint64_t seed) {
    models::ImageSet d;
    d.images = random_images(16, 12, 12, seed);
    for (int i = 0; i < 16; ++i) d.labels.push_back(i % 3);
    return d;
  };
  models::RamTraining m(c, o, set(61), set(62), 10, 0, 5, "");
  REQUIRE(m.batches_per_epoch() == 2);
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
  auto perturb = [&](int k) {
    for (ad::Parameter* p : m.params().params())
      for (int64_t i = 0; i < p->value.size(); ++i)
        p->value[i] += 0.7f * static_cast<float>((i * (3 + k) + 1) % 7 - 3);
  };
  nn::TrainState end_of_epoch, mid_epoch;
  end_of_epoch.position = 1, mid_epoch.position = 0;  // a step's state before it advances
  const train::Metrics none = {{"correct", 0}, {"paths", 1}, {"saturated", 0}, {"means", 1}};
  // Parameter sets until two differ in their validation error: the first at an epoch's end.
  m.end_step(end_of_epoch, 0.0, none);
  const auto p0 = snapshot();
  const double e0 = m.evaluate()[0].second;
  double e1 = e0;
  std::map<std::string, Tensor> p1;
  for (int k = 0; k < 8 && e1 == e0; ++k) {
    perturb(k);
    m.end_step(end_of_epoch, 0.0, none);
    p1 = snapshot();
    e1 = m.evaluate()[0].second;
  }
  REQUIRE(e0 != e1);
  const auto& best = e0 < e1 ? p0 : p1;
  const double best_error = std::min(e0, e1);
  // A mid-epoch evaluation (--eval-every) is no candidate, even when it is the best.
  perturb(11);
  m.end_step(mid_epoch, 0.0, none);
  const double e2 = m.evaluate()[0].second;
  nn::ModelFile ck;
  m.save_state(ck);
  CHECK(ck.number("best/valid_error") == best_error);
  nn::ModelFile f;
  nn::put_params(f, m.params());  // what the trainer writes: the last
  const size_t written = f.tensors.size();
  m.finish(f);
  CHECK(f.tensors.size() == written);
  CHECK(f.number("result/last_valid_error") == e2);
  if (e2 < best_error) {  // the last step is weighed in finish: it is kept
    CHECK(f.number("result/valid_error") == e2);
  } else {
    CHECK(f.number("result/valid_error") == best_error);
    CHECK(m.score() == best_error);
    models::RamTraining loaded(c, o, set(61), set(62), 10, 0, 5, "");
    nn::get_params(f, loaded.params());
    for (const ad::Parameter* p : loaded.params().params()) CHECK(same(p->value, best.at(p->name)));
  }
  // A resumed module takes the best from the checkpoint.
  models::RamTraining r(c, o, set(61), set(62), 10, 0, 5, "");
  r.load_state(ck);
  nn::ModelFile g;
  nn::put_params(g, r.params());
  r.end_step(mid_epoch, 0.0, none);
  r.finish(g);  // evaluates its own (initial) parameters first: p0, e0, no candidate
  CHECK(g.number("result/valid_error") == best_error);
  for (const auto& [k, t] : best) CHECK(same(g.tensor("param/" + k), t));
}

}  // namespace attnkit_unit_ram_test
