// lib/attnkit/attention/online_softmax.h: every path the CPU runs (portable; AVX2 and AVX-512
// where the CPU has them) against libm and against a double-precision online softmax, on ragged
// widths with masked (-inf) entries, rows masked throughout, and a growing maximum.
#include "attnkit/attention/online_softmax.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_online_softmax_test {

using namespace attnkit;
using namespace attnkit::attention::detail;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<SoftmaxPath> paths() {
  std::vector<SoftmaxPath> p;
  for (SoftmaxPath q : {SoftmaxPath::Portable, SoftmaxPath::Avx2, SoftmaxPath::Avx512})
    if (have_path(q)) p.push_back(q);
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

// Vector paths to compare only where the CPU has one; elsewhere the case says it is skipped
// (CTest reports it so; the portable path alone is tested by the cases above, on every CPU).
TEST_CASE("online_softmax_block: each vector path agrees with the portable one within a few ulp") {
  if (paths().size() == 1) return test::skip("this CPU runs the portable path only");
  Rng rng(8);
  for (int64_t nk : {1, 5, 8, 13, 32, 47, 64, 203}) {
    const int64_t rows = 9;
    std::vector<float> scores(rows * nk);
    for (float& x : scores) x = static_cast<float>(4.0 * rng.normal());
    if (nk > 1) scores[0] = -kInf;                                // one masked key in row 0
    for (int64_t j = 0; j < nk; ++j) scores[2 * nk + j] = -kInf;  // row 2 masked throughout
    // Rows are stored with a stride of nk + 3: the 3 floats past each row must stay as they are.
    const int64_t ld = nk + 3;
    auto run = [&](SoftmaxPath path, std::vector<float>& e, std::vector<float>& m,
                   std::vector<double>& l) {
      std::vector<float> padded(rows * ld, 42.0f);
      for (int64_t i = 0; i < rows; ++i)
        std::copy(scores.begin() + i * nk, scores.begin() + (i + 1) * nk, padded.begin() + i * ld);
      m.assign(rows, -kInf);
      l.assign(rows, 0.0);
      std::vector<float> o(rows, 1.0f);
      online_softmax_block(Mat{padded.data(), rows, nk, ld}, m.data(), l.data(),
                           Mat{o.data(), rows, 1, 1}, path);
      e.clear();
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t c = nk; c < ld; ++c) CHECK(padded[i * ld + c] == 42.0f);
        e.insert(e.end(), padded.begin() + i * ld, padded.begin() + i * ld + nk);
      }
    };
    std::vector<float> ea, ma;
    std::vector<double> la;
    run(SoftmaxPath::Portable, ea, ma, la);
    for (SoftmaxPath path : paths()) {
      if (path == SoftmaxPath::Portable) continue;
      CAPTURE(nk);
      const std::string name = path_name(path);
      CAPTURE(name);
      std::vector<float> eb, mb;
      std::vector<double> lb;
      run(path, eb, mb, lb);
      CHECK(ma == mb);
      for (size_t i = 0; i < ea.size(); ++i)
        CHECK(std::fabs(ea[i] - eb[i]) <= 3e-7f * ea[i] + 1e-38f);
      for (int64_t i = 0; i < rows; ++i)
        if (i == 2)
          CHECK(lb[i] == 0.0);
        else
          CHECK(std::fabs(la[i] / lb[i] - 1.0) < 1e-6);
    }
  }
}

TEST_CASE("exp_block: the AVX2 and AVX-512 exponentials are the same bits") {
  if (!have_path(SoftmaxPath::Avx2) || !have_path(SoftmaxPath::Avx512))
    return test::skip("needs a CPU with both AVX2 and AVX-512F");
  std::vector<float> x;
  for (float v = -90.0f; v <= 90.0f; v += 0.00731f) x.push_back(v);
  for (float v : {-87.3365447504f, -87.33654f, 88.0f, 88.5f, -kInf, kInf, 0.0f, -0.0f})
    x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> a(x.size()), b(x.size());
  exp_block(x.data(), a.data(), n, SoftmaxPath::Avx2);
  exp_block(x.data(), b.data(), n, SoftmaxPath::Avx512);
  int64_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  CHECK(differ == 0);
}

TEST_CASE("the path names and the CPU check") {
  CHECK(std::string(path_name(SoftmaxPath::Avx2)) == "avx2");
  CHECK(have_path(SoftmaxPath::Portable));
  CHECK(have_path(best_path()));
  for (SoftmaxPath p : {SoftmaxPath::Avx2, SoftmaxPath::Avx512})
    if (!have_path(p)) {
      std::vector<float> x(4, 0.0f);
      CHECK_THROWS_AS(exp_block(x.data(), x.data(), 4, p), Error);
    }
}

}  // namespace attnkit_unit_online_softmax_test
