// The in-place float accesses of memory/stackmem/access.h (what bench/memaccess.sh times)
// against the double-precision steps: TreeMemory's hard access against tree_step (the leaf
// reached, the read, every node after it, over several accesses), SetMemory's against
// set_step fed the same control layer's outputs, over three accesses, each from the state the
// one before left (float against double); StackMemory's (the stack and the queue) against
// stack_step in the same way.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/memory/stackmem/access.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_memaccess_test {

using namespace attnkit;

namespace {

std::vector<double> normals(Rng& rng, int64_t n, double scale) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(rng.normal() * scale);
  return v;
}

}  // namespace

TEST_CASE("memaccess: the in-place hard tree follows tree_step, access after access") {
  Rng rng(5);
  const int64_t m = 4, c = 3, B = 2;
  memory::TreeWeights w;
  w.m = m, w.c = c;
  w.join_w = normals(rng, 2 * m * m, 0.7), w.join_b = normals(rng, m, 0.3);
  w.search_w = normals(rng, m + c, 1.0), w.search_b = 0.1;
  w.write_w = normals(rng, m * (m + c), 0.7), w.write_b = normals(rng, m, 0.3);
  for (int64_t n : {2, 8, 64}) {
    const auto leaves = normals(rng, B * n * m, 0.8);
    memory::TreeMemory tree(w, B, std::vector<float>(leaves.begin(), leaves.end()));
    CHECK(tree.n() == n);
    // Each row's double-precision tree, stepped alongside.
    std::vector<memory::TreeStepIn> ref(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      ref[static_cast<size_t>(b)].leaves.assign(leaves.begin() + b * n * m,
                                                leaves.begin() + (b + 1) * n * m);
      ref[static_cast<size_t>(b)].hard = true;
    }
    for (int step = 0; step < 5; ++step) {
      const auto h = normals(rng, B * c, 1.0);
      std::vector<float> hf(h.begin(), h.end()), read(static_cast<size_t>(B * m));
      std::vector<int64_t> leaf(static_cast<size_t>(B));
      const int64_t ops = tree.access(hf.data(), read.data(), leaf.data());
      int64_t ref_ops = 0;
      for (int64_t b = 0; b < B; ++b) {
        auto& in = ref[static_cast<size_t>(b)];
        in.h.assign(h.begin() + b * c, h.begin() + (b + 1) * c);
        const auto o = memory::tree_step(w, in);
        ref_ops += o.ops;
        CHECK(leaf[static_cast<size_t>(b)] == o.leaf);
        for (int64_t j = 0; j < m; ++j)
          CHECK(read[static_cast<size_t>(b * m + j)] ==
                doctest::Approx(o.read[static_cast<size_t>(j)]).epsilon(1e-5));
        for (int64_t k = 1; k < 2 * n; ++k)
          for (int64_t j = 0; j < m; ++j) {
            const double want = k < n ? o.summaries[static_cast<size_t>((k - 1) * m + j)]
                                      : o.leaves[static_cast<size_t>((k - n) * m + j)];
            CHECK(std::fabs(tree.node(b, k)[j] - want) <= 1e-5);
          }
        in.leaves = o.leaves, in.summaries = o.summaries;
      }
      // Its path only: SEARCH's state part once, a node per level, WRITE, a JOIN per level
      // (the double step counts the state's part at every level).
      int64_t d = 0;
      while ((int64_t{1} << d) < n) ++d;
      CHECK(ops == B * ((c + 1) + d * m + m * (m + c) + d * 2 * m * m));
      CHECK(ops <= ref_ops);
    }
  }
}

TEST_CASE("memaccess: the in-place set follows set_step, access after access") {
  // Sizes that leave remainders past the 16 lanes (n = 37 slots, width 5, state 19), and
  // three accesses, each checked against set_step from the state the one before left.
  Rng rng(9);
  const int64_t m = 5, c = 19, B = 2, n = 37, C = 3 + 4 * m;
  const auto cw = normals(rng, C * c, 0.4), cb = normals(rng, C, 0.3);
  std::vector<double> s;
  for (int64_t i = 0; i < B * n; ++i) s.push_back(rng.uniform());
  const auto keys = normals(rng, B * n * m, 0.5), values = normals(rng, B * n * m, 0.7);
  auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  memory::SetMemory set(m, c, f(cw), f(cb), B, f(s), f(keys), f(values));
  for (int access = 0; access < 3; ++access) {
    // The state before this access, as the reference's input.
    std::vector<memory::SetStepIn> ins(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      memory::SetStepIn& in = ins[static_cast<size_t>(b)];
      in.m = m;
      for (int64_t i = 0; i < n; ++i) {
        in.strengths.push_back(set.strengths(b)[i]);
        for (int64_t j = 0; j < m; ++j) {
          in.keys.push_back(set.key(b, i, j));
          in.values.push_back(set.values(b)[i * m + j]);
        }
      }
    }
    const auto h = normals(rng, B * c, 1.0);
    std::vector<float> hf(h.begin(), h.end()), read(static_cast<size_t>(B * (m + 1)));
    set.access(hf.data(), read.data());
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> ctrl(static_cast<size_t>(C));
      for (int64_t i = 0; i < C; ++i) {
        double z = cb[static_cast<size_t>(i)];
        for (int64_t j = 0; j < c; ++j)
          z += static_cast<double>(static_cast<float>(cw[static_cast<size_t>(i * c + j)])) *
               hf[static_cast<size_t>(b * c + j)];
        ctrl[static_cast<size_t>(i)] = z;
      }
      auto part = [&](int64_t k) {
        std::vector<double> v;
        for (int64_t j = 0; j < m; ++j)
          v.push_back(std::tanh(ctrl[static_cast<size_t>(2 + k * m + j)]));
        return v;
      };
      memory::SetStepIn& in = ins[static_cast<size_t>(b)];
      in.write = 1 / (1 + std::exp(-ctrl[0]));
      in.erase = 1 / (1 + std::exp(-ctrl[1]));
      in.key = part(0), in.value = part(1), in.read_key = part(2), in.erase_key = part(3);
      in.threshold = ctrl[static_cast<size_t>(2 + 4 * m)];
      const auto o = memory::set_step(in);
      for (int64_t j = 0; j <= m; ++j)
        CHECK(read[static_cast<size_t>(b * (m + 1) + j)] ==
              doctest::Approx(o.read[static_cast<size_t>(j)]).epsilon(1e-5));
      for (int64_t i = 0; i <= n; ++i)
        CHECK(set.strengths(b)[i] ==
              doctest::Approx(o.strengths[static_cast<size_t>(i)]).epsilon(1e-5));
      for (int64_t j = 0; j < m; ++j) {
        CHECK(set.key(b, n, j) ==
              doctest::Approx(o.keys[static_cast<size_t>(n * m + j)]).epsilon(1e-5));
        CHECK(set.values(b)[n * m + j] ==
              doctest::Approx(o.values[static_cast<size_t>(n * m + j)]).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("memaccess: the in-place stack and queue follow stack_step, access after access") {
  // Sizes past the 16 lanes (n = 37, width 5, state 19); strengths of at most 0.08, so that
  // a pop reaches several values down and a read about a dozen; three accesses, each checked
  // against stack_step from the state the one before left (float against double).
  for (const memory::StackKind kind : {memory::StackKind::Stack, memory::StackKind::Queue}) {
    CAPTURE(memory::stack_kind_name(kind));
    Rng rng(13);
    const int64_t m = 5, c = 19, B = 2, n = 37, C = 2 + m;
    const auto cw = normals(rng, C * c, 0.4), cb = normals(rng, C, 0.3);
    std::vector<double> s;
    for (int64_t i = 0; i < B * n; ++i) s.push_back(0.08 * rng.uniform());
    const auto values = normals(rng, B * n * m, 0.7);
    auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
    memory::StackMemory mem(kind, m, c, f(cw), f(cb), B, f(s), f(values));
    int64_t deep = 0;  // reads that drew on more than 8 values
    for (int access = 0; access < 3; ++access) {
      std::vector<memory::StackStepIn> ins(static_cast<size_t>(B));
      for (int64_t b = 0; b < B; ++b) {
        memory::StackStepIn& in = ins[static_cast<size_t>(b)];
        in.m = m;
        in.strengths.assign(mem.strengths(b), mem.strengths(b) + n);
        in.values.assign(mem.values(b), mem.values(b) + n * m);
      }
      const auto h = normals(rng, B * c, 1.0);
      std::vector<float> hf(h.begin(), h.end()), read(static_cast<size_t>(B * m));
      const int64_t ops = mem.access(hf.data(), read.data());
      int64_t ref_ops = B * (C * c + C);
      for (int64_t b = 0; b < B; ++b) {
        std::vector<double> ctrl(static_cast<size_t>(C));
        for (int64_t i = 0; i < C; ++i) {
          double z = static_cast<float>(cb[static_cast<size_t>(i)]);
          for (int64_t j = 0; j < c; ++j)
            z += static_cast<double>(static_cast<float>(cw[static_cast<size_t>(i * c + j)])) *
                 hf[static_cast<size_t>(b * c + j)];
          ctrl[static_cast<size_t>(i)] = z;
        }
        memory::StackStepIn& in = ins[static_cast<size_t>(b)];
        in.push = 1 / (1 + std::exp(-ctrl[0]));
        in.pop = 1 / (1 + std::exp(-ctrl[1]));
        for (int64_t j = 0; j < m; ++j)
          in.value.push_back(std::tanh(ctrl[static_cast<size_t>(2 + j)]));
        const auto o = memory::stack_step(kind, in);
        ref_ops += o.ops;
        for (int64_t j = 0; j < m; ++j)
          CHECK(read[static_cast<size_t>(b * m + j)] ==
                doctest::Approx(o.read[static_cast<size_t>(j)]).epsilon(1e-5));
        for (int64_t i = 0; i <= n; ++i)
          CHECK(mem.strengths(b)[i] ==
                doctest::Approx(o.strengths[static_cast<size_t>(i)]).epsilon(1e-5));
        for (int64_t j = 0; j < m; ++j)
          CHECK(mem.values(b)[n * m + j] ==
                doctest::Approx(o.values[static_cast<size_t>(n * m + j)]).epsilon(1e-5));
        // how deep the read went: the values it weighs, from its end
        double total = 0;
        int64_t k = 0;
        for (; k <= n && total < 1; ++k)
          total += o.strengths[static_cast<size_t>(kind == memory::StackKind::Stack ? n - k : k)];
        deep += k > 8;
      }
      CHECK(ops == ref_ops);
    }
    CHECK(deep >= 4);  // the case reaches past the first few values
  }
  CHECK_THROWS_AS(memory::StackMemory(memory::StackKind::Deque, 2, 3, std::vector<float>(12),
                                      std::vector<float>(4), 1, {0.5f}, {0.1f, 0.2f}),
                  ShapeError);
}

}  // namespace attnkit_unit_memaccess_test
