// lib/attnkit/attention/fused.h: the streaming kernel against the naive reference (whole
// weight matrices), on random sizes with ragged tail blocks, masks that empty rows, batches
// of problems, strided views and any thread count.
#include "attnkit/attention/fused.h"

#include <cmath>
#include <limits>
#include <vector>

#include "attnkit/attention/softmax.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_fused_test {

using namespace attnkit;
using namespace attnkit::attention;

namespace {

Tensor randn(Shape s, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

// Relative agreement: |a - b| <= 1e-5 · (max |b| over the tensor) + 1e-6.
void check_rel(const Tensor& a, const Tensor& b) {
  double mx = 0.0;
  for (int64_t i = 0; i < b.size(); ++i) mx = std::max(mx, std::fabs(double(b[i])));
  test::check_close(a, b, 1e-5 * mx + 1e-6, 1e-5);
}

struct Case {
  int64_t n_q, n_k, d, d_v;
  KeyMask mask;
};

// Runs both paths over `items` problems of one shape (each with its own inputs).
void compare(const Case& c, int items, uint64_t seed, FusedBlocks blocks, int threads, float scale,
             Tensor* mask_store = nullptr) {
  Tensor q = randn({items, c.n_q, c.d}, seed, 2.0), k = randn({items, c.n_k, c.d}, seed + 1, 2.0),
         v = randn({items, c.n_k, c.d_v}, seed + 2);
  Tensor a({items, c.n_q, c.d_v}, -7.0f), b({items, c.n_q, c.d_v}, 7.0f);
  std::vector<Problem> pa, pb;
  for (int64_t i = 0; i < items; ++i) {
    KeyMask m = c.mask;
    if (mask_store) m.mask = mat(*mask_store);
    pa.push_back({mat(q, i), mat(k, i), mat(v, i), mat(a, i), m});
    pb.push_back({mat(q, i), mat(k, i), mat(v, i), mat(b, i), m});
  }
  fused_context(pa, scale, blocks, threads);
  naive_context(pb, scale, threads);
  check_rel(a, b);
}

}  // namespace

TEST_CASE("fused = naive on random sizes, ragged tail blocks, all masks, 1 and 2 threads") {
  Rng sizes(42);
  const FusedBlocks small{7, 13};  // small blocks: many ragged tails
  for (int trial = 0; trial < 24; ++trial) {
    Case c;
    c.n_q = 1 + static_cast<int64_t>(sizes.uniform() * 60);
    c.n_k = 1 + static_cast<int64_t>(sizes.uniform() * 70);
    c.d = 1 + static_cast<int64_t>(sizes.uniform() * 20);
    c.d_v = 1 + static_cast<int64_t>(sizes.uniform() * 9);
    switch (trial % 4) {
      case 1:
        c.mask.causal = true;
        break;
      case 2:
        c.mask.key_len = static_cast<int64_t>(sizes.uniform() * (c.n_k + 1));
        break;
      case 3:
        c.mask.window = static_cast<int64_t>(sizes.uniform() * 5);
        break;
    }
    CAPTURE(trial);
    CAPTURE(c.n_q);
    CAPTURE(c.n_k);
    compare(c, 3, 100 + trial, small, 1 + trial % 2, 1.0f / std::sqrt(float(c.d)));
    compare(c, 2, 200 + trial, FusedBlocks{}, 2, 1.0f);
  }
}

TEST_CASE("fused = naive with a 0/1 mask that empties rows; empty rows give zero contexts") {
  const int64_t n_q = 37, n_k = 41;
  Tensor mask({n_q, n_k});
  Rng rng(9);
  for (int64_t i = 0; i < mask.size(); ++i) mask[i] = rng.uniform() < 0.3f ? 1.0f : 0.0f;
  for (int64_t j = 0; j < n_k; ++j) mask.at(5, j) = mask.at(20, j) = 0.0f;
  Case c{n_q, n_k, 8, 4, {}};
  compare(c, 2, 7, FusedBlocks{8, 16}, 2, 0.5f, &mask);
  // The fully masked rows are exactly zero, not NaN.
  Tensor q = randn({n_q, 8}, 1), k = randn({n_k, 8}, 2), v = randn({n_k, 4}, 3), o({n_q, 4}, 5.0f);
  KeyMask m;
  m.mask = mat(mask);
  fused_context({{mat(q), mat(k), mat(v), mat(o), m}}, 1.0f, FusedBlocks{8, 16});
  for (int64_t c2 = 0; c2 < 4; ++c2) {
    CHECK(o.at(5, c2) == 0.0f);
    CHECK(o.at(20, c2) == 0.0f);
  }
  // key_len 0: every row empty.
  KeyMask none;
  none.key_len = 0;
  fused_context({{mat(q), mat(k), mat(v), mat(o), none}}, 1.0f);
  for (int64_t i = 0; i < o.size(); ++i) CHECK(o[i] == 0.0f);
}

TEST_CASE("fused: large scores stay finite (online max), strided head views, thread count") {
  // Scores up to ~1e3 force many rescalings of the running context.
  const int64_t n = 300, E = 12, H = 3, hd = E / H;
  Tensor q = randn({n, E}, 11, 10.0), k = randn({n, E}, 12, 10.0), v = randn({n, E}, 13);
  Tensor a({n, E}), b({n, E}), c({n, E});
  std::vector<Problem> pa, pb, pc;
  for (int64_t h = 0; h < H; ++h) {
    auto view = [&](const Tensor& t) { return ConstMat{t.data() + h * hd, n, hd, E}; };
    auto out = [&](Tensor& t) { return Mat{t.data() + h * hd, n, hd, E}; };
    KeyMask m;
    m.causal = h == 1;
    pa.push_back({view(q), view(k), view(v), out(a), m});
    pb.push_back({view(q), view(k), view(v), out(b), m});
    pc.push_back({view(q), view(k), view(v), out(c), m});
  }
  fused_context(pa, 1.0f, FusedBlocks{32, 64}, 1);
  fused_context(pc, 1.0f, FusedBlocks{32, 64}, 2);
  naive_context(pb, 1.0f, 2);
  for (int64_t i = 0; i < a.size(); ++i) REQUIRE(std::isfinite(a[i]));
  check_rel(a, b);
  CHECK(a.values() == c.values());  // same blocks, any thread count: identical bits
}

TEST_CASE("apply_key_mask: causal, window and padding at a block offset") {
  Tensor s({3, 4}, 1.0f);
  KeyMask m;
  m.causal = true;
  m.window = 1;
  m.key_len = 6;
  apply_key_mask(m, 4, 3, mat(s));  // rows 4..6, columns 3..6
  // row 4 sees keys 3, 4; row 5 sees 4, 5; row 6 sees 5 (6 is padding)
  const float I = -std::numeric_limits<float>::infinity();
  const std::vector<float> want = {1, 1, I, I, I, 1, 1, I, I, I, 1, I};
  CHECK(s.values() == want);
}

TEST_CASE("fused_context: shape errors") {
  Tensor q({4, 3}), k({5, 2}), v({5, 2}), o({4, 2});
  CHECK_THROWS_AS(fused_context({{mat(q), mat(k), mat(v), mat(o), {}}}, 1.0f), ShapeError);
  Tensor k2({5, 3}), v2({6, 2});
  CHECK_THROWS_AS(fused_context({{mat(q), mat(k2), mat(v2), mat(o), {}}}, 1.0f), ShapeError);
}

TEST_CASE(
    "fused: default blocks (AVX-512 path where the CPU has it) = naive; 1, 2, 3 threads give "
    "identical bits") {
  // Sizes past one 256 x 256 block with ragged tails, a causal head and a padded one.
  const int64_t n = 700, d = 64, H = 3;
  Tensor q = randn({H, n, d}, 21, 1.5), k = randn({H, n, d}, 22, 1.5), v = randn({H, n, d}, 23);
  Tensor ref({H, n, d}), o1({H, n, d}), o2({H, n, d}), o3({H, n, d});
  auto problems = [&](Tensor& out) {
    std::vector<Problem> ps;
    for (int64_t h = 0; h < H; ++h) {
      KeyMask m;
      m.causal = h == 1;
      if (h == 2) m.key_len = 517;
      ps.push_back({mat(q, h), mat(k, h), mat(v, h), mat(out, h), m});
    }
    return ps;
  };
  naive_context(problems(ref), 0.125f, 2);
  fused_context(problems(o1), 0.125f, FusedBlocks{}, 1);
  fused_context(problems(o2), 0.125f, FusedBlocks{}, 2);
  fused_context(problems(o3), 0.125f, FusedBlocks{}, 3);
  check_rel(o1, ref);
  CHECK(o1.values() == o2.values());
  CHECK(o1.values() == o3.values());
}

}  // namespace attnkit_unit_fused_test
