// lib/attnkit/autodiff: every op's gradient against double-sided finite differences
// (ad::check_gradients), forward values against direct computation, and the tape's
// mechanics (parameters, buffer reuse, recording off, errors).
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_autodiff_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;
using VS = std::vector<Var>;

namespace {

// Normal values times `scale`, plus `shift`; `away` > 0 pushes every value at least that far
// from 0 (for kinks such as relu's).
Tensor rnd(Shape s, uint64_t seed, double scale = 1.0, double shift = 0.0, double away = 0.0) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = scale * rng.normal();
    if (away > 0 && std::fabs(v) < away) v = v < 0 ? v - away : v + away;
    t[i] = static_cast<float>(v + shift);
  }
  return t;
}
Tensor positive(Shape s, uint64_t seed, double lo = 0.2, double hi = 2.0) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i)
    t[i] = static_cast<float>(lo + (hi - lo) * rng.uniform_double());
  return t;
}

template <class Inputs>
void grad_ok(const std::string& what, const Inputs& inputs,
             const std::function<Var(Tape&, const VS&)>& f, ad::GradCheckOptions opt = {}) {
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) in.push_back(t.clone());
  const ad::GradCheckResult r = ad::check_gradients(f, in, opt);
  INFO(what << ": worst " << r.worst << " at " << r.where);
  CHECK(r.checked > 0);
  CHECK(r.ok);
}

std::vector<Tensor> ts(std::initializer_list<Tensor*> xs) {
  std::vector<Tensor> v;
  for (Tensor* x : xs) v.push_back(std::move(*x));
  return v;
}

}  // namespace

TEST_CASE("autodiff: matmul gradients, every transpose and batch layout") {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Tensor a = rnd(ta ? Shape{4, 3} : Shape{3, 4}, 1), b = rnd(tb ? Shape{5, 4} : Shape{4, 5}, 2);
      grad_ok("matmul 2d " + std::to_string(ta) + std::to_string(tb), ts({&a, &b}),
              [=](Tape&, const VS& v) { return ad::matmul(v[0], v[1], ta, tb); });
      Tensor a3 = rnd(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 3);
      Tensor b3 = rnd(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 4);
      grad_ok("matmul 3d", ts({&a3, &b3}),
              [=](Tape&, const VS& v) { return ad::matmul(v[0], v[1], ta, tb); });
      Tensor a2 = rnd(ta ? Shape{4, 3} : Shape{3, 4}, 5),
             b3s = rnd(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 6);
      grad_ok("matmul shared a", ts({&a2, &b3s}),
              [=](Tape&, const VS& v) { return ad::matmul(v[0], v[1], ta, tb); });
      Tensor a3s = rnd(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 7),
             b2 = rnd(tb ? Shape{5, 4} : Shape{4, 5}, 8);
      grad_ok("matmul shared b", ts({&a3s, &b2}),
              [=](Tape&, const VS& v) { return ad::matmul(v[0], v[1], ta, tb); });
    }
}

TEST_CASE("autodiff: matmul values and shape errors") {
  Tape t;
  Var a = t.constant(Tensor({2, 3}, {1, 2, 3, 4, 5, 6}));
  Var b = t.constant(Tensor({3, 2}, {1, 0, 0, 1, 1, 1}));
  test::check_close(ad::matmul(a, b).value(), Tensor({2, 2}, {4, 5, 10, 11}));
  test::check_close(ad::matmul(a, a, false, true).value(), Tensor({2, 2}, {14, 32, 32, 77}));
  CHECK_THROWS_AS(ad::matmul(a, a), ShapeError);
  CHECK_THROWS_WITH_AS(ad::matmul(a, t.constant(Tensor({2, 2, 2}))), doctest::Contains("[2, 3]"),
                       ShapeError);
}

TEST_CASE("autodiff: addmm and linear gradients") {
  Tensor c = rnd({3, 5}, 1), a = rnd({3, 4}, 2), b = rnd({5, 4}, 3);
  grad_ok("addmm", ts({&c, &a, &b}),
          [](Tape&, const VS& v) { return ad::addmm(v[0], v[1], v[2], false, true); });
  Tensor x = rnd({2, 3, 4}, 4), w = rnd({5, 4}, 5), bias = rnd({5}, 6);
  grad_ok("linear rank 3 with bias", ts({&x, &w, &bias}),
          [](Tape&, const VS& v) { return ad::linear(v[0], v[1], v[2]); });
  Tensor x2 = rnd({3, 4}, 7), w2 = rnd({2, 4}, 8);
  grad_ok("linear no bias", ts({&x2, &w2}),
          [](Tape&, const VS& v) { return ad::linear(v[0], v[1]); });
  Tape t;
  Var y = ad::linear(t.constant(Tensor({1, 2}, {1, 2})), t.constant(Tensor({2, 2}, {1, 1, 0, 1})),
                     t.constant(Tensor({2}, {10, 20})));
  test::check_close(y.value(), Tensor({1, 2}, {13, 22}));
}

// wᵀ of a rank-2 tensor, as Tape::param_t makes it.
static Tensor transposed(const Tensor& w) {
  Tensor y({w.dim(1), w.dim(0)});
  for (int64_t i = 0; i < w.dim(0); ++i)
    for (int64_t j = 0; j < w.dim(1); ++j) y.at(j, i) = w.at(i, j);
  return y;
}

TEST_CASE("autodiff: linear and addmm_t with the transposed weight") {
  // Finite differences, the transpose made from the (perturbed) weight inside the function.
  const Tensor x = rnd({3, 4}, 31), w = rnd({5, 4}, 32), bias = rnd({5}, 33), c = rnd({3, 5}, 34);
  auto copies = [](std::initializer_list<const Tensor*> xs) {
    std::vector<Tensor> v;
    for (const Tensor* t : xs) v.push_back(t->clone());
    return v;
  };
  grad_ok("linear wt", copies({&x, &w, &bias}), [](Tape& t, const VS& v) {
    return ad::linear(v[0], v[1], v[2], t.constant(transposed(v[1].value())));
  });
  grad_ok("addmm_t", copies({&c, &x, &w}), [](Tape& t, const VS& v) {
    return ad::addmm_t(v[0], v[1], v[2], t.constant(transposed(v[2].value())));
  });
  // Against the plain ops with a Parameter and Tape::param_t: the same values up to rounding,
  // and (a loss linear in the output) the same gradient bits, since the backward is the same.
  ad::Parameter W("w", w.clone()), B("b", bias.clone());
  Tensor seed = rnd({3, 5}, 35);
  std::vector<Tensor> got[2];
  for (int with_t = 0; with_t < 2; ++with_t) {
    W.grad = Tensor(w.shape()), B.grad = Tensor(bias.shape());
    Tape t;
    Var X = t.input(x.clone()), C = t.input(c.clone());
    Var wt = with_t ? t.param_t(W) : Var();
    if (with_t) {
      test::check_close(wt.value(), transposed(w), 0.0, 0.0);
      CHECK(t.param_t(W).id() == wt.id());  // once per tape
      CHECK_FALSE(wt.requires_grad());
    }
    Var y1 = ad::linear(X, t.param(W), t.param(B), wt);
    Var y2 = with_t ? ad::addmm_t(C, X, t.param(W), wt) : ad::addmm(C, X, t.param(W), false, true);
    Var s = t.constant(seed.clone());
    t.backward(ad::add(ad::sum(ad::mul(y1, s)), ad::sum(ad::mul(y2, s))));
    for (const Tensor* r : std::vector<const Tensor*>{&y1.value(), &y2.value(), &X.grad(),
                                                      &C.grad(), &W.grad, &B.grad})
      got[with_t].push_back(r->clone());
  }
  for (size_t k = 0; k < got[0].size(); ++k) {
    if (k < 2)
      test::check_close(got[1][k], got[0][k]);
    else
      CHECK(got[1][k].values() == got[0][k].values());
  }
  Tape t;
  // Sizes that are not multiples of param_t's tiles (16 x 16): every element in its place.
  for (const Shape& sh : {Shape{37, 21}, Shape{16, 48}, Shape{1, 17}}) {
    Tape tt;  // one a parameter: param_t's transposes are kept per tape by its address
    ad::Parameter big("big", rnd(sh, 36));
    test::check_close(tt.param_t(big).value(), transposed(big.value), 0.0, 0.0);
  }
  ad::Parameter v("v", Tensor({3}));
  CHECK_THROWS_WITH_AS(t.param_t(v), doctest::Contains("not 2-D"), ShapeError);
  CHECK_THROWS_AS(ad::linear(t.constant(x.clone()), t.param(W), Var(), t.constant(w.clone())),
                  ShapeError);
  CHECK_THROWS_AS(
      ad::addmm_t(t.constant(c.clone()), t.constant(x.clone()), t.param(W), t.constant(w.clone())),
      ShapeError);
}

TEST_CASE("autodiff: broadcasting binary ops") {
  using Bin = Var (*)(Var, Var);
  struct Case {
    const char* name;
    Bin f;
  };
  const Case cases[] = {{"add", ad::add}, {"sub", ad::sub}, {"mul", ad::mul}, {"div", ad::div}};
  const Shape pairs[][2] = {{{2, 3}, {2, 3}}, {{2, 3, 4}, {4}},    {{2, 3, 4}, {2, 3, 1}},
                            {{2, 3}, {}},     {{3, 1}, {2, 1, 4}}, {{1, 4}, {3, 4}}};
  uint64_t seed = 10;
  for (const Case& c : cases)
    for (const auto& p : pairs) {
      Tensor a = rnd(p[0], seed++), b = rnd(p[1], seed++);
      if (c.f == static_cast<Bin>(ad::div)) b = positive(p[1], seed++, 0.5, 2.0);
      grad_ok(std::string(c.name) + " " + shape_str(p[0]) + " " + shape_str(p[1]), ts({&a, &b}),
              [f = c.f](Tape&, const VS& v) { return f(v[0], v[1]); });
    }
  Tape t;
  Var a = t.constant(Tensor({2, 2}, {1, 2, 3, 4}));
  test::check_close((a + t.constant(Tensor({2}, {10, 20}))).value(),
                    Tensor({2, 2}, {11, 22, 13, 24}));
  test::check_close((a * t.constant(Tensor({2, 1}, {2, 3}))).value(),
                    Tensor({2, 2}, {2, 4, 9, 12}));
  CHECK_THROWS_WITH_AS(a + t.constant(Tensor({3})), doctest::Contains("[2, 2] and [3]"),
                       ShapeError);
}

TEST_CASE("autodiff: pow (NTM sharpening) with a per-row exponent") {
  Tensor w = positive({2, 5}, 1, 0.05, 1.0), g = positive({2, 1}, 2, 1.0, 3.0);
  grad_ok("pow", ts({&w, &g}), [](Tape&, const VS& v) { return ad::pow(v[0], v[1]); });
  Tape t;
  Var y = ad::pow(t.constant(Tensor({1, 2}, {0.0f, 0.5f})), t.constant(Tensor({1}, 2.0f)));
  test::check_close(y.value(), Tensor({1, 2}, {0.0f, 0.25f}));
}

TEST_CASE("autodiff: scalar and unary ops") {
  struct Case {
    const char* name;
    std::function<Var(Var)> f;
    Tensor x;
  };
  std::vector<Case> cases;
  cases.push_back({"add scalar", [](Var x) { return x + 1.5f; }, rnd({3, 4}, 1)});
  cases.push_back({"mul scalar", [](Var x) { return 2.5f * x; }, rnd({3, 4}, 2)});
  cases.push_back({"neg", [](Var x) { return -x; }, rnd({3, 4}, 3)});
  cases.push_back({"rsub", [](Var x) { return 1.0f - x; }, rnd({3, 4}, 3)});
  cases.push_back({"tanh", [](Var x) { return ad::tanh(x); }, rnd({3, 4}, 4)});
  cases.push_back({"sigmoid", [](Var x) { return ad::sigmoid(x); }, rnd({3, 4}, 5, 2.0)});
  cases.push_back({"relu", [](Var x) { return ad::relu(x); }, rnd({3, 4}, 6, 1.0, 0.0, 0.1)});
  cases.push_back({"softplus", [](Var x) { return ad::softplus(x); }, rnd({3, 4}, 7, 3.0)});
  cases.push_back({"gelu", [](Var x) { return ad::gelu(x); }, rnd({3, 4}, 12, 3.0)});
  cases.push_back({"exp", [](Var x) { return ad::exp(x); }, rnd({3, 4}, 8)});
  cases.push_back({"log", [](Var x) { return ad::log(x); }, positive({3, 4}, 9, 0.5, 3.0)});
  cases.push_back({"sqrt", [](Var x) { return ad::sqrt(x); }, positive({3, 4}, 10, 0.5, 3.0)});
  cases.push_back({"square", [](Var x) { return ad::square(x); }, rnd({3, 4}, 11)});
  for (Case& c : cases)
    grad_ok(c.name, ts({&c.x}), [f = c.f](Tape&, const VS& v) { return f(v[0]); });
  Tape t;
  Var x = t.constant(Tensor({4}, {-2.0f, 0.0f, 1.0f, 40.0f}));
  const Tensor& sp = ad::softplus(x).value();
  CHECK(sp[0] == doctest::Approx(std::log1p(std::exp(-2.0))).epsilon(1e-6));
  CHECK(sp[3] == doctest::Approx(40.0));
  const Tensor& th = ad::tanh(x).value();
  CHECK(th[2] == doctest::Approx(std::tanh(1.0)).epsilon(1e-6));
  const Tensor& sg = ad::sigmoid(x).value();
  CHECK(sg[1] == doctest::Approx(0.5));
  // GELU's values: x Φ(x) (Φ(1) = 0.841344746, Φ(-2) = 0.022750132), 0 at 0, x far right.
  const Tensor& ge = ad::gelu(x).value();
  CHECK(ge[0] == doctest::Approx(-2.0 * 0.022750132).epsilon(1e-6));
  CHECK(ge[1] == 0.0f);
  CHECK(ge[2] == doctest::Approx(0.841344746).epsilon(1e-6));
  CHECK(ge[3] == doctest::Approx(40.0));
}

TEST_CASE("autodiff: softmax, log-softmax and masked softmax") {
  Tensor x = rnd({3, 5}, 1, 2.0), x2 = rnd({2, 3, 4}, 2), x3 = rnd({3, 5}, 3, 2.0);
  grad_ok("softmax", ts({&x}), [](Tape&, const VS& v) { return ad::softmax(v[0]); });
  grad_ok("log_softmax", ts({&x2}), [](Tape&, const VS& v) { return ad::log_softmax(v[0]); });
  Tensor mask({3, 5}, {1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1});
  grad_ok("masked_softmax", ts({&x3}),
          [&mask](Tape&, const VS& v) { return ad::masked_softmax(v[0], mask); });
  Tape t;
  Var y = ad::masked_softmax(t.constant(rnd({3, 5}, 4)), mask);
  for (int64_t j = 0; j < 5; ++j) {
    CHECK(y.value().at(1, j) == 0.0f);  // every key masked: zeros, not NaN
    if (mask.at(0, j) == 0.0f) CHECK(y.value().at(0, j) == 0.0f);
  }
  double s = 0;
  for (int64_t j = 0; j < 5; ++j) s += y.value().at(2, j);
  CHECK(s == doctest::Approx(1.0));
  // A [Tq, Tk] mask repeats over leading dimensions.
  Var y3 = ad::masked_softmax(t.constant(rnd({2, 3, 5}, 5)), mask);
  CHECK(y3.value().at(1, 1, 2) == 0.0f);
  Var ls = ad::log_softmax(t.constant(Tensor({1, 3}, {1000, 0, -1000})));
  CHECK(ls.value()[0] == doctest::Approx(0.0));
  CHECK(std::isfinite(ls.value()[2]));
  CHECK_THROWS_AS(ad::masked_softmax(t.constant(rnd({3, 4}, 6)), mask), ShapeError);
}

TEST_CASE("autodiff: cosine similarity, 2-D and batched") {
  Tensor a = rnd({3, 4}, 1), b = rnd({5, 4}, 2);
  grad_ok("cosine 2d", ts({&a, &b}), [](Tape&, const VS& v) { return ad::cosine(v[0], v[1]); });
  Tensor a3 = rnd({2, 1, 4}, 3), b3 = rnd({2, 6, 4}, 4);
  grad_ok("cosine 3d", ts({&a3, &b3}), [](Tape&, const VS& v) { return ad::cosine(v[0], v[1]); });
  Tape t;
  Var c = ad::cosine(t.constant(Tensor({2, 2}, {1, 0, 0, 0})),
                     t.constant(Tensor({2, 2}, {2, 0, 0, 3})));
  CHECK(c.value().at(0, 0) == doctest::Approx(1.0));
  CHECK(c.value().at(0, 1) == doctest::Approx(0.0));
  CHECK(c.value().at(1, 0) == 0.0f);  // zero row
}

TEST_CASE("autodiff: layer norm, normalise rows, circular convolution") {
  Tensor x = rnd({2, 3, 6}, 1, 2.0, 0.5), g = rnd({6}, 2, 0.5, 1.0), b = rnd({6}, 3);
  grad_ok("layer_norm", ts({&x, &g, &b}),
          [](Tape&, const VS& v) { return ad::layer_norm(v[0], v[1], v[2]); });
  Tensor x2 = rnd({3, 5}, 4);
  grad_ok("layer_norm plain", ts({&x2}), [](Tape&, const VS& v) { return ad::layer_norm(v[0]); });
  Tensor w = positive({3, 5}, 5);
  grad_ok("normalize_rows", ts({&w}), [](Tape&, const VS& v) { return ad::normalize_rows(v[0]); });
  Tensor cw = positive({2, 6}, 6), cs = positive({2, 3}, 7);
  grad_ok("circular_conv", ts({&cw, &cs}),
          [](Tape&, const VS& v) { return ad::circular_conv(v[0], v[1]); });
  Tensor cw2 = positive({3, 5}, 8), cs2 = positive({5}, 9);
  grad_ok("circular_conv shared full kernel", ts({&cw2, &cs2}),
          [](Tape&, const VS& v) { return ad::circular_conv(v[0], v[1]); });
  Tape t;
  // A shift by +1 moves weight at position i to i + 1 (wrapping).
  Var sh = ad::circular_conv(t.constant(Tensor({1, 4}, {1, 0, 0, 0.5f})),
                             t.constant(Tensor({1, 3}, {0, 0, 1})));
  test::check_close(sh.value(), Tensor({1, 4}, {0.5f, 1, 0, 0}));
  Var ln = ad::layer_norm(t.constant(Tensor({1, 4}, {1, 2, 3, 4})));
  double m = 0, v2 = 0;
  for (int j = 0; j < 4; ++j) m += ln.value()[j];
  for (int j = 0; j < 4; ++j) v2 += ln.value()[j] * ln.value()[j];
  CHECK(m == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(v2 / 4 == doctest::Approx(1.0).epsilon(1e-4));
  Var nr = ad::normalize_rows(t.constant(Tensor({1, 2}, {1, 3})));
  test::check_close(nr.value(), Tensor({1, 2}, {0.25f, 0.75f}));
}

TEST_CASE("autodiff: fused additive scores equal the unfused ops") {
  Tensor k = rnd({2, 5, 3}, 1), q = rnd({2, 3}, 2), v = rnd({3}, 3);
  grad_ok("additive_scores", ts({&k, &q, &v}),
          [](Tape&, const VS& x) { return ad::additive_scores(x[0], x[1], x[2]); });
  Tape t;
  Var K = t.constant(rnd({2, 5, 3}, 1)), Q = t.constant(rnd({2, 3}, 2)),
      W = t.constant(rnd({1, 3}, 3));
  Var ref = ad::reshape(ad::linear(ad::tanh(K + ad::reshape(Q, {2, 1, 3})), W), {2, 5});
  test::check_close(ad::additive_scores(K, Q, t.constant(rnd({3}, 3))).value(), ref.value(), 1e-6,
                    1e-5);
}

TEST_CASE("autodiff: additive scores of several queries per item equal one query at a time") {
  // q [M, B, a]: M = 3 queries for each of B = 2 items, against the same keys.
  Tensor k = rnd({2, 4, 3}, 1), q = rnd({3, 2, 3}, 2), v = rnd({3}, 3);
  grad_ok("additive_scores (steps)", ts({&k, &q, &v}),
          [](Tape&, const VS& x) { return ad::additive_scores(x[0], x[1], x[2]); });
  Tape t;
  Var K = t.constant(rnd({2, 4, 3}, 1)), Q = t.constant(rnd({3, 2, 3}, 2)),
      W = t.constant(rnd({3}, 3));
  const Tensor all = ad::additive_scores(K, Q, W).value().clone();
  REQUIRE(all.shape() == Shape{3, 2, 4});
  for (int64_t m = 0; m < 3; ++m) {
    const Tensor& one = ad::additive_scores(K, ad::index(Q, m), W).value();
    for (int64_t i = 0; i < 8; ++i) CHECK(all[m * 8 + i] == one[i]);  // the same loop: bits
  }
  CHECK_THROWS_AS(ad::additive_scores(K, t.constant(rnd({3, 1, 3}, 4)), W), ShapeError);
}

TEST_CASE("autodiff: skipped additive scores are 0 and the others unchanged") {
  // 24 scores [3, 2, 4], every third skipped (a row of 4 skipped at once too).
  std::vector<uint8_t> skip(24, 0);
  for (size_t i = 0; i < 24; i += 3) skip[i] = 1;
  for (size_t i = 8; i < 12; ++i) skip[i] = 1;
  Tape t;
  Var K = t.constant(rnd({2, 4, 3}, 1)), Q = t.constant(rnd({3, 2, 3}, 2)),
      W = t.constant(rnd({3}, 3));
  const Tensor all = ad::additive_scores(K, Q, W).value().clone();
  const Tensor& some = ad::additive_scores(K, Q, W, skip).value();
  for (size_t i = 0; i < 24; ++i)
    CHECK(some[static_cast<int64_t>(i)] == (skip[i] ? 0.0f : all[static_cast<int64_t>(i)]));
  // The gradient: only through the scores computed (a skipped one is a constant).
  Tensor k = rnd({2, 4, 3}, 1), q = rnd({3, 2, 3}, 2), v = rnd({3}, 3);
  grad_ok("additive_scores (skip)", ts({&k, &q, &v}),
          [&skip](Tape&, const VS& x) { return ad::additive_scores(x[0], x[1], x[2], skip); });
  CHECK_THROWS_AS(ad::additive_scores(K, Q, W, std::vector<uint8_t>(23, 0)), ShapeError);
}

TEST_CASE("autodiff: reductions") {
  Tensor x = rnd({2, 3, 4}, 1);
  grad_ok("sum", ts({&x}), [](Tape&, const VS& v) { return ad::sum(v[0]); });
  Tensor x2 = rnd({2, 3, 4}, 2);
  grad_ok("mean", ts({&x2}), [](Tape&, const VS& v) { return ad::mean(v[0]); });
  Tensor x3 = rnd({2, 3, 4}, 3);
  grad_ok("sum_last", ts({&x3}), [](Tape&, const VS& v) { return ad::sum_last(v[0]); });
  Tensor x4 = rnd({3, 4}, 4);
  grad_ok("mean_last", ts({&x4}), [](Tape&, const VS& v) { return ad::mean_last(v[0]); });
  Tape t;
  Var a = t.constant(Tensor({2, 2}, {1, 2, 3, 4}));
  CHECK(ad::sum(a).value()[0] == 10.0f);
  CHECK(ad::mean(a).value()[0] == 2.5f);
  test::check_close(ad::sum_last(a).value(), Tensor({2, 1}, {3, 7}));
  // Many small values: the double accumulator keeps the sum exact where float would drift.
  Var many = t.constant(Tensor({1 << 20}, 0.1f));
  CHECK(ad::sum(many).value()[0] == doctest::Approx(0.1f * (1 << 20)).epsilon(1e-6));
}

TEST_CASE("autodiff: embedding, concat, stack, slice, index, reshape, transpose, permute") {
  Tensor table = rnd({5, 3}, 1);
  grad_ok("embedding (repeated ids)", ts({&table}), [](Tape&, const VS& v) {
    return ad::embedding(v[0], {4, 0, 4, 2, 1, 4}, {2, 3});
  });
  for (int axis : {0, 1, -1}) {
    Tensor a = rnd({2, 3, 4}, 2), b = rnd(axis == 0   ? Shape{1, 3, 4}
                                          : axis == 1 ? Shape{2, 2, 4}
                                                      : Shape{2, 3, 2},
                                          3);
    grad_ok("concat axis " + std::to_string(axis), ts({&a, &b}), [axis](Tape&, const VS& v) {
      return ad::concat({v[0], v[1], v[0]}, axis);
    });
  }
  Tensor s1 = rnd({2, 3}, 4), s2 = rnd({2, 3}, 5);
  grad_ok("stack", ts({&s1, &s2}), [](Tape&, const VS& v) { return ad::stack({v[0], v[1]}, 1); });
  Tensor sl = rnd({3, 4, 5}, 6);
  grad_ok("slice", ts({&sl}), [](Tape&, const VS& v) { return ad::slice(v[0], 1, 1, 3); });
  Tensor sl2 = rnd({3, 4, 5}, 7);
  grad_ok("slice last", ts({&sl2}), [](Tape&, const VS& v) { return ad::slice(v[0], -1, 2, 5); });
  Tensor ix = rnd({3, 2, 2}, 8);
  grad_ok("index", ts({&ix}),
          [](Tape&, const VS& v) { return ad::index(v[0], 1) * ad::index(v[0], 2); });
  Tensor rs = rnd({2, 6}, 9);
  grad_ok("reshape", ts({&rs}), [](Tape&, const VS& v) {
    return ad::matmul(ad::reshape(v[0], {3, 4}), ad::reshape(v[0], {4, 3}));
  });
  Tensor tr = rnd({2, 3, 4}, 10);
  grad_ok("transpose", ts({&tr}), [](Tape&, const VS& v) { return ad::transpose(v[0]); });
  Tensor pm = rnd({2, 3, 4, 5}, 11);
  grad_ok("permute", ts({&pm}), [](Tape&, const VS& v) { return ad::permute(v[0], {2, 0, 3, 1}); });

  Tape t;
  Var tb = t.constant(Tensor({3, 2}, {0, 1, 10, 11, 20, 21}));
  test::check_close(ad::embedding(tb, {2, 0}).value(), Tensor({2, 2}, {20, 21, 0, 1}));
  CHECK_THROWS_WITH_AS(ad::embedding(tb, {3}), doctest::Contains("id 3"), DataError);
  Var m = t.constant(Tensor({2, 3}, {1, 2, 3, 4, 5, 6}));
  test::check_close(ad::transpose(m).value(), Tensor({3, 2}, {1, 4, 2, 5, 3, 6}));
  test::check_close(ad::concat({m, m}, 0).value(),
                    Tensor({4, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  test::check_close(ad::concat({m, m}, -1).value(),
                    Tensor({2, 6}, {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  test::check_close(ad::slice(m, 1, 1, 2).value(), Tensor({2, 1}, {2, 5}));
  test::check_close(ad::index(m, 1).value(), Tensor({3}, {4, 5, 6}));
  Var p = ad::permute(t.constant(rnd({2, 3, 4}, 12)), {1, 2, 0});
  CHECK(p.shape() == Shape{3, 4, 2});
  CHECK_THROWS_AS(ad::concat({m, t.constant(Tensor({3, 3}))}, -1), ShapeError);
  CHECK_THROWS_AS(ad::slice(m, 1, 2, 4), ShapeError);
  CHECK_THROWS_AS(ad::reshape(m, {4}), ShapeError);
  CHECK_THROWS_AS(ad::permute(m, {0, 0}), ShapeError);
}

TEST_CASE("autodiff: select_rows and mask_rows") {
  const std::vector<uint8_t> keep = {1, 0, 1};
  Tensor a = rnd({3, 4}, 1), b = rnd({3, 4}, 2);
  grad_ok("select_rows", ts({&a, &b}),
          [&](Tape&, const VS& v) { return ad::select_rows(keep, v[0], v[1]); });
  Tensor c = rnd({3, 4}, 3);
  grad_ok("mask_rows", ts({&c}), [&](Tape&, const VS& v) { return ad::mask_rows(v[0], keep); });
  Tape t;
  Var y = ad::mask_rows(t.constant(Tensor({2, 1}, {5, 6})), {0, 1});
  test::check_close(y.value(), Tensor({2, 1}, {0, 6}));
}

TEST_CASE("autodiff: fused LSTM and GRU steps") {
  Tensor g = rnd({2, 12}, 1), c = rnd({2, 3}, 2), g0 = g.clone();
  grad_ok("lstm_gates", ts({&g0}), [](Tape&, const VS& v) { return ad::lstm_gates(v[0]); });
  Tensor a = positive({2, 12}, 3, 0.1, 0.9), c2 = rnd({2, 3}, 4);
  grad_ok("lstm_cell_c", ts({&a, &c2}),
          [](Tape&, const VS& v) { return ad::lstm_cell_c(v[0], v[1]); });
  Tensor a2 = positive({2, 12}, 5, 0.1, 0.9), c3 = rnd({2, 3}, 6);
  grad_ok("lstm_cell_h", ts({&a2, &c3}),
          [](Tape&, const VS& v) { return ad::lstm_cell_h(v[0], v[1]); });
  Tensor xp = rnd({2, 9}, 7), hp = rnd({2, 9}, 8), h = rnd({2, 3}, 9);
  grad_ok("gru_cell", ts({&xp, &hp, &h}),
          [](Tape&, const VS& v) { return ad::gru_cell(v[0], v[1], v[2]); });
  // The fused LSTM step equals the same equations written with separate ops.
  Tape t;
  Var G = t.constant(g.clone()), C = t.constant(c.clone());
  Var act = ad::lstm_gates(G);
  Var c_new = ad::lstm_cell_c(act, C), h_new = ad::lstm_cell_h(act, c_new);
  Var i = ad::sigmoid(ad::slice(G, 1, 0, 3)), f = ad::sigmoid(ad::slice(G, 1, 3, 6));
  Var gg = ad::tanh(ad::slice(G, 1, 6, 9)), o = ad::sigmoid(ad::slice(G, 1, 9, 12));
  Var c_ref = f * C + i * gg;
  test::check_close(c_new.value(), c_ref.value(), 1e-6);
  test::check_close(h_new.value(), (o * ad::tanh(c_ref)).value(), 1e-6);
}

TEST_CASE("autodiff: dropout (seeded, inverted scaling, identity at eval)") {
  Tensor x = rnd({4, 5}, 1);
  grad_ok("dropout", ts({&x}), [](Tape&, const VS& v) { return ad::dropout(v[0], 0.3f); });
  Tape t(7);
  Var ones = t.constant(Tensor({100, 100}, 1.0f));
  Var y = ad::dropout(ones, 0.25f);
  int64_t zeros = 0;
  double s = 0;
  for (float v : y.value().values()) {
    CHECK((v == 0.0f || std::fabs(v - 1.0f / 0.75f) < 1e-6));
    zeros += v == 0.0f;
    s += v;
  }
  CHECK(zeros > 2200);
  CHECK(zeros < 2800);
  CHECK(s / 1e4 == doctest::Approx(1.0).epsilon(0.03));
  // The documented rule: element i dropped iff the i-th 32-bit draw is below round(p·2^32).
  Tape u(7);
  const Tensor& z = ad::dropout(u.constant(Tensor({3, 333}, 1.0f)), 0.25f).value();
  std::vector<uint32_t> bits(999);
  Rng(7).fill_u32(bits.data(), 999);  // the tape's Rng is seeded like Rng(seed)
  int64_t agree = 0;
  for (size_t i = 0; i < bits.size(); ++i)
    agree += (z[static_cast<int64_t>(i)] == 0.0f) == (bits[i] < 1073741824u);
  CHECK(agree == 999);
  t.set_training(false);
  Var e = ad::dropout(ones, 0.25f);
  CHECK(e.id() == ones.id());
  CHECK_THROWS_AS(ad::dropout(ones, 1.0f), Error);
}

// A test-only op whose backward is deliberately wrong (it forgets the factor 2 of d x²/dx):
// the checker must report it.
namespace {
Var broken_square(Var x) {
  Tape& t = x.tape();
  Tensor y = x.value().clone();
  for (int64_t i = 0; i < y.size(); ++i) y[i] *= y[i];
  return t.push(std::move(y), {x}, [x](Tape& t, Var out) {
    const Tensor& g = t.grad(out);
    Tensor& gx = t.grad(x);
    for (int64_t i = 0; i < g.size(); ++i) gx[i] += g[i] * t.value(x)[i];  // should be 2x
  });
}
}  // namespace

TEST_CASE("autodiff: the gradient checker catches a wrong backward") {
  std::vector<Tensor> in;
  in.push_back(rnd({3, 4}, 1));
  const auto bad = ad::check_gradients([](Tape&, const VS& v) { return broken_square(v[0]); }, in);
  CHECK_FALSE(bad.ok);
  CHECK(bad.worst > 1.0);
  CHECK(bad.where.find("input0[") == 0);
  const auto good = ad::check_gradients([](Tape&, const VS& v) { return ad::square(v[0]); }, in);
  CHECK(good.ok);
  // A backward that forgets an input entirely is caught as well.
  std::vector<Tensor> in2;
  in2.push_back(rnd({2, 2}, 2));
  in2.push_back(rnd({2, 2}, 3));
  const auto lost = ad::check_gradients(
      [](Tape& t, const VS& v) {
        Tensor y = v[0].value().clone();
        for (int64_t i = 0; i < y.size(); ++i) y[i] += v[1].value()[i];
        Var a = v[0];
        return t.push(std::move(y), {v[0], v[1]},
                      [a](Tape& t, Var out) { t.grad(a).values() = t.grad(out).values(); });
      },
      in2);
  CHECK_FALSE(lost.ok);
  CHECK(lost.where.find("input1[") == 0);
}

TEST_CASE("autodiff: tape mechanics") {
  ad::Parameter w("w", Tensor({2, 2}, {1, 2, 3, 4}));
  Tape t;
  SUBCASE("a parameter enters once, is not copied, and accumulates into its grad") {
    Var a = t.param(w), b = t.param(w);
    CHECK(a.id() == b.id());
    CHECK(&a.value() == &w.value);
    Var loss = ad::sum(a * b);  // Σ w²: gradient 2w
    t.backward(loss);
    test::check_close(w.grad, Tensor({2, 2}, {2, 4, 6, 8}));
    t.backward(loss);  // accumulates
    test::check_close(w.grad, Tensor({2, 2}, {4, 8, 12, 16}));
    CHECK(&a.grad() == &w.grad);
  }
  SUBCASE("constants get no gradient and record no backward") {
    Var c = t.constant(Tensor({2}, {1, 2}));
    Var y = ad::tanh(c);
    CHECK_FALSE(y.requires_grad());
    t.backward(ad::sum(y));
    CHECK_FALSE(t.has_grad(c));
  }
  SUBCASE("a constant view refers to its tensor, gets no gradient, and is not recycled") {
    Tensor x({2}, {1, 2});
    Var c = t.constant_view(x);
    CHECK(&c.value() == &x);
    Var y = ad::sum(ad::mul(c, t.param(w)));  // broadcast over w's rows: Σ_ij x_j w_ij
    CHECK(y.value()[0] == 1.0f + 4 + 3 + 8);
    CHECK_FALSE(t.requires_grad(c));
    t.backward(y);
    CHECK_FALSE(t.has_grad(c));
    test::check_close(w.grad, Tensor({2, 2}, {1, 2, 1, 2}));
    t.clear();
    CHECK(x.size() == 2);  // still its owner's
    CHECK(x[1] == 2.0f);
  }
  SUBCASE("recording off keeps values only") {
    t.set_recording(false);
    Var y = ad::sum(ad::square(t.param(w)));
    CHECK(y.value()[0] == 30.0f);
    CHECK_FALSE(y.requires_grad());
    t.backward(y);
    test::check_close(w.grad, Tensor({2, 2}));
  }
  SUBCASE("clear() recycles buffers and invalidates Vars") {
    Var y = ad::tanh(t.param(w));
    const float* buf = y.value().data();
    t.clear();
    CHECK(t.size() == 0);
    CHECK_THROWS_AS((void)y.value(), Error);
    Var z = ad::tanh(t.param(w));
    CHECK(z.value().data() == buf);  // the same storage, reused
  }
  SUBCASE("backward closures live in the tape until clear(), large ones too") {
    auto token = std::make_shared<int>(0);
    std::array<float, 20000> big{};  // 80 KB: larger than a block of the tape's arena
    big[19999] = 2.0f;
    {
      Tape u;
      for (int step = 0; step < 2; ++step) {
        w.grad = Tensor({2, 2});
        Var x = u.param(w);
        for (int k = 0; k < 600; ++k)  // more than a chunk of nodes
          u.push(u.zeros({1}), {x}, [token](Tape&, Var) { ++*token; });
        CHECK(token.use_count() == 601);
        u.push(u.zeros({1}), {x}, ad::BackwardFn());  // an empty std::function: none kept
        Var y = u.push(w.value.clone(), std::vector<Var>{x}, [x, big](Tape& tp, Var out) {
          for (int64_t i = 0; i < 4; ++i) tp.grad(x)[i] += big[19999] * tp.grad(out)[i];
        });
        u.backward(ad::sum(y));
        test::check_close(w.grad, Tensor({2, 2}, {2, 2, 2, 2}));
        CHECK(*token == 0);  // not reached from the loss: never run
        u.clear();
        CHECK(token.use_count() == 1);  // destroyed by clear()
      }
      u.push(u.zeros({1}), {u.param(w)}, [token](Tape&, Var) {});
      CHECK(token.use_count() == 2);
    }
    CHECK(token.use_count() == 1);  // and by the tape's destructor
  }
  SUBCASE("the pool stays bounded when ops build values without alloc()") {
    // Each step: one pooled value (tanh) and three built outside the pool, of a size alloc()
    // is never asked for; a pool keeping all of them would grow by three buffers a step.
    size_t after_first = 0;
    for (int step = 0; step < 50; ++step) {
      Var y = ad::tanh(t.param(w));
      for (int k = 0; k < 3; ++k) t.push(Tensor({7}), {y}, nullptr);
      t.backward(ad::sum(y));
      t.clear();
      if (step == 0) after_first = t.pooled();
      CHECK(t.pooled() == after_first);
    }
    CHECK(after_first <= 3);  // tanh's value, its gradient and the sum's: sizes alloc() served
  }
  SUBCASE("batches of ever new shapes reuse the buffers of nearby sizes") {
    // 300 steps of two buffers each, of 300 different sizes between 1,000 and 1,299: bins of
    // exact sizes would end up holding 600 buffers; four size classes (1,024, 1,152, 1,280 and
    // 1,408 floats) hold at most two each.
    for (int step = 0; step < 300; ++step) {
      const int64_t n = 1000 + (step * 37) % 300;
      Tensor a = t.alloc({n}), b = t.alloc({n, 1});
      CHECK(a.size() == n);
      CHECK(b.size() == n);
      Var x = t.constant(std::move(a));
      t.push(std::move(b), {x}, nullptr);
      t.clear();
    }
    CHECK(t.pooled() <= 8);
  }
  SUBCASE("in all the pool holds at most twice what one step asked for") {
    // Step k asks for four buffers of 1,024 + 128·k floats: eight classes, four buffers each
    // (32 with the per-class bound alone); a step asks for at most 4 · 1,920 floats, so the
    // pool may hold 15,360, about ten of these buffers and never more than 15.
    for (int k = 0; k < 8; ++k) {
      std::vector<Tensor> bufs;
      for (int i = 0; i < 4; ++i) bufs.push_back(t.alloc({1024 + 128 * k}));
      for (Tensor& b : bufs) t.constant(std::move(b));
      t.clear();
    }
    CHECK(t.pooled() <= 15);
  }
  SUBCASE("errors") {
    CHECK_THROWS_AS(t.backward(t.param(w)), ShapeError);  // not a scalar
    Tape other;
    CHECK_THROWS_AS(ad::add(t.param(w), other.param(w)), Error);
    CHECK_THROWS_AS((void)Var().value(), Error);
  }
}

TEST_CASE("autodiff: local parameter gradients stay on the tape") {
  ad::Parameter w("w", Tensor({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  ad::Tape t;
  t.set_local_param_grads(true);
  ad::Var x = t.constant(Tensor({1, 3}, std::vector<float>{1, -1, 2}));
  ad::Var y = ad::sum(ad::linear(x, t.param(w)));
  CHECK(t.local_grad(w) == nullptr);  // nothing yet
  t.backward(y);
  const Tensor* g = t.local_grad(w);
  REQUIRE(g != nullptr);
  CHECK(g->shape() == Shape{2, 3});
  const std::vector<float> want{1, -1, 2, 1, -1, 2};
  for (int64_t i = 0; i < 6; ++i) CHECK((*g)[i] == want[static_cast<size_t>(i)]);
  for (float v : w.grad.values()) CHECK(v == 0.0f);  // the parameter's own grad untouched
  t.clear();
  t.set_local_param_grads(false);
  ad::Var y2 =
      ad::sum(ad::linear(t.constant(Tensor({1, 3}, std::vector<float>{1, -1, 2})), t.param(w)));
  t.backward(y2);
  CHECK(t.local_grad(w) == nullptr);
  CHECK(w.grad[0] == 1.0f);
}

// ---- images: conv2d and pooling (ops_conv.cpp)

namespace {

ad::Conv2dOptions conv_opts(const Tensor& o) {  // [sh, sw, ph, pw, dh, dw]
  ad::Conv2dOptions c;
  c.stride_h = static_cast<int64_t>(o[0]), c.stride_w = static_cast<int64_t>(o[1]);
  c.pad_h = static_cast<int64_t>(o[2]), c.pad_w = static_cast<int64_t>(o[3]);
  c.dil_h = static_cast<int64_t>(o[4]), c.dil_w = static_cast<int64_t>(o[5]);
  return c;
}

}  // namespace

TEST_CASE("conv2d and pooling: values and gradients equal PyTorch's (golden files)") {
  // testdata/make_conv_golden.py: torch.nn.functional in float64; the loss sum(y * r).
  for (const char* name :
       {"conv_k3_p1", "conv_rect_s2_d2", "conv_1x1", "conv_k3_s2_p2_d2", "conv_1x1_s2"}) {
    CAPTURE(name);
    const auto z = io::read_npz(test::testdata(std::string("conv/") + name + ".npz"));
    const bool bias = z.count("b") > 0;
    Tape t;
    Var x = t.input(z.at("x").clone()), w = t.input(z.at("w").clone());
    Var b = bias ? t.input(z.at("b").clone()) : Var();
    Var y = ad::conv2d(x, w, b, conv_opts(z.at("opts")));
    test::check_close(y.value(), z.at("y"), 1e-5, 1e-5);
    t.backward(y, z.at("r"));
    test::check_close(x.grad(), z.at("gx"), 1e-5, 1e-5);
    test::check_close(w.grad(), z.at("gw"), 1e-5, 1e-5);
    if (bias) test::check_close(b.grad(), z.at("gb"), 1e-5, 1e-5);
  }
  for (const char* name : {"max_k2", "max_k3_s2_p1", "avg_k2", "avg_k3_s2_p1", "avg_k3_s1"}) {
    CAPTURE(name);
    const auto z = io::read_npz(test::testdata(std::string("conv/") + name + ".npz"));
    const Tensor& o = z.at("opts");
    const auto k = static_cast<int64_t>(o[0]), s = static_cast<int64_t>(o[1]),
               p = static_cast<int64_t>(o[2]);
    Tape t;
    Var x = t.input(z.at("x").clone());
    Var y = name[0] == 'm' ? ad::max_pool2d(x, k, s, p) : ad::avg_pool2d(x, k, s, p);
    test::check_close(y.value(), z.at("y"), 1e-6, 1e-5);
    t.backward(y, z.at("r"));
    test::check_close(x.grad(), z.at("gx"), 1e-5, 1e-5);
  }
}

TEST_CASE("conv2d and pooling: finite-difference gradients") {
  Tensor x1 = rnd({2, 2, 5, 4}, 1), w1 = rnd({3, 2, 3, 3}, 2), b1 = rnd({3}, 3);
  grad_ok("conv2d 3x3 pad 1", ts({&x1, &w1, &b1}), [](Tape&, const VS& v) {
    ad::Conv2dOptions p;
    p.pad_h = p.pad_w = 1;
    return ad::conv2d(v[0], v[1], v[2], p);
  });
  Tensor x2 = rnd({2, 2, 6, 7}, 4), w2 = rnd({2, 2, 2, 3}, 5);
  grad_ok("conv2d 2x3, stride (2,1), padding (1,0), dilation (1,2)", ts({&x2, &w2}),
          [](Tape&, const VS& v) {
            ad::Conv2dOptions p;
            p.stride_h = 2, p.pad_h = 1, p.dil_w = 2;
            return ad::conv2d(v[0], v[1], Var(), p);
          });
  Tensor x3 = rnd({2, 3, 3, 4}, 6), w3 = rnd({2, 3, 1, 1}, 7), b3 = rnd({2}, 8);
  grad_ok("conv2d 1x1", ts({&x3, &w3, &b3}),
          [](Tape&, const VS& v) { return ad::conv2d(v[0], v[1], v[2]); });
  // Max pooling away from ties: distinct values spread well apart.
  Tensor xm({2, 2, 5, 6});
  Rng rng(9);
  std::vector<int> perm(static_cast<size_t>(xm.size()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
  for (int64_t i = 0; i < xm.size(); ++i)
    xm[i] = 0.1f * static_cast<float>(perm[static_cast<size_t>(i)]);
  Tensor xm2 = xm.clone(), xa = rnd({2, 2, 5, 6}, 10);
  grad_ok("max_pool2d 3, stride 2, padding 1", ts({&xm}),
          [](Tape&, const VS& v) { return ad::max_pool2d(v[0], 3, 2, 1); });
  grad_ok("max_pool2d 2", ts({&xm2}), [](Tape&, const VS& v) { return ad::max_pool2d(v[0], 2); });
  grad_ok("avg_pool2d 3, stride 2, padding 1", ts({&xa}),
          [](Tape&, const VS& v) { return ad::avg_pool2d(v[0], 3, 2, 1); });
}

TEST_CASE("conv2d: a 1x1 convolution is a linear map of the channels; a delta kernel shifts") {
  const Tensor x = rnd({2, 3, 4, 5}, 11), w = rnd({4, 3, 1, 1}, 12), b = rnd({4}, 13);
  Tape t;
  const Tensor& y =
      ad::conv2d(t.constant(x.clone()), t.constant(w.clone()), t.constant(b.clone())).value();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t p = 0; p < 20; ++p) {
        double s = b[o];
        for (int64_t c = 0; c < 3; ++c) s += w[o * 3 + c] * x[(n * 3 + c) * 20 + p];
        CHECK(y[(n * 4 + o) * 20 + p] == doctest::Approx(s).epsilon(1e-5));
      }
  // A 3x3 kernel that is 1 at (row 0, column 2), padding 1: out[i][j] = in[i-1][j+1].
  Tensor d({1, 1, 3, 3}, 0.0f);
  d[2] = 1.0f;
  ad::Conv2dOptions p;
  p.pad_h = p.pad_w = 1;
  const Tensor one = rnd({1, 1, 4, 5}, 14);
  const Tensor& s = ad::conv2d(t.constant(one.clone()), t.constant(d.clone()), Var(), p).value();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      const float want = i >= 1 && j + 1 < 5 ? one[(i - 1) * 5 + j + 1] : 0.0f;
      CHECK(s[i * 5 + j] == want);
    }
}

TEST_CASE("conv2d and pooling: shapes that do not fit are ShapeErrors") {
  Tape t;
  Var x = t.constant(Tensor({1, 2, 4, 4}));
  CHECK_THROWS_AS(ad::conv2d(x, t.constant(Tensor({3, 1, 3, 3}))), ShapeError);  // channels
  CHECK_THROWS_AS(ad::conv2d(x, t.constant(Tensor({3, 2, 5, 5}))), ShapeError);  // too big
  CHECK_THROWS_AS(ad::conv2d(t.constant(Tensor({2, 4, 4})), t.constant(Tensor({3, 2, 1, 1}))),
                  ShapeError);  // not [N, C, H, W]
  CHECK_THROWS_AS(ad::conv2d(x, t.constant(Tensor({3, 2, 1, 1})), t.constant(Tensor({2}))),
                  ShapeError);  // bias
  ad::Conv2dOptions bad;
  bad.stride_h = 0;
  CHECK_THROWS_AS(ad::conv2d(x, t.constant(Tensor({3, 2, 1, 1})), Var(), bad), ShapeError);
  CHECK_THROWS_AS(ad::max_pool2d(x, 5), ShapeError);
  CHECK_THROWS_AS(ad::avg_pool2d(x, 2, 1, 2), ShapeError);  // padding > kernel / 2
  CHECK(ad::max_pool2d(x, 2).shape() == Shape{1, 2, 2, 2});
  CHECK(ad::avg_pool2d(x, 3, 1, 1).shape() == Shape{1, 2, 4, 4});
}

TEST_CASE("batch_norm2d: training and eval equal PyTorch's, running statistics included") {
  for (const char* name : {"bn_train", "bn_eval"}) {
    CAPTURE(name);
    const auto z = io::read_npz(test::testdata(std::string("conv/") + name + ".npz"));
    Tensor rm = z.at("rm0").clone(), rv = z.at("rv0").clone();
    Tape t;
    Var x = t.input(z.at("x").clone()), g = t.input(z.at("gamma").clone()),
        b = t.input(z.at("beta").clone());
    Var y = ad::batch_norm2d(x, g, b, rm, rv, name == std::string("bn_train"));
    test::check_close(y.value(), z.at("y"), 1e-5, 1e-5);
    test::check_close(rm, z.at("rm1"), 1e-6, 1e-5);
    test::check_close(rv, z.at("rv1"), 1e-6, 1e-5);
    t.backward(y, z.at("r"));
    test::check_close(x.grad(), z.at("gx"), 1e-5, 1e-4);
    test::check_close(g.grad(), z.at("ggamma"), 1e-5, 1e-5);
    test::check_close(b.grad(), z.at("gbeta"), 1e-5, 1e-5);
  }
  // Finite differences through the batch statistics (training), gain and bias included.
  Tensor x = rnd({2, 3, 2, 3}, 21, 1.5, 0.3), g = rnd({3}, 22), b = rnd({3}, 23);
  grad_ok("batch_norm2d training", ts({&x, &g, &b}), [](Tape&, const VS& v) {
    Tensor rm({3}, 0.0f), rv({3}, 1.0f);
    return ad::batch_norm2d(v[0], v[1], v[2], rm, rv, true);
  });
  Tape t;
  Tensor rm({3}), rv({3}, 1.0f), bad({4});
  CHECK_THROWS_AS(ad::batch_norm2d(t.constant(Tensor({2, 3, 2, 2})), Var(), Var(), bad, rv, true),
                  ShapeError);
  CHECK_THROWS_AS(ad::batch_norm2d(t.constant(Tensor({1, 3, 1, 1})), Var(), Var(), rm, rv, true),
                  ShapeError);  // one value a channel
}

// Gradients written on first use (Tape::grad(v, assign)): a new buffer comes from the pool
// with whatever a past step left in it, so a backward function that assigns must write every
// element. Each input below gets its gradient from the ops once (assigned), then from the
// same ops twice (assigned, then added), on a tape whose pool holds
// buffers dirtied by earlier steps; the results must match a fresh tape's bit for bit, and an
// input whose gradient one op writes once per element gets exactly twice it from two copies.
TEST_CASE("autodiff: gradients assigned on first use equal gradients added to zeros") {
  const int64_t B = 3, T = 4, A = 8, h = 2;
  std::vector<Tensor> in;
  in.push_back(rnd({B, T, A}, 1));       // 0: x, rank 3
  in.push_back(rnd({A, A}, 2));          // 1: w
  in.push_back(rnd({A}, 3));             // 2: bias
  in.push_back(rnd({B, A}, 4));          // 3: q
  in.push_back(rnd({B, 4 * h}, 5));      // 4: gate inputs
  in.push_back(rnd({B, h}, 6));          // 5: cell state
  in.push_back(rnd({B, A, T}, 7));       // 6: batched right operand
  in.push_back(rnd({B * T, 4 * h}, 8));  // 7: addmm summand
  const size_t n = in.size();
  auto loss = [&](Tape& t, const VS& v, int times) {
    Var total;
    auto add = [&](Var l) { total = total.valid() ? ad::add(total, ad::sum(l)) : ad::sum(l); };
    for (int k = 0; k < times; ++k) {
      Var y = ad::linear(v[0], v[1], v[2]);      // x, w, bias
      add(ad::additive_scores(y, v[3], v[2]));   // keys, q, v
      add(ad::matmul(v[0], v[1]));               // flat
      add(ad::matmul(v[0], v[1], false, true));  // flat, transposed b
      add(ad::matmul(v[6], v[0]));               // batched
      add(ad::matmul(v[1], v[6], true));         // a shared, b batched
      add(ad::matmul(v[1], v[1], false, true));  // one Var twice
      add(ad::addmm(v[7], ad::reshape(v[0], {B * T, A}), ad::slice(v[1], 0, 0, 4 * h), false,
                    true));
      Var a = ad::lstm_gates(v[4]);
      Var c = ad::lstm_cell_c(a, v[5]);
      add(ad::lstm_cell_h(a, c));
      add(c);
    }
    return total;
  };
  auto grads = [&](Tape& t, int times) {
    VS v;
    for (size_t i = 0; i < n; ++i) v.push_back(t.input(in[i].clone()));
    t.backward(loss(t, v, times));
    std::vector<Tensor> g;
    for (size_t i = 0; i < n; ++i) g.push_back(v[i].grad().clone());
    t.clear();
    return g;
  };
  Tape fresh1, fresh2, dirty;
  const std::vector<Tensor> once = grads(fresh1, 1), twice = grads(fresh2, 2);
  for (int round = 0; round < 3; ++round) {  // the pool's buffers hold old gradients
    const std::vector<Tensor> d1 = grads(dirty, 1), d2 = grads(dirty, 2);
    for (size_t i = 0; i < n; ++i) {
      INFO("round " << round << ", input " << i);
      REQUIRE(d1[i].size() == once[i].size());
      for (int64_t j = 0; j < once[i].size(); ++j) {
        CHECK(d1[i][j] == once[i][j]);
        CHECK(d2[i][j] == twice[i][j]);
        if (i == 4 || i == 5 || i == 7)  // one write per element: assigned, then added
          CHECK(twice[i][j] == 2.0f * once[i][j]);
      }
    }
  }
  // The flag: new buffer once, then the same buffer to add to; a parameter's never.
  Tape t;
  Var x = t.input(rnd({2, 3}, 9));
  bool assign = false;
  t.grad(x, assign);
  CHECK(assign);
  t.grad(x, assign);
  CHECK_FALSE(assign);
  ad::Parameter p("p", rnd({2}, 10));
  t.grad(t.param(p), assign);
  CHECK_FALSE(assign);
}

namespace {
// The per-step composition lstm_sequence stands for (ops.h), for comparison.
Var lstm_steps(Var p, Var h0, Var c0, Var whh, const std::vector<uint8_t>& keep, bool reverse) {
  const int64_t T = p.dim(0), B = p.dim(1);
  Var h = h0, c = c0;
  std::vector<Var> outs(static_cast<size_t>(T));
  for (int64_t k = 0; k < T; ++k) {
    const int64_t s = reverse ? T - 1 - k : k;
    Var a = ad::lstm_gates(ad::addmm(ad::index(p, s), h, whh, false, true));
    Var cn = ad::lstm_cell_c(a, c), hn = ad::lstm_cell_h(a, cn);
    if (keep.empty()) {
      h = hn, c = cn;
      outs[static_cast<size_t>(s)] = hn;
    } else {
      std::vector<uint8_t> kb(keep.begin() + s * B, keep.begin() + (s + 1) * B);
      h = ad::select_rows(kb, hn, h);
      c = ad::select_rows(kb, cn, c);
      outs[static_cast<size_t>(s)] = ad::mask_rows(hn, kb);
    }
  }
  outs.push_back(h);
  outs.push_back(c);
  return ad::stack(outs, 0);
}
}  // namespace

TEST_CASE("autodiff: lstm_sequence (gradients, the per-step composition, padding, reverse)") {
  const int64_t T = 4, B = 3, h = 2;
  const std::vector<uint8_t> pad = {1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0};  // lengths 2, 3, 1
  for (bool reverse : {false, true})
    for (const auto& keep : {std::vector<uint8_t>{}, pad}) {
      INFO("reverse " << reverse << ", padded " << !keep.empty());
      Tensor p = rnd({T, B, 4 * h}, 1), h0 = rnd({B, h}, 2), c0 = rnd({B, h}, 3);
      Tensor w = rnd({4 * h, h}, 4, 0.7);
      Tensor p1 = p.clone(), h1 = h0.clone(), c1 = c0.clone(), w1 = w.clone();
      grad_ok("lstm_sequence", ts({&p1, &h1, &c1, &w1}), [&](Tape&, const VS& v) {
        return ad::lstm_sequence(v[0], v[1], v[2], v[3], keep, reverse);
      });
      // Values and gradients equal those of the per-step ops (within float rounding: the
      // weight gradient is one product instead of T).
      std::vector<Tensor> got, want;
      for (int way = 0; way < 2; ++way) {
        Tape t;
        Var vp = t.input(p.clone()), vh = t.input(h0.clone()), vc = t.input(c0.clone());
        Var vw = t.input(w.clone());
        Var y = way == 0 ? ad::lstm_sequence(vp, vh, vc, vw, keep, reverse)
                         : lstm_steps(vp, vh, vc, vw, keep, reverse);
        t.backward(y, rnd(y.shape(), 5));
        auto& dst = way == 0 ? got : want;
        for (Var v : {y, vp, vh, vc, vw})
          dst.push_back((v.id() == y.id() ? v.value() : v.grad()).clone());
      }
      for (size_t i = 0; i < got.size(); ++i) test::check_close(got[i], want[i], 1e-5);
    }
  Tape t;
  Var p = t.constant(Tensor({2, 3, 8})), s = t.constant(Tensor({3, 2})),
      w = t.constant(Tensor({8, 2}));
  CHECK_THROWS_AS(ad::lstm_sequence(p, s, s, t.constant(Tensor({8, 3}))), ShapeError);
  CHECK_THROWS_AS(ad::lstm_sequence(p, t.constant(Tensor({2, 2})), s, w), ShapeError);
  CHECK_THROWS_AS(ad::lstm_sequence(p, s, s, w, {1, 0, 1}), ShapeError);
}

}  // namespace attnkit_unit_autodiff_test
