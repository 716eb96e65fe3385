// Running a trained memory network, the logic behind memn2n-answer: the answers to the
// questions of a bAbI-format file, each read's attention, and the stories as labels.
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/hooks.h"

namespace attnkit::memory {

// What memn2n-answer was asked (its options, by their long names).
struct MemN2NRunOptions {
  std::string model, input = "-", attention, sentences;
};

// The answers of the questions in the items `range` gives (null: all), answered in the whole
// run's batches of 32: TSV line, question, predicted, answer (the header with the first
// question); --alignments and --sentences (when given) written; and the summary (the questions,
// how many were answered wrong), a line, none without questions.
struct MemN2NAnswers {
  std::string table;
  std::vector<std::string> summary;
};
MemN2NAnswers answer_memn2n(const MemN2NRunOptions& o, const GivenOption& given,
                            const ItemRange& range);

struct LoadedMemN2N;
// memn2n-eval's table (TSV) over each task's qaN_*_<split>.txt in `dir`: a header "task error
// pass facts", one row per task (error in percent, one decimal; pass: error <= `pass`;
// facts: the hops' supporting-fact selection in percent, fact_selection() in train.h, "-"
// when the file marks no facts), then "mean E yes|no F" (F over the tasks with facts) and
// "failed N - -".
std::string eval_table(const LoadedMemN2N& m, const std::string& dir, const std::vector<int>& tasks,
                       const std::string& split, double pass);

}  // namespace attnkit::memory
