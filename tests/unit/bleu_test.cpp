// BLEU: hand-worked values of the textbook's score, sentence and corpus BLEU.
#include "attnkit/eval/bleu.h"

#include <cmath>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_bleu_test {

using namespace attnkit;
using namespace attnkit::eval;

TEST_CASE("textbook BLEU: 'il est riche .' against 'il est calme .', k = 2") {
  // Equal lengths: penalty exp(min(0, 1 - 4/4)) = 1. Unigrams: il, est, . match, riche does
  // not: p1 = 3/4. Bigrams: 'il est' matches, 'est riche' and 'riche .' do not: p2 = 1/3.
  // Score = (3/4)^(1/2) (1/3)^(1/4) = 0.8660254 x 0.7598357 = 0.6580370.
  const double want = std::sqrt(0.75) * std::pow(1.0 / 3.0, 0.25);
  CHECK(want == doctest::Approx(0.6580370).epsilon(1e-6));
  CHECK(textbook_bleu("il est riche .", "il est calme .", 2) ==
        doctest::Approx(want).epsilon(1e-12));
  // d2l's other examples: 'go .' vs 'va !' = 0; identical sentences = 1.
  CHECK(textbook_bleu("va !", "va !", 2) == doctest::Approx(1.0));
  CHECK(textbook_bleu("il est riche .", "il est riche .", 4) == doctest::Approx(1.0));
  // A short hypothesis: 'il est' vs 'il est calme .': exp(1 - 4/2) · 1 · 1 = e^-1.
  CHECK(textbook_bleu("il est", "il est calme .", 2) ==
        doctest::Approx(std::exp(-1.0)).epsilon(1e-12));
  // k beyond the hypothesis length: orders stop at len_hyp. 'a' vs 'a b': exp(1-2) · 1^(1/2).
  CHECK(textbook_bleu("a", "a b", 4) == doctest::Approx(std::exp(-1.0)).epsilon(1e-12));
  // Clipping: 'the the the' vs 'the cat': p1 = 1/3, bigrams 'the the' x2 match 0 → 0.
  CHECK(textbook_bleu("the the the", "the cat", 1) == doctest::Approx(std::pow(1.0 / 3.0, 0.5)));
  CHECK(textbook_bleu("the the the", "the cat", 2) == 0.0);
  CHECK(textbook_bleu("", "a b", 2) == 0.0);
}

TEST_CASE("corpus BLEU on a two-sentence corpus, by hand") {
  // hyp 1 'the cat sat on the mat' / ref 'the cat is on the mat'
  //   1-grams 5/6 (the x2, cat, on, mat), 2-grams 3/5 (the cat, on the, the mat),
  //   3-grams 1/4 (on the mat), 4-grams 0/3
  // hyp 2 'a dog' / ref 'a dog runs': 1-grams 2/2, 2-grams 1/1, no 3- or 4-grams
  // Sums: 7/8, 4/6, 1/4, 0/3; c = 8, r = 9, BP = exp(1 - 9/8) = exp(-1/8).
  const std::vector<std::string> hyp = {"the cat sat on the mat", "a dog"};
  const std::vector<std::string> ref = {"the cat is on the mat", "a dog runs"};
  const double bp = std::exp(-0.125);
  auto s2 = corpus_bleu(hyp, ref, 2, Smoothing::None);
  CHECK(s2.score == doctest::Approx(bp * std::sqrt(7.0 / 8 * 4.0 / 6)).epsilon(1e-12));
  CHECK(s2.score == doctest::Approx(0.6740181).epsilon(1e-6));
  CHECK(s2.brevity_penalty == doctest::Approx(bp));
  CHECK(s2.hyp_len == 8);
  CHECK(s2.ref_len == 9);
  auto s3 = corpus_bleu(hyp, ref, 3, Smoothing::None);
  CHECK(s3.score == doctest::Approx(bp * std::cbrt(7.0 / 8 * 4.0 / 6 * 1.0 / 4)).epsilon(1e-12));
  // BLEU-4: no 4-gram matches. Without smoothing the score is 0; with sacreBLEU's 'exp'
  // smoothing the first zero order counts as 1/(2 · 3).
  CHECK(corpus_bleu(hyp, ref, 4, Smoothing::None).score == 0.0);
  auto s4 = corpus_bleu(hyp, ref, 4, Smoothing::Exp);
  CHECK(s4.score ==
        doctest::Approx(bp * std::pow(7.0 / 8 * 4.0 / 6 * 1.0 / 4 * 1.0 / 6, 0.25)).epsilon(1e-12));
  CHECK(s4.score == doctest::Approx(0.3484493).epsilon(1e-6));
  REQUIRE(s4.precisions.size() == 4);
  CHECK(s4.precisions[0] == doctest::Approx(7.0 / 8));
  CHECK(s4.precisions[3] == doctest::Approx(1.0 / 6));
  // Perfect corpus: 1; a longer hypothesis has no penalty.
  CHECK(corpus_bleu(ref, ref, 4).score == doctest::Approx(1.0));
  CHECK(corpus_bleu({"a b c d e f"}, {"a b c d e"}, 1).score == doctest::Approx(5.0 / 6));
  CHECK_THROWS_AS(corpus_bleu(hyp, {"x"}, 4), DataError);
}

TEST_CASE("BLEU edge cases: no match, too short, empty, exp smoothing order") {
  // No match at any order: 0 whatever the smoothing (sacreBLEU's early stop).
  CHECK(corpus_bleu({"x y z"}, {"a b c"}, 4, Smoothing::Exp).score == 0.0);
  // Hypotheses shorter than 4 tokens have no 4-grams: corpus BLEU-4 is 0 (as sacreBLEU),
  // sentence BLEU drops that order (effective order).
  CHECK(corpus_bleu({"a b c"}, {"a b c"}, 4, Smoothing::Exp).score == 0.0);
  CHECK(sentence_bleu("a b c", "a b c", 4) == doctest::Approx(1.0));
  CHECK(corpus_bleu({""}, {"a"}, 1).score == 0.0);
  // exp smoothing doubles the divisor for each further zero order:
  // 'a b c d e' vs 'a b x d y': 1-grams 3/5, 2-grams 1/4 (a b), 3-grams 0/3 → 1/(2·3),
  // 4-grams 0/2 → 1/(4·2).
  const double want = std::pow(3.0 / 5 * 1.0 / 4 * 1.0 / 6 * 1.0 / 8, 0.25);
  CHECK(sentence_bleu("a b c d e", "a b x d y", 4) == doctest::Approx(want).epsilon(1e-12));
  CHECK(sentence_bleu("a b c d e", "a b x d y", 4, Smoothing::None) == 0.0);
  // Tokens are runs of non-blanks: tabs and repeated spaces do not matter; case does.
  CHECK(sentence_bleu("a\tb  c d", "a b c d", 4) == doctest::Approx(1.0));
  CHECK(sentence_bleu("A b c d", "a b c d", 1) == doctest::Approx(0.75));
  CHECK_THROWS_AS(sentence_bleu("a", "a", 0), DataError);
  CHECK(parse_smoothing("none") == Smoothing::None);
  CHECK_THROWS_AS(parse_smoothing("add-k"), ChoiceError);
}

}  // namespace attnkit_unit_bleu_test
