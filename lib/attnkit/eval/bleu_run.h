// BLEU of files, the logic behind the bleu tool: the checks of what was asked, then the corpus
// score (with its details) or a score per sentence, as text.
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/hooks.h"

namespace attnkit::eval {

// What bleu was asked (its options, by their long names; extra: positional files after the
// hypotheses').
struct BleuRunOptions {
  std::string ref, hyp = "-", smooth = "exp";
  int max_n = 4, decimals = -1;  // -1: 4 with --fraction, else 2
  bool sentence = false, textbook = false, fraction = false, details = false;
  std::vector<std::string> extra;
};

// Checks the options (UsageError naming them), reads both files (a DataError when their
// line counts differ) and returns the score a line: the corpus's (with o.details, a TSV row
// of bleu, p1..pN, bp, ratio, hyp_len, ref_len under its header) or each sentence's.
std::string run_bleu(BleuRunOptions o, const GivenOption& given);

}  // namespace attnkit::eval
