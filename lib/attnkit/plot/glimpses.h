// The recurrent attention model's glimpse path, drawn as in Mnih et al. 2014's Figure 3: the
// image in grey (magnified), at each glimpse the boxes of its patches (one colour a glimpse,
// every scale) with the glimpse's number at its centre and the path from centre to centre;
// beside it, what each glimpse saw: one row a glimpse, its k patches at the sensor's
// resolution. One panel per image, stacked, each with a caption.
#pragma once

#include <string>
#include <vector>

#include "attnkit/core/tensor.h"
#include "attnkit/plot/heatmap.h"
#include "attnkit/vision/glimpse.h"

namespace attnkit::plot {

struct GlimpsePanel {
  Tensor image;                 // [H, W], values in [0, 1] (clamped)
  std::vector<float> x, y;      // the glimpses' locations in [-1, 1]
  std::vector<Tensor> patches;  // per glimpse [k, g, g] (may be empty: not drawn)
  std::string caption;
};

// ShapeError when a panel's locations and patches disagree in number or shape.
Image render_glimpses(const std::vector<GlimpsePanel>& panels, const vision::GlimpseConfig& c);

}  // namespace attnkit::plot
