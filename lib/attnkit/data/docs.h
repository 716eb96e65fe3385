// Labelled documents for document classifiers (han-train, han-run): one document a line,
//
//   LABEL<TAB>TEXT                  sentences split after each run of . ! ? tokens
//   LABEL<TAB>S1<TAB>S2<TAB>...     sentences given, one a field (more than one TAB)
//
// The text is tokenised as the textbook's words (data/text.h: lower case, , . ! ? split off).
// Without labels (need_labels false) a line without a TAB is a document without a label; a
// line with one is LABEL<TAB>TEXT as above. Every line is a document: a line that has no word
// (a blank line, a label with nothing after it) is an error, and so are an empty label, a
// missing one (when labels are needed), invalid UTF-8 and a sentence of more than
// max_sentence_words words (no sentence is that long: such a line has lost its punctuation).
// Errors are DataErrors naming the file and the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit::data {

struct TextDoc {
  std::string label;                                // "" when the line has none
  std::vector<std::vector<std::string>> sentences;  // each non-empty
  int64_t line = 0;                                 // 1-based line of the file
};

struct DocReadOptions {
  bool need_labels = true;
  int64_t max_sentence_words = 1000;
};

// The sentences of one text: its words, cut after each run of ".", "!" or "?" tokens.
std::vector<std::vector<std::string>> split_sentences(std::string_view text);

std::vector<TextDoc> parse_docs(std::string_view text, const std::string& name,
                                const DocReadOptions& o = {});
// Reads a file ("-": standard input).
std::vector<TextDoc> read_docs(const std::string& path, const DocReadOptions& o = {});

}  // namespace attnkit::data
