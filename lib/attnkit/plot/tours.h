// Pictures of pointer-network outputs: per problem, a panel with its points, the exact
// answer (a thick grey path) and the prediction (a thin red path, closed as decoded), and a
// caption (the problem's number, n, and "exact", or the two lengths for a tour and the two
// areas for a hull; "invalid" for an output that is no tour or hull). The points of a
// degenerate output (one visiting a point twice, or fewer than 3 points: no visible line) are
// ringed in red. A legend above the panels names the grey answer, the red output and the
// ring. Panels of 220 x 240 pixels, up to 4 a row. SVG, or PNG through libpng.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/data/ptrtask.h"
#include "attnkit/plot/heatmap.h"

namespace attnkit::plot {

struct TourPanel {
  const data::PtrProblem* problem;
  std::vector<int32_t> prediction;  // 1-based
  std::string caption;
};

// The caption ptr-run writes: "#3 n=10 exact" / "#3 n=10 tour 2.91 (optimum 2.87)" /
// "#3 n=10 area 0.61 of 0.62".
std::string tour_caption(data::PtrTask task, int64_t number, const data::PtrProblem& p,
                         const std::vector<int32_t>& prediction);
// ShapeError/DataError for a problem that is not points in the plane.
std::string tours_svg(const std::vector<TourPanel>& panels);
Image render_tours(const std::vector<TourPanel>& panels);

}  // namespace attnkit::plot
