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
  for (size_t i = 0; i < inputs.size(); ++i) test::check_close(grads[0][i], grads[1][i], atol, rtol);
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
  const std::vector<Tensor> in = tensors(rnd({B, S, A}, 1), rnd({B, A}, 2), rnd({A}, 3), rnd({B, S, H}, 4));
  for (const bool masked : {false, true}) {
    CAPTURE(masked);
    const Tensor mask = mask_of(B, S, {5, 2, 4});
    const Tensor* mp = masked ? &mask : nullptr;
    auto fused = [mp](Tape&, const VS& x) { return ad::additive_attention(x[0], x[1], x[2], x[3], mp); };
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
  Var K = t.constant(rnd({2, 3, 2}, 1)), Q = t.constant(rnd({2, 2}, 2)), V = t.constant(rnd({2}, 3)),
      M = t.constant(rnd({2, 3, 4}, 4));
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
      auto fused = [tg, eps](Tape&, const VS& x) { return ad::linear_cross_entropy(x[0], x[1], x[2], *tg, 0, eps); };
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
  same(in3, [&](Tape&, const VS& x) { return ad::linear_cross_entropy(x[0], x[1], Var(), t6); },
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
