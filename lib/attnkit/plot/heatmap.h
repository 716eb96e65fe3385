// Heatmaps of attention matrices: one panel per matrix (a rank-3 tensor is one panel per batch
// item, rank 4 one per item and head), row and column tokens as labels, a colour scale
// (viridis, from min(0, smallest value) to the largest) with a legend. The same layout is
// drawn as a PNG (RGB, through libpng; labels in a 5 x 7 ASCII bitmap font) or as SVG text
// (labels as real UTF-8 text). Non-finite values (masked scores, -inf) are grey. Without
// tokens, rows and columns get index ticks. Cells are square, as large as fits about
// 1200 x 720 pixels a panel (at most 24 px; at least 12 px with tokens, else 2 px), so that a
// short, wide matrix (an NTM trace, 11 x 128) stays readable; a thin strip's cells are taller
// (up to 3 times their width), so that its panel is about a sixth as tall as it is wide.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::plot {

struct HeatmapSpec {
  std::vector<std::string> rows, cols;  // tokens: empty, or one per row / column
  std::string title;
};

struct Panel {
  int x, y;             // top-left corner of the first cell
  std::string caption;  // "item 2" / "item 1, head 3"; empty for a single panel
  int64_t index;        // which matrix of the tensor
};

struct Layout {
  int width = 0, height = 0;
  int cell = 0;    // cell width in pixels
  int cell_h = 0;  // cell height: the width, or up to 3 times it for a thin strip
  int64_t n_rows = 0, n_cols = 0;
  float vmin = 0, vmax = 1;  // the colour scale
  std::vector<Panel> panels;
  // The labels drawn: the spec's tokens, or where it has none, index ticks ("0", "", "",
  // "3", ...: every k-th row or column, k the smallest of 1, 2, 5, 10, 20, 50, ... that
  // leaves room for the text).
  std::vector<std::string> row_labels, col_labels;
  int legend_x = 0, legend_y = 0, legend_w = 0, legend_h = 0;
};

struct Rgb {
  uint8_t r, g, b;
};
// The colour of t in [0, 1] (clamped) on the viridis scale.
Rgb colour(float t);

// The layout of a heatmap of w (rank 1 to 4). Throws ShapeError on an empty tensor and
// DataError when the token counts do not match the rows / columns.
Layout heatmap_layout(const Tensor& w, const HeatmapSpec& spec);

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, 3 bytes a pixel
  Rgb at(int x, int y) const {
    const size_t i =
        (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image render_heatmap(const Tensor& w, const HeatmapSpec& spec, const Layout& layout);
// PNG bytes of an image (libpng). Throws Error when libpng fails.
std::string encode_png(const Image& image);
// An SVG document of the same heatmap.
std::string heatmap_svg(const Tensor& w, const HeatmapSpec& spec, const Layout& layout);

}  // namespace attnkit::plot
