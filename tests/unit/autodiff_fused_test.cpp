// The fused ops of autodiff/ops_fused.h: equal to their unfused compositions (values and
// gradients) and checked by finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/autodiff/ops_fused.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/nn/loss.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_autodiff_fused_test {

using namespace attnkit;
using ad::Tape;
using ad::Var;
using VS = std::vector<Var>;

namespace {

Tensor rnd(Shape s, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

void grad_ok(const std::string& what, const std::vector<Tensor>& inputs,
             const std::function<Var(Tape&, const VS&)>& f) {
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) in.push_back(t.clone());
  const ad::GradCheckResult r = ad::check_gradients(f, in);
  INFO(what << ": worst " << r.worst << " at " << r.where);
  CHECK(r.checked > 0);
  CHECK(r.ok);
}

// Values and input gradients of f and g (same inputs, same seed gradient) agree.
void same(const std::vector<Tensor>& inputs, const std::function<Var(Tape&, const VS&)>& f,
          const std::function<Var(Tape&, const VS&)>& g, double rtol = 1e-4, double atol = 1e-5) {
  std::vector<Tensor> grads[2];
  Tensor values[2];
  for (int k = 0; k < 2; ++k) {
    Tape t(7);
    VS xs;
    for (const Tensor& x : inputs) xs.push_back(t.input(x.clone()));
    Var y = k == 0 ? f(t, xs) : g(t, xs);
    values[k] = y.value().clone();
    Tensor seed = rnd(y.shape(), 99);
    t.backward(y, seed);
    for (Var x : xs) grads[k].push_back(x.grad().clone());
  }
  test::check_close(values[0], values[1], atol, rtol);
  for (size_t i = 0; i < inputs.size(); ++i)
    test::check_close(grads[0][i], grads[1][i], atol, rtol);
}

template <class... Ts>
std::vector<Tensor> tensors(Ts&&... xs) {
  std::vector<Tensor> v;
  (v.push_back(std::move(xs)), ...);
  return v;
}

Tensor mask_of(int64_t B, int64_t S, const std::vector<int64_t>& lengths) {
  Tensor m({B, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < lengths[static_cast<size_t>(b)]; ++s) m.at(b, s) = 1.0f;
  return m;
}

}  // namespace

TEST_CASE("autodiff fused: additive_attention equals scores + masked softmax + context") {
  const int64_t B = 3, S = 5, A = 4, H = 6;
  const std::vector<Tensor> in =
      tensors(rnd({B, S, A}, 1), rnd({B, A}, 2), rnd({A}, 3), rnd({B, S, H}, 4));
  for (const bool masked : {false, true}) {
    CAPTURE(masked);
    const Tensor mask = mask_of(B, S, {5, 2, 4});
    const Tensor* mp = masked ? &mask : nullptr;
    auto fused = [mp](Tape&, const VS& x) {
      return ad::additive_attention(x[0], x[1], x[2], x[3], mp);
    };
    auto plain = [mp, B, S, H](Tape&, const VS& x) {
      Var sc = ad::additive_scores(x[0], x[1], x[2]);
      Var a = mp ? ad::masked_softmax(sc, *mp) : ad::softmax(sc);
      return ad::reshape(ad::matmul(ad::reshape(a, {B, 1, S}), x[3]), {B, H});
    };
    same(in, fused, plain);
    grad_ok(masked ? "additive_attention (masked)" : "additive_attention", in, fused);
  }
}

TEST_CASE("autodiff fused: additive_attention weights, fully masked rows, shapes") {
  Tape t;
  Var K = t.constant(rnd({2, 3, 2}, 1)), Q = t.constant(rnd({2, 2}, 2)),
      V = t.constant(rnd({2}, 3)), M = t.constant(rnd({2, 3, 4}, 4));
  const Tensor mask = mask_of(2, 3, {2, 0});
  Tensor alpha;
  Var c = ad::additive_attention(K, Q, V, M, &mask, &alpha);
  REQUIRE(alpha.shape() == Shape{2, 3});
  CHECK(alpha.at(0, 2) == 0.0f);
  CHECK(alpha.at(0, 0) + alpha.at(0, 1) == doctest::Approx(1.0f));
  for (int64_t s = 0; s < 3; ++s) CHECK(alpha.at(1, s) == 0.0f);  // every key masked: zeros
  for (int64_t j = 0; j < 4; ++j) CHECK(c.value().at(1, j) == 0.0f);
  CHECK_THROWS_AS(ad::additive_attention(K, Q, V, t.constant(rnd({2, 4, 4}, 5))), ShapeError);
}

TEST_CASE("autodiff fused: linear_cross_entropy equals linear + cross_entropy") {
  const int64_t N = 7, F = 5, V = 9;
  const std::vector<Tensor> in = tensors(rnd({N, F}, 1), rnd({V, F}, 2, 0.5), rnd({V}, 3));
  const std::vector<int32_t> full = {1, 4, 8, 2, 3, 5, 7}, padded = {1, 0, 8, 0, 3, 5, 0};
  for (const float eps : {0.0f, 0.1f})
    for (const auto* tg : {&full, &padded}) {
      CAPTURE(eps);
      CAPTURE(tg == &padded);
      auto fused = [tg, eps](Tape&, const VS& x) {
        return ad::linear_cross_entropy(x[0], x[1], x[2], *tg, 0, eps);
      };
      auto plain = [tg, eps](Tape&, const VS& x) {
        nn::CrossEntropyOptions o;
        o.ignore_index = 0;
        o.label_smoothing = eps;
        return nn::cross_entropy(ad::linear(x[0], x[1], x[2]), *tg, o);
      };
      same(in, fused, plain);
      grad_ok("linear_cross_entropy", in, fused);
    }
  // Without a bias, and with leading dimensions [T, B, F].
  const std::vector<Tensor> in3 = tensors(rnd({2, 3, F}, 4), rnd({V, F}, 5));
  const std::vector<int32_t> t6 = {1, 2, 0, 4, 5, 6};
  same(
      in3, [&](Tape&, const VS& x) { return ad::linear_cross_entropy(x[0], x[1], Var(), t6); },
      [&](Tape&, const VS& x) {
        nn::CrossEntropyOptions o;
        o.ignore_index = 0;
        return nn::cross_entropy(ad::linear(x[0], x[1]), t6, o);
      });
  Tape t;
  Var x = t.constant(rnd({2, F}, 1)), w = t.constant(rnd({V, F}, 2));
  CHECK(ad::linear_cross_entropy(x, w, Var(), {0, 0}).value()[0] == 0.0f);  // nothing counted
  CHECK_THROWS_AS(ad::linear_cross_entropy(x, w, Var(), {1}), ShapeError);
  CHECK_THROWS_AS(ad::linear_cross_entropy(x, w, Var(), {1, V}), DataError);
}

namespace {

// multi_head_attention by the composed ops: heads split by reshape/permute, batched matmuls,
// masked_softmax over [B·H, n_q, n_k], dropout on the weights.
Var mha_composed(const VS& x, int64_t H, float scale, const Tensor* mask, bool causal,
                 float p = 0.0f) {
  const int64_t B = x[0].dim(0), nq = x[0].dim(1), nk = x[1].dim(1), dv = x[2].dim(2);
  auto heads_of = [&](Var v, int64_t n) {
    const int64_t w = v.dim(2) / H;
    return ad::reshape(ad::permute(ad::reshape(v, {B, n, H, w}), {0, 2, 1, 3}), {B * H, n, w});
  };
  Var S = ad::matmul(heads_of(ad::mul(x[0], scale), nq), heads_of(x[1], nk), false, true);
  Tensor m({B * H, nq, nk}, 1.0f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < nq; ++i)
        for (int64_t j = 0; j < nk; ++j) {
          float& e = m.at(b * H + h, i, j);
          if (mask) e = mask->rank() == 2 ? mask->at(i, j) : mask->at(b, i, j);
          if (causal && j > i) e = 0.0f;
        }
  Var C = ad::matmul(ad::dropout(ad::masked_softmax(S, m), p), heads_of(x[2], nk));
  return ad::reshape(ad::permute(ad::reshape(C, {B, H, nq, dv / H}), {0, 2, 1, 3}), {B, nq, dv});
}

}  // namespace

TEST_CASE("autodiff fused: multi_head_attention equals the composed heads, and its gradients") {
  const int64_t B = 2, nq = 3, nk = 4, H = 2;
  const float scale = 0.7f;
  Tensor shared({nq, nk}, 1.0f);
  shared.at(0, 3) = 0.0f;
  shared.at(2, 1) = 0.0f;
  Tensor per_item({B, nq, nk}, 1.0f);
  for (int64_t j = 0; j < nk; ++j) per_item.at(1, 2, j) = 0.0f;  // a fully masked row
  per_item.at(0, 1, 0) = 0.0f;
  struct Case {
    const char* name;
    const Tensor* mask;
    bool causal;
  };
  for (const Case& c :
       {Case{"no mask", nullptr, false}, Case{"shared mask", &shared, false},
        Case{"causal", nullptr, true}, Case{"per-item mask + causal", &per_item, true}}) {
    INFO(c.name);
    // cross-attention shapes: n_q != n_k, d_v != d
    const std::vector<Tensor> in =
        tensors(rnd({B, nq, 4}, 11), rnd({B, nk, 4}, 12), rnd({B, nk, 6}, 13));
    auto fused = [&](Tape&, const VS& x) {
      return ad::multi_head_attention(x[0], x[1], x[2], H, scale, c.mask, c.causal);
    };
    auto composed = [&](Tape&, const VS& x) { return mha_composed(x, H, scale, c.mask, c.causal); };
    same(in, fused, composed);
    grad_ok(std::string("multi_head_attention ") + c.name, in, fused);
  }
  // self-attention shapes, one head and four
  for (const int64_t heads : {1, 4}) {
    const std::vector<Tensor> in =
        tensors(rnd({B, 5, 8}, 21), rnd({B, 5, 8}, 22), rnd({B, 5, 8}, 23));
    auto fused = [&](Tape&, const VS& x) {
      return ad::multi_head_attention(x[0], x[1], x[2], heads, 0.5f, nullptr, true);
    };
    same(in, fused,
         [&](Tape&, const VS& x) { return mha_composed(x, heads, 0.5f, nullptr, true); });
    grad_ok("multi_head_attention self, heads " + std::to_string(heads), in, fused);
  }
}

TEST_CASE("autodiff fused: multi_head_attention with dropout on the weights") {
  const int64_t B = 2, nq = 3, nk = 5, H = 2;
  Tensor mask({B, nq, nk}, 1.0f);
  mask.at(0, 1, 4) = 0.0f;
  const std::vector<Tensor> in =
      tensors(rnd({B, nq, 4}, 31), rnd({B, nk, 4}, 32), rnd({B, nk, 6}, 33));
  for (const float p : {0.3f, 0.6f}) {
    CAPTURE(p);
    // The same draws as ad::dropout over the weights (both tapes seeded alike), so the same
    // outputs and gradients as the composed ops.
    auto fused = [&](Tape&, const VS& x) {
      return ad::multi_head_attention(x[0], x[1], x[2], H, 0.8f, &mask, true, nullptr, p);
    };
    same(in, fused, [&](Tape&, const VS& x) { return mha_composed(x, H, 0.8f, &mask, true, p); });
    grad_ok("multi_head_attention with dropout", in, fused);
  }
  // Something is dropped, and only while training: outputs differ from p = 0 when training
  // and equal them when not.
  for (const bool training : {true, false}) {
    Tensor y[2];
    for (int k = 0; k < 2; ++k) {
      Tape t(5);
      t.set_training(training);
      y[k] = ad::multi_head_attention(t.input(in[0].clone()), t.input(in[1].clone()),
                                      t.input(in[2].clone()), H, 0.8f, nullptr, false, nullptr,
                                      k == 0 ? 0.0f : 0.5f)
                 .value()
                 .clone();
    }
    double diff = 0.0;
    for (int64_t i = 0; i < y[0].size(); ++i) diff += std::fabs(y[0][i] - y[1][i]);
    if (training)
      CHECK(diff > 0.1);
    else
      CHECK(diff == 0.0);
  }
  Tape t;
  Var q = t.input(in[0].clone()), k = t.input(in[1].clone()), v = t.input(in[2].clone());
  CHECK_THROWS_AS(ad::multi_head_attention(q, k, v, H, 1.0f, nullptr, false, nullptr, 1.0f), Error);
  CHECK_THROWS_AS(ad::multi_head_attention(q, k, v, H, 1.0f, nullptr, false, nullptr, -0.1f),
                  Error);
}

TEST_CASE("autodiff fused: multi_head_attention weights, masked rows, shapes") {
  const int64_t B = 2, n = 3, H = 2;
  Tape t;
  Var q = t.input(rnd({B, n, 4}, 1)), k = t.input(rnd({B, n, 4}, 2)),
      v = t.input(rnd({B, n, 4}, 3));
  Tensor mask({B, n, n}, 1.0f);
  for (int64_t j = 0; j < n; ++j) mask.at(1, 0, j) = 0.0f;
  Tensor w;
  Var y = ad::multi_head_attention(q, k, v, H, 0.5f, &mask, true, &w);
  REQUIRE(w.shape() == Shape{B, H, n, n});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < n; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          const float a = w[((b * H + h) * n + i) * n + j];
          if (j > i) CHECK(a == 0.0f);  // causal: exactly 0
          s += a;
        }
        CHECK(s == doctest::Approx(b == 1 && i == 0 ? 0.0 : 1.0).epsilon(1e-6));
      }
  for (int64_t j = 0; j < 4; ++j) CHECK(y.value().at(1, 0, j) == 0.0f);     // fully masked row: 0
  CHECK_THROWS_AS(ad::multi_head_attention(q, k, v, 3, 1.0f), ShapeError);  // 3 ∤ 4
  Tensor bad({n, n + 1}, 1.0f);
  CHECK_THROWS_AS(ad::multi_head_attention(q, k, v, H, 1.0f, &bad), ShapeError);
  Var k2 = t.input(rnd({B, n, 6}, 4));
  CHECK_THROWS_AS(ad::multi_head_attention(q, k2, v, H, 1.0f), ShapeError);  // d of q, k differ
}

}  // namespace attnkit_unit_autodiff_fused_test
