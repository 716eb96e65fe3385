// Running a document classifier from han-train, the logic behind han-run: each document's
// label with the class probabilities, or with eval the accuracy, per-class precision and recall
// and the confusion matrix; the attention weights as arrays; the paper's Figure 5.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit::models::han {

// What han-run was asked (its options by their long names; "": not given).
struct HanRunOptions {
  std::string model, input, alignments, draw, output = "-";
  bool eval = false;
  int64_t draw_count = 5;
  int64_t max_sentence_words = 1000;
  int threads = 0;
};

// Checks the options (UsageError naming them: --draw must end in .png or .html) and that the
// outputs can be written, then loads the model and the documents (labels needed by eval) and
// returns the text to print:
//   one line a document: the predicted label, its probability, then every class's
//   probability in the model's label order (TAB-separated);
//   eval: "documents N", "accuracy A", a table class/precision/recall/support, and the
//   confusion matrix (rows: the true label, columns: the predicted one).
// alignments (an .npz): per document i, w<i> [sentences, longest sentence] (flat: [1, words])
// and, for han, s<i> [sentences]. draw: the first draw_count documents (figure_png/html).
std::string run_han(const HanRunOptions& o);

}  // namespace attnkit::models::han
