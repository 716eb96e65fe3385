// The tree memory (memory/stackmem/ham.h, HAM of Andrychowicz & Kurach 2016): the double-precision
// step, soft and hard, against the independent NumPy golden cases
// (testdata/make_ham_golden.py); the tape's soft access against it; the hard access touching
// only its path (its tree equals the one rebuilt from its leaves, and its cost grows as
// log n, the soft one's as n); the soft weights summing to 1; gradients by finite
// differences; errors. The hard form on the tape: NumPy's hard cases, only its path's
// log2(n) + 1 rows replaced, and REINFORCE's expected gradient against the exact one by
// enumerating a tiny tree's paths.
#include "attnkit/memory/stackmem/ham.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/rl/reinforce.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_ham_test {

using namespace attnkit;

namespace {

struct Golden {
  memory::TreeWeights w;
  memory::TreeStepIn in;
  std::vector<double> summaries, leaves, weights, read;
  int64_t leaf = -1;
};

std::vector<Golden> read_golden() {
  std::ifstream f(test::testdata("ham/cases.txt"));
  REQUIRE(f);
  std::vector<Golden> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string word, mode;
    int64_t m = 0, c = 0, n = 0;
    is >> word >> mode >> m >> c >> n;
    REQUIRE(word == "case");
    Golden g;
    g.w.m = m, g.w.c = c;
    g.in.hard = mode == "hard";
    auto next = [&](const char* name) {
      REQUIRE(std::getline(f, line));
      return test::golden_numbers(line, name);
    };
    g.w.join_w = next("join_w");
    g.w.join_b = next("join_b");
    g.w.search_w = next("search_w");
    g.w.search_b = next("search_b").at(0);
    g.w.write_w = next("write_w");
    g.w.write_b = next("write_b");
    g.in.leaves = next("leaves");
    g.in.h = next("h");
    g.summaries = next("out_summaries");
    g.leaves = next("out_leaves");
    g.weights = next("out_weights");
    g.read = next("out_read");
    if (g.in.hard) g.leaf = static_cast<int64_t>(next("out_leaf").at(0));
    REQUIRE(static_cast<int64_t>(g.in.leaves.size()) == n * m);
    out.push_back(std::move(g));
  }
  return out;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol,
                  what << "[" << i << "]: " << got[i] << " vs " << want[i]);
}

Tensor tensor_of(const std::vector<double>& v, Shape s) {
  Tensor t(std::move(s));
  REQUIRE(static_cast<size_t>(t.size()) == v.size());
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(v[static_cast<size_t>(i)]);
  return t;
}

memory::HamWeights tape_weights(ad::Tape& t, const memory::TreeWeights& w) {
  const int64_t m = w.m, c = w.c;
  memory::HamWeights h;
  h.join_w = t.constant(tensor_of(w.join_w, {m, 2 * m}));
  h.join_b = t.constant(tensor_of(w.join_b, {m}));
  h.search_w = t.constant(tensor_of(w.search_w, {1, m + c}));
  h.search_b = t.constant(tensor_of({w.search_b}, {1}));
  h.write_w = t.constant(tensor_of(w.write_w, {m, m + c}));
  h.write_b = t.constant(tensor_of(w.write_b, {m}));
  return h;
}

std::vector<double> flat(const memory::HamTree& tree, bool leaves) {
  std::vector<double> v;
  const size_t end = leaves ? tree.size() : tree.size() - 1;
  for (size_t l = leaves ? tree.size() - 1 : 0; l < end; ++l)
    for (int64_t i = 0; i < tree[l].size(); ++i) v.push_back(tree[l].value()[i]);
  return v;
}

memory::TreeWeights random_weights(Rng& rng, int64_t m, int64_t c) {
  memory::TreeWeights w;
  w.m = m, w.c = c;
  auto fill = [&](std::vector<double>& v, size_t n) {
    for (size_t i = 0; i < n; ++i) v.push_back(rng.normal() * 0.7);
  };
  fill(w.join_w, static_cast<size_t>(2 * m * m));
  fill(w.join_b, static_cast<size_t>(m));
  fill(w.search_w, static_cast<size_t>(m + c));
  fill(w.write_w, static_cast<size_t>(m * (m + c)));
  fill(w.write_b, static_cast<size_t>(m));
  w.search_b = 0.1;
  return w;
}

}  // namespace

TEST_CASE("ham: the double step and the tape's soft access agree with NumPy's (10 cases)") {
  const auto cases = read_golden();
  REQUIRE(cases.size() == 10);
  for (const Golden& g : cases) {
    const auto o = memory::tree_step(g.w, g.in);
    check_near(o.summaries, g.summaries, 1e-13, "summaries");
    check_near(o.leaves, g.leaves, 1e-13, "leaves");
    check_near(o.weights, g.weights, 1e-13, "weights");
    check_near(o.read, g.read, 1e-13, "read");
    CHECK(o.leaf == g.leaf);
    if (g.in.hard) continue;
    ad::Tape t;
    const int64_t m = g.w.m, n = static_cast<int64_t>(g.in.leaves.size()) / m;
    const auto w = tape_weights(t, g.w);
    const auto tree = memory::ham_build(t.constant(tensor_of(g.in.leaves, {1, n, m})), w);
    const auto a = memory::ham_access(
        tree, t.constant(tensor_of(g.in.h, {1, static_cast<int64_t>(g.in.h.size())})), w);
    check_near(flat(a.tree, false), g.summaries, 2e-5, "tape summaries");
    check_near(flat(a.tree, true), g.leaves, 2e-5, "tape leaves");
    check_near(
        std::vector<double>(a.weights.value().data(), a.weights.value().data() + a.weights.size()),
        g.weights, 2e-6, "tape weights");
    check_near(std::vector<double>(a.read.value().data(), a.read.value().data() + m), g.read, 2e-5,
               "tape read");
  }
}

TEST_CASE("ham: the hard access touches its path only; costs grow as log n and as n") {
  Rng rng(16);
  const auto w = random_weights(rng, 4, 3);
  std::vector<int64_t> hard, soft;
  for (int64_t n : {16, 64, 256, 1024}) {
    memory::TreeStepIn in;
    for (int64_t i = 0; i < n * 4; ++i) in.leaves.push_back(2 * rng.uniform() - 1);
    for (int i = 0; i < 3; ++i) in.h.push_back(2 * rng.uniform() - 1);
    in.hard = true;
    const auto o = memory::tree_step(w, in);
    // The summaries kept by the hard access are those JOINed afresh from its new leaves.
    memory::TreeStepIn again;
    again.leaves = o.leaves, again.h = in.h, again.hard = true;
    const auto rebuilt = memory::tree_step(w, again);
    CHECK(rebuilt.build_ops > 0);
    memory::TreeStepIn keep = again;
    keep.summaries = o.summaries;  // given: not rebuilt, the same access follows
    const auto kept = memory::tree_step(w, keep);
    CHECK(kept.build_ops == 0);
    CHECK(kept.summaries == rebuilt.summaries);
    CHECK(kept.leaves == rebuilt.leaves);
    // Only the leaf reached changed.
    int changed = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < 4; ++j)
        changed +=
            o.leaves[static_cast<size_t>(i * 4 + j)] != in.leaves[static_cast<size_t>(i * 4 + j)];
    CHECK(changed <= 4);
    CHECK(o.weights[static_cast<size_t>(o.leaf)] == 1.0);
    hard.push_back(o.ops);
    in.hard = false;
    const auto s = memory::tree_step(w, in);
    double total = 0;
    for (double a : s.weights) total += a;
    CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    soft.push_back(s.ops);
  }
  // Per level: one SEARCH (m + c + 1) and one JOIN (2m² + m); the leaf: WRITE. Exactly:
  for (size_t k = 0; k < hard.size(); ++k) {
    const int64_t d = 4 + 2 * static_cast<int64_t>(k);  // log2 n
    CHECK(hard[k] == d * (4 + 3 + 1) + d * (2 * 16 + 4) + (4 * 7 + 4));
  }
  // The soft access: n − 1 SEARCHes (and their two products), n WRITEs (and blends),
  // n − 1 JOINs: linear in n.
  for (size_t k = 0; k < soft.size(); ++k) {
    const int64_t n = int64_t{16} << (2 * k);
    CHECK(soft[k] == (n - 1) * (4 + 3 + 1 + 2 + 2 * 16 + 4) + n * (4 * 7 + 4 + 3 * 4));
  }
}

TEST_CASE("ham: gradients of a build and two soft accesses (finite differences)") {
  Rng rng(3);
  const int64_t B = 2, n = 4, m = 2, c = 3;
  std::vector<Tensor> in;
  auto rnd = [&](Shape s, double scale) {
    Tensor x(std::move(s));
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.normal() * scale);
    return x;
  };
  in.push_back(rnd({B, n, m}, 0.8));   // leaves
  in.push_back(rnd({B, c}, 0.8));      // h1
  in.push_back(rnd({B, c}, 0.8));      // h2
  in.push_back(rnd({m, 2 * m}, 0.7));  // join
  in.push_back(rnd({m}, 0.3));
  in.push_back(rnd({1, m + c}, 0.9));  // search
  in.push_back(rnd({1}, 0.3));
  in.push_back(rnd({m, m + c}, 0.7));  // write
  in.push_back(rnd({m}, 0.3));
  ad::GradCheckOptions opt;
  opt.eps = 1e-3;
  const auto r = ad::check_gradients(
      [&](ad::Tape&, const std::vector<ad::Var>& x) {
        memory::HamWeights w{x[3], x[4], x[5], x[6], x[7], x[8]};
        auto tree = memory::ham_build(x[0], w);
        auto a1 = memory::ham_access(tree, x[1], w);
        auto a2 = memory::ham_access(a1.tree, x[2], w);
        return ad::concat({a1.read, a2.read, ad::reshape(a2.tree[0], {B, m}), a2.weights}, 1);
      },
      in, opt);
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked > 40);
}

TEST_CASE("ham: errors") {
  Rng rng(1);
  const auto w = random_weights(rng, 2, 1);
  memory::TreeStepIn in;
  in.h = {0.5};
  in.leaves = {1, 2, 3, 4, 5, 6};  // 3 leaves
  CHECK_THROWS_AS(memory::tree_step(w, in), ShapeError);
  in.leaves = {1, 2};  // 1 leaf
  CHECK_THROWS_AS(memory::tree_step(w, in), ShapeError);
  in.leaves = {1, 2, 3, NAN};
  CHECK_THROWS_AS(memory::tree_step(w, in), DataError);
  in.leaves = {1, 2, 3, 4};
  in.h = {1, 2};
  CHECK_THROWS_AS(memory::tree_step(w, in), ShapeError);
  in.h = {1};
  in.summaries = {1, 2, 3};
  CHECK_THROWS_AS(memory::tree_step(w, in), ShapeError);
  {  // a wrong SEARCH hidden layer: the message shows its shape, not only the output layer's
    ad::Tape t;
    const int64_t m = 2, c = 1, H = 3;
    auto v = [&](Shape s) { return t.constant(Tensor(std::move(s), 0.1f)); };
    memory::HamWeights hw{v({m, 2 * m}), v({m}), v({1, H}), v({1}), v({m, m + c}), v({m})};
    hw.search_hw = v({H, m + c + 1}), hw.search_hb = v({H});
    const auto tree = memory::ham_build(v({1, 2, m}), hw);
    std::string what;
    try {
      memory::ham_access(tree, v({1, c}), hw);
    } catch (const ShapeError& e) {
      what = e.what();
    }
    CHECK_MESSAGE(what.find("got [3, 4] and [1, 3]") != std::string::npos, what);
  }
}

namespace {

// The table's rows as doubles (row b·2n + k: node k of tree b).
std::vector<double> table_rows(const memory::HamTable& t, int64_t b) {
  const float* v = t.nodes.value().data() + b * 2 * t.n * t.m;
  return std::vector<double>(v + t.m, v + 2 * t.n * t.m);  // nodes 1 .. 2n − 1
}

}  // namespace

TEST_CASE("ham: the tape's hard access agrees with NumPy's hard cases, on its path alone") {
  int hard_cases = 0;
  for (const Golden& g : read_golden()) {
    if (!g.in.hard) continue;
    ++hard_cases;
    ad::Tape t;
    const int64_t m = g.w.m, n = static_cast<int64_t>(g.in.leaves.size()) / m;
    const auto w = tape_weights(t, g.w);
    const auto table =
        memory::ham_table(memory::ham_build(t.constant(tensor_of(g.in.leaves, {1, n, m})), w));
    const auto a = memory::ham_hard_access(
        table, t.constant(tensor_of(g.in.h, {1, static_cast<int64_t>(g.in.h.size())})), w, {1});
    CHECK(a.leaf.at(0) == g.leaf);
    check_near(std::vector<double>(a.read.value().data(), a.read.value().data() + m), g.read, 2e-5,
               "hard read");
    std::vector<double> want = g.summaries;
    want.insert(want.end(), g.leaves.begin(), g.leaves.end());
    check_near(table_rows(a.tree, 0), want, 2e-5, "hard nodes");
  }
  CHECK(hard_cases >= 3);
}

TEST_CASE("ham: the tape's hard access replaces log2(n) + 1 rows of an active tree, none else") {
  Rng rng(7);
  const int64_t m = 3, c = 2, B = 3;
  const auto tw = random_weights(rng, m, c);
  for (int64_t n : {2, 16, 256, 1024}) {
    int64_t d = 0;
    while ((int64_t{1} << d) < n) ++d;
    ad::Tape t;
    const auto w = tape_weights(t, tw);
    std::vector<double> leaves, h;
    for (int64_t i = 0; i < B * n * m; ++i) leaves.push_back(2 * rng.uniform() - 1);
    for (int64_t i = 0; i < B * c; ++i) h.push_back(2 * rng.uniform() - 1);
    const auto table =
        memory::ham_table(memory::ham_build(t.constant(tensor_of(leaves, {B, n, m})), w));
    const std::vector<uint8_t> active{1, 0, 1};
    const auto a = memory::ham_hard_access(table, t.constant(tensor_of(h, {B, c})), w, active);
    CHECK(a.rows_replaced == 2 * (d + 1));
    // Per row: SEARCH's state part once, its node part per level, WRITE, a JOIN per level.
    CHECK(a.multiply_adds == B * ((c + 1) + d * m + m * (m + c) + d * 2 * m * m));
    for (int64_t b = 0; b < B; ++b) {
      const auto before = table_rows(table, b), after = table_rows(a.tree, b);
      // The path: the leaf's node and its ancestors (1-based heap numbers).
      std::vector<uint8_t> on_path(static_cast<size_t>(2 * n), 0);
      for (int64_t k = n + a.leaf[static_cast<size_t>(b)]; k >= 1; k /= 2)
        on_path[static_cast<size_t>(k)] = 1;
      int changed = 0, off_path_changed = 0;
      for (int64_t k = 1; k < 2 * n; ++k) {
        bool diff = false;
        for (int64_t j = 0; j < m; ++j)
          diff |= before[static_cast<size_t>((k - 1) * m + j)] !=
                  after[static_cast<size_t>((k - 1) * m + j)];
        changed += diff;
        off_path_changed += diff && !on_path[static_cast<size_t>(k)];
      }
      CHECK(off_path_changed == 0);
      CHECK(changed <= (active[static_cast<size_t>(b)] ? d + 1 : 0));
      if (active[static_cast<size_t>(b)]) CHECK(changed >= 1);  // the leaf at least
      // The greedy descent takes the likelier child at every level.
      int64_t k = 1;
      for (float p : a.p[static_cast<size_t>(b)]) k = 2 * k + (p >= 0.5f ? 1 : 0);
      CHECK(k - n == a.leaf[static_cast<size_t>(b)]);
    }
    // The summaries kept are those JOINed afresh from the new leaves.
    std::vector<double> fresh_leaves;
    for (int64_t i = 0; i < B * n * m; ++i) {
      const int64_t b = i / (n * m), r = i % (n * m);
      fresh_leaves.push_back(a.tree.nodes.value()[b * 2 * n * m + n * m + r]);
    }
    const auto fresh =
        memory::ham_table(memory::ham_build(t.constant(tensor_of(fresh_leaves, {B, n, m})), w));
    for (int64_t b = 0; b < B; ++b)
      check_near(table_rows(a.tree, b), table_rows(fresh, b), 1e-6, "kept");
  }
}

TEST_CASE("ham: REINFORCE's expected gradient equals the exact one (a tiny tree, enumerated)") {
  // Two hard accesses to a tree of 4 leaves: 16 paths of 2 + 2 decisions. The cost f of a
  // path is a fixed linear read-out of both reads and the final root. The exact gradient of
  // E[f] = Σ_paths π(path) f(path) against the expectation, over the same paths, of the
  // estimate the training uses: ∇f + (f − b) ∇log π (rl::reinforce_loss with the cost's
  // negative as return), for two baselines b (a baseline leaves the mean alone).
  Rng rng(11);
  const int64_t n = 4, m = 2, c = 2;
  auto rnd = [&](Shape s, double scale) {
    Tensor x(std::move(s));
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.normal() * scale);
    return x;
  };
  std::vector<Tensor> in;
  for (auto [s, scale] : std::vector<std::pair<Shape, double>>{{{1, n, m}, 0.8},
                                                               {{1, c}, 0.9},
                                                               {{1, c}, 0.9},
                                                               {{m, 2 * m}, 0.7},
                                                               {{m}, 0.3},
                                                               {{1, m + c}, 1.2},
                                                               {{1}, 0.3},
                                                               {{m, m + c}, 0.7},
                                                               {{m}, 0.3}})
    in.push_back(rnd(s, scale));
  const Tensor u = rnd({1, m}, 1.0), v = rnd({1, m}, 1.0), u2 = rnd({1, m}, 1.0);
  // The cost of one path (forced decisions) and its log-probability, on tape t.
  auto path = [&](ad::Tape& t, const std::vector<ad::Var>& x, int p1, int p2) {
    memory::HamWeights w{x[3], x[4], x[5], x[6], x[7], x[8]};
    const auto table = memory::ham_table(memory::ham_build(x[0], w));
    const std::vector<std::vector<uint8_t>> f1{
        {static_cast<uint8_t>(p1 >> 1), static_cast<uint8_t>(p1 & 1)}},
        f2{{static_cast<uint8_t>(p2 >> 1), static_cast<uint8_t>(p2 & 1)}};
    memory::HamDescent h1, h2;
    h1.forced = &f1, h2.forced = &f2;
    const auto a1 = memory::ham_hard_access(table, x[1], w, {1}, h1);
    const auto a2 = memory::ham_hard_access(a1.tree, x[2], w, {1}, h2);
    CHECK(a1.leaf[0] == p1);
    ad::Var root = ad::reshape(ad::slice(a2.tree.nodes, 0, 1, 2), {1, m});
    ad::Var f = ad::add(ad::add(ad::sum(ad::mul(a1.read, t.constant(u.clone()))),
                                ad::sum(ad::mul(a2.read, t.constant(u2.clone())))),
                        ad::sum(ad::mul(root, t.constant(v.clone()))));
    return std::make_pair(f, ad::add(a1.log_prob, a2.log_prob));
  };
  auto inputs = [&](ad::Tape& t) {
    std::vector<ad::Var> x;
    for (const Tensor& a : in) x.push_back(t.input(a.clone(), true));
    return x;
  };
  auto grads = [&](ad::Tape& t, const std::vector<ad::Var>& x) {
    std::vector<double> g;
    for (const ad::Var& a : x)
      for (int64_t i = 0; i < a.size(); ++i) g.push_back(t.grad(a)[i]);
    return g;
  };
  // Exact: ∇ Σ_paths π f, on one tape.
  std::vector<double> exact;
  {
    ad::Tape t;
    const auto x = inputs(t);
    ad::Var e;
    double total_p = 0;
    for (int p1 = 0; p1 < 4; ++p1)
      for (int p2 = 0; p2 < 4; ++p2) {
        auto [f, lp] = path(t, x, p1, p2);
        ad::Var term = ad::mul(ad::sum(ad::exp(lp)), f);
        total_p += std::exp(lp.value()[0]);
        e = e.valid() ? ad::add(e, term) : term;
      }
    CHECK(total_p == doctest::Approx(1.0).epsilon(1e-5));
    t.backward(e);
    exact = grads(t, x);
  }
  for (double b : {0.0, 0.7}) {
    std::vector<double> mean(exact.size(), 0.0), backprop(exact.size(), 0.0);
    for (int p1 = 0; p1 < 4; ++p1)
      for (int p2 = 0; p2 < 4; ++p2) {
        for (bool score : {true, false}) {
          ad::Tape t;
          const auto x = inputs(t);
          auto [f, lp] = path(t, x, p1, p2);
          const double pi = std::exp(lp.value()[0]), cost = f.value()[0];
          ad::Var s = f;
          if (score)
            s = ad::add(f, rl::reinforce_loss(t, lp, {static_cast<float>(-cost)}, ad::Var(), {},
                                              ad::Var(), {static_cast<float>(-b)})
                               .policy);
          t.backward(ad::mul(s, static_cast<float>(pi)));
          const auto g = grads(t, x);
          for (size_t i = 0; i < g.size(); ++i) (score ? mean : backprop)[i] += g[i];
        }
      }
    double search_exact = 0, search_backprop = 0;
    const size_t search_at = static_cast<size_t>(n * m + 2 * c + 2 * m * m + m);
    for (size_t i = search_at; i < search_at + static_cast<size_t>(m + c + 1); ++i) {
      search_exact = std::max(search_exact, std::fabs(exact[i]));
      search_backprop = std::max(search_backprop, std::fabs(backprop[i]));
    }
    for (size_t i = 0; i < exact.size(); ++i)
      CHECK_MESSAGE(std::fabs(mean[i] - exact[i]) <= 2e-5 + 1e-4 * std::fabs(exact[i]),
                    "b " << b << " [" << i << "]: " << mean[i] << " vs exact " << exact[i]);
    // Backprop alone never reaches SEARCH, whose exact gradient is not 0.
    CHECK(search_exact > 1e-3);
    CHECK(search_backprop == 0.0);
  }
}

TEST_CASE("ham: the hard descent's path entropy, its value and its gradient") {
  // Two accesses along forced paths to a tree of 8 leaves (3 decisions each) in 2 rows: the
  // entropy is Σ_l H(p_l) over the nodes reached (p from SEARCH, as the access reports it),
  // d ln 2 when every p is 1/2, and its gradient (into SEARCH, the tree's summaries and the
  // states) agrees with finite differences.
  Rng rng(5);
  const int64_t B = 2, n = 8, m = 2, c = 3, d = 3;
  auto rnd = [&](Shape s, double scale) {
    Tensor x(std::move(s));
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.normal() * scale);
    return x;
  };
  std::vector<Tensor> in;
  for (auto sc : std::vector<std::pair<Shape, double>>{{{B, n, m}, 0.8},
                                                       {{B, c}, 0.9},
                                                       {{B, c}, 0.9},
                                                       {{m, 2 * m}, 0.7},
                                                       {{m}, 0.3},
                                                       {{1, m + c}, 1.0},
                                                       {{1}, 0.3},
                                                       {{m, m + c}, 0.7},
                                                       {{m}, 0.3}})
    in.push_back(rnd(sc.first, sc.second));
  const std::vector<std::vector<uint8_t>> f1{{1, 0, 1}, {0, 0, 1}}, f2{{0, 1, 1}, {1, 1, 0}};
  auto accesses = [&](const std::vector<ad::Var>& x) {
    memory::HamWeights w{x[3], x[4], x[5], x[6], x[7], x[8]};
    const auto table = memory::ham_table(memory::ham_build(x[0], w));
    memory::HamDescent h1, h2;
    h1.forced = &f1, h2.forced = &f2, h1.entropy = h2.entropy = true;
    auto a1 = memory::ham_hard_access(table, x[1], w, {1, 1}, h1);
    auto a2 = memory::ham_hard_access(a1.tree, x[2], w, {1, 1}, h2);
    return std::make_pair(a1, a2);
  };
  {
    ad::Tape t;
    std::vector<ad::Var> x;
    for (const Tensor& a : in) x.push_back(t.constant(a.clone()));
    const auto acc = accesses(x);
    for (const memory::HamHardAccess* a : {&acc.first, &acc.second})
      for (int64_t b = 0; b < B; ++b) {
        double want = 0;
        for (float pf : a->p[static_cast<size_t>(b)]) {
          const double p = pf;
          want -= p * std::log(p) + (1 - p) * std::log(1 - p);
        }
        CHECK(a->p[static_cast<size_t>(b)].size() == static_cast<size_t>(d));
        CHECK(a->entropy.value()[b] == doctest::Approx(want).epsilon(1e-5));
        CHECK(a->entropy.value()[b] <= d * std::log(2.0) + 1e-6);
      }
    // Without the flag, no entropy is computed.
    memory::HamWeights w{x[3], x[4], x[5], x[6], x[7], x[8]};
    memory::HamDescent h;
    h.forced = &f1;
    CHECK_FALSE(
        memory::ham_hard_access(memory::ham_table(memory::ham_build(x[0], w)), x[1], w, {1, 1}, h)
            .entropy.valid());
  }
  {
    // SEARCH all zero: every p is 1/2 and every path's entropy d ln 2.
    ad::Tape t;
    std::vector<ad::Var> x;
    for (const Tensor& a : in) x.push_back(t.constant(a.clone()));
    x[5] = t.constant(Tensor({1, m + c}, 0.0f));
    x[6] = t.constant(Tensor({1}, 0.0f));
    const auto acc = accesses(x);
    const memory::HamHardAccess &a1 = acc.first, &a2 = acc.second;
    for (int64_t b = 0; b < B; ++b) {
      CHECK(a1.entropy.value()[b] == doctest::Approx(d * std::log(2.0)).epsilon(1e-6));
      CHECK(a2.entropy.value()[b] == doctest::Approx(d * std::log(2.0)).epsilon(1e-6));
    }
  }
  ad::GradCheckOptions opt;
  opt.eps = 1e-3;
  const auto r = ad::check_gradients(
      [&](ad::Tape&, const std::vector<ad::Var>& x) {
        const auto acc = accesses(x);
        return ad::concat({acc.first.entropy, acc.second.entropy}, 1);
      },
      in, opt);
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked > 30);
}

TEST_CASE("ham: JOIN and SEARCH as MLPs of one hidden layer: a minimum carried up; gradients") {
  // The hidden ReLU layer can carry a subtree's minimum up exactly, which one tanh layer of
  // the two children cannot: m = 1, hidden units relu(l), relu(−l), relu(l − r), and
  // min(l, r) = relu(l) − relu(−l) − relu(l − r), so the root of leaves x holds
  // tanh(tanh(min x)) (tanh keeps the order).
  {
    ad::Tape t;
    memory::HamWeights w;
    w.join_hw = t.constant(tensor_of({1, 0, -1, 0, 1, -1}, {3, 2}));
    w.join_hb = t.constant(Tensor({3}, 0.0f));
    w.join_w = t.constant(tensor_of({1, -1, -1}, {1, 3}));
    w.join_b = t.constant(Tensor({1}, 0.0f));
    const std::vector<double> x{0.3, -0.2, 0.5, -0.6, 0.1, 0.9, 0.4, -0.1};
    const auto tree = memory::ham_build(t.constant(tensor_of(x, {2, 4, 1})), w);
    CHECK(tree[0].value()[0] == doctest::Approx(std::tanh(std::tanh(-0.6))).epsilon(1e-6));
    CHECK(tree[0].value()[1] == doctest::Approx(std::tanh(std::tanh(-0.1))).epsilon(1e-6));
    CHECK(tree[1].value()[1] == doctest::Approx(std::tanh(-0.6)).epsilon(1e-6));
  }
  // The soft access (a build and two accesses) and the hard one (two along forced paths) with
  // both hidden layers (H = 3): every input's gradient against finite differences, and the
  // hard access's SEARCH p by hand at the root.
  Rng rng(9);
  const int64_t B = 2, n = 4, m = 2, c = 3, H = 3;
  auto rnd = [&](Shape s, double scale) {
    Tensor x(std::move(s));
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.normal() * scale);
    return x;
  };
  std::vector<Tensor> in;
  for (auto sc : std::vector<std::pair<Shape, double>>{{{B, n, m}, 0.8},
                                                       {{B, c}, 0.8},
                                                       {{B, c}, 0.8},
                                                       {{m, H}, 0.7},  // JOIN out
                                                       {{m}, 0.3},
                                                       {{1, H}, 0.9},  // SEARCH out
                                                       {{1}, 0.3},
                                                       {{m, m + c}, 0.7},  // WRITE
                                                       {{m}, 0.3},
                                                       {{H, 2 * m}, 0.8},  // JOIN hidden
                                                       {{H}, 0.3},
                                                       {{H, m + c}, 0.8},  // SEARCH hidden
                                                       {{H}, 0.3}})
    in.push_back(rnd(sc.first, sc.second));
  auto weights = [](const std::vector<ad::Var>& x) {
    memory::HamWeights w{x[3], x[4], x[5], x[6], x[7], x[8]};
    w.join_hw = x[9], w.join_hb = x[10], w.search_hw = x[11], w.search_hb = x[12];
    return w;
  };
  const std::vector<std::vector<uint8_t>> f1{{1, 0}, {0, 1}}, f2{{0, 0}, {1, 1}};
  auto hard = [&](const std::vector<ad::Var>& x) {
    const auto w = weights(x);
    memory::HamDescent h1, h2;
    h1.forced = &f1, h2.forced = &f2, h1.entropy = h2.entropy = true;
    auto a1 =
        memory::ham_hard_access(memory::ham_table(memory::ham_build(x[0], w)), x[1], w, {1, 1}, h1);
    auto a2 = memory::ham_hard_access(a1.tree, x[2], w, {1, 1}, h2);
    return std::make_pair(a1, a2);
  };
  {
    ad::Tape t;
    std::vector<ad::Var> x;
    for (const Tensor& a : in) x.push_back(t.constant(a.clone()));
    const auto w = weights(x);
    const auto tree = memory::ham_build(x[0], w);
    const auto a1 = hard(x).first;
    for (int64_t b = 0; b < B; ++b) {
      double z = in[6][0];
      for (int64_t u = 0; u < H; ++u) {
        double s = in[12][u];
        for (int64_t j = 0; j < m; ++j) s += in[11][u * (m + c) + j] * tree[0].value()[b * m + j];
        for (int64_t j = 0; j < c; ++j) s += in[11][u * (m + c) + m + j] * in[1][b * c + j];
        z += in[5][u] * std::max(s, 0.0);
      }
      CHECK(a1.p[static_cast<size_t>(b)][0] ==
            doctest::Approx(1 / (1 + std::exp(-z))).epsilon(1e-5));
    }
  }
  ad::GradCheckOptions opt;
  opt.eps = 1e-3;
  const auto r = ad::check_gradients(
      [&](ad::Tape&, const std::vector<ad::Var>& x) {
        const auto w = weights(x);
        auto a1 = memory::ham_access(memory::ham_build(x[0], w), x[1], w);
        auto a2 = memory::ham_access(a1.tree, x[2], w);
        const auto h = hard(x);
        return ad::concat({a1.read, a2.read, ad::reshape(a2.tree[0], {B, m}), a2.weights,
                           h.first.read, h.second.read, h.first.log_prob, h.second.log_prob,
                           h.second.entropy, ad::reshape(h.second.tree.nodes, {B, 2 * n * m})},
                          1);
      },
      in, opt);
  CHECK_MESSAGE(r.ok, r.where);
  CHECK(r.checked > 80);
}

}  // namespace attnkit_unit_ham_test
