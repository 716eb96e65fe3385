// lib/attnkit/attention: against the NumPy goldens in testdata/attention (made by
// testdata/make_attention_golden.py) and against the theory.
#include "attnkit/attention/attention.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_attention_test {

using namespace attnkit;
using namespace attnkit::attention;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

Tensor random_matrix(int64_t r, int64_t c, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  Tensor t({r, c});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

Tensor golden(const std::string& name) {
  return io::read_tensor(test::testdata("attention/" + name));
}

// Like check_close, but -inf must match -inf exactly (inf - inf is NaN).
void check_close_inf(const Tensor& a, const Tensor& b, double atol) {
  REQUIRE(a.shape() == b.shape());
  Tensor fa = a.clone(), fb = b.clone();
  for (int64_t i = 0; i < a.size(); ++i) {
    CHECK_MESSAGE(std::isinf(a[i]) == std::isinf(b[i]), "index " << i);
    if (std::isinf(b[i])) {
      CHECK(a[i] == b[i]);
      fa[i] = fb[i] = 0.0f;
    }
  }
  test::check_close(fa, fb, atol, 1e-5);
}

Scorer scorer_of(ScoreKind kind) {
  Scorer s;
  s.kind = kind;
  return s;
}

Scorer with_params(ScoreKind kind, const std::string& npz) {
  Scorer s = scorer_of(kind);
  auto arrays = io::read_npz(test::testdata("attention/" + npz));
  for (auto& [name, t] : arrays) {
    if (name == "W") s.W = std::move(t);
    if (name == "Wk") s.Wk = std::move(t);
    if (name == "Wq") s.Wq = std::move(t);
    if (name == "v") s.v = std::move(t);
  }
  return s;
}

void check_rows_sum_to_one(const Tensor& w, double tol = 1e-5) {
  const Shape bs = as_batch_shape(w.shape());
  for (int64_t r = 0; r < bs[0] * bs[1]; ++r) {
    double sum = 0.0;
    for (int64_t j = 0; j < bs[2]; ++j) sum += w[r * bs[2] + j];
    CHECK_MESSAGE(std::fabs(sum - 1.0) <= tol, "row " << r << " sums to " << sum);
  }
}

}  // namespace

// ---------------------------------------------------------------- goldens

TEST_CASE("attention goldens: every score, scores / weights / context") {
  const Tensor Q = golden("Q.txt"), Qx = golden("Qx.txt"), Qc = golden("Qc.txt");
  const Tensor K = golden("K.txt"), V = golden("V.txt");
  struct Case {
    std::string name;
    Scorer scorer;
    const Tensor* q;
  };
  std::vector<Case> cases;
  cases.push_back({"dot", scorer_of(ScoreKind::Dot), &Q});
  cases.push_back({"scaled-dot", scorer_of(ScoreKind::ScaledDot), &Q});
  Scorer cos = scorer_of(ScoreKind::Cosine);
  cos.beta = 2.5f;
  cases.push_back({"cosine", std::move(cos), &Qc});
  cases.push_back({"bilinear", with_params(ScoreKind::Bilinear, "bilinear.npz"), &Qx});
  cases.push_back({"additive", with_params(ScoreKind::Additive, "additive.npz"), &Qx});
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Options o;
    o.output = Output::Scores;
    test::check_close(attend(c.scorer, *c.q, K, nullptr, o), golden(c.name + "_scores.txt"), 1e-5);
    test::check_close(score(c.scorer, *c.q, K), golden(c.name + "_scores.txt"), 1e-5);
    o.output = Output::Weights;
    test::check_close(attend(c.scorer, *c.q, K, nullptr, o), golden(c.name + "_weights.txt"), 1e-5);
    o.output = Output::Context;
    test::check_close(attend(c.scorer, *c.q, K, &V, o), golden(c.name + "_context.txt"), 1e-5);
  }
}

TEST_CASE("attention goldens: causal and file masks, a fully masked row") {
  const Tensor Q = golden("Q.txt"), K = golden("K.txt"), V = golden("V.txt");
  const Tensor mask = golden("mask.txt");
  const Scorer s = scorer_of(ScoreKind::ScaledDot);
  for (const std::string which : {"causal", "mask"}) {
    CAPTURE(which);
    Options o;
    o.causal = which == "causal";
    o.mask = which == "mask" ? &mask : nullptr;
    o.output = Output::Scores;
    check_close_inf(attend(s, Q, K, nullptr, o), golden(which + "_scores.txt"), 1e-5);
    o.output = Output::Weights;
    test::check_close(attend(s, Q, K, nullptr, o), golden(which + "_weights.txt"), 1e-5);
    o.output = Output::Context;
    test::check_close(attend(s, Q, K, &V, o), golden(which + "_context.txt"), 1e-5);
  }
  Options o;
  o.mask = &mask;
  o.output = Output::Weights;
  const Tensor w = attend(s, Q, K, nullptr, o);
  for (int64_t j = 0; j < K.dim(0); ++j) CHECK(w.at(2, j) == 0.0f);  // row 2: all masked
  const Tensor bad = golden("mask_bad.txt");
  o.mask = &bad;
  CHECK_THROWS_AS(attend(s, Q, K, nullptr, o), DataError);
}

TEST_CASE("attention goldens: hard argmax takes the first index on ties") {
  const Tensor tq = golden("tie_Q.txt"), tk = golden("tie_K.txt");
  Options o;
  o.output = Output::Weights;
  o.hard = Hard::Argmax;
  test::check_close(attend(scorer_of(ScoreKind::Dot), tq, tk, nullptr, o), golden("tie_argmax.txt"),
                    0.0);
  o.causal = true;
  test::check_close(attend(scorer_of(ScoreKind::Dot), tq, tk, nullptr, o),
                    golden("tie_argmax_causal.txt"), 0.0);
}

TEST_CASE("attention goldens: a batch with a shared V") {
  const Tensor Qb = golden("Qb.npy"), Kb = golden("Kb.npy"), V = golden("V.txt");
  Options o;
  o.output = Output::Weights;
  const Tensor w = attend(scorer_of(ScoreKind::ScaledDot), Qb, Kb, nullptr, o);
  test::check_close(w, golden("batch_weights.txt"), 1e-5);
  check_rows_sum_to_one(w);
  o.output = Output::Context;
  test::check_close(attend(scorer_of(ScoreKind::ScaledDot), Qb, Kb, &V, o),
                    golden("batch_context.txt"), 1e-5);
  o.causal = true;
  test::check_close(
      attend(with_params(ScoreKind::Additive, "additive.npz"), golden("Qxb.npy"), Kb, &V, o),
      golden("batch_additive_causal_context.txt"), 1e-5);
}

// ---------------------------------------------------------------- theory

TEST_CASE("weights: rows sum to 1 for every score, also in blocks of rows") {
  const Tensor q = random_matrix(300, 8, 1), k = random_matrix(900, 8, 2);
  for (ScoreKind kind : {ScoreKind::Dot, ScoreKind::ScaledDot, ScoreKind::Cosine}) {
    Options o;
    o.output = Output::Weights;
    check_rows_sum_to_one(attend(scorer_of(kind), q, k, nullptr, o));
  }
  // the blocked context path equals weights · V computed in one go
  const Tensor v = random_matrix(900, 5, 3);
  Options o;
  o.output = Output::Weights;
  const Tensor w = attend(scorer_of(ScoreKind::ScaledDot), q, k, nullptr, o);
  Tensor expect({300, 5});
  gemm(Trans::No, Trans::No, 1.0f, mat(w), mat(v), 0.0f, mat(expect));
  o.output = Output::Context;
  test::check_close(attend(scorer_of(ScoreKind::ScaledDot), q, k, &v, o), expect, 1e-5, 1e-4);
}

TEST_CASE("permuting the keys permutes the weights") {
  const Tensor q = random_matrix(4, 6, 5), k = random_matrix(7, 6, 6);
  const std::vector<int64_t> perm = {3, 0, 6, 2, 5, 1, 4};
  Tensor kp({7, 6});
  for (int64_t j = 0; j < 7; ++j)
    for (int64_t c = 0; c < 6; ++c) kp.at(j, c) = k.at(perm[j], c);
  Options o;
  o.output = Output::Weights;
  const Tensor w = attend(scorer_of(ScoreKind::ScaledDot), q, k, nullptr, o);
  const Tensor wp = attend(scorer_of(ScoreKind::ScaledDot), q, kp, nullptr, o);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 7; ++j) CHECK(wp.at(i, j) == doctest::Approx(w.at(i, perm[j])));
}

TEST_CASE("scaled-dot is dot / sqrt(d_k)") {
  const Tensor q = random_matrix(5, 16, 7), k = random_matrix(9, 16, 8);
  const Tensor d = score(scorer_of(ScoreKind::Dot), q, k);
  Tensor ds = score(scorer_of(ScoreKind::ScaledDot), q, k);
  for (int64_t i = 0; i < ds.size(); ++i) ds[i] *= 4.0f;  // sqrt(16)
  test::check_close(ds, d, 1e-5, 1e-5);
}

TEST_CASE("cosine: invariant to scaling q and k, beta scales, zero vector gives 0") {
  Tensor q = random_matrix(3, 5, 9), k = random_matrix(4, 5, 10);
  Scorer s = scorer_of(ScoreKind::Cosine);
  const Tensor c = score(s, q, k);
  for (int64_t i = 0; i < c.size(); ++i) CHECK(std::fabs(c[i]) <= 1.0f + 1e-6f);
  Tensor q2 = q.clone(), k2 = k.clone();
  for (int64_t i = 0; i < q2.size(); ++i) q2[i] *= 7.5f;
  for (int64_t i = 0; i < k2.size(); ++i) k2[i] *= 0.01f;
  test::check_close(score(s, q2, k2), c, 1e-6, 1e-5);
  s.beta = 3.0f;
  Tensor c3 = score(s, q, k);
  for (int64_t i = 0; i < c3.size(); ++i) CHECK(c3[i] == doctest::Approx(3.0f * c[i]));
  for (int64_t j = 0; j < 5; ++j) q.at(1, j) = 0.0f;
  const Tensor cz = score(s, q, k);
  for (int64_t j = 0; j < 4; ++j) CHECK(cz.at(1, j) == 0.0f);
  CHECK(score(s, q, q).at(0, 0) == doctest::Approx(3.0));
}

TEST_CASE("bilinear with W = I is dot; additive matches a direct sum") {
  const Tensor q = random_matrix(3, 4, 11), k = random_matrix(5, 4, 12);
  Scorer b = scorer_of(ScoreKind::Bilinear);
  b.W = Tensor({4, 4});
  for (int i = 0; i < 4; ++i) b.W.at(i, i) = 1.0f;
  test::check_close(score(b, q, k), score(scorer_of(ScoreKind::Dot), q, k), 1e-6);
  Scorer a = scorer_of(ScoreKind::Additive);
  a.Wk = random_matrix(6, 4, 13);
  a.Wq = random_matrix(6, 4, 14);
  a.v = Tensor({6});
  for (int c = 0; c < 6; ++c) a.v[c] = 0.5f - 0.2f * c;
  const Tensor s = score(a, q, k);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double want = 0.0;
      for (int64_t c = 0; c < 6; ++c) {
        double x = 0.0;
        for (int64_t t = 0; t < 4; ++t)
          x += double(a.Wk.at(c, t)) * k.at(j, t) + double(a.Wq.at(c, t)) * q.at(i, t);
        want += a.v[c] * std::tanh(x);
      }
      CHECK(s.at(i, j) == doctest::Approx(want).epsilon(1e-5));
    }
}

TEST_CASE("softmax is invariant to adding a constant, stable for large scores") {
  Tensor s({2, 5}, std::vector<float>{1, 2, 3, 4, 5, -1, 0, 0.5f, 2, -3});
  Tensor t = s.clone();
  for (int64_t i = 0; i < t.size(); ++i) t[i] += 1000.0f;
  softmax_rows(mat(s));
  softmax_rows(mat(t));
  test::check_close(t, s, 1e-6, 1e-5);
  Tensor big({1, 3}, std::vector<float>{1e30f, 1e30f, -1e30f});
  softmax_rows(mat(big));
  CHECK(big[0] == doctest::Approx(0.5));
  CHECK(big[1] == doctest::Approx(0.5));
  CHECK(big[2] == 0.0f);
}

TEST_CASE("masks: -inf scores, zero weights, an all-masked row gives zeros, never NaN") {
  Tensor s({3, 4}, 0.25f);
  mask_causal(mat(s));
  CHECK(s.at(0, 1) == -kInf);
  CHECK(s.at(0, 0) == 0.25f);
  CHECK(s.at(2, 2) == 0.25f);
  CHECK(s.at(2, 3) == -kInf);
  Tensor m({3, 4}, 1.0f);
  for (int j = 0; j < 4; ++j) m.at(1, j) = 0.0f;
  Tensor s2({3, 4}, 2.0f);
  apply_mask(mat(m), mat(s2));
  softmax_rows(mat(s2));
  for (int j = 0; j < 4; ++j) {
    CHECK(s2.at(1, j) == 0.0f);
    CHECK(s2.at(0, j) == doctest::Approx(0.25));
  }
  // the zero row also gives a zero context; the argmax of it is all zero too
  const Tensor q = random_matrix(3, 2, 15), k = random_matrix(4, 2, 16),
               v = random_matrix(4, 3, 17);
  Options o;
  o.mask = &m;
  const Tensor c = attend(scorer_of(ScoreKind::Dot), q, k, &v, o);
  for (int j = 0; j < 3; ++j) CHECK(c.at(1, j) == 0.0f);
  for (int64_t i = 0; i < c.size(); ++i) CHECK(!std::isnan(c[i]));
  Tensor a = s.clone();
  for (int j = 0; j < 4; ++j) a.at(0, j) = -kInf;
  argmax_rows(mat(a));
  for (int j = 0; j < 4; ++j) CHECK(a.at(0, j) == 0.0f);
  // causal with n_q > n_k: later queries see every key
  Tensor wide({5, 3}, 1.0f);
  mask_causal(mat(wide));
  CHECK(wide.at(4, 2) == 1.0f);
  CHECK(wide.at(1, 2) == -kInf);
  // mask values other than 0/1
  Tensor bad({2, 2}, std::vector<float>{1, 0, 2, 1});
  CHECK_THROWS_AS(check_mask_values(bad), DataError);
  try {
    check_mask_values(bad);
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) == "mask value 2 at [1, 0] is not 0 or 1");
  }
}

TEST_CASE("hard sample: frequencies match the weights (fixed seed)") {
  const int64_t n = 20000;
  const std::vector<float> p = {0.1f, 0.0f, 0.45f, 0.3f, 0.15f};
  Tensor w({n, 5});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < 5; ++j) w.at(i, j) = p[j];
  Rng rng(42);
  sample_rows(mat(w), rng);
  std::vector<double> count(5, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double row = 0.0;
    for (int64_t j = 0; j < 5; ++j) {
      count[j] += w.at(i, j);
      row += w.at(i, j);
    }
    CHECK(row == 1.0);
  }
  CHECK(count[1] == 0.0);  // a zero-weight key is never drawn
  double chi2 = 0.0;
  for (int j = 0; j < 5; ++j)
    if (p[j] > 0) chi2 += (count[j] - n * p[j]) * (count[j] - n * p[j]) / (n * p[j]);
  CHECK(chi2 < 16.27);  // chi-square, 3 degrees of freedom, p = 0.001
  // reproducible: same seed, same draws; an all-zero row stays zero
  Tensor a({3, 5}, 0.2f), b({3, 5}, 0.2f);
  for (int j = 0; j < 5; ++j) a.at(1, j) = b.at(1, j) = 0.0f;
  Rng r1(7), r2(7);
  sample_rows(mat(a), r1);
  sample_rows(mat(b), r2);
  test::check_close(a, b, 0.0);
  for (int j = 0; j < 5; ++j) CHECK(a.at(1, j) == 0.0f);
  // through attend(): one-hot rows, same seed same output, other seed differs somewhere
  const Tensor q = random_matrix(50, 4, 18), k = random_matrix(9, 4, 19);
  Options o;
  o.output = Output::Weights;
  o.hard = Hard::Sample;
  o.seed = 3;
  const Tensor h1 = attend(scorer_of(ScoreKind::Dot), q, k, nullptr, o);
  const Tensor h2 = attend(scorer_of(ScoreKind::Dot), q, k, nullptr, o);
  test::check_close(h1, h2, 0.0);
  check_rows_sum_to_one(h1, 0.0);
  o.seed = 4;
  const Tensor h3 = attend(scorer_of(ScoreKind::Dot), q, k, nullptr, o);
  bool differs = false;
  for (int64_t i = 0; i < h1.size(); ++i) differs = differs || h1[i] != h3[i];
  CHECK(differs);
}

TEST_CASE("shape errors name both shapes; usage errors") {
  const Tensor q = random_matrix(3, 64, 20), k = random_matrix(4, 63, 21);
  try {
    score(scorer_of(ScoreKind::ScaledDot), q, k);
    FAIL("no error");
  } catch (const InputShapeError& e) {
    CHECK(std::string(e.what()).find("Q has 64 columns but K has 63") != std::string::npos);
    CHECK(e.operand() == Operand::Key);
  }
  Scorer b = scorer_of(ScoreKind::Bilinear);
  b.W = Tensor({5, 3});
  try {
    score(b, random_matrix(2, 4, 1), random_matrix(2, 4, 2));
    FAIL("no error");
  } catch (const InputShapeError& e) {
    CHECK(std::string(e.what()) == "bilinear W has shape [5, 3] but needs [d_k, d_q] = [4, 4]");
    CHECK(e.operand() == Operand::Params);
  }
  const Tensor k4 = random_matrix(4, 64, 22), v5 = random_matrix(5, 2, 23);
  Options o;
  CHECK_THROWS_AS(attend(scorer_of(ScoreKind::Dot), q, k4, &v5, o), InputShapeError);
  CHECK_THROWS_AS(attend(scorer_of(ScoreKind::Dot), q, k4, nullptr, o), UsageError);
  o.output = Output::Scores;
  o.hard = Hard::Argmax;
  CHECK_THROWS_AS(attend(scorer_of(ScoreKind::Dot), q, k4, nullptr, o), UsageError);
  // batches of different sizes
  Tensor qb({2, 3, 4}), kb({3, 5, 4});
  Options ow;
  ow.output = Output::Weights;
  CHECK_THROWS_AS(attend(scorer_of(ScoreKind::Dot), qb, kb, nullptr, ow), InputShapeError);
  // a 2-D operand is shared across the batch
  Tensor k2 = random_matrix(5, 4, 24);
  const Tensor wb = attend(scorer_of(ScoreKind::Dot), qb, k2, nullptr, ow);
  CHECK(wb.shape() == Shape{2, 3, 5});
  CHECK_THROWS_AS(parse_score_kind("dott"), UsageError);
  CHECK(parse_score_kind("scaled-dot") == ScoreKind::ScaledDot);
}

TEST_CASE("fast exp and tanh against libm") {
  double worst_exp = 0.0, worst_tanh = 0.0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f)
    worst_exp = std::max(worst_exp, std::fabs(detail::fast_exp(x) / std::exp(double(x)) - 1.0));
  for (float x = -12.0f; x <= 12.0f; x += 0.00731f)
    worst_tanh = std::max(worst_tanh, std::fabs(detail::fast_tanh(x) - std::tanh(double(x))));
  CHECK(worst_exp < 4e-7);
  CHECK(worst_tanh < 2e-7);
  CHECK(detail::fast_exp(-kInf) == 0.0f);
  CHECK(detail::fast_exp(0.0f) == 1.0f);
  // double: within 2 ulp of libm over the range the structured attention uses and beyond
  double worst = 0.0;
  for (double x = -707.9; x <= 709.0; x += 0.0123457)
    worst = std::max(worst, std::fabs(detail::fast_exp_double(x) / std::exp(x) - 1.0));
  for (double x = -1.0; x <= 1.0; x += 1.1e-4)
    worst = std::max(worst, std::fabs(detail::fast_exp_double(x) / std::exp(x) - 1.0));
  CHECK(worst < 5e-16);
  CHECK(detail::fast_exp_double(-std::numeric_limits<double>::infinity()) == 0.0);
  CHECK(detail::fast_exp_double(-800.0) == 0.0);
  CHECK(detail::fast_exp_double(0.0) == 1.0);
}

}  // namespace attnkit_unit_attention_test
