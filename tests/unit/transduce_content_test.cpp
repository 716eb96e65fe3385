// transduce-gen's content tasks (membership, count-distinct, dedup) and HAM's (sort, merge,
// search): every answer recomputed here from the source alone, by other means than the
// generator's (std::set, std::map, std::merge), over many seeded pairs; lengths, alphabets
// and the mix of present and absent queries checked; the same seed gives the same pairs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/transduce.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_transduce_content_test {

using namespace attnkit;
using data::TransduceTask;

namespace {

std::vector<data::TransducePair> make(TransduceTask task, int64_t lo, int64_t hi, int64_t k,
                                      int64_t count, uint64_t seed, int64_t queries = 1) {
  data::TransduceOptions o;
  o.task = task, o.len_min = lo, o.len_max = hi, o.symbols = k, o.queries = queries;
  Rng rng(seed);
  return data::make_transduce(o, count, rng);
}

std::vector<int> ints(const std::vector<std::string>& v) {
  std::vector<int> out;
  for (const auto& s : v) out.push_back(std::stoi(s));
  return out;
}

}  // namespace

TEST_CASE("transduce: membership answers each query by whether it is in the sequence") {
  int yes = 0, no = 0;
  for (const auto& p : make(TransduceTask::Membership, 3, 9, 12, 400, 1, 3)) {
    const auto q = std::find(p.source.begin(), p.source.end(), "?");
    REQUIRE(q != p.source.end());
    const std::set<std::string> seq(p.source.begin(), q);
    const int64_t n = q - p.source.begin();
    CHECK(n >= 3);
    CHECK(n <= 9);
    REQUIRE(p.source.end() - q - 1 == 3);
    REQUIRE(p.target.size() == 3);
    for (size_t j = 0; j < 3; ++j) {
      const std::string& query = *(q + 1 + static_cast<long>(j));
      CHECK(std::stoi(query) >= 1);
      CHECK(std::stoi(query) <= 12);
      CHECK(p.target[j] == (seq.count(query) ? "yes" : "no"));
      (seq.count(query) ? yes : no)++;
    }
  }
  // Half the queries absent where a symbol is left (with 12 symbols and 3-9 drawn, nearly
  // always): between 40% and 60% of 1200.
  CHECK(no > 480);
  CHECK(yes > 480);
  // With every symbol in the sequence, all queries are present.
  for (const auto& p : make(TransduceTask::Membership, 40, 40, 2, 20, 3))
    CHECK(p.target == std::vector<std::string>{"yes"});
}

TEST_CASE("transduce: count-distinct and dedup against std::set") {
  const auto counts = make(TransduceTask::CountDistinct, 1, 20, 6, 300, 2);
  const auto dedups = make(TransduceTask::Dedup, 1, 20, 6, 300, 2);
  REQUIRE(counts.size() == dedups.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    // The same draws: the same sources.
    CHECK(counts[i].source == dedups[i].source);
    const std::set<std::string> distinct(counts[i].source.begin(), counts[i].source.end());
    CHECK(counts[i].target == std::vector<std::string>(distinct.size(), "c"));
    // dedup: each distinct symbol once, the order of first occurrences.
    const auto& t = dedups[i].target;
    CHECK(std::set<std::string>(t.begin(), t.end()) == distinct);
    CHECK(t.size() == distinct.size());
    std::vector<long> first;
    for (const auto& s : t)
      first.push_back(std::find(dedups[i].source.begin(), dedups[i].source.end(), s) -
                      dedups[i].source.begin());
    CHECK(std::is_sorted(first.begin(), first.end()));
  }
}

TEST_CASE("transduce: sort and merge give the source's numbers ascending") {
  for (const auto& p : make(TransduceTask::Sort, 1, 12, 30, 200, 4)) {
    auto s = ints(p.source);
    std::multiset<int> ms(s.begin(), s.end());
    CHECK(ints(p.target) == std::vector<int>(ms.begin(), ms.end()));
  }
  for (const auto& p : make(TransduceTask::Merge, 2, 12, 30, 200, 5)) {
    const auto plus = std::find(p.source.begin(), p.source.end(), "+");
    REQUIRE(plus != p.source.end());
    const auto a = ints({p.source.begin(), plus}), b = ints({plus + 1, p.source.end()});
    CHECK(std::is_sorted(a.begin(), a.end()));
    CHECK(std::is_sorted(b.begin(), b.end()));
    CHECK(a.size() == (a.size() + b.size() + 1) / 2);
    std::vector<int> merged;
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(merged));
    CHECK(ints(p.target) == merged);
  }
}

TEST_CASE("transduce: search returns the value of the queried key") {
  for (const auto& p : make(TransduceTask::Search, 1, 10, 10, 300, 6)) {
    REQUIRE(p.source.size() >= 4);
    REQUIRE(p.source.size() % 2 == 0);
    REQUIRE(p.source[p.source.size() - 2] == "?");
    std::map<std::string, std::string> kv;
    std::vector<int> keys;
    for (size_t i = 0; i + 2 < p.source.size(); i += 2) {
      CHECK(kv.count(p.source[i]) == 0);  // distinct keys
      kv[p.source[i]] = p.source[i + 1];
      keys.push_back(std::stoi(p.source[i]));
    }
    CHECK(std::is_sorted(keys.begin(), keys.end()));
    REQUIRE(kv.count(p.source.back()) == 1);
    CHECK(p.target == std::vector<std::string>{kv[p.source.back()]});
  }
  // All 10 keys of 10 symbols: every key once, 1..10.
  for (const auto& p : make(TransduceTask::Search, 10, 10, 10, 5, 7)) {
    std::vector<int> keys;
    for (size_t i = 0; i + 2 < p.source.size(); i += 2) keys.push_back(std::stoi(p.source[i]));
    CHECK(keys == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  }
}

TEST_CASE("transduce: the content tasks are seeded and refuse what cannot be made") {
  for (TransduceTask t : {TransduceTask::Membership, TransduceTask::Dedup, TransduceTask::Sort,
                          TransduceTask::Merge, TransduceTask::Search}) {
    const auto a = make(t, 2, 8, 9, 30, 11), b = make(t, 2, 8, 9, 30, 11);
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].source == b[i].source);
      CHECK(a[i].target == b[i].target);
    }
  }
  CHECK_THROWS_AS(make(TransduceTask::Search, 2, 12, 10, 1, 1), UsageError);
  CHECK_THROWS_AS(make(TransduceTask::Membership, 2, 5, 10, 1, 1, 0), UsageError);
  CHECK(data::parse_transduce_task("count-distinct") == TransduceTask::CountDistinct);
  CHECK(data::transduce_task_name(TransduceTask::Search) == "search");
}

}  // namespace attnkit_unit_transduce_content_test
