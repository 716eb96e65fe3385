// lib/attnkit/attention/block_kernels.h: the hand-written AVX-512 products of the streaming
// attention against sums in double, on ragged shapes (row tails of every tile height, key
// panels cut short, context widths of 1-4 vectors and past 64 columns, strided views), and
// the packed layout itself. On a CPU without AVX-512 (or under ATTNKIT_SIMD below avx512)
// the kernels are off: the cases check that they refuse to run, and say so.
#include "attnkit/attention/block_kernels.h"

#include <cmath>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_block_kernels_test {

using namespace attnkit;
using namespace attnkit::attention::detail;

namespace {

// A [rows, cols] view with ld = cols + pad over a buffer of normal values.
struct Strided {
  std::vector<float> buf;
  int64_t rows, cols, ld;
  Strided(int64_t r, int64_t c, int64_t pad, Rng& rng) : rows(r), cols(c), ld(c + pad) {
    buf.resize(static_cast<size_t>(std::max<int64_t>(1, r * ld)));
    for (float& x : buf) x = static_cast<float>(rng.normal());
  }
  ConstMat cview() const { return {buf.data(), rows, cols, ld}; }
  Mat view() { return {buf.data(), rows, cols, ld}; }
  float at(int64_t i, int64_t j) const { return buf[static_cast<size_t>(i * ld + j)]; }
};

// |got - want| <= 1e-5 · Σ|terms| + 1e-6: the rounding of a float sum of those terms.
void check_entry(double got, double want, double abs_terms) {
  CHECK(std::fabs(got - want) <= 1e-5 * abs_terms + 1e-6);
}

// f(a, b, c) for every combination of the three lists, each named in a failure's message.
template <size_t A, size_t B, size_t C, class F>
void each_shape(const int64_t (&as)[A], const int64_t (&bs)[B], const int64_t (&cs)[C], F f) {
  for (int64_t a : as)
    for (int64_t b : bs)
      for (int64_t c : cs) {
        CAPTURE(a);
        CAPTURE(b);
        CAPTURE(c);
        f(a, b, c);
      }
}

}  // namespace

TEST_CASE("block kernels: scores = scale · Q Kᵀ on ragged shapes, the packing's layout") {
  if (!block_kernels_on()) {
    MESSAGE("the AVX-512 block kernels are off on this CPU (or ATTNKIT_SIMD): checking refusal");
    std::vector<float> k(4), packed(static_cast<size_t>(packed_keys_floats(1, 4)));
    CHECK_THROWS_AS(pack_keys(ConstMat{k.data(), 1, 4, 4}, packed.data()), Error);
    return;
  }
  Rng rng(41);
  const int64_t rows_list[] = {1, 5, 6, 7, 12, 13, 25},
                keys_list[] = {1, 17, 33, 63, 64, 65, 70, 130}, depth_list[] = {1, 7, 64, 80};
  each_shape(rows_list, keys_list, depth_list, [&](int64_t rows, int64_t nk, int64_t d) {
    Strided q(rows, d, 3, rng), k(nk, d, 5, rng), s(rows, nk, 2, rng);
    const std::vector<float> before = s.buf;
    std::vector<float> packed(static_cast<size_t>(packed_keys_floats(nk, d)), 99.0f);
    pack_keys(k.cview(), packed.data());
    // The layout: key j's entry p at panel j/64, row p, lane j%64; zeros past nk.
    const int64_t panels = (nk + kKeyPanel - 1) / kKeyPanel;
    REQUIRE(packed.size() == static_cast<size_t>(panels * kKeyPanel * d));
    for (int64_t j = 0; j < panels * kKeyPanel; ++j)
      for (int64_t p = 0; p < d; ++p) {
        const float got = packed[static_cast<size_t>((j / kKeyPanel) * kKeyPanel * d +
                                                     p * kKeyPanel + j % kKeyPanel)];
        if (got != (j < nk ? k.at(j, p) : 0.0f)) {
          FAIL_CHECK("packed entry of key " << j << ", depth " << p << " is " << got);
          j = panels * kKeyPanel;
          break;
        }
      }
    const float scale = 0.3f;
    scores_packed(q.cview(), packed.data(), nk, scale, s.view());
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < nk; ++j) {
        double want = 0.0, mag = 0.0;
        for (int64_t p = 0; p < d; ++p) {
          want += double(q.at(i, p)) * k.at(j, p);
          mag += std::fabs(double(q.at(i, p)) * k.at(j, p));
        }
        check_entry(s.at(i, j), scale * want, scale * mag);
      }
      // The padding between rows is left alone.
      for (int64_t j = nk; j < s.ld; ++j)
        CHECK(s.at(i, j) == before[static_cast<size_t>(i * s.ld + j)]);
    }
  });
}

TEST_CASE("block kernels: out += P V on ragged shapes, widths of 1-4 vectors and past 64") {
  if (!block_kernels_on()) {
    MESSAGE("the AVX-512 block kernels are off on this CPU (or ATTNKIT_SIMD): checking refusal");
    std::vector<float> a(4);
    CHECK_THROWS_AS(add_context(ConstMat{a.data(), 1, 1, 1}, ConstMat{a.data(), 1, 1, 1},
                                Mat{a.data() + 2, 1, 1, 1}),
                    Error);
    return;
  }
  Rng rng(43);
  const int64_t rows_list[] = {1, 4, 6, 7, 19}, keys_list[] = {1, 63, 64, 65, 130},
                width_list[] = {1, 16, 17, 40, 64, 65, 130};
  each_shape(rows_list, keys_list, width_list, [&](int64_t rows, int64_t nk, int64_t dv) {
    Strided p(rows, nk, 1, rng), v(nk, dv, 4, rng), out(rows, dv, 3, rng);
    const std::vector<float> before = out.buf;
    add_context(p.cview(), v.cview(), out.view());
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t c = 0; c < dv; ++c) {
        double want = before[static_cast<size_t>(i * out.ld + c)];
        double mag = std::fabs(want);
        for (int64_t j = 0; j < nk; ++j) {
          want += double(p.at(i, j)) * v.at(j, c);
          mag += std::fabs(double(p.at(i, j)) * v.at(j, c));
        }
        check_entry(out.at(i, c), want, mag);
      }
      for (int64_t c = dv; c < out.ld; ++c)
        CHECK(out.at(i, c) == before[static_cast<size_t>(i * out.ld + c)]);
    }
  });
}

TEST_CASE("block kernels: the arithmetic counts as the gemms of their shapes would") {
  if (!block_kernels_on()) return;
  std::vector<float> q(5 * 7, 0.5f), k(9 * 7, 0.25f), s(5 * 9), v(9 * 3, 1.0f), o(5 * 3, 0.0f);
  std::vector<float> packed(static_cast<size_t>(packed_keys_floats(9, 7)));
  pack_keys(ConstMat{k.data(), 9, 7, 7}, packed.data());
  blas_count_flops(true);
  scores_packed(ConstMat{q.data(), 5, 7, 7}, packed.data(), 9, 1.0f, Mat{s.data(), 5, 9, 9});
  CHECK(blas_flops() == 2u * 5 * 9 * 7);
  add_context(ConstMat{s.data(), 5, 9, 9}, ConstMat{v.data(), 9, 3, 3}, Mat{o.data(), 5, 3, 3});
  CHECK(blas_flops() == 2u * 5 * 9 * 7 + 2u * 5 * 9 * 3);
  blas_count_flops(false);
  CHECK(o[0] == doctest::Approx(9 * 7 * 0.125));
}

TEST_CASE("block kernels: shapes that do not fit are refused") {
  if (!block_kernels_on()) return;
  std::vector<float> a(64, 1.0f), packed(static_cast<size_t>(packed_keys_floats(2, 2)));
  pack_keys(ConstMat{a.data(), 2, 2, 2}, packed.data());
  CHECK_THROWS_AS(scores_packed(ConstMat{a.data(), 2, 2, 2}, packed.data(), 2, 1.0f,
                                Mat{a.data() + 8, 3, 2, 2}),
                  ShapeError);
  CHECK_THROWS_AS(add_context(ConstMat{a.data(), 2, 3, 3}, ConstMat{a.data(), 2, 2, 2},
                              Mat{a.data() + 16, 2, 2, 2}),
                  ShapeError);
}

}  // namespace attnkit_unit_block_kernels_test
