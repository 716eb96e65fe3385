// lib/attnkit/attention/online_softmax.h: both paths (portable, and AVX-512 where the CPU has
// it) against libm and against a double-precision online softmax, on ragged widths with
// masked (-inf) entries, rows masked throughout, and a growing maximum.
#include "attnkit/attention/online_softmax.h"

#include <cmath>
#include <limits>
#include <vector>

#include "attnkit/core/rng.h"
#include "test_util.h"

using namespace attnkit;
using namespace attnkit::attention::detail;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<SoftmaxPath> paths() {
  std::vector<SoftmaxPath> p{SoftmaxPath::Portable};
  if (have_avx512()) p.push_back(SoftmaxPath::Avx512);
  return p;
}

}  // namespace

TEST_CASE("exp_block: every path within 4e-7 relative of libm, exact 0 below the range") {
  std::vector<float> x;
  for (float v = -87.0f; v <= 0.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, 1.0f, 10.0f, 88.0f, -87.33f, -87.34f, -100.0f, -kInf}) x.push_back(v);
  for (SoftmaxPath path : paths()) {
    CAPTURE(static_cast<int>(path));
    // Ragged lengths: nothing written past the end.
    for (int64_t n : {1, 15, 16, 17, 31}) {
      std::vector<float> t(static_cast<size_t>(n + 1), 42.0f);
      exp_block(x.data(), t.data(), n, path);
      CHECK(t[static_cast<size_t>(n)] == 42.0f);
      CHECK(t[0] == doctest::Approx(std::exp(double(x[0]))).epsilon(1e-6));
    }
    std::vector<float> y(x.size());
    exp_block(x.data(), y.data(), static_cast<int64_t>(x.size()), path);
    double worst = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] < -87.3365f) {
        CHECK(y[i] == 0.0f);
        continue;
      }
      worst = std::max(worst, std::fabs(y[i] / std::exp(double(x[i])) - 1.0));
    }
    CHECK(worst < 4e-7);
  }
}

TEST_CASE("online_softmax_block: every path = a double-precision online softmax") {
  Rng rng(5);
  for (int64_t nk : {1, 7, 16, 33, 64, 100, 257}) {
    const int64_t rows = 5, d_v = 3;
    // Two blocks per row; the second has larger scores (the maximum grows) for some rows.
    std::vector<std::vector<float>> blocks(2, std::vector<float>(rows * nk));
    for (int b = 0; b < 2; ++b)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < nk; ++j) {
          float v = static_cast<float>(3.0 * rng.normal() + (b == 1 && i % 2 ? 20.0 : 0.0));
          if (rng.uniform() < 0.2f || i == 3) v = -kInf;  // row 3: masked throughout
          if (i == 4 && b == 0) v = -kInf;                // row 4: masked in block 0 only
          blocks[b][i * nk + j] = v;
        }
    // Reference: m, l and Σ_j e^(s_j - m) v_j in double, v_j = (j, 1, -j) per block.
    for (SoftmaxPath path : paths()) {
      CAPTURE(nk);
      CAPTURE(static_cast<int>(path));
      std::vector<float> m(rows, -kInf), out(rows * d_v, 0.0f);
      std::vector<double> l(rows, 0.0);
      std::vector<double> ref_out(rows * d_v, 0.0), ref_l(rows, 0.0);
      for (int b = 0; b < 2; ++b) {
        std::vector<float> s = blocks[b];
        online_softmax_block(Mat{s.data(), rows, nk, nk}, m.data(), l.data(),
                             Mat{out.data(), rows, d_v, d_v}, path);
        // out += P V with V row j = (j + 1, 1, b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < nk; ++j) {
            out[i * d_v + 0] += s[i * nk + j] * float(j + 1);
            out[i * d_v + 1] += s[i * nk + j];
            out[i * d_v + 2] += s[i * nk + j] * float(b);
          }
      }
      for (int64_t i = 0; i < rows; ++i) {
        double mx = -kInf;
        for (int b = 0; b < 2; ++b)
          for (int64_t j = 0; j < nk; ++j) mx = std::max(mx, double(blocks[b][i * nk + j]));
        if (i == 3) {
          CHECK(m[i] == -kInf);
          CHECK(l[i] == 0.0);
          for (int64_t c = 0; c < d_v; ++c) CHECK(out[i * d_v + c] == 0.0f);
          continue;
        }
        CHECK(m[i] == static_cast<float>(mx));
        double sum = 0.0, o[3] = {0, 0, 0};
        for (int b = 0; b < 2; ++b)
          for (int64_t j = 0; j < nk; ++j) {
            const double e = std::exp(double(blocks[b][i * nk + j]) - mx);
            sum += e;
            o[0] += e * double(j + 1);
            o[1] += e;
            o[2] += e * b;
          }
        CHECK(std::fabs(l[i] / sum - 1.0) < 1e-6);
        for (int c = 0; c < 3; ++c)
          CHECK(std::fabs(out[i * d_v + c] - o[c]) <= 1e-5 * std::fabs(o[c]) + 1e-6 * sum);
      }
    }
  }
}

// Two paths to compare only where the CPU has AVX-512; elsewhere the case says it is skipped
// (CTest reports it so; the portable path alone is tested by the cases above, on every CPU).
TEST_CASE("online_softmax_block: the paths agree within a few ulp") {
  if (!have_avx512()) return test::skip("this CPU has no AVX-512: one path only");
  Rng rng(8);
  const int64_t rows = 9, nk = 203;
  std::vector<float> a(rows * nk);
  for (float& x : a) x = static_cast<float>(4.0 * rng.normal());
  std::vector<float> b = a;
  std::vector<float> ma(rows, -kInf), mb(rows, -kInf), oa(rows, 1.0f), ob(rows, 1.0f);
  std::vector<double> la(rows, 0.0), lb(rows, 0.0);
  online_softmax_block(Mat{a.data(), rows, nk, nk}, ma.data(), la.data(),
                       Mat{oa.data(), rows, 1, 1}, SoftmaxPath::Portable);
  online_softmax_block(Mat{b.data(), rows, nk, nk}, mb.data(), lb.data(),
                       Mat{ob.data(), rows, 1, 1}, SoftmaxPath::Avx512);
  CHECK(ma == mb);
  for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 3e-7f * a[i] + 1e-38f);
  for (int64_t i = 0; i < rows; ++i) CHECK(std::fabs(la[i] / lb[i] - 1.0) < 1e-6);
}
