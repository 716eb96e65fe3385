// SNAIL's blocks (models/snail/blocks.h): causal, exactly; the TC block's receptive field covers
// the sequence; gradients pass the finite-difference check.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/models/snail/blocks.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_snail_test {

using namespace attnkit;
using ad::Var;

namespace {

Tensor randn(Shape s, Rng& rng) {
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.normal());
  return t;
}

// A stack like the bandit policy's: TC, attention, TC, attention.
struct Stack {
  nn::ParamStore ps;
  std::unique_ptr<nn::TCBlock> tc1, tc2;
  std::unique_ptr<nn::AttentionBlock> at1, at2;
  Stack(int64_t in, int64_t T, uint64_t seed) {
    Rng rng(seed);
    tc1 = std::make_unique<nn::TCBlock>(ps, "tc1", in, T, 4, rng);
    at1 = std::make_unique<nn::AttentionBlock>(ps, "at1", tc1->out_channels(), 3, 5, rng);
    tc2 = std::make_unique<nn::TCBlock>(ps, "tc2", at1->out_channels(), T, 4, rng);
    at2 = std::make_unique<nn::AttentionBlock>(ps, "at2", tc2->out_channels(), 3, 5, rng);
  }
  Var operator()(ad::Tape& t, Var x) const { return (*at2)(t, (*tc2)(t, (*at1)(t, (*tc1)(t, x)))); }
};

}  // namespace

TEST_CASE("snail: every block is causal, exactly; the TC block sees the whole sequence") {
  Rng rng(5);
  const int64_t B = 2, T = 9, C = 3;
  Stack net(C, T, 1);
  CHECK(net.tc1->receptive_field() == 16);  // 4 dense blocks: dilations 1, 2, 4, 8
  const Tensor x = randn({B, T, C}, rng);
  ad::Tape t0;
  const Tensor y = net(t0, t0.constant(x.clone())).value().clone();
  CHECK(y.dim(2) == net.at2->out_channels());
  for (int64_t s = 0; s < T; ++s) {
    // Change every input at times >= s: outputs before s keep every bit.
    Tensor x2 = x.clone();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t u = s; u < T; ++u)
        for (int64_t c = 0; c < C; ++c) x2[(b * T + u) * C + c] += 1.5f;
    ad::Tape t;
    const Tensor y2 = net(t, t.constant(std::move(x2))).value().clone();
    const int64_t D = y.dim(2);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t u = 0; u < T; ++u) {
        bool same = true;
        for (int64_t c = 0; c < D; ++c) same &= y[(b * T + u) * D + c] == y2[(b * T + u) * D + c];
        if (u < s) CHECK_MESSAGE(same, "output at " << u << " changed by inputs from " << s);
        if (u == s) CHECK_MESSAGE(!same, "output at " << u << " ignores its own input");
      }
  }
  // The TC block alone: the last output depends on the first input.
  {
    nn::ParamStore ps;
    Rng r2(2);
    nn::TCBlock tc(ps, "tc", C, T, 4, r2);
    ad::Tape t1, t2;
    Tensor x2 = x.clone();
    x2[0] += 1.0f;  // batch 0, time 0, channel 0
    const Tensor a = tc(t1, t1.constant(x.clone())).value().clone();
    const Tensor b = tc(t2, t2.constant(std::move(x2))).value().clone();
    const int64_t D = tc.out_channels();
    bool differs = false;
    for (int64_t c = C; c < D; ++c) differs |= a[(T - 1) * D + c] != b[(T - 1) * D + c];
    CHECK(differs);
  }
}

TEST_CASE("snail: gradients of the dense, TC and attention blocks") {
  Stack net(3, 5, 7);
  Rng rng(9);
  const Tensor x = randn({2, 5, 3}, rng);
  ad::GradCheckOptions opt;
  opt.max_per_tensor = 12;
  const auto r = ad::check_gradients([&](ad::Tape& t) { return net(t, t.constant(x.clone())); },
                                     net.ps.params(), opt);
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked > 100);
  // And with respect to the input.
  std::vector<Tensor> in;
  in.push_back(x.clone());
  const auto ri = ad::check_gradients(
      [&](ad::Tape& t, const std::vector<Var>& v) { return net(t, v[0]); }, in, opt);
  CHECK_MESSAGE(ri.ok, ri.where);
}

TEST_CASE("snail: shapes and errors") {
  nn::ParamStore ps;
  Rng rng(1);
  nn::DenseBlock d(ps, "d", 3, 2, 1, rng);
  ad::Tape t;
  CHECK_THROWS_AS(d(t, t.constant(Tensor({2, 4, 5}))), ShapeError);
  CHECK_THROWS_AS(nn::DenseBlock(ps, "e", 3, 2, 0, rng), UsageError);
  Var y = d(t, t.constant(Tensor({2, 4, 3}, 1.0f)));
  CHECK(y.shape() == Shape{2, 4, 5});
  Var s = nn::causal_shift(t.constant(Tensor({1, 3, 1}, 1.0f)), 2);
  CHECK(s.value()[0] == 0.0f);
  CHECK(s.value()[1] == 0.0f);
  CHECK(s.value()[2] == 1.0f);
  CHECK(nn::causal_shift(t.constant(Tensor({1, 3, 1}, 1.0f)), 5).value()[2] == 0.0f);
}

}  // namespace attnkit_unit_snail_test
