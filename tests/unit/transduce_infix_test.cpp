// transduce-gen --task infix-prefix (Kim et al. 2017, 5.1): every pair's infix source and
// prefix target evaluated here by two independent evaluators (a recursive-descent parser of
// the infix with the usual precedence, a left-to-right recursive reading of the prefix), in
// exact arithmetic modulo a prime, so that any swapped operand or misplaced operator shows;
// the depth read from the infix's tree, uniform over the range; the same seed, the same pairs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/transduce.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_transduce_infix_test {

using namespace attnkit;

namespace {

constexpr int64_t kP = 2147483647;  // 2^31 - 1, prime

int64_t modpow(int64_t a, int64_t e) {
  int64_t r = 1;
  a %= kP;
  for (; e; e >>= 1, a = a * a % kP)
    if (e & 1) r = r * a % kP;
  return r;
}

// a op b modulo kP; division by the inverse (0 for 0: a total function, the same in both).
int64_t apply(const std::string& op, int64_t a, int64_t b) {
  if (op == "+") return (a + b) % kP;
  if (op == "-") return ((a - b) % kP + kP) % kP;
  if (op == "*") return a * b % kP;
  REQUIRE(op == "/");
  return a * modpow(b, kP - 2) % kP;
}

bool is_op(const std::string& s) { return s == "+" || s == "-" || s == "*" || s == "/"; }

// Infix: expr := term (('+'|'-') term)*, term := atom (('*'|'/') atom)*, atom := NUM | '(' expr
// ')'. Returns the value and the depth (operators on the longest path).
struct Infix {
  const std::vector<std::string>& t;
  size_t i = 0;
  struct V {
    int64_t value, depth;
  };
  V atom() {
    REQUIRE(i < t.size());
    if (t[i] == "(") {
      ++i;
      V v = expr();
      REQUIRE(i < t.size());
      REQUIRE(t[i] == ")");
      ++i;
      return v;
    }
    REQUIRE(!is_op(t[i]));
    const int64_t x = std::stoll(t[i++]);
    CHECK(x >= 0);
    CHECK(x < data::kInfixNumbers);
    return {x, 0};
  }
  V term() {
    V a = atom();
    while (i < t.size() && (t[i] == "*" || t[i] == "/")) {
      const std::string op = t[i++];
      V b = atom();
      a = {apply(op, a.value, b.value), 1 + std::max(a.depth, b.depth)};
    }
    return a;
  }
  V expr() {
    V a = term();
    while (i < t.size() && (t[i] == "+" || t[i] == "-")) {
      const std::string op = t[i++];
      V b = term();
      a = {apply(op, a.value, b.value), 1 + std::max(a.depth, b.depth)};
    }
    return a;
  }
};

int64_t prefix_value(const std::vector<std::string>& t, size_t& i) {
  REQUIRE(i < t.size());
  const std::string s = t[i++];
  if (!is_op(s)) return std::stoll(s);
  const int64_t a = prefix_value(t, i);
  const int64_t b = prefix_value(t, i);
  return apply(s, a, b);
}

std::vector<data::TransducePair> make(int64_t lo, int64_t hi, int64_t count, uint64_t seed) {
  data::TransduceOptions o;
  o.task = data::TransduceTask::InfixPrefix, o.depth_min = lo, o.depth_max = hi;
  Rng rng(seed);
  return data::make_transduce(o, count, rng);
}

}  // namespace

TEST_CASE("transduce: infix-prefix's two forms evaluate to the same number") {
  int64_t brackets = 0;
  for (const auto& p : make(1, 6, 600, 3)) {
    Infix in{p.source};
    const Infix::V v = in.expr();
    REQUIRE(in.i == p.source.size());  // the whole source is one expression
    size_t j = 0;
    CHECK(prefix_value(p.target, j) == v.value);
    CHECK(j == p.target.size());
    CHECK(data::prefix_depth(p.target) == v.depth);
    // brackets only around compound operands: never around a lone number
    for (size_t k = 0; k + 2 < p.source.size(); ++k)
      CHECK_FALSE((p.source[k] == "(" && p.source[k + 2] == ")"));
    for (const auto& s : p.source) brackets += s == "(";
    // the prefix has the infix's numbers and operators in the prefix order, no brackets
    CHECK(p.target.size() +
              2 * static_cast<size_t>(std::count(p.source.begin(), p.source.end(), "(")) ==
          p.source.size());
  }
  CHECK(brackets > 0);
}

TEST_CASE("transduce: infix-prefix's depth is uniform over the range; a seed fixes the pairs") {
  std::map<int64_t, int64_t> by_depth;
  const int64_t n = 3000;
  for (const auto& p : make(2, 5, n, 11)) {
    Infix in{p.source};
    ++by_depth[in.expr().depth];
  }
  REQUIRE(by_depth.size() == 4);
  CHECK(by_depth.begin()->first == 2);
  CHECK(by_depth.rbegin()->first == 5);
  for (const auto& entry : by_depth) {  // (no structured binding: clang's INFO cannot capture one)
    INFO("depth " << entry.first << ": " << entry.second);
    CHECK(std::abs(entry.second - n / 4) < 5 * 24);  // sd sqrt(3000 * 1/4 * 3/4) ≈ 24
  }
  const auto a = make(1, 6, 50, 7), b = make(1, 6, 50, 7), c = make(1, 6, 50, 8);
  CHECK(data::format_transduce(a) == data::format_transduce(b));
  CHECK(data::format_transduce(a) != data::format_transduce(c));
  for (const auto& p : make(6, 6, 20, 5)) CHECK(data::prefix_depth(p.target) == 6);
}

TEST_CASE("transduce: infix-prefix's depth options and prefix_depth's errors") {
  data::TransduceOptions o;
  o.task = data::TransduceTask::InfixPrefix;
  o.depth_min = 0;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o.depth_min = 4, o.depth_max = 3;
  CHECK_THROWS_AS(o.validate(), UsageError);
  o.depth_max = 21;
  CHECK_THROWS_AS(o.validate(), UsageError);
  CHECK_THROWS_AS(data::prefix_depth({"+", "1"}), DataError);
  CHECK_THROWS_AS(data::prefix_depth({"1", "2"}), DataError);
  CHECK_THROWS_AS(data::prefix_depth({"+", "1", "x"}), DataError);
  CHECK(data::prefix_depth({"-", "*", "1", "2", "3"}) == 2);
}

}  // namespace attnkit_unit_transduce_infix_test
