// Running a Show, Attend and Tell model, the logic behind caption-run: the captions of
// images (or, with references, their scores), each caption's attention, and a picture of one
// image's attention word by word.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit::models {

// What caption-run was asked (its options, by their long names; "": not given).
struct CaptionRunOptions {
  std::string model, input, captions, attention, draw, output = "-";
  bool invert = false, eval = false;
  int beam = 1;
  int64_t draw_index = 0;
  int threads = 0;
};

// Checks the options (UsageError naming them) and that the outputs can be written, then
// returns the captions, a line each, or with o.eval the TSV of the scores (images, bleu4,
// nouns, noun_in_cell, coverage_dev); writes o.attention (arrays a<i> [words, gh, gw]) and
// o.draw (the picture o.draw_index with each word's attention) when named.
std::string run_caption(const CaptionRunOptions& o);

}  // namespace attnkit::models
