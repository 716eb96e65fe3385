#include "attnkit/eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"

namespace attnkit::eval {

namespace {

using Tokens = std::vector<std::string_view>;
// n-grams as a joined key; the separator cannot occur inside a token (tokens have no blanks).
std::map<std::string, int64_t> ngram_counts(const Tokens& t, int n) {
  std::map<std::string, int64_t> out;
  if (static_cast<int64_t>(t.size()) < n) return out;
  for (size_t i = 0; i + static_cast<size_t>(n) <= t.size(); ++i) {
    std::string key(t[i]);
    for (int k = 1; k < n; ++k) {
      key += ' ';
      key += t[i + static_cast<size_t>(k)];
    }
    ++out[key];
  }
  return out;
}

void check_max_n(int max_n) {
  if (max_n < 1 || max_n > 100) throw DataError("the largest n-gram order must be in [1, 100]");
}

}  // namespace

Smoothing parse_smoothing(const std::string& text) {
  return parse_choice<Smoothing>("smoothing", text,
                                 {
                                     {"exp", Smoothing::Exp},
                                     {"none", Smoothing::None},
                                 });
}

BleuStats::BleuStats(int n)
    : max_n(n), matches(static_cast<size_t>(n), 0), totals(static_cast<size_t>(n), 0) {}

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  if (o.max_n != max_n) throw DataError("BLEU statistics of different orders");
  for (size_t i = 0; i < matches.size(); ++i) {
    matches[i] += o.matches[i];
    totals[i] += o.totals[i];
  }
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  return *this;
}

BleuStats bleu_stats(const Tokens& hyp, const Tokens& ref, int max_n) {
  check_max_n(max_n);
  BleuStats s(max_n);
  s.hyp_len = static_cast<int64_t>(hyp.size());
  s.ref_len = static_cast<int64_t>(ref.size());
  for (int n = 1; n <= max_n; ++n) {
    const auto h = ngram_counts(hyp, n);
    const auto r = ngram_counts(ref, n);
    int64_t m = 0, total = 0;
    for (const auto& [g, c] : h) {
      total += c;
      auto it = r.find(g);
      if (it != r.end()) m += std::min(c, it->second);
    }
    s.matches[static_cast<size_t>(n - 1)] = m;
    s.totals[static_cast<size_t>(n - 1)] = total;
  }
  return s;
}

BleuScore bleu_score(const BleuStats& s, Smoothing smoothing, bool effective_order) {
  BleuScore out;
  out.hyp_len = s.hyp_len;
  out.ref_len = s.ref_len;
  out.precisions.assign(static_cast<size_t>(s.max_n), 0.0);
  if (s.hyp_len < s.ref_len)
    out.brevity_penalty =
        s.hyp_len > 0
            ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len))
            : 0.0;
  bool any = false;
  for (int64_t m : s.matches) any = any || m > 0;
  if (!any) return out;  // no match at any order: 0
  double smooth = 1.0, log_sum = 0.0;
  int orders = s.max_n;
  bool zero = false;
  for (int n = 1; n <= s.max_n; ++n) {
    const size_t i = static_cast<size_t>(n - 1);
    const double total = static_cast<double>(s.totals[i]);
    if (s.totals[i] == 0) {
      if (effective_order) {
        orders = n - 1;
      } else {
        zero = true;
      }
      break;
    }
    double p;
    if (s.matches[i] > 0) {
      p = static_cast<double>(s.matches[i]) / total;
    } else if (smoothing == Smoothing::Exp) {
      smooth *= 2.0;
      p = 1.0 / (smooth * total);
    } else {
      p = 0.0;
      zero = true;
    }
    out.precisions[i] = p;
    if (p > 0) log_sum += std::log(p);
  }
  if (zero || orders == 0) return out;
  out.score = out.brevity_penalty * std::exp(log_sum / orders);
  return out;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      int max_n, Smoothing smoothing) {
  check_max_n(max_n);
  if (hyps.size() != refs.size())
    throw DataError(std::to_string(hyps.size()) + " hypotheses but " + std::to_string(refs.size()) +
                    " references");
  BleuStats total(max_n);
  for (size_t i = 0; i < hyps.size(); ++i)
    total += bleu_stats(data::split_whitespace(hyps[i]), data::split_whitespace(refs[i]), max_n);
  return bleu_score(total, smoothing);
}

double sentence_bleu(std::string_view hyp, std::string_view ref, int max_n, Smoothing smoothing) {
  return bleu_score(bleu_stats(data::split_whitespace(hyp), data::split_whitespace(ref), max_n),
                    smoothing, true)
      .score;
}

double textbook_bleu(std::string_view hyp, std::string_view ref, int max_n) {
  check_max_n(max_n);
  const Tokens h = data::split_whitespace(hyp), r = data::split_whitespace(ref);
  if (h.empty()) return 0.0;
  const double lh = static_cast<double>(h.size()), lr = static_cast<double>(r.size());
  double score = std::exp(std::min(0.0, 1.0 - lr / lh));
  const int top = std::min<int>(max_n, static_cast<int>(h.size()));
  for (int n = 1; n <= top; ++n) {
    const auto hc = ngram_counts(h, n);
    const auto rc = ngram_counts(r, n);
    int64_t m = 0;
    for (const auto& [g, c] : hc) {
      auto it = rc.find(g);
      if (it != rc.end()) m += std::min(c, it->second);
    }
    score *= std::pow(static_cast<double>(m) / (lh - n + 1), std::pow(0.5, n));
  }
  return score;
}

}  // namespace attnkit::eval
