// The Hierarchical Attention Network's picture (Yang et al. 2016, Figure 5): each document's
// sentences one under the other, a red bar on the left of each sentence as long as the
// sentence's weight (a full slot is 1), and each word on a blue ground as deep as its word
// weight times its sentence's weight (flat attention: the word weight alone), relative to the
// document's largest such value, which the caption states; a legend shows both scales. Drawn as a
// PNG (5 x 7 bitmap font at twice its size; non-ASCII letters as boxes) or as an HTML page (real
// text; each word's and sentence's weight in its tooltip).
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/tensor.h"
#include "attnkit/plot/heatmap.h"

namespace attnkit::models::han {

struct FigureDoc {
  std::string title;
  std::vector<std::vector<std::string>> sentences;  // words
  Tensor words;        // [sentences, longest] (flat: [1, words], one row of all the words)
  Tensor sentences_w;  // [sentences]; empty (size 0) for flat attention
};

// Checks the shapes (ShapeError).
plot::Image figure_png(const std::vector<FigureDoc>& docs);
std::string figure_html(const std::vector<FigureDoc>& docs);

}  // namespace attnkit::models::han
