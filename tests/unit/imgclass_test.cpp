// lib/attnkit/models/imgclass: the whole classifier's gradients by finite differences (each
// architecture), a learned toy task with a wide margin, calibration, thread independence and
// the errors.
#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/models/imgclass/model.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/trainer.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_imgclass_test {

using namespace attnkit;
using namespace attnkit::models;

namespace {

// n images 8x8: class 0 a bright 3x3 square in the top-left quarter, class 1 in the
// bottom-right one (each at a random place there), over noise in [0, 0.3).
ImageSet toy(int64_t n, uint64_t seed) {
  Rng r(seed);
  ImageSet s;
  s.images = Tensor({n, 8, 8});
  for (int64_t i = 0; i < n; ++i) {
    const int32_t y = static_cast<int32_t>(i % 2);
    for (int64_t p = 0; p < 64; ++p) s.images[i * 64 + p] = 0.3f * r.uniform();
    const int64_t top = (y ? 4 : 0) + static_cast<int64_t>(r.below(2));
    const int64_t left = (y ? 4 : 0) + static_cast<int64_t>(r.below(2));
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b) s.images[i * 64 + (top + a) * 8 + left + b] = 1.0f;
    s.labels.push_back(y);
  }
  return s;
}

ImgNetConfig config(const std::string& arch) {
  ImgNetConfig c;
  c.arch = arch;
  c.hidden = {6, 5};
  c.channels = {4, 8};
  c.attn_after = 1;
  c.height = c.width = 8;
  c.classes = 2;
  return c;
}

}  // namespace

TEST_CASE("imgclass: gradients of the whole net by finite differences, every architecture") {
  const ImageSet d = toy(6, 3);
  for (const char* arch : {"mlp", "cnn", "cnn-sagan", "cnn-nonlocal"}) {
    CAPTURE(arch);
    nn::ParamStore ps;
    Rng rng(5);
    ImgNetConfig c = config(arch);
    ImgNet net(ps, c, rng);
    // Start the attention away from the identity so that its gradients are not trivially 0.
    for (ad::Parameter* p : ps.params()) {
      if (p->name == "attn.gamma") p->value[0] = 0.7f;
      if (p->name.rfind("attn.W.", 0) == 0) nn::init_uniform(p->value, rng, 0.3f);
    }
    std::vector<ad::Parameter*> trained;
    for (ad::Parameter* p : ps.params())
      if (p->name.find("running_") == std::string::npos) trained.push_back(p);
    ad::GradCheckOptions o;
    o.eps = 1e-3;
    o.max_per_tensor = 12;
    const auto r = ad::check_gradients(
        [&](ad::Tape& t) {
          return nn::cross_entropy(net.logits(t, d.images.data(), 6, true), d.labels);
        },
        trained, o);
    CHECK_MESSAGE(r.ok, r.where);
    CHECK(r.checked > 40);
  }
}

TEST_CASE("imgclass: learns a toy task for every architecture; the same model for any slices" *
          doctest::test_suite("slow")) {
  const ImageSet valid = toy(200, 9);
  for (const char* arch : {"mlp", "cnn", "cnn-sagan", "cnn-nonlocal"}) {
    CAPTURE(arch);
    ImgTrainOptions o;
    o.batch = 32;
    o.lr = 1e-2;
    ImgTraining m(config(arch), o, toy(320, 7), toy(200, 9), 0, 4, 11, 1, "");
    train::Tapes tapes;
    nn::TrainState s;
    for (int64_t step = 0; step < m.total_steps(); ++step) {
      const int64_t rows = m.begin_batch(s);
      train::step(m, tapes, rows, 11, step, 5.0);
      s.step = step + 1;
      s.position = (s.position + 1) % m.batches_per_epoch();
      if (s.position == 0) ++s.epoch;
    }
    const auto acc = m.evaluate();
    REQUIRE(acc.size() == 1);
    CHECK(acc[0].second >= 0.9);  // chance is 0.5
    // Predictions do not depend on the thread count.
    CHECK(m.model().predict(valid.images, 1) == m.model().predict(valid.images, 2));
  }
}

TEST_CASE("imgclass: calibrated batch norm normalises the calibration set") {
  nn::ParamStore ps;
  Rng rng(2);
  ImgNet net(ps, config("cnn"), rng);
  const ImageSet d = toy(300, 4);
  net.calibrate(d.images, 2);
  const Tensor& mean = ps.get("block1.bn.running_mean").value;
  const Tensor& var = ps.get("block1.bn.running_var").value;
  // Block 1's conv output over all 300 images, directly.
  ad::Tape t;
  Tensor in = d.images.clone();
  in.reshape({300, 1, 8, 8});
  ad::Conv2dOptions pad;
  pad.pad_h = pad.pad_w = 1;
  const Tensor& y =
      ad::conv2d(t.constant(std::move(in)), t.param(ps.get("block1.conv.weight")), ad::Var(), pad)
          .value();
  for (int64_t o = 0; o < 4; ++o) {
    double s = 0, q = 0;
    for (int64_t i = 0; i < 300; ++i)
      for (int64_t p = 0; p < 64; ++p) {
        const double v = y[(i * 4 + o) * 64 + p];
        s += v, q += v * v;
      }
    const double m = s / 19200, v = q / 19200 - m * m;
    CHECK(mean[o] == doctest::Approx(m).epsilon(1e-4));
    CHECK(var[o] == doctest::Approx(v).epsilon(1e-3));
  }
  CHECK(net.predict(d.images, 1) == net.predict(d.images, 2));
}

TEST_CASE("imgclass: configuration, data and size errors") {
  ImgNetConfig c = config("cnn");
  c.arch = "rnn";
  CHECK_THROWS_AS(c.validate(), UsageError);
  c = config("cnn-sagan");
  c.attn_after = 3;
  CHECK_THROWS_AS(c.validate(), UsageError);
  c = config("cnn");
  c.classes = 1;
  CHECK_THROWS_AS(c.validate(), DataError);
  CHECK(parse_sizes("64,64", "hidden") == std::vector<int64_t>{64, 64});
  CHECK_THROWS_AS(parse_sizes("64,", "hidden"), UsageError);
  CHECK_THROWS_AS(parse_sizes("0", "hidden"), UsageError);
  CHECK_THROWS_AS(parse_sizes("a", "hidden"), UsageError);
  CHECK(format_sizes({16, 32}) == "16,32");
  nn::ParamStore ps;
  Rng rng(1);
  ImgNet net(ps, config("mlp"), rng);
  CHECK_THROWS_AS(net.predict(Tensor({2, 8, 7}), 1), ShapeError);
  CHECK_THROWS_AS(score_predictions({0, 1}, {0, 2}, 2), DataError);
  const ImgScore s = score_predictions({0, 1, 1}, {0, 1, 0}, 2);
  CHECK(s.correct == 2);
  CHECK(s.class_n == std::vector<int64_t>{2, 1});
  CHECK(s.class_correct == std::vector<int64_t>{1, 1});
  ImgTrainOptions o;
  ImageSet bad = toy(10, 1);
  bad.labels[3] = 2;
  CHECK_THROWS_AS(ImgTraining(config("mlp"), o, std::move(bad), {}, 0, 1, 1, 1, ""), DataError);
}

TEST_CASE("imgclass: trainable parameter counts (pipelines/same-different.sh's formula)") {
  auto count = [](const std::string& arch, std::vector<int64_t> ch, int64_t h, int64_t k) {
    nn::ParamStore ps;
    Rng rng(1);
    ImgNetConfig c;
    c.arch = arch;
    c.channels = std::move(ch);
    c.attn_after = 3;
    c.height = c.width = h;
    c.classes = k;
    ImgNet net(ps, c, rng);
    int64_t n = 0;
    for (const ad::Parameter* p : ps.params())
      if (p->name.find("running_") == std::string::npos) n += p->value.size();
    return n;
  };
  CHECK(count("cnn", {16, 32, 35}, 64, 2) == 15070);
  CHECK(count("cnn-sagan", {16, 32, 32}, 64, 2) == 15515);
  CHECK(count("cnn", {16, 32, 35}, 28, 10) == 15358);
  CHECK(count("cnn-sagan", {16, 32, 32}, 28, 10) == 15779);
}

}  // namespace attnkit_unit_imgclass_test
