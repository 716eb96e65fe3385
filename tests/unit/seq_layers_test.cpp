// lib/attnkit/complexity/seq_layers.h: the three layers against direct loops in double, the
// path lengths against their definitions, shape and usage errors.
#include "attnkit/complexity/seq_layers.h"

#include <cmath>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_seq_layers_test {

using namespace attnkit;
using namespace attnkit::complexity;

namespace {

Tensor randn(Shape s, uint64_t seed) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(0.5 * rng.normal());
  return t;
}

}  // namespace

TEST_CASE("self_attention = softmax(X Xᵀ/√d) X by direct sums") {
  const int64_t n = 37, d = 6;
  const Tensor x = randn({n, d}, 1);
  const Tensor y = self_attention(x);
  Tensor ref({n, d});
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> s(n);
    double mx = -1e300, z = 0;
    for (int64_t j = 0; j < n; ++j) {
      double a = 0;
      for (int64_t c = 0; c < d; ++c) a += double(x.at(i, c)) * x.at(j, c);
      s[j] = a / std::sqrt(double(d));
      mx = std::max(mx, s[j]);
    }
    for (double& v : s) z += (v = std::exp(v - mx));
    for (int64_t c = 0; c < d; ++c) {
      double a = 0;
      for (int64_t j = 0; j < n; ++j) a += s[j] / z * x.at(j, c);
      ref.at(i, c) = static_cast<float>(a);
    }
  }
  test::check_close(y, ref, 1e-6, 1e-5);
}

TEST_CASE("conv1d = the zero-padded sum over taps, odd and even kernels, dilation") {
  const int64_t n = 11, d = 3, d_out = 4;
  for (int64_t k : {1, 2, 3, 4, 5}) {
    for (int64_t dil : {1, 2}) {
      CAPTURE(k);
      CAPTURE(dil);
      const Tensor x = randn({n, d}, 2), w = randn({k, d, d_out}, 3), b = randn({d_out}, 4);
      const Tensor y = conv1d(x, w, b, dil);
      Tensor ref({n, d_out});
      for (int64_t i = 0; i < n; ++i)
        for (int64_t o = 0; o < d_out; ++o) {
          double a = b[o];
          for (int64_t t = 0; t < k; ++t) {
            const int64_t src = i + (t - k / 2) * dil;
            if (src < 0 || src >= n) continue;
            for (int64_t c = 0; c < d; ++c) a += double(x.at(src, c)) * w.at(t, c, o);
          }
          ref.at(i, o) = static_cast<float>(a);
        }
      test::check_close(y, ref, 1e-6, 1e-5);
    }
  }
  // Kernel wider than the sequence: only the taps that land inside count.
  const Tensor x = randn({2, 3}, 5), w = randn({7, 3, 3}, 6), b({3});
  CHECK(conv1d(x, w, b).shape() == Shape{2, 3});
  CHECK_THROWS_AS(conv1d(x, randn({3, 4, 3}, 1), b), ShapeError);
  CHECK_THROWS_AS(conv1d(x, w, Tensor({4})), ShapeError);
}

TEST_CASE("rnn = the Elman recurrence step by step") {
  const int64_t n = 9, din = 3, dh = 5;
  const Tensor x = randn({n, din}, 7), wx = randn({din, dh}, 8), wh = randn({dh, dh}, 9),
               b = randn({dh}, 10);
  const Tensor h = rnn(x, wx, wh, b);
  std::vector<double> prev(dh, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> cur(dh);
    for (int64_t o = 0; o < dh; ++o) {
      double a = b[o];
      for (int64_t c = 0; c < din; ++c) a += double(x.at(i, c)) * wx.at(c, o);
      for (int64_t c = 0; c < dh; ++c) a += prev[c] * wh.at(c, o);
      cur[o] = std::tanh(a);
      CHECK(h.at(i, o) == doctest::Approx(cur[o]).epsilon(1e-5));
    }
    prev = cur;
  }
  CHECK_THROWS_AS(rnn(x, wx, randn({dh, dh + 1}, 1), b), ShapeError);
}

TEST_CASE("max_path_length: 1, ceil((N-1)/(k-1)), ceil(log_k N), N-1") {
  CHECK(max_path_length(SeqLayer::Attention, 1000, 3) == 1);
  CHECK(max_path_length(SeqLayer::Rnn, 1000, 3) == 999);
  CHECK(max_path_length(SeqLayer::Conv, 1000, 3) == 500);  // reach 2 per layer: 999/2 -> 500
  CHECK(max_path_length(SeqLayer::Conv, 9, 3) == 4);
  CHECK(max_path_length(SeqLayer::Conv, 10, 2) == 9);
  CHECK(max_path_length(SeqLayer::Conv, 9, 3, true) == 2);  // 3^2 = 9 positions
  CHECK(max_path_length(SeqLayer::Conv, 10, 3, true) == 3);
  CHECK(max_path_length(SeqLayer::Conv, 1024, 2, true) == 10);
  CHECK(max_path_length(SeqLayer::Rnn, 1, 3) == 0);
  // By definition: a conv stack of L layers with kernel k reaches (k-1)·L positions away.
  for (int64_t k = 2; k <= 5; ++k)
    for (int64_t n = 2; n <= 60; ++n) {
      const int64_t L = max_path_length(SeqLayer::Conv, n, k);
      CHECK((k - 1) * L >= n - 1);
      CHECK((k - 1) * (L - 1) < n - 1);
    }
  CHECK_THROWS_AS(max_path_length(SeqLayer::Conv, 10, 1), UsageError);
  CHECK_THROWS_AS(parse_seq_layer("cnn"), UsageError);
  CHECK(parse_seq_layer("rnn") == SeqLayer::Rnn);
  CHECK(seq_layer_name(SeqLayer::Conv) == "conv");
}

TEST_CASE("time_layer: positive times, the layer's output shape, usage errors") {
  for (SeqLayer l : {SeqLayer::Attention, SeqLayer::Conv, SeqLayer::Rnn}) {
    Tensor y;
    const double t = time_layer(l, 50, 8, 3, 2, 1, &y);
    CHECK(t > 0.0);
    CHECK(y.shape() == Shape{50, 8});
  }
  CHECK_THROWS_AS(time_layer(SeqLayer::Rnn, 0, 8, 3, 1, 1), UsageError);
  CHECK_THROWS_AS(time_layer(SeqLayer::Rnn, 5, 8, 3, 0, 1), UsageError);
}

}  // namespace attnkit_unit_seq_layers_test
