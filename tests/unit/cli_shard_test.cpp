// --shard K/N and choices (core/choice.h, cli::parse_option) in the command-line layer, and
// the part of an attention problem computed alone (Options::part_begin/part_end): the same
// numbers as the whole.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attnkit/attention/attention.h"
#include "attnkit/attention/mha.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_cli_shard_test {

using namespace attnkit;

TEST_CASE("parse_shard: K/N with 1 <= K <= N, anything else a UsageError") {
  const cli::Shard s = cli::parse_shard("2/8");
  CHECK(s.k == 2);
  CHECK(s.n == 8);
  CHECK(s.given);
  for (const char* bad : {"0/3", "4/3", "x", "3", "1/0", "/3", "1/", "-1/3", "1/3x", " 1/3", ""})
    CHECK_THROWS_AS(cli::parse_shard(bad), UsageError);
}

TEST_CASE("Shard slices are contiguous, in order, cover every item once, sizes within one") {
  for (int64_t m : {0, 1, 2, 5, 7, 100, 1001})
    for (int64_t n : {1, 2, 3, 8, 13}) {
      int64_t next = 0, lo = m, hi = 0;
      for (int64_t k = 1; k <= n; ++k) {
        cli::Shard s;
        s.k = k;
        s.n = n;
        CHECK(s.begin(m) == next);
        CHECK(s.end(m) >= s.begin(m));
        lo = std::min(lo, s.end(m) - s.begin(m));
        hi = std::max(hi, s.end(m) - s.begin(m));
        next = s.end(m);
      }
      CHECK(next == m);
      CHECK(hi - lo <= 1);
    }
}

namespace {

Tensor random(Shape shape, uint64_t seed) {
  Rng rng(seed);
  Tensor t(shape);
  for (float& x : t.values()) x = static_cast<float>(rng.normal());
  return t;
}

bool same_rows(const Tensor& whole, const Tensor& part, int64_t first) {
  const int64_t per = whole.size() / whole.dim(0);
  for (int64_t i = 0; i < part.size(); ++i)
    if (part.data()[i] != whole.data()[first * per + i]) return false;
  return true;
}

}  // namespace

TEST_CASE("attend: a part of the rows or batch items is bit for bit the whole's") {
  namespace at = attnkit::attention;
  const Tensor q = random({300, 16}, 1), k = random({280, 16}, 2), v = random({280, 8}, 3);
  for (auto kind : {at::ScoreKind::Dot, at::ScoreKind::ScaledDot, at::ScoreKind::Cosine})
    for (auto out : {at::Output::Scores, at::Output::Weights, at::Output::Context})
      for (bool causal : {false, true}) {
        at::Scorer sc;
        sc.kind = kind;
        at::Options opt;
        opt.output = out;
        opt.causal = causal;
        const Tensor whole = at::attend(sc, q, k, &v, opt);
        for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 100}, {100, 233}, {233, 300}, {7, 7}}) {
          opt.part_begin = b;
          opt.part_end = e;
          const Tensor part = at::attend(sc, q, k, &v, opt);
          REQUIRE(part.dim(0) == e - b);
          CHECK(same_rows(whole, part, b));
        }
      }
  const Tensor qb = random({5, 40, 16}, 4), kb = random({5, 30, 16}, 5), vb = random({5, 30, 8}, 6);
  at::Scorer sc;
  at::Options opt;
  opt.causal = true;
  const Tensor whole = at::attend(sc, qb, kb, &vb, opt);
  opt.part_begin = 1;
  opt.part_end = 4;
  const Tensor part = at::attend(sc, qb, kb, &vb, opt);
  CHECK(part.shape() == Shape{3, 40, 8});
  CHECK(same_rows(whole, part, 1));
  opt.part_end = 6;
  CHECK_THROWS_AS(at::attend(sc, qb, kb, &vb, opt), UsageError);
  opt.part_end = 2;
  opt.hard = at::Hard::Sample;
  CHECK_THROWS_AS(at::attend(sc, qb, kb, &vb, opt), UsageError);
}

TEST_CASE("choices: one parser, one error type listing the valid values, aliases accepted") {
  enum class K { A, B };
  CHECK(parse_choice<K>("kind", "b", {{"a", K::A}, {"b", K::B}, {"bee", K::B, true}}) == K::B);
  CHECK(parse_choice<K>("kind", "bee", {{"a", K::A}, {"b", K::B}, {"bee", K::B, true}}) == K::B);
  try {
    parse_choice<K>("kind", "c", {{"a", K::A}, {"b", K::B}, {"bee", K::B, true}});
    FAIL("no ChoiceError");
  } catch (const ChoiceError& e) {
    CHECK(std::string(e.what()) == "unknown kind 'c' (choose a or b)");
    CHECK(e.field() == "kind");
    CHECK(e.value() == "c");
    CHECK(e.choices() == std::vector<std::string>{"a", "b"});
    CHECK(e.exit_status() == 2);
  }
  CHECK_THROWS_WITH_AS(attention::parse_score_kind("dott"),
                       "unknown score 'dott' (choose dot, scaled-dot, bilinear, additive, cosine "
                       "or location)",
                       ChoiceError);
  CHECK(attention::parse_score_kind("general") == attention::ScoreKind::Bilinear);
  CHECK_THROWS_WITH_AS(
      cli::parse_option("--score", [] { return attention::parse_score_kind("x"); }),
      doctest::Contains("--score: unknown score 'x'"), UsageError);
}

}  // namespace attnkit_unit_cli_shard_test
