// Sinusoidal positional encoding: NumPy goldens (testdata/make_posenc_golden.py) and the
// theory (range, row 0, sin^2 + cos^2 = 1, relative positions as rotations, layouts, offset).
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/tensor.h"
#include "attnkit/posenc/sinusoidal.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_posenc_test {

using namespace attnkit;
using posenc::Layout;
using posenc::SinusoidalOptions;

namespace {

// The goldens are plain text matrices ('#' comments, a blank line between the matrices of a
// batch); read here without attnkit::io so that these tests check posenc alone.
Tensor read_golden(const std::string& rel) {
  std::ifstream in(test::testdata(rel));
  REQUIRE_MESSAGE(in, "cannot open " << rel);
  std::vector<float> values;
  int64_t rows = 0, cols = -1, mats = 1, rows_in_mat = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '#') continue;
    std::istringstream s(line);
    int64_t n = 0;
    for (double v; s >> v; ++n) values.push_back(static_cast<float>(v));
    if (n == 0) {
      if (rows_in_mat > 0) ++mats, rows_in_mat = 0;
      continue;
    }
    REQUIRE((cols < 0 || cols == n));
    cols = n;
    ++rows, ++rows_in_mat;
  }
  if (mats == 1) return Tensor(Shape{rows, cols}, values);
  return Tensor(Shape{mats, rows / mats, cols}, values);
}

struct Case {
  std::string name;
  int64_t length, dim;
  SinusoidalOptions opt;
};

std::vector<Case> golden_cases() {
  std::ifstream in(test::testdata("posenc/cases.tsv"));
  REQUIRE(in);
  std::vector<Case> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Case c;
    std::string layout;
    s >> c.name >> c.length >> c.dim >> c.opt.base >> c.opt.offset >> layout;
    REQUIRE(s);
    c.opt.layout = posenc::parse_layout(layout);
    cases.push_back(c);
  }
  return cases;
}

SinusoidalOptions with(Layout layout, int64_t offset = 0, double base = 10000.0) {
  SinusoidalOptions o;
  o.layout = layout;
  o.offset = offset;
  o.base = base;
  return o;
}

}  // namespace

TEST_CASE("posenc: NumPy goldens within 1e-6") {
  const std::vector<Case> cases = golden_cases();
  REQUIRE(cases.size() >= 8);
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Tensor got = posenc::sinusoidal(c.length, c.dim, c.opt);
    test::check_close(got, read_golden("posenc/" + c.name + ".txt"), 1e-6, 0.0);
  }
}

TEST_CASE("posenc: add to a matrix and to a batch (goldens)") {
  Tensor x = read_golden("posenc/add_x.txt");
  posenc::add_sinusoidal(x);
  test::check_close(x, read_golden("posenc/add_x.expected.txt"), 1e-6, 1e-6);

  Tensor b = read_golden("posenc/add_b.txt");
  REQUIRE(b.shape() == Shape{2, 3, 4});
  posenc::add_sinusoidal(b);
  test::check_close(b, read_golden("posenc/add_b.expected.txt"), 1e-6, 1e-6);

  Tensor v(Shape{4});
  CHECK_THROWS_AS(posenc::add_sinusoidal(v), ShapeError);
  Tensor r4(Shape{1, 1, 2, 3});
  CHECK_THROWS_AS(posenc::add_sinusoidal(r4), ShapeError);
}

TEST_CASE("posenc: adding equals the table plus the input, with offset") {
  Tensor x(Shape{3, 5}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  const Tensor orig = x.clone();
  const SinusoidalOptions o = with(Layout::Split, 11, 500.0);
  posenc::add_sinusoidal(x, o);
  const Tensor pe = posenc::sinusoidal(3, 5, o);
  for (int64_t k = 0; k < x.size(); ++k)
    CHECK(x[k] == doctest::Approx(orig[k] + pe[k]).epsilon(1e-7));
}

TEST_CASE("posenc: values in [-1, 1], row 0 is [0, 1, 0, 1, ...]") {
  for (int64_t d : {1, 2, 7, 64}) {
    const Tensor pe = posenc::sinusoidal(200, d);
    for (int64_t k = 0; k < pe.size(); ++k) REQUIRE((pe[k] >= -1.0f && pe[k] <= 1.0f));
    for (int64_t j = 0; j < d; ++j) CHECK(pe.at(0, j) == (j % 2 == 0 ? 0.0f : 1.0f));
  }
  const Tensor split = posenc::sinusoidal(1, 7, with(Layout::Split));
  for (int64_t j = 0; j < 7; ++j) CHECK(split.at(0, j) == (j < 4 ? 0.0f : 1.0f));
  CHECK(posenc::sinusoidal(0, 8).shape() == Shape{0, 8});
}

TEST_CASE("posenc: sin^2 + cos^2 = 1 for every column pair, also at large positions") {
  for (int64_t offset : {int64_t{0}, int64_t{123456789}}) {
    const Tensor pe = posenc::sinusoidal(50, 33, with(Layout::Interleaved, offset));
    for (int64_t p = 0; p < 50; ++p)
      for (int64_t i = 0; i < 16; ++i) {
        const double s = pe.at(p, 2 * i), c = pe.at(p, 2 * i + 1);
        REQUIRE(s * s + c * c == doctest::Approx(1.0).epsilon(1e-6));
      }
  }
}

TEST_CASE("posenc: the encoding at p + k is a rotation of the one at p") {
  // For each pair i with w_i = base^(-2i/D):
  //   [sin w(p+k)]   [ cos wk  sin wk] [sin wp]
  //   [cos w(p+k)] = [-sin wk  cos wk] [cos wp]
  // — a linear map that depends on k only (not on p).
  const int64_t d = 32;
  const Tensor pe = posenc::sinusoidal(400, d);
  const std::vector<std::pair<int64_t, int64_t>> pairs = {{3, 5}, {17, 1}, {100, 250}, {0, 399}};
  for (const auto& pk : pairs) {
    const int64_t p = pk.first, k = pk.second;  // (not a structured binding: CAPTURE's lambda)
    CAPTURE(p);
    CAPTURE(k);
    const Tensor rot = posenc::sinusoidal(1, d, with(Layout::Interleaved, k));  // sin wk, cos wk
    for (int64_t i = 0; i < d / 2; ++i) {
      const double sk = rot.at(0, 2 * i), ck = rot.at(0, 2 * i + 1);
      const double sp = pe.at(p, 2 * i), cp = pe.at(p, 2 * i + 1);
      CHECK(pe.at(p + k, 2 * i) == doctest::Approx(ck * sp + sk * cp).epsilon(1e-6).scale(1));
      CHECK(pe.at(p + k, 2 * i + 1) == doctest::Approx(-sk * sp + ck * cp).epsilon(1e-6).scale(1));
    }
  }
  // The same rotation takes p to p + k for every p: the dot product between two rows
  // depends on their distance only.
  auto dot = [&](int64_t a, int64_t b) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += double(pe.at(a, j)) * pe.at(b, j);
    return s;
  };
  CHECK(dot(10, 17) == doctest::Approx(dot(200, 207)).epsilon(1e-5));
  CHECK(dot(0, 50) == doctest::Approx(dot(300, 350)).epsilon(1e-5));
}

TEST_CASE("posenc: split is a column permutation of interleaved") {
  for (int64_t d : {1, 2, 7, 16}) {
    const Tensor a = posenc::sinusoidal(20, d, with(Layout::Interleaved, 5));
    const Tensor b = posenc::sinusoidal(20, d, with(Layout::Split, 5));
    const int64_t n_sin = (d + 1) / 2;
    for (int64_t p = 0; p < 20; ++p)
      for (int64_t j = 0; j < d; ++j) {
        const int64_t from = j < n_sin ? 2 * j : 2 * (j - n_sin) + 1;
        REQUIRE(b.at(p, j) == a.at(p, from));
      }
  }
}

TEST_CASE("posenc: offset P gives rows P.. of a longer table") {
  const Tensor full = posenc::sinusoidal(100000, 16);
  for (int64_t start : {int64_t{0}, int64_t{1}, int64_t{4321}, int64_t{99990}}) {
    const Tensor part = posenc::sinusoidal(10, 16, with(Layout::Interleaved, start));
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t j = 0; j < 16; ++j) REQUIRE(part.at(r, j) == full.at(start + r, j));
  }
}

TEST_CASE("posenc: validation and layout names") {
  CHECK_THROWS_AS(posenc::sinusoidal(-1, 4), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 0), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, -1)), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, 0, 0.0)), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, 0, -2.0)), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, 0, INFINITY)), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, 0, NAN)), UsageError);
  CHECK_THROWS_AS(posenc::sinusoidal(4, 4, with(Layout::Interleaved, posenc::kMaxPosition)),
                  UsageError);
  CHECK(posenc::sinusoidal(1, 2, with(Layout::Interleaved, posenc::kMaxPosition)).size() == 2);
  CHECK(posenc::parse_layout("split") == Layout::Split);
  CHECK(posenc::parse_layout("interleaved") == Layout::Interleaved);
  CHECK(std::string(posenc::layout_name(Layout::Split)) == "split");
  CHECK_THROWS_WITH_AS(posenc::parse_layout("zigzag"),
                       "unknown layout 'zigzag' (choose interleaved or split)", UsageError);
}

}  // namespace attnkit_unit_posenc_test
