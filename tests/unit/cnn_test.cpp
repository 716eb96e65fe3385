// lib/attnkit/vision/cnn.h: shapes and region order, finite-difference gradients in training
// mode, the running statistics (slice sums added up = the whole batch's, eval mode uses them,
// saved and loaded), and the errors.
#include "attnkit/vision/cnn.h"

#include <cmath>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_cnn_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;

namespace {

Tensor random_images(Shape shape, uint64_t seed) {
  Tensor x(shape);
  Rng rng(seed);
  nn::init_uniform(x, rng, 1.0f);
  return x;
}

}  // namespace

TEST_CASE("cnn: shapes, parameter names and the region order") {
  nn::ParamStore ps;
  Rng rng(1);
  vision::CnnConfig c;
  c.channels = {3, 4};
  vision::CnnEncoder enc(ps, "cnn", c, rng);
  CHECK(ps.contains("cnn.b0.conv.weight"));
  CHECK(ps.get("cnn.b1.conv.weight").value.shape() == Shape{4, 3, 3, 3});
  CHECK(ps.get("cnn.b1.bn.weight").value.shape() == Shape{4});
  CHECK(ps.get("cnn.b1.bn.bias").value.shape() == Shape{4});
  CHECK(ps.count() == 3 * 9 + 6 + 4 * 27 + 8);
  CHECK(enc.out_size(12) == 3);
  CHECK(enc.out_size(13) == 3);
  CHECK(enc.batch_sums() == 1 + 6 + 1 + 8);
  CHECK(enc.buffer_names() ==
        std::vector<std::string>{"cnn.b0.bn.running_mean", "cnn.b0.bn.running_var",
                                 "cnn.b1.bn.running_mean", "cnn.b1.bn.running_var"});

  Tape t(1);
  Var x = t.constant(random_images({2, 12, 16}, 3));
  Var maps = enc.features(t, x);
  REQUIRE(maps.shape() == Shape{2, 4, 3, 4});
  Var a = vision::CnnEncoder::regions(maps);
  REQUIRE(a.shape() == Shape{2, 12, 4});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t l = 0; l < 12; ++l)
      for (int64_t d = 0; d < 4; ++d)
        CHECK(a.value()[(b * 12 + l) * 4 + d] ==
              maps.value()[((b * 4 + d) * 3 + l / 4) * 4 + l % 4]);
  // A pooled ReLU output is never negative.
  for (float v : maps.value().values()) CHECK(v >= 0.0f);

  // [B, C, H, W] input with C = 1 is the same as [B, H, W].
  Var x4 = t.constant(random_images({2, 1, 12, 16}, 3));
  test::check_close(enc.features(t, x4).value(), maps.value(), 0, 0);
}

TEST_CASE("cnn: gradients of the parameters and the input (training batch norm)") {
  nn::ParamStore ps;
  Rng rng(2);
  vision::CnnConfig c;
  c.channels = {2, 3};
  c.in_channels = 2;
  vision::CnnEncoder enc(ps, "cnn", c, rng);
  const Tensor x = random_images({3, 2, 8, 8}, 5);
  ad::GradCheckOptions o;
  o.eps = 1e-3;
  o.rtol = 3e-2;
  o.atol = 2e-3;
  auto res = ad::check_gradients([&](Tape& t) { return enc.annotations(t, t.constant(x.clone())); },
                                 ps.params(), o);
  CHECK_MESSAGE(res.ok, res.where);
  CHECK(res.checked == ps.count());
  std::vector<Tensor> inputs;
  inputs.push_back(x.clone());
  auto res2 = ad::check_gradients(
      [&](Tape& t, const std::vector<Var>& in) { return enc.annotations(t, in[0]); }, inputs, o);
  CHECK_MESSAGE(res2.ok, res2.where);
}

TEST_CASE("cnn: running statistics from slice sums, eval mode, saved and loaded") {
  nn::ParamStore ps;
  Rng rng(3);
  vision::CnnConfig c;
  c.channels = {3};
  c.momentum = 1.0f;  // the running statistics become the last batch's
  vision::CnnEncoder enc(ps, "enc", c, rng);
  const Tensor x = random_images({4, 6, 6}, 7);

  // A training tape leaves the running statistics alone unless asked.
  Tape t(1);
  enc.features(t, t.constant(x.clone()));
  CHECK(enc.running_mean()[0][0] == 0.0f);
  CHECK(enc.running_var()[0][0] == 1.0f);

  // Sums of two slices added up give the whole batch's sums.
  std::vector<double> whole, a, b;
  enc.features(t, t.constant(x.clone()), &whole);
  Tape t2(1);
  Var xa = ad::slice(t2.constant(x.clone()), 0, 0, 1),
      xb = ad::slice(t2.constant(x.clone()), 0, 1, 4);
  enc.features(t2, xa, &a);
  enc.features(t2, xb, &b);
  REQUIRE(whole.size() == static_cast<size_t>(enc.batch_sums()));
  REQUIRE(a.size() == whole.size());
  for (size_t i = 0; i < whole.size(); ++i)
    CHECK(a[i] + b[i] == doctest::Approx(whole[i]).epsilon(1e-9));

  // momentum 1: the running statistics are the batch's mean and unbiased variance of the
  // convolution's output (computed here directly from it).
  enc.update_running(whole);
  Tape t3(1);
  ad::Conv2dOptions same;
  same.pad_h = same.pad_w = 1;
  const Tensor& Y = ad::conv2d(t3.constant(Tensor({4, 1, 6, 6}, x.values())),
                               t3.param(ps.get("enc.b0.conv.weight")), Var(), same)
                        .value();
  for (int64_t ch = 0; ch < 3; ++ch) {
    double s = 0, s2 = 0;
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t j = 0; j < 36; ++j) s += Y[(k * 3 + ch) * 36 + j];
    const double m = s / 144;
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t j = 0; j < 36; ++j)
        s2 += (Y[(k * 3 + ch) * 36 + j] - m) * (Y[(k * 3 + ch) * 36 + j] - m);
    CHECK(enc.running_mean()[0][ch] == doctest::Approx(m).epsilon(1e-5));
    CHECK(enc.running_var()[0][ch] == doctest::Approx(s2 / 143).epsilon(1e-4));
  }

  // Eval mode: each image's features do not depend on the rest of the batch.
  Tape e(1);
  e.set_training(false);
  Var all = enc.features(e, e.constant(x.clone()));
  Var one = enc.features(e, ad::slice(e.constant(x.clone()), 0, 2, 3));
  test::check_close(one.value(), ad::slice(all, 0, 2, 3).value(), 1e-6, 1e-5);

  // Saved and loaded with a model file; a missing or misshapen entry is a DataError.
  nn::ModelFile f;
  enc.put_buffers(f);
  CHECK(f.tensors.count("buffer/enc.b0.bn.running_var") == 1);
  nn::ParamStore ps2;
  Rng rng2(4);
  vision::CnnEncoder enc2(ps2, "enc", c, rng2);
  enc2.get_buffers(f);
  test::check_close(enc2.running_var()[0], enc.running_var()[0], 0, 0);
  f.tensors["buffer/enc.b0.bn.running_var"] = Tensor({2});
  CHECK_THROWS_AS(enc2.get_buffers(f), DataError);
  f.tensors.erase("buffer/enc.b0.bn.running_var");
  CHECK_THROWS_AS(enc2.get_buffers(f), DataError);
  CHECK_THROWS_AS(enc.update_running({1.0, 2.0}), DataError);
}

TEST_CASE("cnn: errors") {
  CHECK(vision::parse_channels("16,32") == std::vector<int64_t>{16, 32});
  CHECK(vision::format_channels({16, 32}) == "16,32");
  for (const char* bad : {"", "16,", ",16", "a", "16,0", "16;32", "-4", "1.5", "99999"})
    CHECK_THROWS_AS(vision::parse_channels(bad), UsageError);
  nn::ParamStore ps;
  Rng rng(1);
  vision::CnnConfig c;
  c.channels = {};
  CHECK_THROWS_AS(vision::CnnEncoder(ps, "x", c, rng), UsageError);
  c.channels = {2, 2};
  vision::CnnEncoder enc(ps, "cnn", c, rng);
  Tape t(1);
  CHECK_THROWS_AS(enc.features(t, t.constant(Tensor({2, 3}))), ShapeError);
  CHECK_THROWS_AS(enc.features(t, t.constant(Tensor({2, 2, 8, 8}))), ShapeError);  // 2 channels
  CHECK_THROWS_AS(enc.features(t, t.constant(Tensor({2, 3, 8}))), ShapeError);     // 3 < 4
  CHECK_THROWS_AS(vision::CnnEncoder::regions(t.constant(Tensor({2, 3, 4}))), ShapeError);
}

}  // namespace attnkit_unit_cnn_test
