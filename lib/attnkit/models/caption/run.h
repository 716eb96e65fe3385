// Running a Show, Attend and Tell model, the logic behind caption-run: the captions of
// images (or, with references, their scores), each caption's attention, and a picture of one
// image's attention word by word.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "attnkit/core/tensor.h"

namespace attnkit::models {

// What caption-run was asked (its options, by their long names; "": not given).
struct CaptionRunOptions {
  std::string model, input, captions, attention, draw, output = "-";
  bool invert = false, eval = false;
  int beam = 1;
  int64_t draw_index = 0;
  int threads = 0;
  // Told a warning that does not stop the run (pictures that look dark on white); null: none.
  std::function<void(const std::string&)> warn;
};

// Without --invert: a warning when pictures look drawn dark on white (their mean above 0.5:
// mostly light), as the models see light items on black; "" when none does. `images` is
// [N, H, W]; `name` the file, named in the warning.
std::string light_background_warning(const Tensor& images, const std::string& name);

// Checks the options (UsageError naming them) and that the outputs can be written, then
// returns the captions, a line each, or with o.eval the TSV of the scores (images, bleu4,
// nouns, noun_in_cell, coverage_dev); writes o.attention (arrays a<i> [words, gh, gw]) and
// o.draw (the picture o.draw_index with each word's attention) when named.
std::string run_caption(const CaptionRunOptions& o);

}  // namespace attnkit::models
