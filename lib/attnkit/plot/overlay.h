// Attention over an image, drawn as people know it from SAGAN's and Show-Attend-Tell's
// figures: the image in grey, then one panel per query, where the query's attention map
// (upsampled to the image by repeating cells) is blended over the image in viridis colours
// and the query's own pixel is outlined in red.
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/tensor.h"
#include "attnkit/plot/heatmap.h"

namespace attnkit::plot {

struct OverlayQuery {
  int64_t row = 0, col = 0;  // the query pixel in the image (-1: none to outline)
  Tensor map;                // [h, w], h and w dividing the image's height and width
  std::string label = {};    // written under the panel (Show-Attend-Tell: the word); may be ""
};

// image [H, W] (any values: scaled from its min to its max); the maps share one colour scale,
// from 0 to the largest weight of any of them, drawn as a bar with its values right of the
// panels (so that a uniform map is not read as a peak). Pixels are drawn `scale` × `scale` (0: as
// large as keeps a panel within about 256 pixels, at least 2). When a query has a label, a strip
// under the panels holds each label (5x7 font at twice its size, centred, cut to the panel's
// width). ShapeError for a map that does not divide the image.
Image render_overlays(const Tensor& image, const std::vector<OverlayQuery>& queries, int scale = 0);

}  // namespace attnkit::plot
