// The tree memory (memory/stackmem/ham.h, HAM of Andrychowicz & Kurach 2016): the double-precision
// step, soft and hard, against the independent NumPy golden cases
// (testdata/make_ham_golden.py); the tape's soft access against it; the hard access touching
// only its path (its tree equals the one rebuilt from its leaves, and its cost grows as
// log n, the soft one's as n); the soft weights summing to 1; gradients by finite
// differences; errors.
#include "attnkit/memory/stackmem/ham.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/autodiff/gradcheck.h"
#include "attnkit/autodiff/ops.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
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
}

}  // namespace attnkit_unit_ham_test
