// The synthetic transduction tasks of exercise 8-4's papers, seeded, as SOURCE<TAB>TARGET
// lines of space-separated symbols (what transduce-gen writes and stackmem-train reads).
//
// Grefenstette et al. 2015, Section 4.1: sequences of symbols drawn uniformly from
// `symbols` (128 in the paper, named 1..symbols), source lengths uniform in [len_min, len_max]
// (the paper trains on 8..64 and tests on 65..128):
//   copy          the target is the source;
//   reverse       the source backwards;
//   bigram-flip   each pair of neighbours swapped (a b c d → b a d c); lengths are even.
// Joulin & Mikolov 2015, Table 2, as transductions of the counting part: the source is
// where the string is free, the target what it then must be (n uniform in [len_min, len_max]):
//   anbn          a^n → b^n            anbncn     a^n → b^n c^n
//   anbncndn      a^n → b^n c^n d^n    anb2n      a^n → b^2n
//   anbmcnm       a^n b^m → c^(n+m) (m also uniform in [len_min, len_max])
// Exercise 8-4's content tasks (issue 35), for a set memory (symbols as above, n the
// sequence's length):
//   membership     x_1 … x_n ? q_1 … q_k → yes/no for each query (k = queries; each query
//                  is one of the x, or, with probability 1/2 when there is one, a symbol
//                  not among them);
//   count-distinct x_1 … x_n → c^d, d the number of distinct symbols (unary, as a^n b^n);
//   dedup          x_1 … x_n → the distinct symbols in the order of their first occurrence.
// Andrychowicz & Kurach 2016's tasks (HAM), for a tree memory:
//   sort           x_1 … x_n → the x in ascending order (of their numbers);
//   merge          a sorted run of ⌈n/2⌉, "+", a sorted run of ⌊n/2⌋ → the two merged;
//   search         k_1 v_1 … k_n v_n ? k_j → v_j: n pairs with distinct keys in ascending
//                  order (symbols ≥ n), values uniform, the query one of the keys.
// Kim, Denton, Hoang & Rush 2017, section 5.1 (tree transduction):
//   infix-prefix   a random arithmetic expression in infix form, every compound operand in
//                  brackets ("( 3 + 4 ) * 7"), → its prefix (Polish) form ("* + 3 4 7").
//                  Numbers 0..20, operators + - * /; the depth (operators on the longest
//                  path from the top to a number) is uniform in [depth_min, depth_max]. A node
//                  of depth d ≥ 1 has one operand (left or right, 1/2 each) of depth d - 1 and
//                  the other a number with probability 1/2, else of depth uniform in
//                  [0, d - 1] (sources of about 8 tokens at depth 2, 42 at depth 6).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/rng.h"

namespace attnkit::data {

class Vocab;

enum class TransduceTask {
  Copy,
  Reverse,
  BigramFlip,
  AnBn,
  AnBnCn,
  AnBnCnDn,
  AnB2n,
  AnBmCnm,
  Membership,
  CountDistinct,
  Dedup,
  Sort,
  Merge,
  Search,
  InfixPrefix
};
TransduceTask parse_transduce_task(const std::string& name);
std::string transduce_task_name(TransduceTask t);
const std::vector<std::string>& transduce_task_names();

struct TransduceOptions {
  TransduceTask task = TransduceTask::Copy;
  int64_t len_min = 8, len_max = 64;
  int64_t symbols = 128;                 // Grefenstette's tasks and the content tasks
  int64_t queries = 1;                   // membership: queries a pair
  int64_t depth_min = 1, depth_max = 6;  // infix-prefix: the expressions' depths
  void validate() const;                 // UsageError naming the field
};

struct TransducePair {
  std::vector<std::string> source, target;
};

// `count` pairs drawn with rng.
std::vector<TransducePair> make_transduce(const TransduceOptions& o, int64_t count, Rng& rng);
// "SOURCE<TAB>TARGET\n" lines.
std::string format_transduce(const std::vector<TransducePair>& pairs);

// infix-prefix: the largest number and the operators.
constexpr int64_t kInfixNumbers = 21;  // 0..20
// The depth of a prefix expression (operators on its longest path; 0 for a number).
// DataError when it is not one well-formed expression of + - * / and numbers.
int64_t prefix_depth(const std::vector<std::string>& prefix);

// ---- the papers' metrics (stackmem-run --eval and ntm-run --eval share them)

// Coarse accuracy: 1 when the output is the whole target (no more, no less), else 0; fine
// accuracy: the share of the target right before the first error (Grefenstette et al. 2015).
struct TransduceScore {
  double coarse = 0.0, fine = 0.0;
};
TransduceScore score_transduction(const std::vector<int32_t>& target,
                                  const std::vector<int32_t>& output);

struct Accuracy {
  int64_t sequences = 0;
  double coarse = 0.0, fine = 0.0;  // means over the sequences
};
// Means by bucket of target lengths (key k holds lengths k·bucket + 1 .. (k + 1)·bucket) and
// over all (key -1); target_lengths[i] goes with scores[i]. UsageError for bucket < 1.
std::map<int64_t, Accuracy> accuracy_by_length(const std::vector<int64_t>& target_lengths,
                                               const std::vector<TransduceScore>& scores,
                                               int64_t bucket);
// TSV: lengths ("1-8"), sequences, coarse, fine, and a last row "all".
std::string accuracy_tsv(const std::map<int64_t, Accuracy>& a, int64_t bucket);
// A decoded answer as a line: the symbols of every id (reserved ones too) joined by spaces.
std::string answer_line(const Vocab& vocab, const std::vector<int32_t>& ids);

}  // namespace attnkit::data
