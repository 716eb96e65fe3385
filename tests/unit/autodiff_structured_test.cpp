// lib/attnkit/autodiff/ops_structured.h: the chain's and the tree's marginals and log
// partition as tape ops, their gradients against double-sided finite differences
// (ad::check_gradients) with shared and per-link pairwise potentials, batches and masks; the
// log partition's gradient equals the marginals.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/attention/structured.h"
#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/autodiff/ops_structured.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_autodiff_structured_test {

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

void grad_ok(const std::string& what, std::vector<Tensor> inputs,
             const std::function<Var(Tape&, const VS&)>& f) {
  const ad::GradCheckResult r = ad::check_gradients(f, inputs);
  INFO(what << ": worst " << r.worst << " at " << r.where);
  CHECK(r.checked > 0);
  CHECK(r.ok);
}

std::vector<Tensor> two(Tensor a, Tensor b) {
  std::vector<Tensor> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return v;
}
std::vector<Tensor> one(Tensor a) {
  std::vector<Tensor> v;
  v.push_back(std::move(a));
  return v;
}

}  // namespace

TEST_CASE("autodiff: chain marginals and log partition gradients") {
  const std::vector<int64_t> lengths{6, 3, 1};
  grad_ok("chain marginals, shared pairwise", two(rnd({6}, 1), rnd({2, 2}, 2)),
          [](Tape&, const VS& v) { return ad::chain_marginals(v[0], v[1]); });
  grad_ok("chain marginals, per-link pairwise, batch with lengths",
          two(rnd({3, 6}, 3), rnd({3, 5, 2, 2}, 4)),
          [&](Tape&, const VS& v) { return ad::chain_marginals(v[0], v[1], lengths); });
  grad_ok("chain marginals, [n-1, 2, 2] pairwise shared by the batch",
          two(rnd({2, 5}, 5, 2.0), rnd({4, 2, 2}, 6)),
          [](Tape&, const VS& v) { return ad::chain_marginals(v[0], v[1]); });
  grad_ok("chain marginals, no pairwise", one(rnd({2, 5}, 7)),
          [](Tape&, const VS& v) { return ad::chain_marginals(v[0], Var()); });
  grad_ok("chain log partition, batch with lengths", two(rnd({3, 6}, 8), rnd({2, 2}, 9)),
          [&](Tape&, const VS& v) { return ad::chain_log_partition(v[0], v[1], lengths); });
  // Composed with other ops: a loss of the marginals.
  grad_ok("chain marginals in a loss", two(rnd({2, 6}, 10), rnd({2, 2}, 11)),
          [](Tape&, const VS& v) {
            Var m = ad::chain_marginals(v[0], v[1]);
            return ad::sum(ad::square(m - 0.3f));
          });
}

TEST_CASE("autodiff: tree marginals and log partition gradients") {
  const std::vector<int64_t> lengths{5, 2, 0};
  grad_ok("tree marginals", one(rnd({5, 5}, 21)),
          [](Tape&, const VS& v) { return ad::tree_marginals(v[0]); });
  grad_ok("tree marginals, batch with lengths", one(rnd({3, 5, 5}, 22)),
          [&](Tape&, const VS& v) { return ad::tree_marginals(v[0], lengths); });
  grad_ok("tree log partition, batch with lengths", one(rnd({3, 5, 5}, 23)),
          [&](Tape&, const VS& v) { return ad::tree_log_partition(v[0], lengths); });
}

TEST_CASE("autodiff: the log partition's gradient is the marginals; masked entries get none") {
  Tape t;
  Var a = t.input(rnd({2, 4, 4}, 31));
  const std::vector<int64_t> lengths{4, 3};
  Var z = ad::tree_log_partition(a, lengths);
  CHECK(z.shape() == Shape{2});
  t.backward(ad::sum(z));
  Tape t2;
  Var m = ad::tree_marginals(t2.constant(a.value().clone()), lengths);
  test::check_close(a.grad(), m.value(), 1e-6, 1e-5);
  for (int i = 0; i < 4; ++i) CHECK(a.grad().at(1, 3, i) == 0.0f);  // item 1's padding
  Tape t3;
  Var u = t3.input(rnd({5}, 32)), p = t3.input(rnd({2, 2}, 33));
  Var lz = ad::chain_log_partition(u, p);
  CHECK(lz.shape() == Shape{});
  t3.backward(lz);
  Var mu = ad::chain_marginals(t3.constant(u.value().clone()), t3.constant(p.value().clone()));
  test::check_close(u.grad(), mu.value(), 1e-6, 1e-5);
  // The shared pairwise gradient is the expected number of links in each state: sums to n-1.
  double s = 0.0;
  for (int k = 0; k < 4; ++k) s += p.grad()[k];
  CHECK(s == doctest::Approx(4.0).epsilon(1e-5));
  CHECK_THROWS_AS(ad::chain_marginals(u, t3.constant(Tensor(Shape{3, 2}))), ShapeError);
}

TEST_CASE("autodiff: hop chain marginals and log partition gradients, padded states") {
  const std::vector<int64_t> states{4, 2, 3};
  grad_ok("hop chain marginals, shared pairwise, state counts",
          two(rnd({3, 3, 4}, 41), rnd({4, 4}, 42)),
          [&](Tape&, const VS& v) { return ad::hop_chain_marginals(v[0], v[1], states); });
  grad_ok("hop chain marginals, per-link pairwise", two(rnd({4, 3}, 43), rnd({3, 3, 3}, 44)),
          [](Tape&, const VS& v) { return ad::hop_chain_marginals(v[0], v[1]); });
  grad_ok("hop chain marginals, per-item pairwise", two(rnd({2, 3, 3}, 45), rnd({2, 2, 3, 3}, 46)),
          [](Tape&, const VS& v) { return ad::hop_chain_marginals(v[0], v[1]); });
  grad_ok("hop chain log partition", two(rnd({3, 3, 4}, 47), rnd({4, 4}, 48)),
          [&](Tape&, const VS& v) { return ad::hop_chain_log_partition(v[0], v[1], states); });
  // log Z's gradient is the marginals; padded states get marginal 0 and no gradient.
  Tape t;
  Var u = t.input(rnd({3, 3, 4}, 49)), p = t.input(rnd({4, 4}, 50));
  t.backward(ad::sum(ad::hop_chain_log_partition(u, p, states)));
  Tape t2;
  Var m = ad::hop_chain_marginals(t2.constant(u.value().clone()), t2.constant(p.value().clone()),
                                  states);
  test::check_close(u.grad(), m.value(), 1e-6, 1e-5);
  for (int k = 0; k < 3; ++k) {
    CHECK(m.value().values()[static_cast<size_t>((1 * 3 + k) * 4 + 2)] == 0.0f);
    CHECK(m.value().values()[static_cast<size_t>((1 * 3 + k) * 4 + 3)] == 0.0f);
    double s = 0.0;
    for (int j = 0; j < 4; ++j) s += m.value().values()[static_cast<size_t>((2 * 3 + k) * 4 + j)];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-6));
  }
  CHECK_THROWS_AS(ad::hop_chain_marginals(u, t.constant(Tensor(Shape{3, 3}))), ShapeError);
  CHECK_THROWS_AS(ad::hop_chain_marginals(u, p, {4, 5, 1}), DataError);
}

TEST_CASE("autodiff: syntactic attention against a direct computation; gradients; padding") {
  const int64_t B = 2, S = 5, H = 3;
  const std::vector<int64_t> lengths = {5, 3};
  const Tensor g = rnd({B, H}, 31), r = rnd({B, S}, 32), X = rnd({B, S, H}, 33),
               Hd = rnd({B, S, H}, 34), Md = rnd({B, S, H}, 35);
  // The context by loops in double: potentials, Eisner's marginals (attention/structured.h),
  // soft parents, the softmax over the item's words.
  Tape t(0);
  Tensor alpha, arcs;
  const Var c = ad::syntactic_attention(t.constant(g.clone()), t.constant(r.clone()),
                                        t.constant(X.clone()), t.constant(Hd.clone()),
                                        t.constant(Md.clone()), lengths, &alpha, &arcs);
  REQUIRE(c.value().shape() == Shape{B, 2 * H});
  REQUIRE(arcs.shape() == Shape{B, S, S});
  for (int64_t b = 0; b < B; ++b) {
    const int64_t L = lengths[static_cast<size_t>(b)];
    std::vector<double> A(static_cast<size_t>(L * L));
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) {
        double a = 0.0;
        if (i == j) {
          a = r.at(b, j);
        } else {
          for (int64_t k = 0; k < H; ++k)
            a += static_cast<double>(Hd.at(b, i, k)) * g.at(b, k) * Md.at(b, j, k);
        }
        A[static_cast<size_t>(i * L + j)] = a;
        CHECK(arcs.at(b, i, j) == doctest::Approx(a).epsilon(1e-5));
      }
    const attention::TreeMarginals m = attention::tree_marginals(A.data(), L);
    double zmax = -1e300, zsum = 0.0;
    for (int64_t j = 0; j < L; ++j) zmax = std::max(zmax, static_cast<double>(r.at(b, j)));
    for (int64_t j = 0; j < L; ++j) zsum += std::exp(r.at(b, j) - zmax);
    std::vector<double> want(static_cast<size_t>(2 * H), 0.0);
    for (int64_t j = 0; j < L; ++j) {
      const double p = std::exp(r.at(b, j) - zmax) / zsum;
      CHECK(alpha.at(b, j) == doctest::Approx(p).epsilon(1e-5));
      for (int64_t k = 0; k < H; ++k) {
        double par = 0.0;
        for (int64_t i = 0; i < L; ++i)
          if (i != j) par += m.arcs[static_cast<size_t>(i * L + j)] * X.at(b, i, k);
        want[static_cast<size_t>(k)] += p * X.at(b, j, k);
        want[static_cast<size_t>(H + k)] += p * par;
      }
    }
    for (int64_t j = L; j < S; ++j) CHECK(alpha.at(b, j) == 0.0f);
    for (int64_t k = 0; k < 2 * H; ++k)
      CHECK(c.value().at(b, k) == doctest::Approx(want[static_cast<size_t>(k)]).epsilon(1e-4));
  }
  // Finite differences through every input, with and without padding.
  for (const auto& lens : {std::vector<int64_t>{}, lengths}) {
    std::vector<Tensor> in;
    for (const Tensor* x : {&g, &r, &X, &Hd, &Md}) in.push_back(x->clone());
    grad_ok(lens.empty() ? "syntactic" : "syntactic, padded", std::move(in),
            [&](Tape&, const VS& v) {
              return ad::syntactic_attention(v[0], v[1], v[2], v[3], v[4], lens);
            });
  }
  // Padding is never read: other values there give the same context and no gradient.
  Tensor X2 = X.clone(), Hd2 = Hd.clone(), r2 = r.clone();
  for (int64_t j = 3; j < S; ++j) {
    r2.at(1, j) = 50.0f;
    for (int64_t k = 0; k < H; ++k) X2.at(1, j, k) = 9.0f, Hd2.at(1, j, k) = -7.0f;
  }
  Tape t2(0);
  const Var x2 = t2.input(X2.clone());
  const Var c2 =
      ad::syntactic_attention(t2.constant(g.clone()), t2.constant(r2.clone()), x2,
                              t2.constant(Hd2.clone()), t2.constant(Md.clone()), lengths);
  for (int64_t k = 0; k < 2 * H; ++k)
    CHECK(c2.value().at(1, k) == doctest::Approx(c.value().at(1, k)));
  t2.backward(ad::sum(c2));
  for (int64_t j = 3; j < S; ++j)
    for (int64_t k = 0; k < H; ++k) CHECK(t2.grad(x2).at(1, j, k) == 0.0f);
  CHECK_THROWS_AS(
      ad::syntactic_attention(t.constant(g.clone()), t.constant(r.clone()), t.constant(X.clone()),
                              t.constant(Hd.clone()), t.constant(Md.clone()), {5}),
      ShapeError);
}

TEST_CASE("autodiff: syntactic attention's one op = the same layer from primitive tape ops") {
  // The layer as ops_structured.h defines it, composed of matmul, tree_marginals (the tape op)
  // and masked_softmax: context and every input's gradient under a random seed gradient.
  const int64_t B = 4, S = 11, H = 6;
  const std::vector<int64_t> lengths = {11, 4, 1, 8};
  const Tensor g = rnd({B, H}, 41), r = rnd({B, S}, 42, 2.0), X = rnd({B, S, H}, 43),
               Hd = rnd({B, S, H}, 44), Md = rnd({B, S, H}, 45), seed = rnd({B, 2 * H}, 46);
  for (const auto& lens : {std::vector<int64_t>{}, lengths}) {
    INFO((lens.empty() ? "no padding" : "padded"));
    Tape t1(0), t2(0);
    VS v1, v2;
    for (const Tensor* x : {&g, &r, &X, &Hd, &Md}) {
      v1.push_back(t1.input(x->clone()));
      v2.push_back(t2.input(x->clone()));
    }
    const Var c1 = ad::syntactic_attention(v1[0], v1[1], v1[2], v1[3], v1[4], lens);
    Tensor eye = t2.zeros({S, S}), off = t2.zeros({S, S});
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) (i == j ? eye : off).at(i, j) = 1.0f;
    const Var I = t2.constant(std::move(eye)), O = t2.constant(std::move(off));
    const Var gated = ad::mul(v2[3], ad::reshape(v2[0], {B, 1, H}));
    const Var A = ad::add(ad::mul(ad::matmul(gated, v2[4], false, true), O),
                          ad::mul(ad::reshape(v2[1], {B, 1, S}), I));
    const Var P = ad::tree_marginals(A, lens);
    const Var parent = ad::matmul(ad::mul(P, O), v2[2], true, false);
    Tensor mask = t2.zeros({B, S});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < (lens.empty() ? S : lens[static_cast<size_t>(b)]); ++j)
        mask.at(b, j) = 1.0f;
    const Var p = ad::masked_softmax(v2[1], mask);
    const Var both = ad::concat({v2[2], parent}, -1);
    const Var c2 = ad::reshape(ad::matmul(ad::reshape(p, {B, 1, S}), both), {B, 2 * H});
    REQUIRE(c1.value().shape() == c2.value().shape());
    for (int64_t i = 0; i < c1.value().size(); ++i)
      CHECK(c1.value()[i] == doctest::Approx(c2.value()[i]).epsilon(1e-5));
    t1.backward(c1, seed);
    t2.backward(c2, seed);
    for (size_t k = 0; k < v1.size(); ++k) {
      INFO("input " << k);
      const Tensor &a = t1.grad(v1[k]), &b = t2.grad(v2[k]);
      REQUIRE(a.shape() == b.shape());
      float worst = 0.0f, scale = 1.0f;
      for (int64_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::fabs(a[i] - b[i]));
        scale = std::max(scale, std::fabs(b[i]));
      }
      CHECK(worst <= 1e-4f * scale);
    }
  }
}

}  // namespace attnkit_unit_autodiff_structured_test
