// lib/attnkit/attention/structured.h: the chain's and the tree's marginals, log partition,
// argmax and marginal gradients (H g) against brute-force enumeration in float64 (all 2^n
// selections; all projective trees, found by filtering every head assignment), against
// central finite differences, under long inputs, with masks, and against the PyTorch goldens
// of testdata/struct (testdata/make_struct_golden.py).
#include "attnkit/attention/structured.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_structured_test {

using namespace attnkit;
using namespace attnkit::attention;

namespace {

std::vector<double> randn(size_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = d(gen);
  return v;
}

// Every structure as the list of potentials it uses; score = Σ theta over the list.
using Structures = std::vector<std::vector<int>>;

struct Brute {
  double log_z = 0.0;
  std::vector<double> marg;  // E[f]
  std::vector<double> hv;    // Cov(f) · dir = H dir
};

Brute brute(const Structures& all, const std::vector<double>& theta,
            const std::vector<double>& dir) {
  std::vector<double> s(all.size(), 0.0);
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < all.size(); ++k) {
    for (int p : all[k]) s[k] += theta[static_cast<size_t>(p)];
    mx = std::max(mx, s[k]);
  }
  double z = 0.0;
  for (double x : s) z += std::exp(x - mx);
  Brute b;
  b.log_z = mx + std::log(z);
  b.marg.assign(theta.size(), 0.0);
  std::vector<double> efd(theta.size(), 0.0);  // E[f (f · dir)]
  double ed = 0.0;                             // E[f · dir]
  for (size_t k = 0; k < all.size(); ++k) {
    const double p = std::exp(s[k] - b.log_z);
    double fd = 0.0;
    for (int q : all[k]) fd += dir[static_cast<size_t>(q)];
    ed += p * fd;
    for (int q : all[k]) {
      b.marg[static_cast<size_t>(q)] += p;
      efd[static_cast<size_t>(q)] += p * fd;
    }
  }
  b.hv.resize(theta.size());
  for (size_t q = 0; q < theta.size(); ++q) b.hv[q] = efd[q] - b.marg[q] * ed;
  return b;
}

// The chain's 2^n selections; potentials [u (n), P (4 (n-1))].
Structures all_selections(int n) {
  Structures all;
  for (int mask = 0; mask < (1 << n); ++mask) {
    std::vector<int> used;
    for (int i = 0; i < n; ++i) {
      const int z = (mask >> i) & 1;
      if (z) used.push_back(i);
      if (i + 1 < n) used.push_back(n + i * 4 + z * 2 + ((mask >> (i + 1)) & 1));
    }
    all.push_back(used);
  }
  return all;
}

// Every projective dependency tree over n words with the root at position 0: each head
// assignment h[1..n] (h[m] != m) whose arcs do not cross (root arcs included) and which has
// no cycle. Potentials in A's layout: arc h -> m at (h-1) n + (m-1), root -> m at the diagonal.
Structures all_trees(int n) {
  Structures all;
  std::vector<int> h(static_cast<size_t>(n + 1), -1);
  std::function<void(int)> rec = [&](int m) {
    if (m > n) {
      for (int w = 1; w <= n; ++w) {  // acyclic: every word reaches the root
        int x = w, steps = 0;
        while (x != 0 && steps <= n) x = h[static_cast<size_t>(x)], ++steps;
        if (x != 0) return;
      }
      std::vector<int> used;
      for (int w = 1; w <= n; ++w) {
        const int hw = h[static_cast<size_t>(w)];
        used.push_back(hw == 0 ? (w - 1) * n + (w - 1) : (hw - 1) * n + (w - 1));
      }
      all.push_back(used);
      return;
    }
    for (int c = 0; c <= n; ++c) {
      if (c == m) continue;
      const int a = std::min(c, m), b = std::max(c, m);
      bool cross = false;
      for (int w = 1; w < m && !cross; ++w) {
        const int x = std::min(w, h[static_cast<size_t>(w)]);
        const int y = std::max(w, h[static_cast<size_t>(w)]);
        cross = (a < x && x < b && b < y) || (x < a && a < y && y < b);
      }
      if (cross) continue;
      h[static_cast<size_t>(m)] = c;
      rec(m + 1);
    }
  };
  rec(1);
  return all;
}

int64_t binom(int64_t n, int64_t k) {
  int64_t r = 1;
  for (int64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

void check_vec(const std::vector<double>& a, const std::vector<double>& b, double tol,
               const char* what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(what << "[" << i << "]: " << a[i] << " vs " << b[i]);
    CHECK(std::fabs(a[i] - b[i]) <= tol * (1.0 + std::fabs(b[i])));
  }
}

// Every number of a golden text file (17 digits), in order, as double.
std::vector<double> golden(const std::string& name) {
  std::ifstream f(test::testdata("struct/" + name));
  REQUIRE(f.good());
  std::vector<double> v;
  double x;
  while (f >> x) v.push_back(x);
  return v;
}
// An input (float32 values written with 9 digits) as float, then double: the tools' values.
std::vector<double> input(const std::string& name) {
  const Tensor t = io::read_tensor(test::testdata("struct/" + name));
  return std::vector<double>(t.values().begin(), t.values().end());
}

double score_of(const std::vector<int>& used, const std::vector<double>& theta) {
  double s = 0.0;
  for (int p : used) s += theta[static_cast<size_t>(p)];
  return s;
}

// The largest difference |a - b| / (1 + |b|) (scale > 0: / scale instead), for one CHECK a
// vector (a million CHECKs would be slow under the sanitizers).
double worst(const std::vector<double>& a, const std::vector<double>& b, double scale) {
  REQUIRE(a.size() == b.size());
  double w = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    w = std::max(w, std::fabs(a[i] - b[i]) / (scale > 0 ? scale : 1.0 + std::fabs(b[i])));
  return w;
}

}  // namespace

TEST_CASE("structured: chain marginals, log Z, H g and argmax = brute force over 2^n, n <= 8") {
  for (int n = 0; n <= 8; ++n) {
    INFO("n = " << n);
    const size_t np = static_cast<size_t>(n + 4 * std::max(n - 1, 0));
    const std::vector<double> th = randn(np, 100 + n, 1.5);
    const std::vector<double> dir = randn(np, 200 + n);
    const Structures all = all_selections(n);
    REQUIRE(all.size() == (size_t{1} << n));
    const Brute b = brute(all, th, dir);
    const ChainMarginals m = chain_marginals(th.data(), th.data() + n, n);
    CHECK(std::fabs(m.log_z - b.log_z) <= 1e-12 * (1 + std::fabs(b.log_z)));
    std::vector<double> got(m.unary);
    got.insert(got.end(), m.pairwise.begin(), m.pairwise.end());
    check_vec(got, b.marg, 1e-12, "marginal");
    std::vector<double> gu(static_cast<size_t>(n)), gp(np - static_cast<size_t>(n));
    chain_marginals_backward(th.data(), th.data() + n, n, dir.data(), dir.data() + n, gu.data(),
                             gp.data());
    gu.insert(gu.end(), gp.begin(), gp.end());
    check_vec(gu, b.hv, 1e-11, "H g");
    if (n == 0) continue;
    // argmax: the best of the enumeration
    const std::vector<int> z = chain_argmax(th.data(), th.data() + n, n);
    size_t best = 0;
    for (size_t k = 1; k < all.size(); ++k)
      if (score_of(all[k], th) > score_of(all[best], th)) best = k;
    for (int i = 0; i < n; ++i)
      CHECK(z[static_cast<size_t>(i)] == static_cast<int>((best >> i) & 1));
  }
}

TEST_CASE("structured: tree marginals, log Z, H g and argmax = brute force over projective trees") {
  for (int n = 0; n <= 8; ++n) {
    INFO("n = " << n);
    const Structures all = all_trees(n);
    // The projective trees with a root that may head several words: C(3n, n) / (2n + 1).
    CHECK(static_cast<int64_t>(all.size()) == binom(3 * n, n) / (2 * n + 1));
    const size_t np = static_cast<size_t>(n * n);
    const std::vector<double> th = randn(np, 300 + n, 1.5);
    const std::vector<double> dir = randn(np, 400 + n);
    const Brute b = brute(all, th, dir);
    const TreeMarginals m = tree_marginals(th.data(), n);
    CHECK(std::fabs(m.log_z - b.log_z) <= 1e-12 * (1 + std::fabs(b.log_z)));
    check_vec(m.arcs, b.marg, 1e-11, "marginal");
    std::vector<double> hv(np);
    tree_marginals_backward(th.data(), n, dir.data(), hv.data());
    check_vec(hv, b.hv, 1e-10, "H g");
    if (n == 0) continue;
    const std::vector<int64_t> heads = tree_argmax(th.data(), n);
    size_t best = 0;
    for (size_t k = 1; k < all.size(); ++k)
      if (score_of(all[k], th) > score_of(all[best], th)) best = k;
    std::vector<int> want = all[best], got;
    for (int w = 0; w < n; ++w) {
      const int64_t hw = heads[static_cast<size_t>(w)];
      got.push_back(static_cast<int>(hw == 0 ? w * n + w : (hw - 1) * n + w));
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
}

TEST_CASE("structured: marginal gradients against central differences, and H symmetric") {
  // d marginals / d theta · dir by central differences in double, for the chain and the tree.
  const double eps = 1e-5;
  for (int n : {3, 7}) {
    const size_t np = static_cast<size_t>(n + 4 * (n - 1));
    std::vector<double> th = randn(np, 11 + n, 2.0);
    const std::vector<double> dir = randn(np, 12 + n);
    auto marg = [&](const std::vector<double>& t) {
      const ChainMarginals m = chain_marginals(t.data(), t.data() + n, n);
      std::vector<double> v(m.unary);
      v.insert(v.end(), m.pairwise.begin(), m.pairwise.end());
      return v;
    };
    std::vector<double> tp(th), tm(th);
    for (size_t i = 0; i < np; ++i) tp[i] += eps * dir[i], tm[i] -= eps * dir[i];
    const std::vector<double> mp = marg(tp), mm = marg(tm);
    std::vector<double> fd(np), gu(static_cast<size_t>(n)), gp(np - static_cast<size_t>(n));
    for (size_t i = 0; i < np; ++i) fd[i] = (mp[i] - mm[i]) / (2 * eps);
    chain_marginals_backward(th.data(), th.data() + n, n, dir.data(), dir.data() + n, gu.data(),
                             gp.data());
    gu.insert(gu.end(), gp.begin(), gp.end());
    check_vec(gu, fd, 1e-7, "chain H g vs differences");
  }
  for (int n : {4, 12}) {
    const size_t np = static_cast<size_t>(n * n);
    const std::vector<double> th = randn(np, 21 + n, 2.0);
    const std::vector<double> d1 = randn(np, 22 + n), d2 = randn(np, 23 + n);
    std::vector<double> tp(th), tm(th);
    for (size_t i = 0; i < np; ++i) tp[i] += eps * d1[i], tm[i] -= eps * d1[i];
    const TreeMarginals mp = tree_marginals(tp.data(), n), mm = tree_marginals(tm.data(), n);
    std::vector<double> fd(np), h1(np), h2(np);
    for (size_t i = 0; i < np; ++i) fd[i] = (mp.arcs[i] - mm.arcs[i]) / (2 * eps);
    tree_marginals_backward(th.data(), n, d1.data(), h1.data());
    tree_marginals_backward(th.data(), n, d2.data(), h2.data());
    check_vec(h1, fd, 1e-7, "tree H g vs differences");
    double a = 0.0, b = 0.0;
    for (size_t i = 0; i < np; ++i) a += d2[i] * h1[i], b += d1[i] * h2[i];
    CHECK(std::fabs(a - b) <= 1e-10 * (1 + std::fabs(a)));
  }
}

TEST_CASE("structured: invariances (independent selections, shifted links, heads sum to 1)") {
  // No pairwise potentials: independent selections, p(z_i = 1) = sigmoid(u_i).
  const int n = 6;
  const std::vector<double> u = randn(n, 5, 3.0), zero(4 * (n - 1), 0.0);
  const ChainMarginals m = chain_marginals(u.data(), zero.data(), n);
  double lz = 0.0;
  for (int i = 0; i < n; ++i) {
    CHECK(std::fabs(m.unary[static_cast<size_t>(i)] -
                    1.0 / (1.0 + std::exp(-u[static_cast<size_t>(i)]))) <= 1e-14);
    lz += std::log1p(std::exp(u[static_cast<size_t>(i)]));
  }
  CHECK(std::fabs(m.log_z - lz) <= 1e-12);
  // A constant added to every entry of P_i adds it to log Z and leaves the marginals.
  std::vector<double> p = randn(4 * (n - 1), 6), q(p);
  for (size_t k = 8; k < 12; ++k) q[k] += 7.5;
  const ChainMarginals a = chain_marginals(u.data(), p.data(), n);
  const ChainMarginals b = chain_marginals(u.data(), q.data(), n);
  CHECK(std::fabs(b.log_z - a.log_z - 7.5) <= 1e-12);
  check_vec(b.unary, a.unary, 1e-13, "shifted link");
  // Every word has one head: the columns of the tree marginals sum to 1.
  const int t = 9;
  const std::vector<double> arcs = randn(t * t, 7, 2.0);
  const TreeMarginals tm = tree_marginals(arcs.data(), t);
  for (int j = 0; j < t; ++j) {
    double s = 0.0;
    for (int i = 0; i < t; ++i) s += tm.arcs[static_cast<size_t>(i * t + j)];
    CHECK(std::fabs(s - 1.0) <= 1e-12);
  }
}

TEST_CASE("structured: long inputs stay finite (chain n = 200, trees n = 60)") {
  const int n = 200;
  const std::vector<double> u = randn(n, 31, 40.0), p = randn(4 * (n - 1), 32, 40.0);
  const std::vector<double> g = randn(n, 33), gpair = randn(4 * (n - 1), 34);
  const ChainMarginals m = chain_marginals(u.data(), p.data(), n);
  CHECK(std::isfinite(m.log_z));
  for (double x : m.unary) CHECK((x >= 0.0 && x <= 1.0 + 1e-12));
  std::vector<double> gu(n), gp(4 * (n - 1));
  chain_marginals_backward(u.data(), p.data(), n, g.data(), gpair.data(), gu.data(), gp.data());
  for (double x : gu) CHECK(std::isfinite(x));
  for (double x : gp) CHECK(std::isfinite(x));
  // The chain's potentials at a scale where exp overflows double in linear space.
  std::vector<double> big(u);
  for (double& x : big) x *= 30.0;
  const ChainMarginals mb = chain_marginals(big.data(), p.data(), n);
  CHECK(std::isfinite(mb.log_z));
  for (double x : mb.unary) CHECK(std::isfinite(x));

  const int t = 60;
  const std::vector<double> arcs = randn(t * t, 35, 20.0), dir = randn(t * t, 36);
  const TreeMarginals tm = tree_marginals(arcs.data(), t);
  CHECK(std::isfinite(tm.log_z));
  CHECK(tm.log_z > 700.0);  // beyond what exp() of double holds: log space is needed
  for (int j = 0; j < t; ++j) {
    double s = 0.0;
    for (int i = 0; i < t; ++i) s += tm.arcs[static_cast<size_t>(i * t + j)];
    CHECK(std::fabs(s - 1.0) <= 1e-9);
  }
  std::vector<double> hv(t * t);
  tree_marginals_backward(arcs.data(), t, dir.data(), hv.data());
  for (double x : hv) CHECK(std::isfinite(x));
  // H g of direction a column's arcs, all the same: moving every candidate head of j by the
  // same amount changes nothing (each word has exactly one head), so H g = 0.
  std::vector<double> col(t * t, 0.0);
  for (int i = 0; i < t; ++i) col[static_cast<size_t>(i * t + 5)] = 1.0;
  tree_marginals_backward(arcs.data(), t, col.data(), hv.data());
  for (double x : hv) CHECK(std::fabs(x) <= 1e-9);
}

TEST_CASE("structured: batches with masks equal each item alone; padding never read") {
  const int64_t B = 3, n = 7;
  const std::vector<int64_t> lengths{7, 4, 0};
  for (StructKind kind : {StructKind::Chain, StructKind::Tree}) {
    const bool chain = kind == StructKind::Chain;
    const int64_t per = chain ? n : n * n;
    const std::vector<double> raw = randn(static_cast<size_t>(B * per), 41, 1.5);
    Tensor pot(chain ? Shape{B, n} : Shape{B, n, n});
    for (int64_t i = 0; i < pot.size(); ++i)
      pot[i] = static_cast<float>(raw[static_cast<size_t>(i)]);
    Tensor pw(Shape{B, n - 1, 2, 2});
    const std::vector<double> rp = randn(static_cast<size_t>(pw.size()), 42);
    for (int64_t i = 0; i < pw.size(); ++i) pw[i] = static_cast<float>(rp[static_cast<size_t>(i)]);
    // Padding: huge values, which would dominate if they were read.
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < per; ++i) {
        const int64_t r = chain ? i : i / n, c = chain ? i : i % n;
        if (r >= lengths[static_cast<size_t>(b)] || c >= lengths[static_cast<size_t>(b)])
          pot[b * per + i] = 1e30f;
      }
    StructInput in;
    in.kind = kind;
    in.unary = &pot;
    in.pairwise = chain ? &pw : nullptr;
    in.lengths = lengths;
    const StructOutput out = structured_attention(in);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = lengths[static_cast<size_t>(b)];
      INFO("kind " << (chain ? "chain" : "tree") << ", item " << b);
      if (chain) {
        std::vector<double> u(static_cast<size_t>(L)),
            p(static_cast<size_t>(4 * std::max<int64_t>(L - 1, 0)));
        for (int64_t i = 0; i < L; ++i) u[static_cast<size_t>(i)] = pot[b * n + i];
        for (size_t k = 0; k < p.size(); ++k) p[k] = pw[b * (n - 1) * 4 + static_cast<int64_t>(k)];
        const ChainMarginals m = chain_marginals(u.data(), p.data(), L);
        CHECK(out.log_z[b] == doctest::Approx(m.log_z).epsilon(1e-6));
        for (int64_t i = 0; i < n; ++i)
          CHECK(out.marginals[b * n + i] ==
                doctest::Approx(i < L ? m.unary[static_cast<size_t>(i)] : 0.0).epsilon(1e-6));
      } else {
        std::vector<double> a(static_cast<size_t>(L * L));
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < L; ++j)
            a[static_cast<size_t>(i * L + j)] = pot[b * per + i * n + j];
        const TreeMarginals m = tree_marginals(a.data(), L);
        CHECK(out.log_z[b] == doctest::Approx(m.log_z).epsilon(1e-6));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            CHECK(out.marginals[b * per + i * n + j] ==
                  doctest::Approx(i < L && j < L ? m.arcs[static_cast<size_t>(i * L + j)] : 0.0)
                      .epsilon(1e-6));
        // the argmax tree: one head per real word, none for padding
        for (int64_t j = 0; j < n; ++j) {
          double s = 0.0;
          for (int64_t i = 0; i < n; ++i) s += out.tree[b * per + i * n + j];
          CHECK(s == (j < L ? 1.0 : 0.0));
        }
      }
    }
    CHECK(out.log_z[2] == 0.0f);  // length 0: one empty structure
  }
}

TEST_CASE("structured: errors") {
  Tensor u(Shape{2, 5}), bad_pw(Shape{3, 2, 2}), t3(Shape{2, 3, 4});
  StructInput in;
  in.unary = &u;
  in.pairwise = &bad_pw;
  CHECK_THROWS_WITH_AS(in.check(),
                       "pairwise potentials have shape [3, 2, 2] but need [2, 2], [4, 2, 2] or "
                       "[2, 4, 2, 2] for unary [2, 5]",
                       ShapeError);
  in.pairwise = nullptr;
  in.lengths = {5, 6};
  CHECK_THROWS_WITH_AS(in.check(), "length 6 of item 1 is outside [0, 5]", DataError);
  in.lengths = {5};
  CHECK_THROWS_AS(in.check(), ShapeError);
  in.lengths.clear();
  u[3] = std::nanf("");
  CHECK_THROWS_WITH_AS(in.check(), "unary potentials: NaN at flat index 3", DataError);
  in.kind = StructKind::Tree;
  in.unary = &t3;
  CHECK_THROWS_WITH_AS(
      in.check(), "arc potentials have shape [2, 3, 4] but need [n, n] or [B, n, n]", ShapeError);
  CHECK_THROWS_AS(parse_struct_kind("crf"), UsageError);
  CHECK(parse_struct_kind("tree") == StructKind::Tree);
  // -inf forbids a part: a chain whose z_2 = 1 is forbidden has p(z_2 = 1) = 0.
  const double ninf = -std::numeric_limits<double>::infinity();
  const std::vector<double> uu{0.5, ninf, -0.3}, pp(8, 0.25);
  const ChainMarginals m = chain_marginals(uu.data(), pp.data(), 3);
  CHECK(m.unary[1] == 0.0);
  CHECK(std::isfinite(m.log_z));
  std::vector<double> gu(3), gp(8);
  const std::vector<double> g{1.0, 2.0, 3.0};
  chain_marginals_backward(uu.data(), pp.data(), 3, g.data(), nullptr, gu.data(), gp.data());
  for (double x : gu) CHECK(std::isfinite(x));
}

TEST_CASE("structured: marginals, log Z, H g, argmax and context = PyTorch goldens") {
  // Chain: a batch of 3 (n = 7, lengths 7, 4, 1), P shared; H g summed over the batch for P.
  {
    const int64_t B = 3, n = 7;
    const std::vector<double> U = input("chain_unary.txt"), P = input("chain_pairwise.txt"),
                              G = input("chain_dir.txt"), len = input("chain_lengths.txt");
    const std::vector<double> lz = golden("chain_logz.txt"), mg = golden("chain_marginals.txt"),
                              hu = golden("chain_hvp_unary.txt"),
                              hp = golden("chain_hvp_pairwise.txt");
    std::vector<double> got_m(static_cast<size_t>(B * n), 0.0), got_hu(got_m.size(), 0.0),
        got_hp(4, 0.0), got_lz;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = static_cast<int64_t>(len[static_cast<size_t>(b)]);
      std::vector<double> pw;
      for (int64_t i = 0; i + 1 < L; ++i) pw.insert(pw.end(), P.begin(), P.end());
      const double* u = U.data() + b * n;
      const ChainMarginals m = chain_marginals(u, pw.data(), L);
      got_lz.push_back(m.log_z);
      std::copy(m.unary.begin(), m.unary.end(), got_m.begin() + b * n);
      std::vector<double> gu(static_cast<size_t>(L)), gp(pw.size());
      chain_marginals_backward(u, pw.data(), L, G.data() + b * n, nullptr, gu.data(), gp.data());
      std::copy(gu.begin(), gu.end(), got_hu.begin() + b * n);
      for (size_t k = 0; k < gp.size(); ++k) got_hp[k % 4] += gp[k];
    }
    check_vec(got_lz, lz, 1e-12, "chain log Z");
    check_vec(got_m, mg, 1e-12, "chain marginals");
    check_vec(got_hu, hu, 1e-11, "chain H g (unary)");
    check_vec(got_hp, hp, 1e-11, "chain H g (pairwise)");
  }
  // Tree: a batch of 3 (n = 6, lengths 6, 4, 1).
  {
    const int64_t B = 3, n = 6;
    const std::vector<double> A = input("tree_arcs.txt"), G = input("tree_dir.txt"),
                              len = input("tree_lengths.txt");
    const std::vector<double> lz = golden("tree_logz.txt"), mg = golden("tree_marginals.txt"),
                              hv = golden("tree_hvp.txt"), heads = golden("tree_heads.txt");
    std::vector<double> got_m(static_cast<size_t>(B * n * n), 0.0), got_h(got_m.size(), 0.0),
        got_lz, got_heads(static_cast<size_t>(B * n), -1.0);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = static_cast<int64_t>(len[static_cast<size_t>(b)]);
      std::vector<double> a(static_cast<size_t>(L * L)), g(a.size()), h(a.size());
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j) {
          a[static_cast<size_t>(i * L + j)] = A[static_cast<size_t>((b * n + i) * n + j)];
          g[static_cast<size_t>(i * L + j)] = G[static_cast<size_t>((b * n + i) * n + j)];
        }
      const TreeMarginals m = tree_marginals(a.data(), L);
      tree_marginals_backward(a.data(), L, g.data(), h.data());
      got_lz.push_back(m.log_z);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j) {
          got_m[static_cast<size_t>((b * n + i) * n + j)] = m.arcs[static_cast<size_t>(i * L + j)];
          got_h[static_cast<size_t>((b * n + i) * n + j)] = h[static_cast<size_t>(i * L + j)];
        }
      const std::vector<int64_t> hd = tree_argmax(a.data(), L);
      for (int64_t j = 0; j < L; ++j)
        got_heads[static_cast<size_t>(b * n + j)] = static_cast<double>(hd[static_cast<size_t>(j)]);
    }
    check_vec(got_lz, lz, 1e-12, "tree log Z");
    check_vec(got_m, mg, 1e-11, "tree marginals");
    check_vec(got_h, hv, 1e-10, "tree H g");
    check_vec(got_heads, heads, 0.0, "tree argmax heads");
  }
  // The batch front end (float32 out) with lengths, and the contexts.
  for (StructKind kind : {StructKind::Chain, StructKind::Tree}) {
    const bool chain = kind == StructKind::Chain;
    const std::string k = chain ? "chain" : "tree";
    const Tensor pot =
        io::read_tensor(test::testdata("struct/" + k + (chain ? "_unary.txt" : "_arcs.txt")));
    const Tensor pw = io::read_tensor(test::testdata("struct/chain_pairwise.txt"));
    const Tensor len = io::read_tensor(test::testdata("struct/" + k + "_lengths.txt"));
    const Tensor V = io::read_tensor(test::testdata("struct/" + k + "_values.txt"));
    StructInput in;
    in.kind = kind;
    in.unary = &pot;
    in.pairwise = chain ? &pw : nullptr;
    for (int64_t i = 0; i < len.size(); ++i) in.lengths.push_back(static_cast<int64_t>(len[i]));
    const StructOutput out = structured_attention(in);
    const Tensor want_m = io::read_tensor(test::testdata("struct/" + k + "_marginals.txt"));
    test::check_close(out.marginals, want_m, 1e-6, 1e-5);
    const Tensor ctx = structured_context(kind, out.marginals, V, true);
    const Tensor want_c = io::read_tensor(test::testdata("struct/" + k + "_context.txt"));
    test::check_close(ctx, want_c, 1e-5, 1e-5);
    if (!chain) {
      Tensor heads = io::read_tensor(test::testdata("struct/tree_heads.txt"));
      test::check_close(out.argmax, heads, 0.0, 0.0);
    }
  }
}

TEST_CASE("structured: the hop chain (K steps of S states) = brute force over S^K sequences") {
  for (int K = 0; K <= 4; ++K)
    for (int S : {1, 2, 3, 5}) {
      INFO("K = " << K << ", S = " << S);
      const int nu = K * S, np = std::max(K - 1, 0) * S * S;
      const std::vector<double> th = randn(static_cast<size_t>(nu + np), 500 + K * 10 + S, 1.5);
      const std::vector<double> dir = randn(th.size(), 600 + K * 10 + S);
      Structures all;
      int count = 1;
      for (int k = 0; k < K; ++k) count *= S;
      for (int c = 0; c < count; ++c) {
        std::vector<int> z, used;
        for (int k = 0, x = c; k < K; ++k, x /= S) z.push_back(x % S);
        for (int k = 0; k < K; ++k) {
          used.push_back(k * S + z[static_cast<size_t>(k)]);
          if (k + 1 < K)
            used.push_back(nu + (k * S + z[static_cast<size_t>(k)]) * S +
                           z[static_cast<size_t>(k + 1)]);
        }
        all.push_back(used);
      }
      const Brute b = brute(all, th, dir);
      const HopChainMarginals m = hop_chain_marginals(th.data(), th.data() + nu, K, S);
      CHECK(std::fabs(m.log_z - b.log_z) <= 1e-12 * (1 + std::fabs(b.log_z)));
      std::vector<double> got(m.unary);
      got.insert(got.end(), m.pairwise.begin(), m.pairwise.end());
      check_vec(got, b.marg, 1e-12, "marginal");
      std::vector<double> gu(static_cast<size_t>(nu)), gp(static_cast<size_t>(np));
      hop_chain_marginals_backward(th.data(), th.data() + nu, K, S, dir.data(), dir.data() + nu,
                                   gu.data(), gp.data());
      gu.insert(gu.end(), gp.begin(), gp.end());
      check_vec(gu, b.hv, 1e-11, "H g");
      if (K == 0) continue;
      const std::vector<int64_t> z = hop_chain_argmax(th.data(), th.data() + nu, K, S);
      size_t best = 0;
      for (size_t c = 1; c < all.size(); ++c)
        if (score_of(all[c], th) > score_of(all[best], th)) best = c;
      for (int k = 0, x = static_cast<int>(best); k < K; ++k, x /= S)
        CHECK(z[static_cast<size_t>(k)] == x % S);
    }
  CHECK_THROWS_AS(hop_chain_marginals(nullptr, nullptr, 2, 0), Error);
}

TEST_CASE("structured: the hop chain with S = 2, U[k][0] = 0 is the binary chain; padded states") {
  const int K = 6;
  const std::vector<double> u = randn(K, 71, 2.0), p = randn(4 * (K - 1), 72);
  std::vector<double> U(2 * K, 0.0);
  for (int k = 0; k < K; ++k) U[static_cast<size_t>(2 * k + 1)] = u[static_cast<size_t>(k)];
  const ChainMarginals c = chain_marginals(u.data(), p.data(), K);
  const HopChainMarginals h = hop_chain_marginals(U.data(), p.data(), K, 2);
  CHECK(std::fabs(c.log_z - h.log_z) <= 1e-12);
  for (int k = 0; k < K; ++k)
    CHECK(std::fabs(h.unary[static_cast<size_t>(2 * k + 1)] - c.unary[static_cast<size_t>(k)]) <=
          1e-13);
  check_vec(h.pairwise, c.pairwise, 1e-13, "link marginals");
  // A padded memory slot (-inf at every hop): marginal 0, rows still sum to 1, the rest as if
  // the slot were not there.
  const int S = 4;
  std::vector<double> U4 = randn(static_cast<size_t>(K * S), 73),
                      W4 = randn(static_cast<size_t>((K - 1) * S * S), 74);
  std::vector<double> U3, W3;
  for (int k = 0; k < K; ++k)
    for (int s = 0; s < 3; ++s) U3.push_back(U4[static_cast<size_t>(k * S + s)]);
  for (int k = 0; k + 1 < K; ++k)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) W3.push_back(W4[static_cast<size_t>((k * S + a) * S + b)]);
  for (int k = 0; k < K; ++k)
    U4[static_cast<size_t>(k * S + 3)] = -std::numeric_limits<double>::infinity();
  const HopChainMarginals m4 = hop_chain_marginals(U4.data(), W4.data(), K, S);
  const HopChainMarginals m3 = hop_chain_marginals(U3.data(), W3.data(), K, 3);
  CHECK(std::fabs(m4.log_z - m3.log_z) <= 1e-12);
  for (int k = 0; k < K; ++k) {
    CHECK(m4.unary[static_cast<size_t>(k * S + 3)] == 0.0);
    for (int s = 0; s < 3; ++s)
      CHECK(std::fabs(m4.unary[static_cast<size_t>(k * S + s)] -
                      m3.unary[static_cast<size_t>(k * 3 + s)]) <= 1e-13);
  }
  // Long: K = 200 steps of 20 states at a large scale stay finite.
  const int KL = 200, SL = 20;
  const std::vector<double> UL = randn(static_cast<size_t>(KL * SL), 75, 30.0);
  const std::vector<double> WL = randn(static_cast<size_t>((KL - 1) * SL * SL), 76, 30.0);
  const std::vector<double> GL = randn(UL.size(), 77);
  const HopChainMarginals ml = hop_chain_marginals(UL.data(), WL.data(), KL, SL);
  CHECK(std::isfinite(ml.log_z));
  std::vector<double> gu(UL.size()), gp(WL.size());
  hop_chain_marginals_backward(UL.data(), WL.data(), KL, SL, GL.data(), nullptr, gu.data(),
                               gp.data());
  for (double x : gu) CHECK(std::isfinite(x));
}

TEST_CASE("structured: the hop chain's Linear engine = the log-space engine; when it applies") {
  const double inf = std::numeric_limits<double>::infinity();
  int seed = 900;
  for (int K : {1, 2, 3, 6, 40})
    for (int S : {1, 2, 5, 50})
      for (double scale : {1.0, 10.0, 30.0}) {
        if (K > 6 && S > 5) continue;  // long chains with few states, many states on short ones
        INFO("K = " << K << ", S = " << S << ", scale " << scale);
        std::vector<double> U = randn(static_cast<size_t>(K * S), ++seed, scale);
        const std::vector<double> W =
            randn(static_cast<size_t>(std::max(K - 1, 0) * S * S), ++seed, scale);
        const std::vector<double> g = randn(U.size(), ++seed), gp = randn(W.size(), ++seed);
        if (S > 2)  // padded states, as the memory network's empty slots
          for (int k = 0; k < K; ++k) U[static_cast<size_t>(k * S + S - 1)] = -inf;
        REQUIRE(hop_chain_linear_ok(U.data(), W.data(), K, S));
        const HopChainMarginals a =
            hop_chain_marginals(U.data(), W.data(), K, S, HopEngine::Linear);
        const HopChainMarginals b =
            hop_chain_marginals(U.data(), W.data(), K, S, HopEngine::LogSpace);
        CHECK(std::fabs(a.log_z - b.log_z) <= 1e-12 * (1 + std::fabs(b.log_z)));
        CHECK(worst(a.unary, b.unary, 0) <= 1e-11);
        CHECK(worst(a.pairwise, b.pairwise, 0) <= 1e-11);
        for (const double* dir_p : {static_cast<const double*>(nullptr), gp.data()}) {
          std::vector<double> ua(U.size()), pa(W.size()), ub(U.size()), pb(W.size());
          hop_chain_marginals_backward(U.data(), W.data(), K, S, g.data(), dir_p, ua.data(),
                                       pa.data(), HopEngine::Linear);
          hop_chain_marginals_backward(U.data(), W.data(), K, S, g.data(), dir_p, ub.data(),
                                       pb.data(), HopEngine::LogSpace);
          // H g is a difference of averages: compare against the scale of the direction
          double mx = 1.0;
          for (double x : ub) mx = std::max(mx, std::fabs(x));
          for (double x : pb) mx = std::max(mx, std::fabs(x));
          CHECK(worst(ua, ub, mx) <= 1e-10);
          CHECK(worst(pa, pb, mx) <= 1e-10);
        }
      }
  // The binary chain goes through the Linear engine too: against the log-space hop chain of
  // 2 states on a long chain.
  const int n = 200;
  const std::vector<double> u = randn(n, 990, 10.0), p = randn(4 * (n - 1), 991, 10.0);
  const std::vector<double> g = randn(n, 992);
  std::vector<double> U2(2 * n, 0.0), G2(2 * n, 0.0);
  for (int i = 0; i < n; ++i)
    U2[static_cast<size_t>(2 * i + 1)] = u[static_cast<size_t>(i)],
                                   G2[static_cast<size_t>(2 * i + 1)] = g[static_cast<size_t>(i)];
  const ChainMarginals c = chain_marginals(u.data(), p.data(), n);
  const HopChainMarginals h = hop_chain_marginals(U2.data(), p.data(), n, 2, HopEngine::LogSpace);
  CHECK(std::fabs(c.log_z - h.log_z) <= 1e-12 * std::fabs(h.log_z));
  double wu = 0.0;
  for (int i = 0; i < n; ++i)
    wu = std::max(
        wu, std::fabs(c.unary[static_cast<size_t>(i)] - h.unary[static_cast<size_t>(2 * i + 1)]));
  CHECK(wu <= 1e-11);
  std::vector<double> gu(n), gw(4 * (n - 1)), hu(2 * n), hw(4 * (n - 1));
  chain_marginals_backward(u.data(), p.data(), n, g.data(), nullptr, gu.data(), gw.data());
  hop_chain_marginals_backward(U2.data(), p.data(), n, 2, G2.data(), nullptr, hu.data(), hw.data(),
                               HopEngine::LogSpace);
  double wg = 0.0;
  for (int i = 0; i < n; ++i)
    wg = std::max(wg, std::fabs(gu[static_cast<size_t>(i)] - hu[static_cast<size_t>(2 * i + 1)]));
  CHECK(wg <= 1e-10);
  CHECK(worst(gw, hw, 0) <= 1e-10);
  // Where it does not apply: ranges over kHopLinearRange, -inf or NaN links, a step with no
  // finite state, no step.
  std::vector<double> U = randn(6, 993), W = randn(9, 994);  // K = 2, S = 3
  CHECK(hop_chain_linear_ok(U.data(), W.data(), 2, 3));
  CHECK_FALSE(hop_chain_linear_ok(U.data(), W.data(), 0, 3));
  std::vector<double> Ub(U);
  Ub[1] = Ub[0] + kHopLinearRange + 1.0;
  CHECK_FALSE(hop_chain_linear_ok(Ub.data(), W.data(), 2, 3));
  const HopChainMarginals wide = hop_chain_marginals(Ub.data(), W.data(), 2, 3);
  const HopChainMarginals wide_log =
      hop_chain_marginals(Ub.data(), W.data(), 2, 3, HopEngine::LogSpace);
  CHECK(wide.log_z == wide_log.log_z);
  CHECK(wide.unary == wide_log.unary);
  std::vector<double> Wb(W);
  Wb[4] = Wb[0] - kHopLinearRange - 1.0;
  CHECK_FALSE(hop_chain_linear_ok(U.data(), Wb.data(), 2, 3));
  Wb[4] = -inf;
  CHECK_FALSE(hop_chain_linear_ok(U.data(), Wb.data(), 2, 3));
  Wb[4] = std::nan("");
  CHECK_FALSE(hop_chain_linear_ok(U.data(), Wb.data(), 2, 3));
  std::vector<double> Un(U);
  Un[3] = Un[4] = Un[5] = -inf;
  CHECK_FALSE(hop_chain_linear_ok(Un.data(), W.data(), 2, 3));
  const HopChainMarginals none = hop_chain_marginals(Un.data(), W.data(), 2, 3);
  CHECK(none.log_z == -inf);
}

TEST_CASE("structured: the tree's Linear engine = the log-space engine; when it applies") {
  const double inf = std::numeric_limits<double>::infinity();
  int seed = 1300;
  for (int n : {1, 2, 3, 5, 9, 17, 40})
    for (double scale : {0.3, 3.0, 12.0}) {
      INFO("n = " << n << ", scale " << scale);
      const size_t nn = static_cast<size_t>(n * n);
      std::vector<double> A = randn(nn, ++seed, scale);
      const std::vector<double> g = randn(nn, ++seed);
      if (n > 3) A[1] = A[static_cast<size_t>(2 * n)] = -inf;  // forbidden arcs
      REQUIRE(tree_linear_ok(A.data(), n));
      const TreeMarginals a = tree_marginals(A.data(), n, TreeEngine::Linear);
      const TreeMarginals b = tree_marginals(A.data(), n, TreeEngine::LogSpace);
      CHECK(std::fabs(a.log_z - b.log_z) <= 1e-12 * (1 + std::fabs(b.log_z)));
      CHECK(worst(a.arcs, b.arcs, 0) <= 1e-11);
      std::vector<double> ha(nn), hb(nn);
      tree_marginals_backward(A.data(), n, g.data(), ha.data(), TreeEngine::Linear);
      tree_marginals_backward(A.data(), n, g.data(), hb.data(), TreeEngine::LogSpace);
      double mx = 1.0;
      for (double x : hb) mx = std::max(mx, std::fabs(x));
      CHECK(worst(ha, hb, mx) <= 1e-10);
    }
  // Where it does not apply, Linear and Auto give the log-space engine's results: a word with
  // no allowed head, NaN or +inf, no word, a shifted log Z below the floor (random arcs at a
  // large scale: the best head of each word is not compatible with one projective tree).
  std::vector<double> A = randn(16, 1400);  // n = 4
  CHECK(tree_linear_ok(A.data(), 4));
  CHECK_FALSE(tree_linear_ok(A.data(), 0));
  std::vector<double> Ab(A);
  for (int i = 0; i < 4; ++i) Ab[static_cast<size_t>(i * 4 + 2)] = -inf;
  CHECK_FALSE(tree_linear_ok(Ab.data(), 4));
  const TreeMarginals none = tree_marginals(Ab.data(), 4, TreeEngine::Linear);
  CHECK(none.log_z == -inf);
  Ab = A;
  Ab[5] = std::nan("");
  CHECK_FALSE(tree_linear_ok(Ab.data(), 4));
  Ab[5] = inf;
  CHECK_FALSE(tree_linear_ok(Ab.data(), 4));
  const int t = 60;
  const std::vector<double> big = randn(t * t, 1401, 200.0), dir = randn(t * t, 1402);
  CHECK_FALSE(tree_linear_ok(big.data(), t));
  const TreeMarginals lin = tree_marginals(big.data(), t, TreeEngine::Linear);
  const TreeMarginals lg = tree_marginals(big.data(), t, TreeEngine::LogSpace);
  CHECK(lin.log_z == lg.log_z);
  CHECK(lin.arcs == lg.arcs);
  std::vector<double> h1(t * t), h2(t * t);
  tree_marginals_backward(big.data(), t, dir.data(), h1.data(), TreeEngine::Auto);
  tree_marginals_backward(big.data(), t, dir.data(), h2.data(), TreeEngine::LogSpace);
  CHECK(h1 == h2);
}

}  // namespace attnkit_unit_structured_test
