// BLEU (Papineni et al., 2002) over pre-tokenised text: tokens are what Python's str.split()
// gives, as in sacreBLEU (runs between white space, Unicode spaces such as U+00A0 and
// U+202F included; see data::split_whitespace); no further tokenisation, no case change;
// one reference per hypothesis. The textbook's score uses the same tokens.
//
// Corpus BLEU follows sacreBLEU (`--tokenize none`, one reference): for n = 1..max_n the
// clipped n-gram matches and the hypothesis n-gram totals are summed over the corpus; the
// score is BP · exp(Σ log p_n / max_n) with p_n = matches_n / total_n and
// BP = exp(1 − r/c) when the hypothesis length c is below the reference length r (1
// otherwise; 0 when c = 0).
// Zero precisions are handled by the smoothing method:
//   Exp   (sacreBLEU's default, NIST's mteval-v13a): the k-th order with no match gets
//         p_n = 1 / (2^k · total_n) instead of 0;
//   None  (Papineni's definition): a zero precision makes the score 0.
// As in sacreBLEU, an order with total_n = 0 (every hypothesis shorter than n) gives 0, and
// a corpus with no match at any order scores 0 whatever the smoothing.
// Sentence BLEU is the same statistics over one pair with sacreBLEU's sentence_bleu
// convention `effective_order`: orders with total_n = 0 are left out of the mean.
//
// The textbook's score (d2l, 10.7.2) for one pair:
//   exp(min(0, 1 − len_ref/len_hyp)) · Π_{n=1..min(k, len_hyp)} p_n^(1/2^n)
// with p_n the clipped matches over the len_hyp − n + 1 hypothesis n-grams; an empty
// hypothesis scores 0.
//
// Scores here are in [0, 1]; tools print them times 100 unless asked otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit::eval {

enum class Smoothing { None, Exp };
Smoothing parse_smoothing(const std::string& text);  // "none" or "exp"; ChoiceError otherwise

// Sufficient statistics of BLEU: summed over sentences for corpus BLEU.
struct BleuStats {
  int max_n = 4;
  std::vector<int64_t> matches, totals;  // per order 1..max_n
  int64_t hyp_len = 0, ref_len = 0;
  explicit BleuStats(int max_n = 4);
  BleuStats& operator+=(const BleuStats& o);
};

// Statistics of one hypothesis against one reference (both already split into tokens).
BleuStats bleu_stats(const std::vector<std::string_view>& hyp,
                     const std::vector<std::string_view>& ref, int max_n = 4);

struct BleuScore {
  double score = 0;                // in [0, 1]
  std::vector<double> precisions;  // p_n as used (after smoothing), in [0, 1]
  double brevity_penalty = 1;
  int64_t hyp_len = 0, ref_len = 0;
};

// The score from statistics. effective_order: leave out orders without any n-gram.
BleuScore bleu_score(const BleuStats& s, Smoothing smoothing = Smoothing::Exp,
                     bool effective_order = false);

// Corpus BLEU of aligned lines (equal counts; a DataError otherwise).
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      int max_n = 4, Smoothing smoothing = Smoothing::Exp);
// sacreBLEU-style sentence BLEU (effective order).
double sentence_bleu(std::string_view hyp, std::string_view ref, int max_n = 4,
                     Smoothing smoothing = Smoothing::Exp);
// The textbook's per-sentence score with k = max_n.
double textbook_bleu(std::string_view hyp, std::string_view ref, int max_n = 2);

}  // namespace attnkit::eval
