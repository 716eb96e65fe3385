#include "attnkit/data/transduce.h"

#include <algorithm>
#include <cstdio>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/vocab.h"

namespace attnkit::data {

TransduceTask parse_transduce_task(const std::string& name) {
  return parse_choice<TransduceTask>("task", name,
                                     {{"copy", TransduceTask::Copy},
                                      {"reverse", TransduceTask::Reverse},
                                      {"bigram-flip", TransduceTask::BigramFlip},
                                      {"anbn", TransduceTask::AnBn},
                                      {"anbncn", TransduceTask::AnBnCn},
                                      {"anbncndn", TransduceTask::AnBnCnDn},
                                      {"anb2n", TransduceTask::AnB2n},
                                      {"anbmcnm", TransduceTask::AnBmCnm},
                                      {"membership", TransduceTask::Membership},
                                      {"count-distinct", TransduceTask::CountDistinct},
                                      {"dedup", TransduceTask::Dedup},
                                      {"sort", TransduceTask::Sort},
                                      {"merge", TransduceTask::Merge},
                                      {"search", TransduceTask::Search},
                                      {"infix-prefix", TransduceTask::InfixPrefix}});
}

const std::vector<std::string>& transduce_task_names() {
  static const std::vector<std::string> names = {
      "copy",     "reverse", "bigram-flip", "anbn",       "anbncn",
      "anbncndn", "anb2n",   "anbmcnm",     "membership", "count-distinct",
      "dedup",    "sort",    "merge",       "search",     "infix-prefix"};
  return names;
}

std::string transduce_task_name(TransduceTask t) {
  return transduce_task_names()[static_cast<size_t>(t)];
}

void TransduceOptions::validate() const {
  if (len_min < 1) throw UsageError("len-min must be >= 1");
  if (len_max < len_min) throw UsageError("len-max must be >= len-min");
  if (len_max > 100000) throw UsageError("len-max must be at most 100000");
  if (task == TransduceTask::BigramFlip && len_max < 2)
    throw UsageError("bigram-flip needs len-max >= 2 (its lengths are even)");
  // Its lengths are even: a range holding none (3 to 3) is refused, not written as length 2.
  if (task == TransduceTask::BigramFlip && len_min == len_max && len_min % 2)
    throw UsageError("bigram-flip's lengths are even: len-min to len-max (" +
                     std::to_string(len_min) + " to " + std::to_string(len_max) + ") holds none");
  if (symbols < 2 || symbols > 1000000) throw UsageError("symbols must be from 2 to 1000000");
  if (queries < 1 || queries > 100000) throw UsageError("queries must be from 1 to 100000");
  if (task == TransduceTask::Search && symbols < len_max)
    throw UsageError("search needs symbols >= len-max (its keys are distinct)");
  if (task == TransduceTask::Merge && len_max < 2)
    throw UsageError("merge needs len-max >= 2 (two runs)");
  if (depth_min < 1) throw UsageError("depth-min must be >= 1");
  if (depth_max < depth_min) throw UsageError("depth-max must be >= depth-min");
  if (depth_max > 20) throw UsageError("depth-max must be at most 20");
}

namespace {

// A content or HAM task's pair of length n (transduce.h).
void content_pair(const TransduceOptions& o, Rng& rng, int64_t n, TransducePair& p) {
  auto draw = [&] { return 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(o.symbols))); };
  auto name = [](int64_t x) { return std::to_string(x); };
  std::vector<int64_t> x;
  if (o.task == TransduceTask::Search) {
    // n distinct keys: a partial Fisher-Yates shuffle of 1..symbols
    std::vector<int64_t> all(static_cast<size_t>(o.symbols));
    for (int64_t i = 0; i < o.symbols; ++i) all[static_cast<size_t>(i)] = i + 1;
    for (int64_t i = 0; i < n; ++i)
      std::swap(all[static_cast<size_t>(i)],
                all[static_cast<size_t>(i) + rng.below(static_cast<uint64_t>(o.symbols - i))]);
    std::vector<int64_t> keys(all.begin(), all.begin() + n);
    std::sort(keys.begin(), keys.end());
    std::vector<int64_t> values(static_cast<size_t>(n));
    for (auto& v : values) v = draw();
    for (int64_t i = 0; i < n; ++i) {
      p.source.push_back(name(keys[static_cast<size_t>(i)]));
      p.source.push_back(name(values[static_cast<size_t>(i)]));
    }
    const size_t j = rng.below(static_cast<uint64_t>(n));
    p.source.push_back("?");
    p.source.push_back(name(keys[j]));
    p.target.push_back(name(values[j]));
    return;
  }
  if (o.task == TransduceTask::Merge && n < 2) n = 2;
  for (int64_t i = 0; i < n; ++i) x.push_back(draw());
  switch (o.task) {
    case TransduceTask::Membership: {
      std::vector<uint8_t> in(static_cast<size_t>(o.symbols) + 1, 0);
      for (int64_t v : x) in[static_cast<size_t>(v)] = 1;
      for (int64_t v : x) p.source.push_back(name(v));
      p.source.push_back("?");
      const bool all = static_cast<int64_t>(std::count(in.begin() + 1, in.end(), 1)) == o.symbols;
      for (int64_t k = 0; k < o.queries; ++k) {
        int64_t q;
        if (!all && rng.below(2)) {
          do q = draw();
          while (in[static_cast<size_t>(q)]);
        } else {
          q = x[rng.below(static_cast<uint64_t>(n))];
        }
        p.source.push_back(name(q));
        p.target.emplace_back(in[static_cast<size_t>(q)] ? "yes" : "no");
      }
      return;
    }
    case TransduceTask::CountDistinct:
    case TransduceTask::Dedup: {
      std::vector<uint8_t> seen(static_cast<size_t>(o.symbols) + 1, 0);
      int64_t d = 0;
      for (int64_t v : x) {
        p.source.push_back(name(v));
        if (seen[static_cast<size_t>(v)]) continue;
        seen[static_cast<size_t>(v)] = 1, ++d;
        if (o.task == TransduceTask::Dedup) p.target.push_back(name(v));
      }
      if (o.task == TransduceTask::CountDistinct)
        for (int64_t i = 0; i < d; ++i) p.target.emplace_back("c");
      return;
    }
    case TransduceTask::Sort:
      for (int64_t v : x) p.source.push_back(name(v));
      std::sort(x.begin(), x.end());
      for (int64_t v : x) p.target.push_back(name(v));
      return;
    default: {  // merge
      const auto half = x.begin() + (n + 1) / 2;
      std::sort(x.begin(), half);
      std::sort(half, x.end());
      for (auto it = x.begin(); it != x.end(); ++it) {
        if (it == half) p.source.emplace_back("+");
        p.source.push_back(name(*it));
      }
      std::sort(x.begin(), x.end());
      for (int64_t v : x) p.target.push_back(name(v));
    }
  }
}

// An infix-prefix expression of depth d (transduce.h), appended to `infix` and `prefix`;
// `bracket`: a compound operand, written in brackets.
void infix_node(Rng& rng, int64_t d, bool bracket, std::vector<std::string>& infix,
                std::vector<std::string>& prefix) {
  if (d == 0) {
    const std::string x = std::to_string(rng.below(static_cast<uint64_t>(kInfixNumbers)));
    infix.push_back(x);
    prefix.push_back(x);
    return;
  }
  static const char* const ops[] = {"+", "-", "*", "/"};
  const std::string op = ops[rng.below(4)];
  const bool deep_left = rng.below(2) == 0;
  const int64_t other =
      rng.below(2) == 0 ? 0 : static_cast<int64_t>(rng.below(static_cast<uint64_t>(d)));
  const int64_t left = deep_left ? d - 1 : other, right = deep_left ? other : d - 1;
  prefix.push_back(op);
  if (bracket) infix.emplace_back("(");
  infix_node(rng, left, true, infix, prefix);
  infix.push_back(op);
  infix_node(rng, right, true, infix, prefix);
  if (bracket) infix.emplace_back(")");
}

}  // namespace

int64_t prefix_depth(const std::vector<std::string>& prefix) {
  // Read from the right: a stack of the operands' depths.
  std::vector<int64_t> st;
  for (auto it = prefix.rbegin(); it != prefix.rend(); ++it) {
    const std::string& s = *it;
    if (s == "+" || s == "-" || s == "*" || s == "/") {
      if (st.size() < 2) throw DataError("prefix expression: operator " + s + " lacks operands");
      const int64_t a = st.back();
      st.pop_back();
      st.back() = 1 + std::max(a, st.back());
    } else if (!s.empty() &&
               std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      st.push_back(0);
    } else {
      throw DataError("prefix expression: not a number or an operator: " + s);
    }
  }
  if (st.size() != 1) throw DataError("prefix expression: not exactly one expression");
  return st.back();
}

std::vector<TransducePair> make_transduce(const TransduceOptions& o, int64_t count, Rng& rng) {
  o.validate();
  if (count < 0) throw UsageError("count must be >= 0");
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
  };
  auto repeat = [](std::vector<std::string>& v, const char* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) v.emplace_back(s);
  };
  std::vector<TransducePair> out(static_cast<size_t>(count));
  for (TransducePair& p : out) {
    switch (o.task) {
      case TransduceTask::Copy:
      case TransduceTask::Reverse:
      case TransduceTask::BigramFlip: {
        int64_t n = uniform(o.len_min, o.len_max);
        if (o.task == TransduceTask::BigramFlip) {
          // An even length in the range (the nearest even one above an odd draw, or below it
          // at the top of the range).
          if (n % 2) n = n + 1 <= o.len_max ? n + 1 : n - 1;
          if (n < 2) n = 2;
        }
        for (int64_t i = 0; i < n; ++i)
          p.source.push_back(std::to_string(1 + rng.below(static_cast<uint64_t>(o.symbols))));
        p.target = p.source;
        if (o.task == TransduceTask::Reverse) std::reverse(p.target.begin(), p.target.end());
        if (o.task == TransduceTask::BigramFlip)
          for (size_t i = 0; i + 1 < p.target.size(); i += 2)
            std::swap(p.target[i], p.target[i + 1]);
        break;
      }
      case TransduceTask::Membership:
      case TransduceTask::CountDistinct:
      case TransduceTask::Dedup:
      case TransduceTask::Sort:
      case TransduceTask::Merge:
      case TransduceTask::Search:
        content_pair(o, rng, uniform(o.len_min, o.len_max), p);
        break;
      case TransduceTask::InfixPrefix:
        infix_node(rng, uniform(o.depth_min, o.depth_max), false, p.source, p.target);
        break;
      case TransduceTask::AnBmCnm: {
        const int64_t n = uniform(o.len_min, o.len_max), m = uniform(o.len_min, o.len_max);
        repeat(p.source, "a", n);
        repeat(p.source, "b", m);
        repeat(p.target, "c", n + m);
        break;
      }
      default: {
        const int64_t n = uniform(o.len_min, o.len_max);
        repeat(p.source, "a", n);
        if (o.task == TransduceTask::AnB2n) {
          repeat(p.target, "b", 2 * n);
          break;
        }
        repeat(p.target, "b", n);
        if (o.task != TransduceTask::AnBn) repeat(p.target, "c", n);
        if (o.task == TransduceTask::AnBnCnDn) repeat(p.target, "d", n);
      }
    }
  }
  return out;
}

std::string format_transduce(const std::vector<TransducePair>& pairs) {
  std::string s;
  for (const TransducePair& p : pairs) {
    for (size_t i = 0; i < p.source.size(); ++i) s += (i ? " " : "") + p.source[i];
    s += '\t';
    for (size_t i = 0; i < p.target.size(); ++i) s += (i ? " " : "") + p.target[i];
    s += '\n';
  }
  return s;
}

TransduceScore score_transduction(const std::vector<int32_t>& target,
                                  const std::vector<int32_t>& output) {
  TransduceScore s;
  size_t right = 0;
  while (right < target.size() && right < output.size() && output[right] == target[right]) ++right;
  s.coarse = output == target ? 1.0 : 0.0;
  s.fine =
      target.empty() ? s.coarse : static_cast<double>(right) / static_cast<double>(target.size());
  return s;
}

std::map<int64_t, Accuracy> accuracy_by_length(const std::vector<int64_t>& target_lengths,
                                               const std::vector<TransduceScore>& scores,
                                               int64_t bucket) {
  if (bucket < 1) throw UsageError("bucket must be >= 1");
  if (target_lengths.size() != scores.size())
    throw UsageError("accuracy_by_length: " + std::to_string(target_lengths.size()) +
                     " lengths for " + std::to_string(scores.size()) + " scores");
  std::map<int64_t, Accuracy> out;
  for (size_t i = 0; i < scores.size(); ++i) {
    const int64_t len = std::max<int64_t>(target_lengths[i], 1);
    for (int64_t key : {(len - 1) / bucket, int64_t{-1}}) {
      Accuracy& a = out[key];
      a.coarse += scores[i].coarse;
      a.fine += scores[i].fine;
      ++a.sequences;
    }
  }
  for (auto& [k, a] : out) a.coarse /= a.sequences, a.fine /= a.sequences;
  return out;
}

std::string accuracy_tsv(const std::map<int64_t, Accuracy>& a, int64_t bucket) {
  std::string s = "lengths\tsequences\tcoarse\tfine\n";
  char buf[128];
  for (const auto& [k, x] : a) {
    if (k < 0) continue;
    std::snprintf(buf, sizeof buf, "%lld-%lld\t%lld\t%.4f\t%.4f\n",
                  static_cast<long long>(k * bucket + 1), static_cast<long long>((k + 1) * bucket),
                  static_cast<long long>(x.sequences), x.coarse, x.fine);
    s += buf;
  }
  const auto it = a.find(-1);
  if (it != a.end()) {
    std::snprintf(buf, sizeof buf, "all\t%lld\t%.4f\t%.4f\n",
                  static_cast<long long>(it->second.sequences), it->second.coarse, it->second.fine);
    s += buf;
  }
  return s;
}

std::string answer_line(const Vocab& vocab, const std::vector<int32_t>& ids) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + vocab.token(ids[i]);
  return line + "\n";
}

}  // namespace attnkit::data
