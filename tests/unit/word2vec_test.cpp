// Word vectors by skip-gram with negative sampling (models/word2vec): the pair loss's gradient
// against finite differences, the SGD step against that gradient, the loss at zero vectors,
// the vocabulary's order and cut, determinism, the text format, and a tiny corpus of two
// topics where every word's nearest words are those it co-occurs with.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/models/word2vec/sgns.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_word2vec_test {

using namespace attnkit;
using namespace attnkit::models::word2vec;

std::vector<float> random_floats(Rng& rng, int64_t n, float scale) {
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<float>(rng.normal()) * scale;
  return x;
}

TEST_CASE("word2vec: the SGNS gradient agrees with finite differences") {
  const int64_t D = 6, n = 4;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Rng rng(seed);
    auto in = random_floats(rng, D, 0.7f);
    auto table = random_floats(rng, n * D, 0.7f);
    std::vector<const float*> rows;
    for (int64_t j = 0; j < n; ++j) rows.push_back(table.data() + j * D);
    std::vector<float> g_in(D), g_rows(n * D);
    sgns_loss(in.data(), rows.data(), n, D, g_in.data(), g_rows.data());
    const float eps = 1e-2f;
    auto numeric = [&](float& x) {
      const float x0 = x;
      x = x0 + eps;
      const double up = sgns_loss(in.data(), rows.data(), n, D);
      x = x0 - eps;
      const double down = sgns_loss(in.data(), rows.data(), n, D);
      x = x0;
      return (up - down) / (2.0 * static_cast<double>(eps));
    };
    for (int64_t i = 0; i < D; ++i)
      CHECK(numeric(in[static_cast<size_t>(i)]) ==
            doctest::Approx(g_in[static_cast<size_t>(i)]).epsilon(2e-3));
    for (int64_t k = 0; k < n * D; ++k)
      CHECK(numeric(table[static_cast<size_t>(k)]) ==
            doctest::Approx(g_rows[static_cast<size_t>(k)]).epsilon(2e-3));
  }
}

TEST_CASE("word2vec: the loss at zero vectors is n log 2, and positive is rewarded") {
  const int64_t D = 3;
  std::vector<float> zero(D, 0.0f), a = {1, 2, 0}, b = {-1, -2, 0};
  std::vector<const float*> rows = {zero.data(), zero.data(), zero.data()};
  CHECK(sgns_loss(zero.data(), rows.data(), 3, D) == doctest::Approx(3 * std::log(2.0)));
  // The true context aligned with the input and the negative opposed: a small loss.
  std::vector<const float*> good = {a.data(), b.data()}, bad = {b.data(), a.data()};
  CHECK(sgns_loss(a.data(), good.data(), 2, D) < 0.02);
  CHECK(sgns_loss(a.data(), bad.data(), 2, D) > 9.9);
}

TEST_CASE("word2vec: one SGD step is the rate times the gradient, taken before the step") {
  const int64_t D = 5, n = 3;
  Rng rng(7);
  auto in = random_floats(rng, D, 0.5f);
  auto table = random_floats(rng, n * D, 0.5f);
  std::vector<const float*> crows;
  std::vector<float*> rows;
  for (int64_t j = 0; j < n; ++j)
    crows.push_back(table.data() + j * D), rows.push_back(table.data() + j * D);
  std::vector<float> g_in(D), g_rows(n * D), scratch(D);
  const double loss = sgns_loss(in.data(), crows.data(), n, D, g_in.data(), g_rows.data());
  const auto in0 = in;
  const auto table0 = table;
  const float lr = 0.1f;
  CHECK(sgns_step(in.data(), rows.data(), n, D, lr, scratch.data()) == doctest::Approx(loss));
  for (int64_t i = 0; i < D; ++i)
    CHECK(in[static_cast<size_t>(i)] ==
          doctest::Approx(in0[static_cast<size_t>(i)] - lr * g_in[static_cast<size_t>(i)])
              .epsilon(1e-6));
  for (int64_t k = 0; k < n * D; ++k)
    CHECK(table[static_cast<size_t>(k)] ==
          doctest::Approx(table0[static_cast<size_t>(k)] - lr * g_rows[static_cast<size_t>(k)])
              .epsilon(1e-6));
  // Many steps on the same pair drive its loss down.
  for (int s = 0; s < 200; ++s) sgns_step(in.data(), rows.data(), n, D, lr, scratch.data());
  CHECK(sgns_loss(in.data(), crows.data(), n, D) < 0.1 * loss);
}

// Sentences of 6 words, each drawn from one of two topics only.
std::vector<std::vector<std::string>> two_topics(uint64_t seed) {
  const std::vector<std::vector<std::string>> topics = {{"cat", "dog", "pet", "fur", "paw"},
                                                        {"car", "road", "wheel", "engine", "tyre"}};
  Rng rng(seed);
  std::vector<std::vector<std::string>> out;
  for (int s = 0; s < 300; ++s) {
    const auto& t = topics[static_cast<size_t>(s % 2)];
    std::vector<std::string> sent;
    for (int w = 0; w < 6; ++w) sent.push_back(t[rng.below(t.size())]);
    out.push_back(sent);
  }
  return out;
}

TEST_CASE("word2vec: words that co-occur end up nearest") {
  Word2VecConfig c;
  c.embed = 16, c.window = 2, c.min_freq = 1, c.subsample = 0, c.epochs = 10;
  const std::set<std::string> pets = {"cat", "dog", "pet", "fur", "paw"};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const Vectors v = train(c, two_topics(seed), seed);
    REQUIRE(v.words.size() == 10);
    for (const auto& w : v.words) {
      const auto near = nearest(v, w, 4);
      REQUIRE(near.size() == 4);
      for (const auto& x : near) {
        CAPTURE(w);
        CAPTURE(x);
        CHECK(pets.count(w) == pets.count(x));  // the same topic
      }
    }
  }
}

TEST_CASE("word2vec: the vocabulary, determinism and the text format") {
  const std::vector<std::vector<std::string>> text = {
      {"b", "a", "a", "c", "b", "d"}, {"a", "c", "b", "e"}, {"a", "d"}};
  Word2VecConfig c;
  c.embed = 3, c.min_freq = 2, c.epochs = 2;
  const Vectors v = train(c, text, 5);
  // a 4, b 3, c 2, d 2 (ties in byte order); e (1) left out.
  CHECK(v.words == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(v.counts == std::vector<int64_t>{4, 3, 2, 2});
  CHECK(v.input.size() == 12);
  CHECK(train(c, text, 5).input == v.input);
  CHECK(train(c, text, 6).input != v.input);
  const std::string f = format_vectors(v);
  CHECK(f.substr(0, 4) == "4 3\n");
  CHECK(f.find("\na ") != std::string::npos);
  int lines = 0;
  for (char ch : f) lines += ch == '\n';
  CHECK(lines == 5);
  CHECK(nearest(v, "zzz", 3).empty());
  c.min_freq = 4;  // only "a" is left
  CHECK_THROWS_AS(train(c, text, 5), UsageError);
  c.min_freq = 1, c.window = 0;
  CHECK_THROWS_AS(train(c, text, 5), UsageError);
}

}  // namespace attnkit_unit_word2vec_test
