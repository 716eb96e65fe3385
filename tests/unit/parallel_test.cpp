// core/parallel.h's helpers inside a task, and core/blas.h's products in panels: the same bits
// for any number of helpers.
#include "attnkit/core/parallel.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_parallel_test {

using namespace attnkit;

namespace {

Tensor random_matrix(int64_t r, int64_t c, uint64_t seed) {
  Rng g(seed);
  Tensor t({r, c});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(g.uniform() * 2.0 - 1.0);
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a.data()[i], &b.data()[i], sizeof(float)) != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("parallel: chunks run once each, on at most helpers + 1 threads") {
  for (int h : {0, 1, 3, 7}) {
    CAPTURE(h);
    std::vector<std::atomic<int>> hits(100);
    std::mutex m;
    std::set<std::thread::id> ids;
    with_helpers(h, [&] {
      CHECK(helpers() == h);
      parallel_chunks(100, [&](int64_t i) {
        hits[static_cast<size_t>(i)]++;
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      });
      // parallel_for inside starts no threads of its own: the caller and its helpers.
      std::atomic<int64_t> covered{0};
      parallel_for(1000, [&](int64_t b, int64_t e) {
        covered += e - b;
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      });
      CHECK(covered == 1000);
    });
    CHECK(helpers() == 0);
    for (auto& x : hits) CHECK(x == 1);
    CHECK(ids.size() <= static_cast<size_t>(h + 1));
    if (h == 0) CHECK(ids.count(std::this_thread::get_id()) == 1);
  }
  // The first exception comes back to the caller, once no chunk runs (a thread that threw
  // takes no more chunks; the others go on).
  std::atomic<int> ran{0};
  CHECK_THROWS_AS(with_helpers(3,
                               [&] {
                                 parallel_chunks(20, [&](int64_t i) {
                                   ++ran;
                                   if (i == 5) throw std::runtime_error("chunk 5");
                                 });
                               }),
                  std::runtime_error);
  CHECK(ran >= 6);  // chunk 5 and the chunks before it ran
  CHECK(ran <= 20);
  CHECK(helpers() == 0);
}

TEST_CASE("blas: products in panels have the same bits for any number of helpers") {
  CHECK(gemm_panels(32, 32, 32).rows == 0);       // small: one product
  CHECK(gemm_panels(640, 512, 64).rows == 64);    // rows of 64
  CHECK(gemm_panels(32, 4096, 256).cols == 128);  // few rows, many columns: columns of 128
  struct Case {
    int64_t m, n, k;
    Trans ta, tb;
    float beta;
  };
  for (const Case& c : {Case{640, 512, 64, Trans::No, Trans::No, 0.0f},
                        Case{300, 200, 128, Trans::Yes, Trans::No, 1.0f},
                        Case{256, 96, 300, Trans::No, Trans::Yes, 0.0f},
                        Case{200, 160, 256, Trans::Yes, Trans::Yes, 1.0f},
                        Case{32, 4096, 256, Trans::No, Trans::No, 0.0f},
                        Case{40, 1000, 200, Trans::Yes, Trans::Yes, 1.0f}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    const Tensor a = c.ta == Trans::Yes ? random_matrix(c.k, c.m, 1) : random_matrix(c.m, c.k, 1);
    const Tensor b = c.tb == Trans::Yes ? random_matrix(c.n, c.k, 2) : random_matrix(c.k, c.n, 2);
    const Tensor c0 = random_matrix(c.m, c.n, 3);
    // The reference: each panel one product of sub-views, in order, on this thread.
    const GemmPanels p = gemm_panels(c.m, c.n, c.k);
    REQUIRE((p.rows > 0) != (p.cols > 0));
    Tensor want = c0.clone();
    const ConstMat A = mat(a), B = mat(b);
    Mat W = mat(want);
    if (p.rows > 0) {
      for (int64_t i0 = 0; i0 < c.m; i0 += p.rows) {
        const int64_t r = std::min(p.rows, c.m - i0);
        const ConstMat ap = c.ta == Trans::Yes ? ConstMat{A.data + i0, A.rows, r, A.ld}
                                               : ConstMat{A.data + i0 * A.ld, r, A.cols, A.ld};
        gemm(c.ta, c.tb, 0.5f, ap, B, c.beta, Mat{W.data + i0 * W.ld, r, c.n, W.ld});
      }
    } else {
      for (int64_t j0 = 0; j0 < c.n; j0 += p.cols) {
        const int64_t q = std::min(p.cols, c.n - j0);
        const ConstMat bp = c.tb == Trans::Yes ? ConstMat{B.data + j0 * B.ld, q, B.cols, B.ld}
                                               : ConstMat{B.data + j0, B.rows, q, B.ld};
        gemm(c.ta, c.tb, 0.5f, A, bp, c.beta, Mat{W.data + j0, c.m, q, W.ld});
      }
    }
    Tensor whole = c0.clone();
    gemm(c.ta, c.tb, 0.5f, A, B, c.beta, mat(whole));
    test::check_close(whole, want, 1e-4, 1e-4);  // the same product, rounded another way
    for (int h : {0, 1, 3, 7}) {
      CAPTURE(h);
      Tensor got = c0.clone();
      set_split_products(true);
      with_helpers(h, [&] { gemm(c.ta, c.tb, 0.5f, A, B, c.beta, mat(got)); });
      set_split_products(false);
      CHECK(same_bits(got, want));
    }
  }
}

TEST_CASE("parallel_for: the serial loop's bits and chunks for 1 to 8 threads, on kept threads") {
  constexpr int64_t n = 1001;
  // Each item's value depends on the item alone (as the library's uses of parallel_for do):
  // a small float recurrence, so a different order or a lost item changes bits.
  auto value = [](int64_t i) {
    float x = static_cast<float>(i) * 0.37f;
    for (int r = 0; r < 1 + static_cast<int>(i % 13); ++r) x = std::sin(x) * 1.7f + 0.1f;
    return x;
  };
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = value(i);
  for (int t = 1; t <= 8; ++t) {
    CAPTURE(t);
    std::vector<float> got(n, -1.0f);
    std::mutex m;
    std::set<std::pair<int64_t, int64_t>> chunks;
    parallel_for(
        n,
        [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) got[static_cast<size_t>(i)] = value(i);
          std::lock_guard<std::mutex> lock(m);
          chunks.insert({b, e});
        },
        t);
    CHECK(std::memcmp(got.data(), want.data(), sizeof(float) * n) == 0);
    std::set<std::pair<int64_t, int64_t>> fixed;  // chunk k: [n k / t, n (k + 1) / t)
    for (int64_t k = 0; k < t; ++k) fixed.insert({n * k / t, n * (k + 1) / t});
    CHECK(chunks == fixed);
    // A parallel_for inside a chunk runs there, whole.
    std::atomic<int64_t> inner{0};
    parallel_for(
        4,
        [&](int64_t b0, int64_t e0) {
          for (int64_t i = b0; i < e0; ++i)
            parallel_for(100, [&](int64_t b, int64_t e) { inner += e - b; });
        },
        t);
    CHECK(inner == 400);
  }
  // The threads are made once and kept: the caller runs chunk 0 (and only it), a pool thread
  // chunk 1. Over 64 calls of 2 chunks, fewer than 64 pool
  // threads (no test asks for 64 threads) take chunk 1, so one of them takes it twice or more;
  // threads started per call would each take it once.
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> most{0}, on_caller{0};
  for (int call = 0; call < 64; ++call) {
    std::atomic<bool> ran{false};
    parallel_for(
        2,
        [&](int64_t b, int64_t) {
          const bool mine = std::this_thread::get_id() == caller;
          if (b == 0) {
            if (!mine) ++on_caller;  // counted as a failure below
            while (!ran.load()) std::this_thread::yield();
            return;
          }
          thread_local int taken = 0;
          ++taken;
          if (taken > most.load()) most = taken;
          if (mine) ++on_caller;
          ran = true;
        },
        2);
  }
  CHECK(on_caller == 0);  // chunk 0 on the caller, chunk 1 elsewhere, every time
  CHECK(most >= 2);
}

TEST_CASE("parallel_for: an exception reaches the caller, and the pool goes on") {
  for (int t : {2, 3, 8}) {
    CAPTURE(t);
    for (int64_t bad : {int64_t{0}, int64_t{5}, int64_t{15}}) {  // chunk 0 is the caller's
      CAPTURE(bad);
      std::atomic<int64_t> ran{0};
      CHECK_THROWS_AS(parallel_for(
                          16,
                          [&](int64_t b, int64_t e) {
                            ran += e - b;
                            if (b <= bad && bad < e) throw std::runtime_error("item");
                          },
                          t),
                      std::runtime_error);
      CHECK(ran >= 1);
      CHECK(ran <= 16);
    }
    std::atomic<int64_t> covered{0};
    parallel_for(
        100, [&](int64_t b, int64_t e) { covered += e - b; }, t);
    CHECK(covered == 100);
  }
}

}  // namespace attnkit_unit_parallel_test
